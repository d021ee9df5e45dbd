// Small test-only tools: the call log most dispatch tests check and the int(int) hooks that
// write to it, manual events a coroutine hook can wait on (resumed on this thread or another), a
// detached runner that starts a dispatch without blocking, and an observer that records what it
// is told.
#pragma once

#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <hookset/observer.hpp>
#include <hookset/stop_token.hpp>

namespace test_support {

// ---- the call log -------------------------------------------------------------------------------

// The calls of the current test case, in order: defaults, hooks and companions append to it, and
// each test compares the whole sequence. A mutex only because some tests resume a hook on another
// thread; the calls themselves never overlap.
using Log = std::vector<std::string>;
inline Log calls;
inline std::mutex calls_mutex;

inline void note(std::string entry) {
  std::lock_guard lock(calls_mutex);
  calls.push_back(std::move(entry));
}

// Starts a test case's log.
inline Log& fresh_log() {
  calls.clear();
  return calls;
}

// A copy of the log, taken under the mutex (for tests where another thread may still write).
inline Log logged() {
  std::lock_guard lock(calls_mutex);
  return calls;
}

template <class T>
std::string show(const std::optional<T>& last) {
  return last ? std::to_string(*last) : std::string("nullopt");
}

// A fold hook for an int(int) slot: logs "name(x, last=...)" and returns `last * 10 + tag`
// (`tag` alone when last is empty), so the result also encodes the order of the hooks.
inline auto fold_hook(std::string name, int tag) {
  return [name, tag](int x, std::optional<int> last) {
    note(name + "(" + std::to_string(x) + ", last=" + show(last) + ")");
    return last ? *last * 10 + tag : tag;
  };
}

// A non-fold hook for an int(int) slot: logs "name(x)" and returns `output`.
inline auto plain_hook(std::string name, int output) {
  return [name, output](int x) {
    note(name + "(" + std::to_string(x) + ")");
    return output;
  };
}

// ---- events
// ---------------------------------------------------------------------------------------

// Suspends whoever awaits it until fire() is called (on the calling thread, resuming inline).
class ManualEvent {
 public:
  bool is_set() const noexcept { return set_; }
  bool has_waiter() const noexcept { return static_cast<bool>(waiter_); }
  void fire() {
    set_ = true;
    if (auto waiter = std::exchange(waiter_, nullptr)) waiter.resume();
  }
  auto operator co_await() noexcept {
    struct awaiter {
      ManualEvent& event;
      bool await_ready() const noexcept { return event.set_; }
      void await_suspend(std::coroutine_handle<> h) noexcept { event.waiter_ = h; }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

 private:
  bool set_ = false;
  std::coroutine_handle<> waiter_;
};

// Suspends whoever awaits it until fire(); unlike ManualEvent it is always awaited (never ready)
// and may be fired from another thread: fire_when_waited_on() spins until someone waits.
class CrossThreadEvent {
 public:
  bool has_waiter() const noexcept { return waiting_.load(std::memory_order_acquire); }
  void fire() {
    if (!has_waiter()) throw std::logic_error("CrossThreadEvent::fire: nobody is waiting");
    waiting_.store(false, std::memory_order_relaxed);
    std::exchange(waiter_, nullptr).resume();
  }
  void fire_when_waited_on() {
    while (!has_waiter()) std::this_thread::yield();
    waiting_.store(false, std::memory_order_relaxed);
    std::exchange(waiter_, nullptr).resume();
  }

  auto operator co_await() noexcept {
    struct awaiter {
      CrossThreadEvent& event;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> waiting) noexcept {
        event.waiter_ = waiting;
        event.waiting_.store(true, std::memory_order_release);
      }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

 private:
  std::coroutine_handle<> waiter_;
  std::atomic<bool> waiting_{false};
};

// Suspends the awaiting coroutine until `token` is stopped (not at all if it already was, or
// cannot be); resumed on the thread that requests the stop. Safe when that thread runs the stop
// callback while this one is still registering it: whichever of the two comes second resumes
// (the callback, or await_suspend declining to suspend), and neither touches the waiter after
// handing over. Awaited as a named object (`until_stopped waiter{token}; co_await waiter;`)
// through a trivially destructible awaiter (GCC 12 destroys temporary awaiters with non-trivial
// members twice).
class until_stopped {
 public:
  explicit until_stopped(hookset::stop_token token) : token_(std::move(token)) {}

  auto operator co_await() & noexcept {
    struct awaiter {
      until_stopped& self;
      bool await_ready() const noexcept {
        return self.token_.stop_requested() || !self.token_.stop_possible();
      }
      bool await_suspend(std::coroutine_handle<> waiting) {
        self.waiting_ = waiting;
        self.callback_.emplace(self.token_, resume_second{&self});
        return !self.arrived_.exchange(true, std::memory_order_acq_rel);
      }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

 private:
  struct resume_second {
    until_stopped* self;
    void operator()() const noexcept {
      if (self->arrived_.exchange(true, std::memory_order_acq_rel)) self->waiting_.resume();
    }
  };
  hookset::stop_token token_;
  std::coroutine_handle<> waiting_;
  std::atomic<bool> arrived_{false};
  std::optional<hookset::stop_callback<resume_second>> callback_;
};

// An eager, self-destroying coroutine: `detach(awaitable, out)` starts the awaitable at once and
// stores its value (or exception) when it completes, without blocking the caller.
struct Detached {
  struct promise_type {
    Detached get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }
  };
};

template <class T>
struct Outcome {
  std::optional<T> value;
  std::exception_ptr error;
  bool done = false;
};

template <class Awaitable, class T>
Detached detach(Awaitable awaitable, Outcome<T>& out) {
  try {
    out.value.emplace(co_await std::move(awaitable));
  } catch (...) {
    out.error = std::current_exception();
  }
  out.done = true;
}

struct RecordingObserver : hookset::Observer {
  struct Event {
    std::string kind;  // "warning", "begin", "end"
    std::string slot;
    std::string message;
    std::uint64_t id = 0;
    std::size_t hooks_run = 0;
    bool failed = false;
  };
  std::vector<Event> events;

  void on_warning(std::string_view slot, std::string_view message) override {
    events.push_back({"warning", std::string(slot), std::string(message)});
  }
  void on_dispatch_begin(std::string_view slot, std::uint64_t id) override {
    events.push_back({"begin", std::string(slot), {}, id});
  }
  void on_dispatch_end(std::string_view slot, std::uint64_t id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    events.push_back({"end", std::string(slot), {}, id, hooks_run, error != nullptr});
  }
};

// The library's own scope guard (kept under this name for the tests that use it).
using ScopedObserver = hookset::ScopedObserver;

}  // namespace test_support
