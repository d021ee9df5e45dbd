#pragma once
// What a hook, a default or a companion must look like for a slot, the compile-time checks
// that say so in the user's terms, and the type-erased entry points the dispatch calls.

#include <functional>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/list.hpp>

#include <hookset/companions.hpp>
#include <hookset/detail/awaitable.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/slot.hpp>
#include <hookset/task.hpp>

namespace hookset {
template <class T>
class Stateful;
}  // namespace hookset

namespace hookset::detail {

template <class T>
inline constexpr bool is_stateful_v = false;
template <class T>
inline constexpr bool is_stateful_v<Stateful<T>> = true;

// How a declared parameter reaches the default and the hooks: a reference parameter as the
// caller's object, a value parameter as a const lvalue of the one copy the dispatch holds.
template <class A>
using arg_ref_t = std::conditional_t<std::is_reference_v<A>, std::remove_reference_t<A>&, const A&>;

// How a dispatch stores a bound argument.
template <class A>
using bound_t = std::conditional_t<std::is_reference_v<A>, std::remove_reference_t<A>&, A>;

// The trailing `last` of fold slots, as an (empty or one-element) list so that non-fold slots
// never name std::optional<void>.
template <class S, bool Fold = slot_traits<S>::is_fold>
struct last_parameter { using type = mp::mp_list<>; };
template <class S>
struct last_parameter<S, true> { using type = mp::mp_list<std::optional<typename slot_traits<S>::result>>; };
template <class S>
using last_parameter_t = typename last_parameter<S>::type;

enum class call_kind { invalid, sync, async };

// Whether a call returning `Res` produces a `Want` directly (sync), through an awaitable
// (async), or not at all.
template <class Res, class Want>
constexpr call_kind classify_result() noexcept {
  if constexpr (std::is_void_v<Res>) {
    return std::is_void_v<Want> ? call_kind::sync : call_kind::invalid;
  } else if constexpr (is_awaitable_v<Res>) {
    using Awaited = await_result_t<Res>;
    if constexpr (std::is_void_v<Want> || std::is_void_v<Awaited>)
      return std::is_void_v<Want> && std::is_void_v<Awaited> ? call_kind::async : call_kind::invalid;
    else
      return std::is_convertible_v<Awaited, Want> ? call_kind::async : call_kind::invalid;
  } else if constexpr (!std::is_void_v<Want> && std::is_convertible_v<Res, Want>) {
    return call_kind::sync;
  } else {
    return call_kind::invalid;
  }
}

// Kind of calling F with Args... for a result of type Want; invalid when F cannot be called so.
template <class Want, class F, class... Args>
constexpr call_kind call_kind_of() noexcept {
  if constexpr (std::is_invocable_v<F, Args...>)
    return classify_result<std::invoke_result_t<F, Args...>, Want>();
  else
    return call_kind::invalid;
}

// Turns any awaitable of something convertible to R into a Task<R>.
template <class R, class Awaitable>
Task<R> as_task(Awaitable awaitable) {
  if constexpr (std::is_void_v<R>)
    co_await std::move(awaitable);
  else
    co_return co_await std::move(awaitable);
}

template <class R, class Res>
Task<R> to_task(Res&& result) {
  if constexpr (std::is_same_v<std::remove_cvref_t<Res>, Task<R>>)
    return std::forward<Res>(result);
  else
    return as_task<R>(std::forward<Res>(result));
}

// ---------------------------------------------------------------------------------------------
// Hooks

template <class S, class Params = typename slot_traits<S>::parameters,
          class Last = last_parameter_t<S>>
struct hook_calls;

template <class S, class... A, class... Last>
struct hook_calls<S, mp::mp_list<A...>, mp::mp_list<Last...>> {
  using result = typename slot_traits<S>::result;
  using sync_fn = result (*)(void*, arg_ref_t<A>..., Last&&...);
  using async_fn = Task<result> (*)(void*, arg_ref_t<A>..., Last&&...);
  // The call shape a hook must have, spelled as a function type for diagnostics.
  using expected_call = result(arg_ref_t<A>..., Last...);

  // Target: const H for an owned hook, H for a borrowed (std::ref) or shared one. Tag: empty
  // for a hook registered with add<S>, {S} for a multi-slot object registered with add_hooks,
  // which is called as `object(S{}, args..., [last])`.
  template <class Target, class... Tag>
  static constexpr call_kind kind = call_kind_of<result, Target&, Tag..., arg_ref_t<A>..., Last&&...>();

