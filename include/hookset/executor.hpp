#pragma once
// hookset::Executor: what a dispatch needs from the execution context it runs in - timers, for
// deadlines and hook time limits. The core's hook-in point for event loops:
// <hookset/asio.hpp> provides one over an Asio executor; hookset::default_executor() is a
// process-wide timer thread for code that runs no event loop (sync_wait).

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

namespace hookset {

class Executor {
 public:
  using clock = std::chrono::steady_clock;

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
  virtual std::unique_ptr<Timer> start_timer(clock::time_point when,
                                             std::function<void()> expire) = 0;
};

namespace detail {

// One thread that fires timers in deadline order. Started on first use, stopped and joined at
// process exit.
class timer_thread final : public Executor {
 public:
  timer_thread() = default;
  timer_thread(const timer_thread&) = delete;
  timer_thread& operator=(const timer_thread&) = delete;
  ~timer_thread() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  std::unique_ptr<Timer> start_timer(clock::time_point when,
                                     std::function<void()> expire) override {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    const std::uint64_t id = ++last_id_;
    const bool earliest = queue_.empty() || when < queue_.begin()->first.first;
    queue_.emplace(std::make_pair(when, id), std::move(expire));
    if (earliest) wake_.notify_all();
    return std::make_unique<handle>(*this, when, id);
  }

 private:
  using key = std::pair<clock::time_point, std::uint64_t>;

  class handle final : public Timer {
   public:
    handle(timer_thread& owner, clock::time_point when, std::uint64_t id)
        : owner_(owner), key_(when, id) {}
    ~handle() override { cancel(); }
    void cancel() noexcept override {
      std::function<void()> dropped;  // destroyed outside the lock: it may own anything
      {
        std::lock_guard lock(owner_.mutex_);
        auto found = owner_.queue_.find(key_);
        if (found == owner_.queue_.end()) return;
        dropped = std::move(found->second);
        owner_.queue_.erase(found);
      }
    }

   private:
    timer_thread& owner_;
    key key_;
  };

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (queue_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const auto due = queue_.begin()->first.first;
      if (clock::now() < due) {
        wake_.wait_until(lock, due);
        continue;
      }
      std::function<void()> expire = std::move(queue_.begin()->second);
      queue_.erase(queue_.begin());
      lock.unlock();
      expire();
      expire = nullptr;
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<key, std::function<void()>> queue_;
  std::uint64_t last_id_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace detail

// The executor a dispatch uses when none is given and none is inherited from the coroutine
// that awaits it: a timer thread, started the first time a deadline or time limit needs one.
inline Executor& default_executor() {
  static detail::timer_thread executor;
  return executor;
}

}  // namespace hookset
