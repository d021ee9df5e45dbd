#pragma once
// mini_task<T>: the smallest correct lazy coroutine task, for the hand-written coroutine peer.
// Lazy start, the awaiting coroutine stored in the promise, symmetric transfer both ways, the
// exception stored and rethrown, frames from the default allocator (global operator new).

#include <coroutine>
#include <exception>
#include <optional>
#include <utility>

namespace hookset_bench {

template <class T>
class mini_task;

namespace detail {

struct mini_promise_base {
  std::coroutine_handle<> continuation = std::noop_coroutine();
  std::exception_ptr error;

  std::suspend_always initial_suspend() const noexcept { return {}; }
  struct final_awaiter {
    bool await_ready() const noexcept { return false; }
    template <class P>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<P> self) const noexcept {
      return self.promise().continuation;
    }
    void await_resume() const noexcept {}
  };
  final_awaiter final_suspend() const noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
  void rethrow_if_failed() const {
    if (error) std::rethrow_exception(error);
  }
};

template <class T>
struct mini_promise : mini_promise_base {
  std::optional<T> value;
  mini_task<T> get_return_object() noexcept;
  template <class U>
  void return_value(U&& v) {
    value.emplace(std::forward<U>(v));
  }
  T take() {
    rethrow_if_failed();
    return std::move(*value);
  }
};

template <>
struct mini_promise<void> : mini_promise_base {
  mini_task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() const { rethrow_if_failed(); }
};

}  // namespace detail

template <class T>
class [[nodiscard]] mini_task {
 public:
  using promise_type = detail::mini_promise<T>;
  using handle = std::coroutine_handle<promise_type>;

  explicit mini_task(handle h) noexcept : handle_(h) {}
  mini_task(mini_task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  mini_task& operator=(mini_task&&) = delete;
  ~mini_task() {
    if (handle_) handle_.destroy();
  }

  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
    handle_.promise().continuation = awaiting;
    return handle_;
  }
  T await_resume() { return handle_.promise().take(); }

  // Runs the task from ordinary code; only for tasks that never really suspend (true of every
  // benchmark loop here), so it needs no event.
  T run_synchronously() {
    handle_.resume();
    if (!handle_.done()) std::terminate();
    return handle_.promise().take();
  }

 private:
  handle handle_;
};

template <class T>
mini_task<T> detail::mini_promise<T>::get_return_object() noexcept {
  return mini_task<T>(std::coroutine_handle<mini_promise>::from_promise(*this));
}
inline mini_task<void> detail::mini_promise<void>::get_return_object() noexcept {
  return mini_task<void>(std::coroutine_handle<mini_promise>::from_promise(*this));
}

}  // namespace hookset_bench
