#pragma once
// The process-wide sink for warnings and dispatch tracing.

#include <atomic>
#include <cstdint>
#include <cstddef>
#include <exception>
#include <iostream>
#include <string_view>

namespace hookset {

struct Observer {
  virtual ~Observer() = default;
  virtual void on_warning(std::string_view /*slot*/, std::string_view /*message*/) {}
  virtual void on_dispatch_begin(std::string_view /*slot*/, std::uint64_t /*dispatch_id*/) {}
  virtual void on_dispatch_end(std::string_view /*slot*/, std::uint64_t /*dispatch_id*/,
                               std::size_t /*hooks_run*/, std::exception_ptr /*error*/) {}
};

// Writes warnings to std::clog; ignores tracing. Install with set_observer(&instance).
struct ClogObserver : Observer {
  void on_warning(std::string_view slot, std::string_view message) override {
    std::clog << "hookset warning [" << slot << "]: " << message << '\n';
  }
};

namespace detail {
inline std::atomic<Observer*> installed_observer{nullptr};
inline std::atomic<std::uint64_t> next_dispatch_id{1};

inline Observer* current_observer() noexcept {
  return installed_observer.load(std::memory_order_acquire);
}

inline void warn(std::string_view slot, std::string_view message) {
  if (Observer* observer = current_observer()) observer->on_warning(slot, message);
}
}  // namespace detail

// Installs `observer` (nullptr: none) and returns the previous one. The observer must stay
// alive while installed.
inline Observer* set_observer(Observer* observer) noexcept {
  return detail::installed_observer.exchange(observer, std::memory_order_acq_rel);
}

// Installs an observer for one scope and puts the previous one back at its end (also when the
// scope is left by an exception).
class ScopedObserver {
 public:
  explicit ScopedObserver(Observer* observer) noexcept : previous_(set_observer(observer)) {}
  ~ScopedObserver() { set_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  Observer* previous_;
};

}  // namespace hookset
