#pragma once
// How the library calls user code: how arguments reach defaults and hooks, what a call that
// "produces an R" may return (R itself, or an awaitable of it), and the conversion of any such
// awaitable into a Task.

#include <type_traits>
#include <utility>

#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/task.hpp>

namespace hookset::detail {

// How a declared parameter reaches the default and the hooks: a reference parameter as the
// caller's object, a value parameter as a const lvalue of the one copy the dispatch holds.
template <class A>
using arg_ref_t = std::conditional_t<std::is_reference_v<A>, std::remove_reference_t<A>&, const A&>;

// How a dispatch stores a bound argument.
template <class A>
using bound_t = std::conditional_t<std::is_reference_v<A>, std::remove_reference_t<A>&, A>;

enum class call_kind : unsigned char { invalid, sync, async };

// Awaitables of foreign coroutine types that cannot be awaited from a hookset::Task directly
// (an asio::awaitable only runs inside Asio's own coroutines) opt in by specialising this with
//   using result_type = T;  static Task<T> to_task(Awaitable&&);
// (<hookset/asio.hpp> does so for asio::awaitable).
template <class Awaitable>
struct foreign_awaitable;

template <class T>
concept adapted_awaitable = requires {
  typename foreign_awaitable<std::remove_cvref_t<T>>::result_type;
};

// Whether a call returning `Res` produces a `Want` directly (sync), through an awaitable
// (async), or not at all.
template <class Res, class Want>
constexpr call_kind classify_result() noexcept {
  if constexpr (std::is_void_v<Res>) {
    return std::is_void_v<Want> ? call_kind::sync : call_kind::invalid;
  } else if constexpr (adapted_awaitable<Res> || is_awaitable_v<Res>) {
    using Awaited = typename decltype([] {
      if constexpr (adapted_awaitable<Res>)
        return std::type_identity<
            typename foreign_awaitable<std::remove_cvref_t<Res>>::result_type>{};
      else return std::type_identity<await_result_t<Res>>{};
    }())::type;
    if constexpr (std::is_void_v<Want> || std::is_void_v<Awaited>)
      return std::is_void_v<Want> && std::is_void_v<Awaited> ? call_kind::async
                                                             : call_kind::invalid;
    else return std::is_convertible_v<Awaited, Want> ? call_kind::async : call_kind::invalid;
  } else if constexpr (!std::is_void_v<Want> && std::is_convertible_v<Res, Want>) {
    return call_kind::sync;
  } else {
    return call_kind::invalid;
  }
}

// Kind of calling F with Args... for a result of type Want; invalid when F cannot be called so.
// F is always an object, which the library calls with call syntax (never std::invoke): asked
// as that call, not std::is_invocable, whose machinery (INVOKE's cases, completeness checks) is
// a chain of classes for every hook, default and companion.
template <class F, class... Args>
concept callable_as = requires(F&& f, Args&&... args) {
  static_cast<F&&>(f)(static_cast<Args&&>(args)...);
};
template <class Want, class F, class... Args>
constexpr call_kind call_kind_of() noexcept {
  if constexpr (callable_as<F, Args...>)
    return classify_result<decltype(std::declval<F>()(std::declval<Args>()...)), Want>();
  else return call_kind::invalid;
}

// Turns any awaitable of something convertible to R into a Task<R>.
template <class R, class Awaitable>
Task<R> as_task(Awaitable awaitable) {
  if constexpr (std::is_void_v<R>) co_await std::move(awaitable);
  else co_return co_await std::move(awaitable);
}

template <class R, class Res>
Task<R> to_task(Res&& result) {
  using plain = std::remove_cvref_t<Res>;
  if constexpr (std::is_same_v<plain, Task<R>>) return std::forward<Res>(result);
  else if constexpr (adapted_awaitable<plain>) {
    if constexpr (std::is_same_v<typename foreign_awaitable<plain>::result_type, R>)
      return foreign_awaitable<plain>::to_task(std::forward<Res>(result));
    else return as_task<R>(foreign_awaitable<plain>::to_task(std::forward<Res>(result)));
  } else return as_task<R>(std::forward<Res>(result));
}

}  // namespace hookset::detail
