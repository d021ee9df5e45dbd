#pragma once
// Registered hooks, type-erased: the adapters the engine calls (one per hook type and slot
// kind), the entry a hook list stores, and the record of a registration.

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/hook_options.hpp>

namespace hookset {
template <class T>
class Stateful;
struct CallOptions;
}  // namespace hookset

namespace hookset::detail {

template <class T>
inline constexpr bool is_stateful_v = false;
template <class T>
inline constexpr bool is_stateful_v<Stateful<T>> = true;

// The stop token of the dispatch a hook runs for, as a hook that takes one gets it: the one of
// the nearest dispatch on the await context the library set around the call, else a token that
// never stops.
inline hookset::stop_token stop_token_for_hook() noexcept {
  if (const await_context* context = scoped_context())
    if (const hookset::stop_token* stop = context->nearest_stop()) return *stop;
  return {};
}

// The trailing `last` of fold slots, as an (empty or one-element) list so that non-fold slots
// never name std::optional<void>.
template <class Kind, bool Fold = Kind::is_fold>
struct last_parameter {
  using type = mp::mp_list<>;
};
template <class Kind>
struct last_parameter<Kind, true> {
  using type = mp::mp_list<std::optional<typename Kind::result>>;
};

// `last` as the hook receives it, from how it crossed the erased call (last_wire).
template <class R>
std::optional<R> last_from(R value, bool has_value) noexcept {
  return has_value ? std::optional<R>(value) : std::nullopt;
}
template <class R>
std::optional<R>&& last_from(std::optional<R>&& last) noexcept {
  return std::move(last);
}

template <class Kind, class Params = typename Kind::parameters,
          class Last = typename last_parameter<Kind>::type, class Wire = typename Kind::wire>
struct hook_calls;

template <class Kind, class... A, class... Last, class... Wire>
struct hook_calls<Kind, mp::mp_list<A...>, mp::mp_list<Last...>, mp::mp_list<Wire...>> {
  using result = typename Kind::result;
  // The call shape a hook must have, spelled as a function type for diagnostics.
  using expected_call = result(arg_ref_t<A>..., Last...);

  // Target: const H for an owned hook, H for a borrowed (std::ref) or shared one. Tag: empty
  // for a hook registered with add<S>, {S} for a multi-slot object registered with add_hooks,
  // which is called as `object(S{}, args..., [last])`. A hook may also take the dispatch's
  // std::stop_token as its last parameter.
  template <class Target, class... Tag>
  static constexpr call_kind plain_kind =
      call_kind_of<result, Target&, Tag..., arg_ref_t<A>..., Last&&...>();
  template <class Target, class... Tag>
  static constexpr call_kind token_kind =
      call_kind_of<result, Target&, Tag..., arg_ref_t<A>..., Last&&..., hookset::stop_token>();
  // The call with a stop token is probed only when the plain call does not fit (an `&&` would
  // instantiate both probes for every hook).
  template <class Target, class... Tag>
  static constexpr bool takes_stop_token = [] {
    if constexpr (plain_kind<Target, Tag...> != call_kind::invalid) return false;
    else return token_kind<Target, Tag...> != call_kind::invalid;
  }();
  template <class Target, class... Tag>
  static constexpr call_kind kind = [] {
    if constexpr (plain_kind<Target, Tag...> != call_kind::invalid)
      return plain_kind<Target, Tag...>;
    else return token_kind<Target, Tag...>;
  }();

  template <class Target, class... Tag>
  static constexpr bool callable_with_last = [] {
    if constexpr (std::is_void_v<result>) return false;  // no `last` exists for void slots
    else
      return std::is_invocable_v<Target&, Tag..., arg_ref_t<A>..., std::optional<result>&&> ||
             std::is_invocable_v<Target&, Tag..., arg_ref_t<A>..., std::optional<result>&&,
                                 hookset::stop_token>;
  }();
  template <class Target, class... Tag>
  static constexpr bool callable_without_last =
      std::is_invocable_v<Target&, Tag..., arg_ref_t<A>...> ||
      std::is_invocable_v<Target&, Tag..., arg_ref_t<A>..., hookset::stop_token>;

  // For diagnostics: whether the hook would be callable if the slot's value parameters came as
  // non-const lvalues (it takes one by non-const reference).
  template <class Target, class... Tag>
  static constexpr bool callable_with_mutable_arguments = [] {
    if constexpr (std::is_void_v<result>)
      return std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...> ||
             std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...,
                                 hookset::stop_token>;
    else
      return std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...> ||
             std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...,
                                 hookset::stop_token> ||
             std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...,
                                 std::optional<result>&&> ||
             std::is_invocable_v<Target&, Tag..., std::remove_reference_t<A>&...,
                                 std::optional<result>&&, hookset::stop_token>;
  }();

