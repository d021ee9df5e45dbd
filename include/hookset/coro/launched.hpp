#pragma once
// Tasks started at once, not awaited: run_detached, the one runner of the library's concurrent
// work (a concurrent slot's hooks, a tripwire's guards and work), and launched<T>, a Task so
// started whose outcome one coroutine awaits later:
//
//   launched<int> work;
//   launch(work, [&] { return make_task(); }, &link);  // runs until its first suspension
//   ...
//   co_await work.finished();                          // at once if it finished meanwhile
//   int value = work.take();                           // rethrows its exception
//
// A started Task has *finished* when its frame is destroyed - its locals and its by-value
// parameters with it - not when its body returns: only then is its owner told. So whoever
// waits for it to finish may free what the Task's code used, and nothing of it runs afterwards.
// The owner of a launched<T> awaits finished() before it goes.

#include <coroutine>
#include <exception>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/frame_pool.hpp>
#include <hookset/coro/task.hpp>

namespace hookset::detail {

// A coroutine nobody awaits: it runs from its call to its end and frees its own frame.
struct detached_coroutine {
  struct promise_type : pooled_frame, await_context_carrier {
    detached_coroutine get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }  // its body catches everything
  };
};

// Awaits `task` under `context` (the await context its code sees: stop token, executor), with
// nobody awaiting the runner. `sink` takes the outcome: sink.value(v) (sink.value() for void) or
// sink.error(e) as soon as the task has returned or thrown; then the task's frame is destroyed;
// then sink.finished() - after which the runner touches nothing of its owner's.
template <class T, class Sink>
detached_coroutine run_detached(Task<T> task, const await_context* context, Sink sink) {
  co_await exchange_await_context{context};
  {
    Task<T> running = std::move(task);  // (goes at the end of this block, before finished())
    try {
      if constexpr (std::is_void_v<T>) {
        co_await std::move(running);
        sink.value();
      } else {
        sink.value(co_await std::move(running));
      }
    } catch (...) {
      sink.error(std::current_exception());
    }
  }
  sink.finished();
}

template <class T>
class launched {
 public:
  launched() = default;
  launched(const launched&) = delete;
  launched& operator=(const launched&) = delete;

  bool started() const noexcept { return started_; }
  // Whether it has finished already (a Task that ran to its end inside launch).
  bool done() const {
    std::lock_guard lock(mutex_);
    return done_;
  }

  // Waits until the Task has finished (at once if it has).
  auto finished() noexcept {
    struct awaiter {
      launched& self;
      bool await_ready() const noexcept { return false; }
      bool await_suspend(std::coroutine_handle<> waiting) noexcept {
        std::lock_guard lock(self.mutex_);
        if (self.done_) return false;
        self.waiting_ = waiting;
        return true;
      }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }
  // Called with `argument` when the Task fails, as it fails (before it has finished): an owner
  // that must react at once (a tripwire stops the guards when its work fails). Set before launch.
  void on_failure(void (*notify)(void*) noexcept, void* argument) noexcept {
    on_failure_ = notify;
    on_failure_argument_ = argument;
  }
  // After finished(): its exception, if it failed.
  const std::exception_ptr& error() const noexcept { return error_; }
  // After finished(): its value (rethrows its exception).
  T take() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) return std::move(*value_);
  }

 private:
  template <class U, class Make>
  friend void launch(launched<U>& into, Make&& make, const await_context* context);

  // run_detached's sink.
  struct into_launched {
    launched* self;
    template <class... V>
    void value(V&&... value) {
      if constexpr (sizeof...(V) != 0) self->value_.emplace(std::forward<V>(value)...);
    }
    void error(std::exception_ptr error) noexcept { self->fail(std::move(error)); }
    void finished() noexcept {
      std::coroutine_handle<> wake;
      {
        std::lock_guard lock(self->mutex_);
        self->done_ = true;
        wake = std::exchange(self->waiting_, nullptr);
      }
      // (From here on `self` may be gone: its owner saw done_.)
      if (wake) wake.resume();
    }
  };
  void fail(std::exception_ptr error) noexcept {
    error_ = std::move(error);
    if (on_failure_) on_failure_(on_failure_argument_);
  }

  mutable std::mutex mutex_;
  bool started_ = false;
  bool done_ = false;
  std::coroutine_handle<> waiting_;
  std::exception_ptr error_;
  void (*on_failure_)(void*) noexcept = nullptr;
  void* on_failure_argument_ = nullptr;
  std::optional<std::conditional_t<std::is_void_v<T>, char, T>> value_;
};

// Starts the Task `make()` returns under `context`; it runs until its first suspension before
// launch returns. If make() throws, the launched Task has failed with that exception (and
// finished: there is nothing to wait for).
template <class T, class Make>
void launch(launched<T>& into, Make&& make, const await_context* context) {
  into.started_ = true;
  Task<T> task;
  try {
    task = std::forward<Make>(make)();
  } catch (...) {
    into.fail(std::current_exception());
    into.done_ = true;  // (nobody else knows it yet: no lock to take)
    return;
  }
  run_detached(std::move(task), context, typename launched<T>::into_launched{&into});
}

}  // namespace hookset::detail
