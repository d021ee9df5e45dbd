#pragma once
// launched<T>: a Task started at once (not awaited), whose outcome is awaited later, once, by
// one coroutine. What a combinator that runs two pieces of work side by side - a tripwire's
// guards and its work - starts them with:
//
//   launched<int> work;
//   launch(work, make_task(), &link);  // runs until its first suspension
//   ...
//   co_await work.finished();          // at once if it finished meanwhile
//   int value = work.take();           // rethrows its exception
//
// The launched<T> must outlive the Task: its owner awaits finished() before it goes.

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

template <class T>
class launched {
 public:
  launched() = default;
  launched(const launched&) = delete;
  launched& operator=(const launched&) = delete;

  bool started() const noexcept { return started_; }

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
  // After finished(): its exception, if it failed.
  const std::exception_ptr& error() const noexcept { return error_; }
  // After finished(): its value (rethrows its exception).
  T take() {
    if (error_) std::rethrow_exception(error_);
    if constexpr (!std::is_void_v<T>) return std::move(*value_);
  }

 private:
  struct runner {
    struct promise_type : pooled_frame, await_context_carrier {
      runner get_return_object() noexcept { return {}; }
      std::suspend_never initial_suspend() noexcept { return {}; }
      std::suspend_never final_suspend() noexcept { return {}; }
      void return_void() noexcept {}
      void unhandled_exception() noexcept { std::terminate(); }  // run() catches everything
    };
  };
  template <class U>
  friend void launch(launched<U>& into, Task<U> task, const await_context* context);

  static runner run(launched* self, Task<T> task, const await_context* context) {
    co_await exchange_await_context{context};
    std::exception_ptr error;
    try {
      if constexpr (std::is_void_v<T>) co_await std::move(task);
      else self->value_.emplace(co_await std::move(task));
    } catch (...) {
      error = std::current_exception();
    }
    std::coroutine_handle<> wake;
    {
      std::lock_guard lock(self->mutex_);
      self->error_ = std::move(error);
      self->done_ = true;
      wake = std::exchange(self->waiting_, nullptr);
    }
    // (From here on `self` may be gone: its owner saw done_.)
    if (wake) wake.resume();
  }

  std::mutex mutex_;
  bool started_ = false;
  bool done_ = false;
  std::coroutine_handle<> waiting_;
  std::exception_ptr error_;
  std::optional<std::conditional_t<std::is_void_v<T>, char, T>> value_;
};

// Starts `task` under `context` (the await context its code sees: stop token, executor); it
// runs until its first suspension before launch returns.
template <class T>
void launch(launched<T>& into, Task<T> task, const await_context* context) {
  into.started_ = true;
  launched<T>::run(&into, std::move(task), context);
}

}  // namespace hookset::detail
