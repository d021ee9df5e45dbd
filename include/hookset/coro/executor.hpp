#pragma once
// hookset::Executor: what a dispatch needs from the execution context it runs in - timers, for
// deadlines and hook time limits. The core's hook-in point for event loops:
// <hookset/asio.hpp> provides one over an Asio executor; hookset::default_executor() is a
// process-wide timer thread for code that runs no event loop (sync_wait).

#include <memory>

#include <hookset/coro/config.hpp>
#include <hookset/coro/move_function.hpp>
#include <hookset/detail/chrono.hpp>

namespace hookset {

class Executor {
 public:
  using clock = std::chrono::steady_clock;
  // What start_timer calls: a move-only callable (any callable converts to it, std::function
  // too).
  using Callback = detail::move_function<void()>;

  // A started timer. cancel() (or destroying the timer) asks that `expire` not run; it may
  // still run once if it was already due - the callers of start_timer expect that, and keep
  // whatever `expire` touches alive through its own captures.
  class Timer {
   public:
    virtual ~Timer() = default;
    virtual void cancel() noexcept = 0;
  };

  virtual ~Executor() = default;

  // Calls `expire` once, on any thread, at `when` (or soon after), unless cancelled first.
  virtual std::unique_ptr<Timer> start_timer(clock::time_point when, Callback expire) = 0;
};

// The executor a dispatch uses when none is given and none is inherited from the coroutine
// that awaits it: a timer thread, started the first time a deadline or time limit needs one
// (<hookset/impl/executor.ipp>).
HOOKSET_DECL Executor& default_executor();

}  // namespace hookset

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/executor.ipp>
#endif
