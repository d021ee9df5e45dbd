#pragma once
// hookset::sync_wait: runs an awaitable to completion from ordinary (non-coroutine) code.

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <exception>
#include <mutex>
#include <type_traits>
#include <utility>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/coro/task.hpp>

namespace hookset {

namespace detail {

// What sync_wait returns: the awaitable's result, except that an rvalue reference becomes a
// value (it would usually dangle: it points into the awaiter or a temporary task).
template <class T>
using sync_wait_result_t =
    std::conditional_t<std::is_rvalue_reference_v<await_result_t<T>>,
                       std::remove_cvref_t<await_result_t<T>>, await_result_t<T>>;

// One-shot event (an awaiter that suspends). set() notifies while holding the lock, so the
// waiter cannot return (and destroy the event) before set() is done with it.
class sync_wait_event {
 public:
  void set() noexcept {
    std::lock_guard lock(mutex_);
    done_ = true;
    ready_.notify_one();
  }
  void wait() noexcept {
    std::unique_lock lock(mutex_);
    ready_.wait(lock, [this] { return done_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
};

// Wraps an awaiter whose await_ready() was already called (and returned false), so that
// `co_await` on the wrapper goes straight to its await_suspend.
template <class Awaiter>
struct already_checked_awaiter {
  Awaiter& awaiter;

  bool await_ready() const noexcept { return false; }
  template <class Promise>
  decltype(auto) await_suspend(std::coroutine_handle<Promise> awaiting) {
    return awaiter.await_suspend(awaiting);
  }
  decltype(auto) await_resume() { return awaiter.await_resume(); }
};

// The driver's outcome (kind_ 1: value_, T& as a pointer; 2: error_): no variant to reset.
template <class T>
struct sync_wait_outcome {
  using stored = std::conditional_t<std::is_reference_v<T>, std::remove_reference_t<T>*, T>;
  late<stored> value_;
  late<std::exception_ptr> error_;
  unsigned char kind_ = 0;
  ~sync_wait_outcome() {
    if (kind_ == 1) value_.destroy();
    else if (kind_ == 2) error_.destroy();
  }
  template <class U = T>
  requires std::constructible_from<T, U&&>
  void return_value(U&& value) noexcept(std::is_nothrow_constructible_v<T, U&&>) {
    if constexpr (std::is_reference_v<T>) value_.emplace(std::addressof(value));
    else value_.emplace(std::forward<U>(value));
    kind_ = 1;
  }
  void unhandled_exception() noexcept { error_.emplace(std::current_exception()), kind_ = 2; }
  T result() && {
    if (kind_ == 2) std::rethrow_exception(error_.get());
    if constexpr (std::is_reference_v<T>) return *value_.get();
    else return std::move(value_.get());
  }
};
template <>
struct sync_wait_outcome<void> : coroutine_result<void> {};

// The coroutine sync_wait runs an awaiter in: it stores the result and tells run() it finished
// (setting run()'s event if run() waits). The owning sync_wait_driver destroys the frame.
template <class T>
class sync_wait_driver {
 public:
  struct promise_type : pooled_frame, await_context_carrier, sync_wait_outcome<T> {
    std::atomic<std::uintptr_t> waiter{0};         // first the awaiter (finished) or run()'s event
    static constexpr std::uintptr_t finished = 1;  // (an event's address is never 1)

    sync_wait_driver get_return_object() noexcept {
      return sync_wait_driver(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_always initial_suspend() const noexcept { return {}; }
    auto final_suspend() const noexcept {
      struct set_event {
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<promise_type> self) const noexcept {
          // acq_rel: the result to run(), run()'s event to us; then the frame is run()'s.
          const std::uintptr_t waiting =
              self.promise().waiter.exchange(finished, std::memory_order_acq_rel);
          if (waiting) reinterpret_cast<sync_wait_event*>(waiting)->set();
        }
        void await_resume() const noexcept {}
      };
      return set_event{};
    }
  };

  sync_wait_driver(sync_wait_driver&& other) noexcept
      : coroutine_(std::exchange(other.coroutine_, {})) {}
  sync_wait_driver& operator=(sync_wait_driver&&) = delete;
  ~sync_wait_driver() {
    if (coroutine_) coroutine_.destroy();
  }

  // Blocks until the driven awaiter has completed, on whichever thread that happens. (Out of
  // line under Clang and no coroutine: it reads the thread's scoped context itself, config.hpp.)
  HOOKSET_THREAD_LOCAL_ACCESS T run() {
    promise_type& promise = coroutine_.promise();
    // Blocking here on behalf of the scoped context, if any: what we drive belongs to it.
    promise.context_ = scoped_await_context;
    coroutine_.resume();
    if (promise.waiter.load(std::memory_order_acquire) != promise_type::finished) wait(promise);
    return std::move(promise).result();
  }

 private:
  // The awaiter suspended: blocks until it finished (which failing, the exchange found).
  HOOKSET_NOINLINE static void wait(promise_type& promise) noexcept {
    sync_wait_event event;
    std::uintptr_t expected = 0;
    if (promise.waiter.compare_exchange_strong(expected, reinterpret_cast<std::uintptr_t>(&event),
                                               std::memory_order_acq_rel))
      event.wait();
  }

  explicit sync_wait_driver(std::coroutine_handle<promise_type> coroutine) noexcept
      : coroutine_(coroutine) {}
  std::coroutine_handle<promise_type> coroutine_;
};

template <class T, class Awaiter>
sync_wait_driver<T> drive_awaiter(Awaiter& awaiter) {
  co_return co_await already_checked_awaiter<Awaiter>{awaiter};
}

// The rest of sync_wait when the awaiter suspends: kept out of line.
template <class T, class Awaiter>
HOOKSET_NOINLINE T wait_suspended(Awaiter& awaiter) {
  return drive_awaiter<T>(awaiter).run();
}

}  // namespace detail

// Runs `awaitable` to completion on the calling thread (blocking it while the awaitable is
// suspended, which it may finish on any thread) and returns its result or rethrows its
// exception. await_ready() is called exactly once; when it returns true the result is taken
// right away: no coroutine frame, no allocation, no synchronisation.
template <class A>
requires detail::Awaitable<A> HOOKSET_ALWAYS_INLINE detail::sync_wait_result_t<A> sync_wait(
    A&& awaitable) {
  using result_type = detail::sync_wait_result_t<A>;
  // What set.call<S>(...) returns runs itself (detail/dispatch/call.hpp): the same steps, its
  // state made only when it has hooks or watchers.
  if constexpr (requires { std::move(awaitable).run_to_completion(); })
    return std::move(awaitable).run_to_completion();
  auto&& awaiter = detail::get_awaiter(std::forward<A>(awaitable));
  if (awaiter.await_ready()) return awaiter.await_resume();
  // (A dispatch waits through the code its suspension left: a file whose dispatches cannot
  // suspend does not contain the coroutine that waits.)
  if constexpr (requires { awaiter.wait_suspended(); }) return awaiter.wait_suspended();
  else return detail::wait_suspended<result_type>(awaiter);
}

}  // namespace hookset
