#pragma once
// What a dispatch of a slot kind holds besides its frame (frame.hpp): its bound arguments, a
// value, the instance of each companion it calls - and the attributing kind, the same kind
// asked which registration produced the result.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/hook_id.hpp>

namespace hookset::detail {

template <class Kind, class Params = typename Kind::parameters>
class dispatch;  // (dispatch.hpp)
template <class Kind, class Params = typename Kind::parameters>
class dispatch_call;  // what makes one (call.hpp)
// The layers over a dispatch, each a class of its own and a friend of it (detail/engine.hpp maps
// them).
template <class Dispatch>
class dispatch_driver;
template <class Dispatch>
class concurrent_runner;
template <class Dispatch>
struct interceptor_layer;
template <class Dispatch>
class pipeline_rules;
template <class Dispatch>
class plain_loops;
template <class Dispatch>
class dispatch_rules;
template <class Dispatch>
class aggregate_collection;
template <class Dispatch>
class hook_loop;
template <class Dispatch>
class attribution;
template <class Dispatch>
class watched_policy;

// The tag of a dispatch's constructor from the same dispatch, not started, of the kind with or
// without attribution (with_attribution, start_delegated).
struct converting_dispatch {};

struct no_value {};

// Where a dispatch keeps one value of type T (nothing for void).
template <class T>
using value_holder = std::conditional_t<std::is_void_v<T>, no_value, std::optional<T>>;

// The instance of companion C a dispatch calls: the one configured on the set if any (called
// as const, it is shared), else one default-constructed for this dispatch - only then.
template <class C>
class companion_instance {
  struct none {};

 public:
  static constexpr bool constructible = std::is_default_constructible_v<C>;
  void bind(const std::shared_ptr<const void>& configured) noexcept {
    configured_ = static_cast<const C*>(configured.get());
  }
  bool usable() const noexcept { return constructible || configured_ != nullptr; }

  template <class F>
  decltype(auto) visit(F&& f) {
    if constexpr (!constructible) {
      return std::forward<F>(f)(*configured_);  // usable() was checked when the dispatch began
    } else {
      if constexpr (std::is_invocable_v<F, const C&>)
        if (configured_) return std::forward<F>(f)(*configured_);
      if (!local_) local_.emplace();
      return std::forward<F>(f)(*local_);
    }
  }

 private:
  const C* configured_ = nullptr;
  [[no_unique_address]] std::conditional_t<constructible, std::optional<C>, none> local_;
};
template <>
class companion_instance<void> {
 public:
  static constexpr bool constructible = true;
  void bind(const std::shared_ptr<const void>&) noexcept {}
  bool usable() const noexcept { return true; }
};

// What an interceptor's Next holds: the dispatch it belongs to, and what next() starts - the
// interceptor at `index`, or the dispatch of the hooks once past the last.
struct next_handle {
  void* dispatch;
  std::size_t index;
};

// A dispatch asked which registration produced its result (`.with_attribution()`, docs/semantics.md
// section 4): the dispatch of Kind with that flag, a type of its own. Dispatches that do not ask
// are of Kind itself, and keep no trace of their producer.
template <class Kind>
struct attributing : Kind {};
template <class Kind>
struct plain_kind {
  using type = Kind;
};
template <class Kind>
struct plain_kind<attributing<Kind>> {
  using type = Kind;
};
template <class Kind>
inline constexpr bool is_attributing = !std::is_same_v<typename plain_kind<Kind>::type, Kind>;

// What an attributing dispatch whose slot has interceptors runs instead (start_delegated).
template <class Plain>
struct delegated_dispatch {
  bool started = false;
  late<Plain> plain;
  HookId interceptor;
  std::string name;
};
struct no_delegation {};  // (a type of its own: it shares its address with the other members)

// A dispatch's bound arguments: its first base, at the start of the object (the hooks receive
// their address: a pointer the caller has in a register already, not one more to keep).
template <class... A>
struct bound_arguments {
  std::tuple<bound_t<A>...> args_;

  // Calls fn(object, args..., extra...) with the arguments as the slot declares them. (No
  // lambda: a function pointer it captured would not be known constant, nor be inlined.)
  template <class Fn, class... Extra>
  HOOKSET_ALWAYS_INLINE decltype(auto) call_with_args(Fn fn, void* object, Extra&&... extra) {
    return call_with_args_at(std::index_sequence_for<A...>{}, fn, object,
                             std::forward<Extra>(extra)...);
  }
  template <std::size_t... I, class Fn, class... Extra>
  HOOKSET_ALWAYS_INLINE decltype(auto) call_with_args_at(std::index_sequence<I...>, Fn fn,
                                                         void* object, Extra&&... extra) {
    return fn(object, static_cast<arg_ref_t<A>>(std::get<I>(args_))...,
              std::forward<Extra>(extra)...);
  }
};

// What an adapter holds to run a dispatch (a tripwire's guards, an Asio operation): the engine's
// awaitable, made from what set.call<S>(...) returned or moved from one given options.
template <class Dispatch>
HOOKSET_ALWAYS_INLINE auto started_dispatch(Dispatch&& dispatch) {
  using plain = std::remove_cvref_t<Dispatch>;
  if constexpr (requires { typename plain::engine; }) return std::move(dispatch).start();
  else return plain(std::move(dispatch));
}
template <class Dispatch>
using started_dispatch_t = decltype(started_dispatch(std::declval<Dispatch>()));

}  // namespace hookset::detail
