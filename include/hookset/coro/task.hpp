#pragma once
// hookset::Task<T>: a lazy, move-only coroutine task with symmetric transfer, pooled frames and
// an await context inherited from the coroutine that awaits it.

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <variant>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/frame_pool.hpp>

// How a Task is started by the coroutine that awaits it.
//
// Symmetric transfer (1): the awaiter's await_suspend returns the task's handle and the task's
// final awaiter returns the awaiting handle. No atomics; but stack use stays bounded only if the
// compiler turns those handle transfers into tail calls. Clang does so at every optimisation
// level (checked: Clang 14 at -O0 to -O3). GCC 12 does so only with -foptimize-sibling-calls
// (-O2, -O3, -Os) and not with sanitizers: at -O0, -Og, -O1 and with -fsanitize=address, a
// coroutine awaiting 1,000,000 synchronously completing tasks in a loop overflows the stack,
// because each iteration nests two more calls. No macro tells -O1 from -O2, so GCC cannot be
// trusted here.
//
// Handshake (0): the awaiter resumes the task with a plain call, and when that call returns it
// races the task's final awaiter on one atomic flag; whichever side arrives second continues the
// awaiting coroutine. A task that finished synchronously is thus continued by returning false
// from await_suspend, which unwinds the stack every iteration whatever the optimiser does. The
// final awaiter still uses symmetric transfer when it must resume the awaiter (the task
// completed asynchronously), which costs stack only per nesting level, not per loop iteration.
//
// The choice changes the promise layout: every translation unit must use the same value.
#ifndef HOOKSET_TASK_SYMMETRIC_TRANSFER
#if defined(__clang__)
#define HOOKSET_TASK_SYMMETRIC_TRANSFER 1
#else
#define HOOKSET_TASK_SYMMETRIC_TRANSFER 0
#endif
#endif

namespace hookset {

template <class T = void>
class Task;

namespace detail {

// Outcome of a coroutine: nothing yet, a value, or an exception. `result()` rethrows.
template <class T>
class coroutine_result {
 public:
  template <class U = T>
  requires std::constructible_from<T, U&&>
  void return_value(U&& value) noexcept(std::is_nothrow_constructible_v<T, U&&>) {
    state_.template emplace<1>(std::forward<U>(value));
  }
  void unhandled_exception() noexcept { state_.template emplace<2>(std::current_exception()); }

  T& result() & {
    if (state_.index() != 1) [[unlikely]]
      rethrow_failure();
    return *std::get_if<1>(&state_);
  }
  T&& result() && {
    if (state_.index() != 1) [[unlikely]]
      rethrow_failure();
    return std::move(*std::get_if<1>(&state_));
  }

 private:
  // (std::get_if, not std::get: no std::bad_variant_access code in every file with a Task.)
  [[noreturn]] void rethrow_failure() const {
    if (const std::exception_ptr* error = std::get_if<2>(&state_)) std::rethrow_exception(*error);
    std::terminate();  // no value and no error: read before the coroutine returned (a bug)
  }
  std::variant<std::monostate, T, std::exception_ptr> state_;
};

template <class T>
class coroutine_result<T&> {
 public:
  void return_value(T& value) noexcept { state_.template emplace<1>(std::addressof(value)); }
  void unhandled_exception() noexcept { state_.template emplace<2>(std::current_exception()); }

  T& result() const {
    if (state_.index() != 1) [[unlikely]] {
      if (const std::exception_ptr* error = std::get_if<2>(&state_)) std::rethrow_exception(*error);
      std::terminate();  // no value and no error: read before the coroutine returned (a bug)
    }
    return **std::get_if<1>(&state_);
  }

 private:
  std::variant<std::monostate, T*, std::exception_ptr> state_;
};

template <>
class coroutine_result<void> {
 public:
  void return_void() noexcept {}
  void unhandled_exception() noexcept { error_ = std::current_exception(); }

