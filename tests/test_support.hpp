// Small test-only tools: a manual event a coroutine hook can wait on, a detached runner that
// starts a dispatch without blocking, and an observer that records what it is told.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hookset/observer.hpp>

namespace test_support {

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

// Installs an observer for one scope and restores the previous one.
class ScopedObserver {
 public:
  explicit ScopedObserver(hookset::Observer* observer) : previous_(hookset::set_observer(observer)) {}
  ~ScopedObserver() { hookset::set_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  hookset::Observer* previous_;
};

}  // namespace test_support