  template <class Target, class... Tag>
  static decltype(auto) invoke(void* object, arg_ref_t<A>... args, Last&&... last) {
    Target& target = *static_cast<Target*>(object);
    if constexpr (takes_stop_token<Target, Tag...>)
      return target(Tag{}..., args..., std::move(last)..., stop_token_for_hook());
    else return target(Tag{}..., args..., std::move(last)...);
  }

  // The entry points, as the engine calls them: `wire` is `last` as it crossed the call.
  template <class Target, class... Tag>
  static result call_sync(void* object, arg_ref_t<A>... args, Wire... wire) {
    if constexpr (sizeof...(Wire) == 0) return invoke<Target, Tag...>(object, args...);
    else return invoke<Target, Tag...>(object, args..., last_from(std::forward<Wire>(wire)...));
  }
  template <class Target, class... Tag>
  static Task<result> call_async(void* object, arg_ref_t<A>... args, Wire... wire) {
    if constexpr (sizeof...(Wire) == 0)
      return to_task<result>(invoke<Target, Tag...>(object, args...));
    else
      return to_task<result>(
          invoke<Target, Tag...>(object, args..., last_from(std::forward<Wire>(wire)...)));
  }
  // A Stateful hook is told the slot that calls it, for the ReentrancyError it may raise.
  template <class Target, class Slot, class... Tag>
  static Task<result> call_stateful(void* object, arg_ref_t<A>... args, Wire... wire) {
    if constexpr (sizeof...(Wire) == 0)
      return static_cast<Target*>(object)->template call_for<Slot>(Tag{}..., args...);
    else
      return static_cast<Target*>(object)->template call_for<Slot>(
          Tag{}..., args..., last_from(std::forward<Wire>(wire)...));
  }
};

class dispatch_context;
struct watched_functions;
// A new context for a dispatch, owned by it (<hookset/impl/context.ipp>).
dispatch_context* make_dispatch_context(CallOptions options);
// The code of a watched dispatch (detail/dispatch/events.hpp; <hookset/impl/hook_outcome.ipp>).
extern const watched_functions watched_code;

// What a registration said, shared by every copy of its entry (copies of the set, extends).
struct hook_record {
  HookId id;
  int priority = 0;
  // A pipeline's validating hook (hookset::validator): ordered after every mutating one.
  bool validates = false;
  std::string name;
  std::optional<std::chrono::nanoseconds> timeout;
  std::vector<std::string> before;
  std::vector<std::string> after;
  std::shared_ptr<const void> owner;  // keeps the hook object alive; empty when borrowed
  // Keyed slots: which keys the registration is for (detail/keyed_index.hpp); empty: every key.
  std::shared_ptr<const void> key_selector;
  // make_dispatch_context, for a registration whose dispatch needs a context (a time limit, an
  // interceptor); null otherwise. The dispatch makes one through this pointer, so that only a
  // program with such a registration contains the context's code (dispatch_context).
  dispatch_context* (*make_context)(CallOptions) = nullptr;
  // The code of a watched dispatch (detail/dispatch/events.hpp), for a registration whose
  // dispatch it always needs (a time limit, a failure policy); null otherwise.
  const watched_functions* watched = nullptr;
  // What runs a dispatch of the slot on after this registration suspended it (the engine's
  // driver_code, of the slot's kind), for a coroutine hook or an interceptor; null otherwise.
  // Only a program that registers one contains the driver.
  const void* suspended_driver = nullptr;
  // An interceptor's: the interceptor layer of the slot's kind (interceptor_layer::entry_points).
  const void* interceptor_code = nullptr;
};

// One registered hook. `object` points at the hook; exactly one of sync/async is set. The
// call pointers are stored type-erased (a function pointer converts to another function pointer
// type and back exactly), so that one entry type - and one copy of every operation on hook
// lists - serves all slots; the engine of the slot's kind converts them back (hook_calls).
struct hook_entry {
  using erased_fn = void (*)();

  void* object = nullptr;
  erased_fn sync = nullptr;
  erased_fn async = nullptr;
  // No time limit, failures propagate: when nobody observes the dispatch and it has no
  // context, the engine calls it with no per-hook bookkeeping at all.
  bool quiet = false;
  // Quiet and synchronous: what the engine's tight loop over the leading hooks runs.
  bool plain = false;
  FailurePolicy on_failure = FailurePolicy::propagate;
  std::shared_ptr<const hook_record> record;