  void result() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::exception_ptr error_;
};

// Frames of all library coroutines are recycled through the thread's frame_pool.
struct pooled_frame {
  static void* operator new(std::size_t size) { return frame_pool::allocate(size); }
  static void operator delete(void* frame, std::size_t size) noexcept {
    frame_pool::deallocate(frame, size);
  }
};

// An awaiter awaited through a pointer to it. GCC 12 awaits a copy of an awaiter it receives as a
// reference - from await_transform, or from an operator co_await that returns one (GCC bug
// 99575) - so a Task hands it this prvalue instead: whatever GCC copies is the pointer, and the
// awaiter itself (an lvalue the user named, a temporary of the co_await expression) is awaited.
template <class Awaiter>
struct awaiter_ref {
  Awaiter* awaiter;

  decltype(auto) await_ready() { return awaiter->await_ready(); }
  template <class Promise>
  decltype(auto) await_suspend(std::coroutine_handle<Promise> awaiting) {
    return awaiter->await_suspend(awaiting);
  }
  decltype(auto) await_resume() { return awaiter->await_resume(); }
};

// await_ready of an awaiter that runs user code there (a dispatch's synchronous hooks): the code
// sees the awaiting Task's context as the thread's scoped context (await_context.hpp). One that
// sets it itself, where its code needs it, takes it (`await_ready_in(context)`); for any other,
// this function sets it around the call - out of line under Clang and no coroutine, so it
// reaches the thread_local itself (config.hpp).
template <class Awaiter>
HOOKSET_THREAD_LOCAL_ACCESS bool await_ready_in_scope(Awaiter& awaiter,
                                                      const await_context* context) {
  await_context_scope_here scope(context);
  return awaiter.await_ready();
}
template <class Awaiter>
HOOKSET_ALWAYS_INLINE bool await_ready_in(Awaiter& awaiter, const await_context* context) {
  if constexpr (requires { awaiter.await_ready_in(context); })
    return awaiter.await_ready_in(context);
  else return await_ready_in_scope(awaiter, context);
}

// awaiter_ref for such an awaiter.
template <class Awaiter>
struct in_context_awaiter : awaiter_ref<Awaiter> {
  const await_context* context;

  bool await_ready() { return detail::await_ready_in(*this->awaiter, context); }
};

// The same for such an awaiter that an operator co_await made (what set.call<S>(...) returns
// makes the dispatch's awaiter so): held here, made in place.
template <class Awaiter>
struct in_context_owned_awaiter {
  Awaiter awaiter;
  const await_context* context;

  bool await_ready() { return detail::await_ready_in(awaiter, context); }
  template <class Promise>
  decltype(auto) await_suspend(std::coroutine_handle<Promise> awaiting) {
    return awaiter.await_suspend(awaiting);
  }
  decltype(auto) await_resume() { return awaiter.await_resume(); }
};

// Whether `a` looks like an awaiter at all: what does not is left for the language to reject.
template <class Awaiter>
concept has_await_ready = requires(Awaiter& a) {
  a.await_ready();
};

class task_promise_base : public pooled_frame, public await_context_carrier {
 public:
  std::suspend_always initial_suspend() const noexcept { return {}; }

  // What a Task awaits reaches the language as a prvalue awaiter, never as a reference (see
  // awaiter_ref): the awaiter an operator co_await made, as it is; else a pointer to the awaiter
  // `co_await x` uses (x itself, or what its operator co_await refers to), so x is neither copied
  // nor moved. A dispatch's awaiter runs its synchronous hooks in this Task's context.
  template <class A>
  decltype(auto) await_transform(A&& awaitable) noexcept(nothrow_get_awaiter<A>) {
    using awaiter = awaiter_t<A>;
    if constexpr (runs_code_in_await_ready<std::remove_cvref_t<A>>) {
      return in_context_awaiter<std::remove_reference_t<A>>{{std::addressof(awaitable)}, context_};
    } else if constexpr (!std::is_reference_v<awaiter>) {
      if constexpr (runs_code_in_await_ready<awaiter>)
        return in_context_owned_awaiter<awaiter>{get_awaiter(std::forward<A>(awaitable)), context_};
      else return get_awaiter(std::forward<A>(awaitable));
    } else if constexpr (has_await_ready<awaiter>) {
      auto&& referred = get_awaiter(std::forward<A>(awaitable));
      return awaiter_ref<std::remove_reference_t<awaiter>>{std::addressof(referred)};
    } else {
      return std::forward<A>(awaitable);
    }
  }

