#pragma once
// A FIFO async mutex for Stateful hooks: `co_await mutex.lock()` suspends (never blocks the
// thread) until the lock is handed over; unlock() hands it to the longest waiter directly, so
// waiters are served strictly in arrival order and none can be overtaken.

#include <coroutine>
#include <mutex>

namespace hookset::detail {

class async_mutex {
 public:
  class lock_awaiter {
   public:
    explicit lock_awaiter(async_mutex& mutex) noexcept : mutex_(mutex) {}
    bool await_ready() noexcept { return mutex_.try_lock(); }
    bool await_suspend(std::coroutine_handle<> waiting) noexcept {
      waiting_ = waiting;
      return mutex_.enqueue(this);
    }
    void await_resume() const noexcept {}

   private:
    friend class async_mutex;
    async_mutex& mutex_;
    std::coroutine_handle<> waiting_;
    lock_awaiter* next_ = nullptr;
  };

  async_mutex() = default;
  async_mutex(const async_mutex&) = delete;
  async_mutex& operator=(const async_mutex&) = delete;

  [[nodiscard]] lock_awaiter lock() noexcept { return lock_awaiter(*this); }

  bool try_lock() noexcept {
    std::lock_guard guard(guard_);
    if (locked_) return false;
    locked_ = true;
    return true;
  }

  // Releases the lock, or hands it to the first waiter and resumes it on this thread.
  void unlock() noexcept {
    lock_awaiter* next = nullptr;
    {
      std::lock_guard guard(guard_);
      next = head_;
      if (next) {
        head_ = next->next_;
        if (!head_) tail_ = nullptr;
      } else {
        locked_ = false;
      }
    }
    if (next) next->waiting_.resume();  // it owns the lock now
  }

 private:
  // Queues `waiter` unless the lock came free meanwhile; false means: acquired, don't suspend.
  bool enqueue(lock_awaiter* waiter) noexcept {
    std::lock_guard guard(guard_);
    if (!locked_) {
      locked_ = true;
      return false;
    }
    if (tail_) tail_->next_ = waiter;
    else head_ = waiter;
    tail_ = waiter;
    return true;
  }

  std::mutex guard_;
  bool locked_ = false;
  lock_awaiter* head_ = nullptr;
  lock_awaiter* tail_ = nullptr;
};

}  // namespace hookset::detail
