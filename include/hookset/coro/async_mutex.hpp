#pragma once
// A FIFO async mutex for Stateful hooks: `co_await mutex.lock()` suspends (never blocks the
// thread) until the lock is handed over; unlock() hands it to the longest waiter directly, so
// waiters are served strictly in arrival order and none can be overtaken.

#include <coroutine>
#include <cstddef>
#include <mutex>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>

namespace hookset::detail {

class async_mutex {
 public:
  class [[nodiscard]] lock_awaiter {
   public:
    explicit lock_awaiter(async_mutex& mutex) noexcept : mutex_(mutex) {}
    // Movable until awaited (the compiler may move it into the coroutine frame).
    lock_awaiter(lock_awaiter&&) noexcept = default;
    lock_awaiter& operator=(lock_awaiter&&) = delete;
    // A waiter destroyed while queued (its coroutine was destroyed while suspended) leaves the
    // queue, so unlock() never resumes a dead coroutine.
    ~lock_awaiter() {
      if (queued_) mutex_.dequeue(this);
    }

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
    bool queued_ = false;  // guarded by mutex_.guard_
  };

  async_mutex() = default;
  async_mutex(const async_mutex&) = delete;
  async_mutex& operator=(const async_mutex&) = delete;

  lock_awaiter lock() noexcept { return lock_awaiter(*this); }

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
        next->next_ = nullptr;
        next->queued_ = false;
      } else {
        locked_ = false;
      }
    }
    if (next) hand_over(next);  // it owns the lock now
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
    waiter->queued_ = true;
    return true;
  }

  void dequeue(lock_awaiter* waiter) noexcept {
    std::lock_guard guard(guard_);
    if (!waiter->queued_) return;
    lock_awaiter* previous = nullptr;
    for (lock_awaiter* w = head_; w; previous = w, w = w->next_) {
      if (w != waiter) continue;
      (previous ? previous->next_ : head_) = w->next_;
      if (tail_ == w) tail_ = previous;
      w->queued_ = false;
      return;
    }
  }

  // Resumes a waiter that now owns the lock. The waiter belongs to another await stack, so it runs
  // with no scoped context. A waiter that finishes at once unlocks again and resumes the next
  // one from inside this call; beyond a small depth the handover is deferred to the outermost
  // hand_over on this thread instead, so a long queue cannot exhaust the stack.
  struct handover_queue {
    std::size_t depth = 0;
    lock_awaiter* head = nullptr;
    lock_awaiter* tail = nullptr;
  };
  static constexpr std::size_t max_nested_handovers = 16;
  HOOKSET_THREAD_LOCAL_ACCESS static handover_queue& handovers() noexcept {
    thread_local handover_queue queue;
    return queue;
  }

  static void hand_over(lock_awaiter* waiter) noexcept {
    handover_queue& queue = handovers();
    if (queue.depth >= max_nested_handovers) {
      (queue.tail ? queue.tail->next_ : queue.head) = waiter;
      queue.tail = waiter;
      return;
    }
    await_context_scope no_context(nullptr);
    ++queue.depth;
    waiter->waiting_.resume();  // `waiter` may be gone from here on
    if (queue.depth == 1) {
      while (lock_awaiter* deferred = queue.head) {
        queue.head = deferred->next_;
        if (!queue.head) queue.tail = nullptr;
        deferred->waiting_.resume();
      }
    }
    --queue.depth;
  }

  std::mutex guard_;
  bool locked_ = false;
  lock_awaiter* head_ = nullptr;
  lock_awaiter* tail_ = nullptr;
};

}  // namespace hookset::detail