  struct final_awaiter {
    bool await_ready() const noexcept { return false; }

    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
      task_promise_base& promise = self.promise();
#if HOOKSET_TASK_SYMMETRIC_TRANSFER
      return promise.continuation_;
#else
      // Finishing inside the resume() call of start() on this very thread: the awaiter is
      // still in await_suspend, on this stack, and will continue by itself - no race to settle.
      if (starting() == &promise) {
        promise.finished_inline_ = true;
        return std::noop_coroutine();
      }
      // acq_rel: release publishes our result to the awaiter if it arrives second; acquire
      // makes its write of continuation_ visible to us if we arrive second.
      if (promise.arrived_.exchange(true, std::memory_order_acq_rel)) {
        return promise.continuation_;  // the awaiter is suspended already: resume it
      }
      // The awaiter is still in await_suspend and will continue by itself; from here on it may
      // destroy this frame at any moment, so nothing below touches it.
      return std::noop_coroutine();
#endif
    }

    void await_resume() const noexcept {}
  };

  final_awaiter final_suspend() const noexcept { return {}; }

  // Called by the awaiter's await_suspend. Returns the awaiter's await_suspend result:
  // the handle to transfer to (symmetric) or whether the awaiter stays suspended (handshake).
  template <class Promise>
  static auto start(std::coroutine_handle<Promise> task,
                    std::coroutine_handle<> awaiting) noexcept {
    return start(task, task.promise(), awaiting);
  }
  // The same for a task whose promise type is not known here (erased_task).
  static auto start(std::coroutine_handle<> task, task_promise_base& promise,
                    std::coroutine_handle<> awaiting) noexcept {
    promise.continuation_ = awaiting;
#if HOOKSET_TASK_SYMMETRIC_TRANSFER
    return task;
#else
    const task_promise_base*& starting_here = starting();  // (resume() returns on this thread)
    const task_promise_base* const outer = starting_here;
    starting_here = &promise;
    task.resume();
    starting_here = outer;
    // The common case, a task that finished without suspending: no atomic operation at all.
    if (promise.finished_inline_) return false;
    // Second to arrive: the task has finished, so the awaiter goes on without suspending.
    return !promise.arrived_.exchange(true, std::memory_order_acq_rel);
#endif
  }

 private:
  // Always set before the task first runs: a Task only starts by being awaited.
  std::coroutine_handle<> continuation_;
#if !HOOKSET_TASK_SYMMETRIC_TRANSFER
  std::atomic<bool> arrived_{false};
  bool finished_inline_ = false;  // only ever touched by the thread running start()
  // The task whose start() is inside its resume() call on this thread, if any (config.hpp:
  // through starting() only).
  static inline thread_local constinit const task_promise_base* starting_task = nullptr;
  HOOKSET_THREAD_LOCAL_ACCESS static const task_promise_base*& starting() noexcept {
    return starting_task;
  }
#endif
};

template <class T>
class task_promise final : public task_promise_base, public coroutine_result<T> {
 public:
  Task<T> get_return_object() noexcept;
};

// A Task of any value type, awaited where the type does not matter (a dispatch's driver awaits
// whatever its dispatch left pending at one place, whatever it is): awaiting it runs the task to
// its end, in the awaiting coroutine's context, and leaves the outcome in the task; take<T>()
// then moves it out (rethrowing the task's exception) and destroys the task. Owns the task:
// destroys it, finished or not, with itself.
class erased_task {
 public:
  erased_task() noexcept = default;
  template <class T>
  explicit erased_task(Task<T>&& task) noexcept;
  erased_task(erased_task&& other) noexcept
      : coroutine_(std::exchange(other.coroutine_, {})), promise_(other.promise_) {}
  erased_task& operator=(erased_task&& other) noexcept {
    if (this != &other) {
      if (coroutine_) coroutine_.destroy();
      coroutine_ = std::exchange(other.coroutine_, {});
      promise_ = other.promise_;
    }
    return *this;
  }
  ~erased_task() {
    if (coroutine_) coroutine_.destroy();
  }