  // Copying and destroying an entry are out of line: the registration path copies and destroys
  // vectors of entries in several places (the copy-on-write copy, the list's destructor, insert,
  // erase), and each inlined copy of shared_ptr's reference counting weighed ~0.2 KB in every
  // file that registers a hook. Moves stay inline (they do not touch the count).
  hook_entry() = default;
  HOOKSET_NOINLINE HOOKSET_DECL hook_entry(const hook_entry& other) noexcept;
  hook_entry(hook_entry&&) noexcept = default;
  HOOKSET_NOINLINE HOOKSET_DECL hook_entry& operator=(const hook_entry& other) noexcept;
  hook_entry& operator=(hook_entry&&) noexcept = default;
  HOOKSET_NOINLINE HOOKSET_DECL ~hook_entry();

  HookId id() const noexcept { return record->id; }
  int priority() const noexcept { return record->priority; }
  bool validates() const noexcept { return record->validates; }
};

template <class Kind>
typename Kind::hook_sync_fn sync_call_of(const hook_entry& entry) noexcept {
  return reinterpret_cast<typename Kind::hook_sync_fn>(entry.sync);
}
template <class Kind>
typename Kind::hook_async_fn async_call_of(const hook_entry& entry) noexcept {
  return reinterpret_cast<typename Kind::hook_async_fn>(entry.async);
}

// An interceptor's registration options: a name, a priority and a named order. (A time limit
// or a failure policy would have to cut or skip the code around the whole dispatch.)
HOOKSET_DECL void check_interceptor_options(const HookOptions& options);

// Registration options as the add functions accept them.
inline HookOptions to_hook_options(Priority priority) {
  HookOptions options;
  options.priority = priority;
  return options;
}
inline HookOptions to_hook_options(HookOptions options) { return options; }

// The entry of a registration: its record and the erased calls. Not a template: one copy
// serves every hook (the part that depends on the hook's type is entry_calls). Out of line
// (<hookset/impl/hook_call.ipp>).
// `suspended_driver`, `interceptor_code` (not null: an interceptor's): hook_record's.
hook_entry make_entry(void* object, std::shared_ptr<const void> owner, HookOptions&& options,
                      FailurePolicy slot_policy, hook_entry::erased_fn sync,
                      hook_entry::erased_fn async, const void* suspended_driver,
                      bool validates = false, const void* interceptor_code = nullptr);
// (A Priority: `watched` is watched_code_for_policy<slot_policy>().)
hook_entry make_entry(void* object, std::shared_ptr<const void> owner, Priority priority,
                      FailurePolicy slot_policy, const watched_functions* watched,
                      hook_entry::erased_fn sync, hook_entry::erased_fn async,
                      const void* suspended_driver, bool validates = false);
// What a hook's registration takes from its types (the hook's and the slot's: HookSet::add),
// for add_hook (hook_list.hpp), which is not a template: the file that registers calls it and
// carries no entry of its own.
struct hook_facts {
  hook_entry::erased_fn sync = nullptr;
  hook_entry::erased_fn async = nullptr;
  const void* suspended_driver = nullptr;
  FailurePolicy slot_policy = FailurePolicy::propagate;
  const watched_functions* watched = nullptr;  // with a Priority: watched_code_for_policy
  bool validates = false;
  bool singleton = false;
  std::string_view slot;
};
// The watched code a registration without HookOptions names in a slot whose failure policy is
// P: none for Propagate (its entry is quiet), so that only a slot that declares another policy
// brings it into the file that registers. (Not the context's code: that needs a time limit, which
// only HookOptions give.)
template <FailurePolicy P>
constexpr const watched_functions* watched_code_for_policy() noexcept {
  if constexpr (P == FailurePolicy::propagate) return nullptr;
  else return &watched_code;
}

// The erased calls of a hook of type Target for a slot of kind Kind: {sync, async}, one set.
// Slot is used only by a Stateful hook (it names the slot in its ReentrancyError): void for any
// other hook, so that this depends on the kind and the hook, not the slot.
template <class Kind, class Target, class Slot, class... Tag>
struct entry_calls {
  using calls = hook_calls<Kind>;
  static hook_entry::erased_fn sync() noexcept {
    if constexpr (!is_stateful_v<std::remove_const_t<Target>> &&
                  calls::template kind<Target, Tag...> == call_kind::sync)
      return reinterpret_cast<hook_entry::erased_fn>(&calls::template call_sync<Target, Tag...>);
    else return nullptr;
  }
  // Whether the hook may suspend a dispatch (its registration names the driver).
  static constexpr bool suspends = is_stateful_v<std::remove_const_t<Target>> ||
                                   calls::template kind<Target, Tag...> == call_kind::async;
  static hook_entry::erased_fn async() noexcept {
    if constexpr (is_stateful_v<std::remove_const_t<Target>>)
      return reinterpret_cast<hook_entry::erased_fn>(
          &calls::template call_stateful<Target, Slot, Tag...>);
    else if constexpr (calls::template kind<Target, Tag...> == call_kind::async)
      return reinterpret_cast<hook_entry::erased_fn>(&calls::template call_async<Target, Tag...>);
    else return nullptr;
  }
};

// The slot a hook's entry needs to know: only a Stateful's.
template <class Target, class Slot>
using entry_slot_t = std::conditional_t<is_stateful_v<std::remove_const_t<Target>>, Slot, void>;

template <class S, class Target, class... Tag>
inline constexpr bool hook_shape_ok =
    hook_calls<kind_of<S>>::template kind<Target, Tag...> != call_kind::invalid;
// For a multi-slot object, called with the slot first.
template <class S, class Target>
using hook_shape_ok_t = mp::mp_bool<hook_shape_ok<S, Target, S>>;

// Whether a multi-slot object means to implement S: it has a call operator taking S first,
// whatever follows, so that a wrong shape is reported, never silently skipped. Overload sets
// cannot be inspected, so this probes the calls a near miss accepts: the slot's arguments
// (with `last` and a stop token) rotated, as when `last` comes first; each one of them
// replaced by a value convertible to anything, as when one parameter has a wrong type; and
// only such values, one fewer than the slot's arguments up to two more. Two such values: a
// prvalue (binds to value, const& and && parameters) and an lvalue (binds to a non-const &
// parameter, e.g. `std::string&` where the slot hands a const std::string).
struct any_argument {
  template <class T>
  operator T() const;
};
struct any_lvalue {
  template <class T>
  operator T&() const;
};

template <class Target, class S, class... Probe>
constexpr bool invocable_with_slot_first(mp::mp_list<Probe...>) {
  return std::is_invocable_v<Target&, S, Probe...>;
}

template <class Target, class S, class Ingredients>
constexpr bool invocable_with_one_fewer() {
  if constexpr (mp::mp_empty<Ingredients>::value) return false;
  else
    return invocable_with_slot_first<Target, S>(
        mp::mp_fill<mp::mp_pop_front<Ingredients>, any_argument>{});
}

template <class Target, class S, class Ingredients, std::size_t... I>
constexpr bool invocable_near(std::index_sequence<I...>) {
  // Rotations of the ingredients, and each ingredient in turn replaced by any_argument.
  return (invocable_with_slot_first<Target, S>(mp::mp_rotate_left_c<Ingredients, I>{}) || ...) ||
         (invocable_with_slot_first<Target, S>(
              mp::mp_replace_at_c<Ingredients, I, any_argument>{}) ||
          ...) ||
         (invocable_with_slot_first<Target, S>(mp::mp_replace_at_c<Ingredients, I, any_lvalue>{}) ||
          ...) ||
         invocable_with_slot_first<Target, S>(mp::mp_fill<Ingredients, any_argument>{}) ||
         invocable_with_slot_first<Target, S>(mp::mp_fill<Ingredients, any_lvalue>{}) ||
         invocable_with_slot_first<Target, S>(
             mp::mp_push_back<mp::mp_fill<Ingredients, any_argument>, any_argument>{}) ||
         invocable_with_one_fewer<Target, S, Ingredients>();
}

template <class Kind, class Params = typename Kind::parameters>
struct hook_ingredients;
template <class Kind, class... A>
struct hook_ingredients<Kind, mp::mp_list<A...>> {
  using args = mp::mp_list<arg_ref_t<A>...>;
  using with_last = mp::mp_append<args, typename last_parameter<Kind>::type>;
};

template <class S, class Target>
inline constexpr bool implements_slot = [] {
  using mutable_target = std::remove_const_t<Target>;
  using kind = kind_of<S>;
  using calls = hook_calls<kind>;
  if constexpr (calls::template callable_with_last<mutable_target, S> ||
                calls::template callable_without_last<mutable_target, S>) {
    return true;
  } else {
    using with_last = typename hook_ingredients<kind>::with_last;
    using all = mp::mp_push_back<with_last, hookset::stop_token>;
    return invocable_near<mutable_target, S, with_last>(
               std::make_index_sequence<mp::mp_size<with_last>::value>{}) ||
           invocable_near<mutable_target, S, all>(
               std::make_index_sequence<mp::mp_size<all>::value>{});
  }
}();

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/hook_call.ipp>
#endif
