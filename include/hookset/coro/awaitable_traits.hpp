#pragma once
// Awaitable traits: how `co_await x` finds its awaiter, written down so library code
// (sync_wait, dispatch, hook adapters) can reason about "anything awaitable" the way
// the language does.

#include <concepts>
#include <coroutine>
#include <type_traits>
#include <utility>

namespace hookset::detail {

template <class T>
concept has_member_co_await = requires(T&& x) {
  static_cast<T&&>(x).operator co_await();
};

template <class T>
concept has_free_co_await = requires(T&& x) {
  operator co_await(static_cast<T&&>(x));
};

// The awaiter `co_await x` would use: a member `operator co_await`, else a free one (found by
// ADL), else `x` itself. What `operator co_await` returns is returned as it is (an awaiter by
// value, or a reference); `x` itself is forwarded as a reference (no copy, no move).
template <class T>
decltype(auto) get_awaiter(T&& x) {
  if constexpr (has_member_co_await<T>) {
    return static_cast<T&&>(x).operator co_await();
  } else if constexpr (has_free_co_await<T>) {
    return operator co_await(static_cast<T&&>(x));
  } else {
    return static_cast<T&&>(x);
  }
}

// Whether getting that awaiter cannot throw (only an operator co_await can).
template <class T>
consteval bool nothrow_get_awaiter_impl() {
  if constexpr (has_member_co_await<T>) return noexcept(std::declval<T>().operator co_await());
  else if constexpr (has_free_co_await<T>) return noexcept(operator co_await(std::declval<T>()));
  else return true;
}
template <class T>
inline constexpr bool nothrow_get_awaiter = nothrow_get_awaiter_impl<T>();

template <class T>
using awaiter_t = decltype(detail::get_awaiter(std::declval<T>()));

template <class R>
inline constexpr bool is_await_suspend_result_v = std::is_void_v<R> || std::is_same_v<R, bool>;
template <class P>
inline constexpr bool is_await_suspend_result_v<std::coroutine_handle<P>> = true;

// The language calls the awaiter's members on an lvalue, whatever value category
// get_awaiter produced, so the checks do too.
template <class A>
concept Awaiter = requires(std::remove_reference_t<A>& a, std::coroutine_handle<> h) {
  { a.await_ready() } -> std::convertible_to<bool>;
  a.await_suspend(h);
  a.await_resume();
}
&&is_await_suspend_result_v<decltype(std::declval<std::remove_reference_t<A>&>().await_suspend(
    std::declval<std::coroutine_handle<>>()))>;

template <class T>
concept Awaitable = requires(T&& x) {
  { detail::get_awaiter(static_cast<T&&>(x)) } -> Awaiter;
};

template <class T>
inline constexpr bool is_awaitable_v = Awaitable<T>;

// What `co_await std::declval<T>()` evaluates to (may be a reference or void).
template <Awaitable T>
using await_result_t =
    decltype(std::declval<std::remove_reference_t<awaiter_t<T>>&>().await_resume());

}  // namespace hookset::detail
