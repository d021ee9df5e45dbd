#pragma once
// stop_token, stop_source and stop_callback with the interface of the standard's, for standard
// libraries that lack <stop_token> (libc++ before 17). <hookset/coro/stop_token.hpp> makes them
// hookset::stop_token & co. only there; elsewhere those name the std:: ones. Always compiled by
// the tests (tests/stop_token/), so every toolchain checks them.
//
// One shared state per stop_source family: the stop flag, the number of sources left, and the
// registered callbacks in a list guarded by a mutex. request_stop runs the callbacks on the
// requesting thread, one at a time with the mutex released, so that a callback may register or
// deregister others (or destroy its own stop_callback). A stop_callback destroyed on another
// thread while its callback runs waits until the callback has returned.

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace hookset::detail::own_stop {

struct nostopstate_t {
  explicit nostopstate_t() = default;
};
inline constexpr nostopstate_t nostopstate{};

// A registered callback, as the shared state sees it (the type-erased part of stop_callback).
struct callback_node {
  void (*run)(callback_node*) noexcept = nullptr;
  callback_node* prev = nullptr;
  callback_node* next = nullptr;
  bool registered = false;
  // While the callback runs: where its destructor, running inside it on the requesting thread,
  // says so (the node is gone afterwards).
  bool* destroyed_while_running = nullptr;
  // Set (under the state's mutex) once the callback has returned: what a destructor on another
  // thread waits for.
  std::atomic<bool> done{false};
};

class stop_state {
 public:
  // A new state starts with one reference and one source: the stop_source creating it.
  stop_state() noexcept = default;
  stop_state(const stop_state&) = delete;
  stop_state& operator=(const stop_state&) = delete;

  void acquire() noexcept { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() noexcept {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }
  void add_source() noexcept { sources_.fetch_add(1, std::memory_order_relaxed); }
  void remove_source() noexcept { sources_.fetch_sub(1, std::memory_order_acq_rel); }

  bool stop_requested() const noexcept { return requested_.load(std::memory_order_acquire); }
  bool stop_possible() const noexcept {
    return stop_requested() || sources_.load(std::memory_order_acquire) != 0;
  }

  bool request_stop() noexcept {
    std::unique_lock lock(mutex_);
    if (requested_.load(std::memory_order_relaxed)) return false;
    requested_.store(true, std::memory_order_release);
    requester_ = std::this_thread::get_id();
    while (callback_node* node = head_) {
      unlink(node);
      running_ = node;
      bool destroyed = false;
      node->destroyed_while_running = &destroyed;
      lock.unlock();
      node->run(node);
      lock.lock();
      running_ = nullptr;
      if (!destroyed) {
        node->destroyed_while_running = nullptr;
        // Under the mutex: a destructor waiting on another thread locks it after seeing `done`,
        // so it cannot free the node before this notification is over.
        node->done.store(true, std::memory_order_release);
        node->done.notify_all();
      }
    }
    return true;
  }

  // Registers `node`; false (not registered) when stop was already requested: the caller then
  // runs the callback itself.
  bool add(callback_node* node) noexcept {
    std::lock_guard lock(mutex_);
    if (requested_.load(std::memory_order_relaxed)) return false;
    node->next = head_;
    if (head_) head_->prev = node;
    head_ = node;
    node->registered = true;
    return true;
  }

  // Deregisters `node` (stop_callback's destructor): after it returns, the callback is not
  // running and will never run, except when it is this very thread's running callback
  // destroying its own stop_callback.
  void remove(callback_node* node) noexcept {
    std::unique_lock lock(mutex_);
    if (node->registered) {
      unlink(node);
      return;
    }
    if (running_ != node) return;  // never registered, or it ran and returned
    if (requester_ == std::this_thread::get_id()) {
      *node->destroyed_while_running = true;
      return;
    }
    lock.unlock();
    while (!node->done.load(std::memory_order_acquire)) node->done.wait(false);
    lock.lock();  // waits until request_stop has finished notifying (see there)
  }

 private:
  ~stop_state() = default;

  void unlink(callback_node* node) noexcept {
    if (node->prev) node->prev->next = node->next;
    else head_ = node->next;
    if (node->next) node->next->prev = node->prev;
    node->prev = node->next = nullptr;
    node->registered = false;
  }

  std::atomic<std::size_t> refs_{1};
  std::atomic<std::size_t> sources_{1};
  std::atomic<bool> requested_{false};
  std::mutex mutex_;
  callback_node* head_ = nullptr;  // guarded by mutex_, as are the two below
  callback_node* running_ = nullptr;
  std::thread::id requester_;
};

class stop_token {
 public:
  stop_token() noexcept = default;
  stop_token(const stop_token& other) noexcept : state_(other.state_) {
    if (state_) state_->acquire();
  }
  stop_token(stop_token&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  stop_token& operator=(const stop_token& other) noexcept {
    stop_token(other).swap(*this);
    return *this;
  }
  stop_token& operator=(stop_token&& other) noexcept {
    stop_token(std::move(other)).swap(*this);
    return *this;
  }
  ~stop_token() {
    if (state_) state_->release();
  }

  [[nodiscard]] bool stop_requested() const noexcept { return state_ && state_->stop_requested(); }
  [[nodiscard]] bool stop_possible() const noexcept { return state_ && state_->stop_possible(); }
  void swap(stop_token& other) noexcept { std::swap(state_, other.state_); }
  friend void swap(stop_token& a, stop_token& b) noexcept { a.swap(b); }
  [[nodiscard]] friend bool operator==(const stop_token& a, const stop_token& b) noexcept {
    return a.state_ == b.state_;
  }

 private:
  friend class stop_source;
  template <class Callback>
  friend class stop_callback;
  explicit stop_token(stop_state* state) noexcept : state_(state) {
    if (state_) state_->acquire();
  }

  stop_state* state_ = nullptr;
};

class stop_source {
 public:
  stop_source() : state_(new stop_state) {}
  explicit stop_source(nostopstate_t) noexcept {}
  stop_source(const stop_source& other) noexcept : state_(other.state_) {
    if (state_) {
      state_->acquire();
      state_->add_source();
    }
  }
  stop_source(stop_source&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  stop_source& operator=(const stop_source& other) noexcept {
    stop_source(other).swap(*this);
    return *this;
  }
  stop_source& operator=(stop_source&& other) noexcept {
    stop_source(std::move(other)).swap(*this);
    return *this;
  }
  ~stop_source() {
    if (state_) {
      state_->remove_source();
      state_->release();
    }
  }

  // True for the one call that requests the stop.
  bool request_stop() noexcept {
    if (!state_) return false;
    // Held for the call: a callback may destroy this source (and every other owner).
    stop_state* const state = state_;
    state->acquire();
    const bool requested = state->request_stop();
    state->release();
    return requested;
  }
  [[nodiscard]] stop_token get_token() const noexcept { return stop_token(state_); }
  [[nodiscard]] bool stop_requested() const noexcept { return state_ && state_->stop_requested(); }
  [[nodiscard]] bool stop_possible() const noexcept { return state_ != nullptr; }
  void swap(stop_source& other) noexcept { std::swap(state_, other.state_); }
  friend void swap(stop_source& a, stop_source& b) noexcept { a.swap(b); }
  [[nodiscard]] friend bool operator==(const stop_source& a, const stop_source& b) noexcept {
    return a.state_ == b.state_;
  }

 private:
  stop_state* state_ = nullptr;
};

template <class Callback>
class [[nodiscard]] stop_callback : private callback_node {
  static_assert(std::is_nothrow_destructible_v<Callback> && std::is_invocable_v<Callback>,
                "stop_callback<Callback>: Callback must be invocable and nothrow destructible");

 public:
  using callback_type = Callback;

  template <class C>
  requires std::is_constructible_v<Callback, C>
  explicit stop_callback(const stop_token& token,
                         C&& callback) noexcept(std::is_nothrow_constructible_v<Callback, C>)
      : callback_(std::forward<C>(callback)) {
    start(token.state_);
  }
  template <class C>
  requires std::is_constructible_v<Callback, C>
  explicit stop_callback(stop_token&& token,
                         C&& callback) noexcept(std::is_nothrow_constructible_v<Callback, C>)
      : callback_(std::forward<C>(callback)) {
    start(token.state_);
  }
  stop_callback(const stop_callback&) = delete;
  stop_callback& operator=(const stop_callback&) = delete;
  ~stop_callback() {
    if (state_) {
      state_->remove(this);
      state_->release();
    }
  }

 private:
  void start(stop_state* state) noexcept {
    if (!state) return;
    if (state->stop_requested()) {
      std::forward<Callback>(callback_)();
      return;
    }
    if (!state->stop_possible()) return;  // no source left: it can never run
    callback_node::run = &run_callback;
    state->acquire();
    state_ = state;
    if (!state->add(this)) std::forward<Callback>(callback_)();  // stopped meanwhile
  }
  static void run_callback(callback_node* node) noexcept {
    std::forward<Callback>(static_cast<stop_callback*>(node)->callback_)();
  }

  stop_state* state_ = nullptr;
  Callback callback_;
};

template <class Callback>
stop_callback(stop_token, Callback) -> stop_callback<Callback>;

}  // namespace hookset::detail::own_stop