  template <class Target, class... Tag>
  static constexpr bool callable_with_last = [] {
    if constexpr (std::is_void_v<result>) return false;  // no `last` exists for void slots
    else return std::is_invocable_v<Target&, Tag..., arg_ref_t<A>..., std::optional<result>&&>;
  }();
  template <class Target, class... Tag>
  static constexpr bool callable_without_last = std::is_invocable_v<Target&, Tag..., arg_ref_t<A>...>;

  template <class Target, class... Tag>
  static result call_sync(void* object, arg_ref_t<A>... args, Last&&... last) {
    return (*static_cast<Target*>(object))(Tag{}..., args..., std::move(last)...);
  }
  template <class Target, class... Tag>
  static Task<result> call_async(void* object, arg_ref_t<A>... args, Last&&... last) {
    if constexpr (is_stateful_v<std::remove_const_t<Target>>)  // tells the hook which slot calls
      return static_cast<Target*>(object)->template call_for<S>(Tag{}..., args..., std::move(last)...);
    else
      return to_task<result>((*static_cast<Target*>(object))(Tag{}..., args..., std::move(last)...));
  }
};

// One registered hook, type-erased. `object` points at the hook; `owner` keeps it alive
// (empty for std::ref-borrowed hooks). Exactly one of sync/async is set.
template <class S>
struct hook_entry {
  using calls = hook_calls<S>;
  void* object = nullptr;
  typename calls::sync_fn sync = nullptr;
  typename calls::async_fn async = nullptr;
  HookId id;
  int priority = 0;
  std::shared_ptr<const void> owner;
};

// The diagnostic for a hook of the wrong shape. Its template arguments print the slot, the call
// shape it expects and the hook's type in the compiler's "required from" lines.
template <class Slot, class ExpectedCall, class Hook, class... Tag>
constexpr bool report_hook_shape() {
  using traits = slot_traits<Slot>;
  using calls = hook_calls<Slot>;
  using mutable_hook = std::remove_const_t<Hook>;
  constexpr bool needs_mutable = std::is_const_v<Hook> &&
                                 calls::template kind<Hook, Tag...> == call_kind::invalid &&
                                 calls::template kind<mutable_hook, Tag...> != call_kind::invalid;
  static_assert(!needs_mutable,
                "hookset: an owned hook is called as const, but this hook's call operator is "
                "not const: make it const, keep mutable state in hookset::Stateful<T>, or "
                "register std::ref(hook) or a std::shared_ptr to it");
  constexpr bool wrong_last =
      traits::is_fold
          ? !calls::template callable_with_last<Hook, Tag...> && calls::template callable_without_last<Hook, Tag...>
          : !calls::template callable_without_last<Hook, Tag...> && calls::template callable_with_last<Hook, Tag...>;
  if constexpr (needs_mutable) {
  } else if constexpr (wrong_last && traits::is_fold) {
    static_assert(!wrong_last,
                  "hookset: this slot folds `last`: the hook must take the slot's arguments "
                  "followed by `std::optional<R> last` (see ExpectedCall)");
  } else if constexpr (wrong_last) {
    static_assert(!wrong_last,
                  "hookset: this slot does not fold `last` (Singleton, Chain, Aggregate or void "
                  "slot): the hook must take only the slot's arguments, without a trailing "
                  "std::optional<R> (see ExpectedCall)");
  } else {
    static_assert(calls::template kind<Hook, Tag...> != call_kind::invalid,
                  "hookset: the hook must be callable as ExpectedCall and return the slot's "
                  "result type R, hookset::Task<R> or another awaitable of R");
  }
  return false;
}

template <class S, class Target, class... Tag>
inline constexpr bool hook_shape_ok = hook_calls<S>::template kind<Target, Tag...> != call_kind::invalid;

// Whether a multi-slot object means to implement S: it can be called with S first, in either
// shape (a wrong shape is then reported, not silently skipped).
template <class S, class Target>
inline constexpr bool implements_slot = hook_calls<S>::template callable_with_last<Target, S> ||
                                        hook_calls<S>::template callable_without_last<Target, S> ||
                                        hook_calls<S>::template callable_with_last<std::remove_const_t<Target>, S> ||
                                        hook_calls<S>::template callable_without_last<std::remove_const_t<Target>, S>;

// ---------------------------------------------------------------------------------------------
// Defaults and companions

template <class S, class Params = typename slot_traits<S>::parameters>
struct default_call;
template <class S, class... A>
struct default_call<S, mp::mp_list<A...>> {
  using result = typename slot_traits<S>::result;
  static constexpr bool declared = requires { &S::default_impl; };
  static constexpr call_kind kind = [] {
    if constexpr (requires(arg_ref_t<A>... a) { S::default_impl(a...); })
      return classify_result<decltype(S::default_impl(std::declval<arg_ref_t<A>>()...)), result>();
    else
      return call_kind::invalid;
  }();
  using expected_call = result(arg_ref_t<A>...);
};

template <class Slot, class ExpectedDefault>
constexpr bool report_default_shape() {
  static_assert(default_call<Slot>::declared,
                "hookset: the slot needs a default: `static R default_impl(Args...)` "
                "(or returning hookset::Task<R>), see ExpectedDefault");
  static_assert(!default_call<Slot>::declared || default_call<Slot>::kind != call_kind::invalid,
                "hookset: the slot's default_impl must be callable as ExpectedDefault and return "
                "R, hookset::Task<R> or another awaitable of R");
  return false;
}

// Companions are called as `const C&` when configured on a set (shared by concurrent
// dispatches) and as `C&` when default-constructed for one dispatch.
template <class S>
struct companion_calls {
  using traits = slot_traits<S>;
  using result = typename traits::result;
  using output = typename traits::output;

