#pragma once
// Interceptors: code around a whole dispatch (middleware). Registered per slot with
// HookSet::intercept<S>, or for every slot of a set with HookSet::intercept_all.
//
//   set.intercept<ChooseModel>(
//       [](hookset::Next<ChooseModel> next, std::string_view task)
//           -> hookset::Task<std::optional<std::string>> {
//         if (task.empty()) co_return std::nullopt;        // refuse: the hooks never run
//         auto model = co_await next(task);                 // the rest of the dispatch
//         co_return model;                                  // (or something else)
//       });
//
// An interceptor gets a Next and the dispatch's arguments, as hooks get them. next(args...)
// runs the rest of the dispatch - the later interceptors, then the hooks and the default - with
// the same or replaced arguments, at most once, and is awaited for the dispatch's result (what
// set.call<S> yields). An interceptor returns that result, directly (a synchronous interceptor,
// which then runs the rest with hookset::sync_wait(next(args...))) or as an awaitable (a
// coroutine). It may return without calling next, change the result, catch or translate what
// next throws, and run code after it.

#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/mp11/list.hpp>

#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/engine.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/slot.hpp>

namespace hookset {

// What a dispatch of slot S yields: S's result, the Output<T> of an aggregating or finalizing
// slot, a pipeline's PipelineResult.
template <class S>
using call_result_t = typename detail::kind_of<S>::output;

// The rest of an intercepted dispatch of slot S, as its interceptor sees it.
template <class S, class Params = typename detail::kind_of<S>::parameters>
class Next;

template <class S, class... A>
class Next<S, boost::mp11::mp_list<A...>> {
 public:
  using slot = S;
  using output = call_result_t<S>;

  explicit Next(detail::next_handle handle) noexcept : handle_(handle) {}

  // The slot the interceptor wraps (a set-wide interceptor wraps them all).
  static constexpr std::string_view slot_name() noexcept { return hookset::slot_name<S>; }

  // The rest of the dispatch with `args` (the ones the interceptor got, or others), as an
  // awaitable of `output` that runs when awaited (co_await it, or hookset::sync_wait it in a
  // synchronous interceptor); it converts to Task<output>. Call it at most once: what a second
  // call returns fails with std::logic_error when awaited.
  auto operator()(detail::bound_t<A>... args) const {
    return typename detail::dispatch<detail::kind_of<S>>::next_call(
        handle_, static_cast<detail::bound_t<A>&&>(args)...);
  }

 private:
  detail::next_handle handle_;
};

namespace detail {

// The erased calls of an interceptor of type Target (called as const) for slot S.
template <class S, class Target, class Params = typename kind_of<S>::parameters>
struct interceptor_calls;
template <class S, class Target, class... A>
struct interceptor_calls<S, Target, mp::mp_list<A...>> {
  using output = call_result_t<S>;
  using next_type = Next<S>;

  static constexpr call_kind kind = [] {
    if constexpr (std::is_invocable_v<Target&, next_type, arg_ref_t<A>...>)
      return classify_result<std::invoke_result_t<Target&, next_type, arg_ref_t<A>...>, output>();
    else return call_kind::invalid;
  }();
  // For diagnostics: what the interceptor is called with.
  using expected_call = output(next_type, arg_ref_t<A>...);

  static output call_sync(void* object, next_handle next, arg_ref_t<A>... args) {
    return (*static_cast<Target*>(object))(next_type(next), args...);
  }
  static Task<output> call_async(void* object, next_handle next, arg_ref_t<A>... args) {
    return to_task<output>((*static_cast<Target*>(object))(next_type(next), args...));
  }

  static hook_entry::erased_fn sync() noexcept {
    if constexpr (kind == call_kind::sync)
      return reinterpret_cast<hook_entry::erased_fn>(&call_sync);
    else return nullptr;
  }
  // Whether the interceptor may suspend a dispatch (its registration names the driver).
  static constexpr bool suspends = kind == call_kind::async;
  static hook_entry::erased_fn async() noexcept {
    if constexpr (kind == call_kind::async)
      return reinterpret_cast<hook_entry::erased_fn>(&call_async);
    else return nullptr;
  }
};

template <class S, class Target>
inline constexpr bool interceptor_shape_ok =
    interceptor_calls<S, Target>::kind != call_kind::invalid;
template <class Target>
struct interceptor_shape_ok_for {
  template <class S>
  using fn = mp::mp_bool<interceptor_shape_ok<S, Target>>;
};

}  // namespace detail
}  // namespace hookset
