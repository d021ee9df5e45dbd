#pragma once
// The timer thread behind hookset::default_executor() (coro/executor.hpp): compiled in every file
// that includes it in header-only mode, once in <hookset/impl/src.hpp> with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <hookset/coro/config.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/detail/chrono.hpp>

namespace hookset {

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

  std::unique_ptr<Timer> start_timer(clock::time_point when, Callback expire) override {
    auto timer = std::make_unique<handle>(*this, when, 0);  // (allocated before the lock)
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    const std::uint64_t id = ++last_id_;
    // The queue is sorted by (when, id), latest first: the next one due is at the back.
    std::size_t at = queue_.size();
    while (at != 0 && queue_[at - 1].key.before({when, id})) --at;
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(at),
                  entry{{when, id}, std::move(expire)});
    timer->key_.id = id;  // (from here on, destroying the handle cancels the entry)
    if (at == queue_.size() - 1) wake_.notify_all();  // the earliest now
    return timer;
  }

 private:
  struct timer_key {
    clock::time_point when;
    std::uint64_t id;
    bool before(const timer_key& other) const noexcept {
      return when < other.when || (when == other.when && id < other.id);
    }
  };
  struct entry {
    timer_key key;
    Callback expire;
  };

  class handle final : public Timer {
   public:
    handle(timer_thread& owner, clock::time_point when, std::uint64_t id)
        : owner_(owner), key_{when, id} {}
    ~handle() override { cancel(); }
    void cancel() noexcept override {
      if (key_.id == 0) return;
      Callback dropped;  // destroyed outside the lock: it may own anything
      {
        std::lock_guard lock(owner_.mutex_);
        auto& queue = owner_.queue_;
        // Binary search (latest first): the first entry not later than ours.
        std::size_t low = 0, high = queue.size();
        while (low != high) {
          const std::size_t mid = low + (high - low) / 2;
          if (key_.before(queue[mid].key)) low = mid + 1;
          else high = mid;
        }
        if (low == queue.size() || queue[low].key.id != key_.id) return;
        dropped = std::move(queue[low].expire);
        queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(low));
      }
    }

   private:
    friend class timer_thread;
    timer_thread& owner_;
    timer_key key_;  // id 0: not queued (yet)
  };

  void run() {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      if (queue_.empty()) {
        wake_.wait(lock);
        continue;
      }
      const auto due = queue_.back().key.when;
      if (clock::now() < due) {
        wake_.wait_until(lock, due);
        continue;
      }
      Callback expire = std::move(queue_.back().expire);
      queue_.pop_back();
      lock.unlock();
      expire();
      expire = nullptr;
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<entry> queue_;  // latest first
  std::uint64_t last_id_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace detail

HOOKSET_DECL Executor& default_executor() {
  static detail::timer_thread executor;
  return executor;
}

}  // namespace hookset