  bool await_ready() const noexcept { return false; }  // (a task not started yet)
  template <class Promise>
  auto await_suspend(std::coroutine_handle<Promise> awaiting) noexcept {
    promise_->context_ = context_of(awaiting);
    return task_promise_base::start(coroutine_, *promise_, std::coroutine_handle<>(awaiting));
  }
  void await_resume() const noexcept {}

  // Holds `task`, when it holds none (a task taken).
  template <class T>
  void hold(Task<T>&& task) noexcept;

  // The outcome of the finished task, a Task<T>: its value moved out, or its exception rethrown.
  // The task is destroyed; this holds none.
  template <class T>
  HOOKSET_ALWAYS_INLINE T take() {
    struct destroy_after {  // (also when the outcome is an exception)
      erased_task& task;
      ~destroy_after() { std::exchange(task.coroutine_, {}).destroy(); }
    } done{*this};
    return std::move(
               std::coroutine_handle<task_promise<T>>::from_address(coroutine_.address()).promise())
        .result();
  }

 private:
  std::coroutine_handle<> coroutine_;
  task_promise_base* promise_ = nullptr;
};

}  // namespace detail

// A lazy coroutine: the body starts when the Task is first awaited and the awaiting coroutine
// resumes when it finishes. The Task owns the coroutine frame and destroys it with itself
// (also when the task never started). `co_await task` yields a reference to the stored result
// (T& for a value type), `co_await std::move(task)` moves the value out; `Task<T&>` yields T&.
// An exception escaping the body is rethrown to the awaiter.
template <class T>
class [[nodiscard]] Task {
  static_assert(!std::is_rvalue_reference_v<T>, "hookset::Task<T&&> is not supported: use Task<T>");

 public:
  using promise_type = detail::task_promise<T>;
  using value_type = T;

  Task() noexcept = default;
  Task(Task&& other) noexcept : coroutine_(std::exchange(other.coroutine_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      if (coroutine_) coroutine_.destroy();
      coroutine_ = std::exchange(other.coroutine_, {});
    }
    return *this;
  }
  ~Task() {
    if (coroutine_) coroutine_.destroy();
  }

  // Started and finished (with a value or an exception).
  bool is_ready() const noexcept { return coroutine_ && coroutine_.done(); }

  auto operator co_await() & noexcept { return lvalue_awaiter{coroutine_}; }
  auto operator co_await() && noexcept { return rvalue_awaiter{coroutine_}; }

 private:
  using handle = std::coroutine_handle<promise_type>;
  friend promise_type;
  friend detail::erased_task;
  explicit Task(handle coroutine) noexcept : coroutine_(coroutine) {}

  struct awaiter_base {
    handle coroutine;

    // A finished task (awaited before, as an lvalue) is not started again.
    bool await_ready() const noexcept { return !coroutine || coroutine.done(); }
    // The task runs in the await context of the coroutine that awaits it (await_context.hpp).
    template <class Promise>
    auto await_suspend(std::coroutine_handle<Promise> awaiting) noexcept {
      coroutine.promise().context_ = detail::context_of(awaiting);
      return promise_type::start(coroutine, std::coroutine_handle<>(awaiting));
    }
    promise_type& promise() const {
      if (!coroutine) throw std::logic_error("hookset::Task: co_await on an empty Task");
      return coroutine.promise();
    }
  };
  struct lvalue_awaiter : awaiter_base {
    std::add_lvalue_reference_t<T> await_resume() { return this->promise().result(); }
  };
  struct rvalue_awaiter : awaiter_base {
    T await_resume() { return std::move(this->promise()).result(); }
  };

  handle coroutine_;
};

template <class T>
Task<T> detail::task_promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<task_promise>::from_promise(*this));
}

template <class T>
detail::erased_task::erased_task(Task<T>&& task) noexcept {
  hold(std::move(task));
}
template <class T>
HOOKSET_ALWAYS_INLINE void detail::erased_task::hold(Task<T>&& task) noexcept {
  promise_ = &task.coroutine_.promise();
  coroutine_ = std::exchange(task.coroutine_, {});
}

}  // namespace hookset