  template <class C>
  static constexpr call_kind chain_kind = call_kind_of<Flow, C&, const result&>();
  template <class A>
  static constexpr call_kind aggregate_kind = call_kind_of<output, A&, std::vector<result>&&>();
  template <class F>
  static constexpr call_kind finalize_kind = call_kind_of<output, F&, result&&>();
};

template <class Slot, class Result, class Output>
constexpr bool report_companion_shapes() {
  using traits = slot_traits<Slot>;
  using calls = companion_calls<Slot>;
  if constexpr (traits::has_chain)
    static_assert(calls::template chain_kind<typename traits::chain> != call_kind::invalid,
                  "hookset: the Chain companion must be callable as `Flow c(const R&)` "
                  "(or return hookset::Task<Flow>) for the slot's result type R");
  if constexpr (traits::has_aggregate)
    static_assert(calls::template aggregate_kind<typename traits::aggregate> != call_kind::invalid,
                  "hookset: the Aggregate companion must be callable as `R a(std::vector<R>)`, "
                  "or `T a(std::vector<R>)` with Output<T> (returning it directly or as a Task)");
  if constexpr (traits::has_finalize)
    static_assert(calls::template finalize_kind<typename traits::finalize> != call_kind::invalid,
                  "hookset: the Finalize companion must be callable as `R f(R)`, or `T f(R)` "
                  "with Output<T> (returning it directly or as a Task)");
  return true;
}

template <class S>
constexpr bool companions_ok() {
  using traits = slot_traits<S>;
  using calls = companion_calls<S>;
  if constexpr (traits::has_chain)
    if (calls::template chain_kind<typename traits::chain> == call_kind::invalid) return false;
  if constexpr (traits::has_aggregate)
    if (calls::template aggregate_kind<typename traits::aggregate> == call_kind::invalid) return false;
  if constexpr (traits::has_finalize)
    if (calls::template finalize_kind<typename traits::finalize> == call_kind::invalid) return false;
  return true;
}

// Everything about a slot that can be checked without a hook; instantiated by HookSet for each
// of its slots, so a bad slot is reported where the set is declared.
template <class S>
constexpr bool check_slot() {
  using traits = slot_traits<S>;
  if constexpr (!slot_options_ok<S>) {
    report_slot_options<S>();
    return false;
  } else if constexpr (default_call<S>::kind == call_kind::invalid)
    report_default_shape<S, typename default_call<S>::expected_call>();
  else if constexpr (!companions_ok<S>())
    report_companion_shapes<S, typename traits::result, typename traits::output>();
  return slot_options_ok<S> && default_call<S>::kind != call_kind::invalid && companions_ok<S>();
}

}  // namespace hookset::detail
