#pragma once
// What a caller may give one dispatch: a stop token, a deadline, an executor.
//
//   auto check = hooks.call<CheckToolCall>(call).with({.stop_token = token, .timeout = 2s});
//   auto verdict = co_await std::move(check);  // named first: GCC 12 destroys a braced
//                                              // temporary in a co_await operand twice
//   auto model = hookset::sync_wait(hooks.call<ChooseModel>(task).with_timeout(500ms));
//
// And what a running hook may ask: the stop token of the dispatch that runs it,
// `co_await hookset::current_stop_token()` inside a hookset::Task (or take a trailing
// std::stop_token parameter).

#include <coroutine>
#include <optional>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/detail/chrono.hpp>

namespace hookset {

struct CallOptions {
  // When it is triggered, the dispatch asks its running hook to stop and ends with
  // DispatchCancelled (after that hook has finished).
  hookset::stop_token stop_token{};
  // The dispatch ends with DispatchTimeout when it has not completed by then: the running hook
  // is asked to stop, as for a cancellation. `timeout` counts from the dispatch's start; with
  // both, the earlier one applies.
  std::optional<std::chrono::steady_clock::time_point> deadline{};
  std::optional<std::chrono::nanoseconds> timeout{};
  // Timers for the deadline and hook time limits. Empty: the executor of the coroutine
  // awaiting the dispatch (as <hookset/asio.hpp> sets it), else hookset::default_executor().
  Executor* executor = nullptr;
};

namespace detail {
// (Holds a pointer, not a token: the awaiter stays trivially destructible, whatever the
// compiler does with the temporaries of a co_await expression.)
struct stop_token_awaiter {
  const hookset::stop_token* found = nullptr;
  bool await_ready() const noexcept { return false; }
  template <std::derived_from<await_context_carrier> Promise>
  bool await_suspend(std::coroutine_handle<Promise> self) noexcept {
    if (const await_context* context = self.promise().context_) found = context->nearest_stop();
    return false;
  }
  hookset::stop_token await_resume() const noexcept {
    return found ? *found : hookset::stop_token();
  }
};
}  // namespace detail

// `co_await hookset::current_stop_token()` inside a hookset::Task: the stop token of the
// nearest dispatch (awaiting this Task, directly or through other Tasks) that was given one, or
// that has a deadline or time limit; a token that never stops otherwise. Never suspends.
inline detail::stop_token_awaiter current_stop_token() noexcept { return {}; }

}  // namespace hookset
