// Tests of hookset::sync_wait and the awaitable traits it relies on.

#include <hookset/task.hpp>

#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <deque>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "hookset_catch.hpp"

using hookset::sync_wait;
using hookset::Task;
namespace detail = hookset::detail;

namespace {

// An awaiter that counts how it is driven. `ready` decides what await_ready answers.
struct counting_awaiter {
  bool ready;
  int& ready_calls;
  int& suspend_calls;
  int& resume_calls;

  bool await_ready() {
    ++ready_calls;
    return ready;
  }
  bool await_suspend(std::coroutine_handle<>) {
    ++suspend_calls;
    return false;  // completes right away: resume without suspending
  }
  int await_resume() {
    ++resume_calls;
    return 11;
  }
};

// Resumes the awaiting coroutine from a new thread, after a short delay so that the thread
// calling sync_wait is really blocked by then.
struct resume_on_new_thread {
  std::thread& worker;
  std::thread::id resumed_on{};

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> awaiting) {
    worker = std::thread([awaiting] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      awaiting.resume();
    });
  }
  std::thread::id await_resume() const noexcept { return std::this_thread::get_id(); }
};

// A single worker thread that resumes the coroutines posted to it, in order.
class worker_thread {
 public:
  worker_thread() : thread_([this] { run(); }) {}
  ~worker_thread() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }

  // co_await worker.schedule() continues on the worker thread.
  auto schedule() {
    struct awaiter {
      worker_thread& worker;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> awaiting) { worker.post(awaiting); }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

  std::thread::id id() const noexcept { return thread_.get_id(); }

 private:
  void post(std::coroutine_handle<> coroutine) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(coroutine);
    }
    wake_.notify_one();
  }
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::coroutine_handle<> next = queue_.front();
      queue_.pop_front();
      lock.unlock();
      next.resume();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::coroutine_handle<>> queue_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

struct with_member_co_await {
  auto operator co_await() const noexcept {
    struct awaiter {
      bool await_ready() const noexcept { return true; }
      void await_suspend(std::coroutine_handle<>) const noexcept {}
      std::string await_resume() const { return "member"; }
    };
    return awaiter{};
  }
};

namespace adl {
struct with_free_co_await {};
inline auto operator co_await(with_free_co_await) noexcept {
  struct awaiter {
    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) const noexcept {
      return awaiting;  // symmetric transfer straight back: resumes at once
    }
    std::string await_resume() const { return "free"; }
  };
  return awaiter{};
}
}  // namespace adl

struct yields_rvalue_reference {
  std::string stored = "moved out";
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  std::string&& await_resume() noexcept { return std::move(stored); }
};

struct throws_from_await_suspend {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<>) const { throw std::runtime_error("suspend failed"); }
  int await_resume() const noexcept { return 0; }
};

struct not_awaitable {};

Task<int> answer() { co_return 42; }

}  // namespace

TEST_CASE("awaitable traits follow the language's lookup of the awaiter", "[sync_wait]") {
  static_assert(detail::is_awaitable_v<Task<int>>);
  static_assert(detail::is_awaitable_v<Task<int>&>);
  static_assert(detail::Awaitable<with_member_co_await>);
  static_assert(detail::Awaitable<adl::with_free_co_await>);
  static_assert(detail::Awaitable<counting_awaiter&>);
  static_assert(detail::Awaitable<std::suspend_always>);
  static_assert(!detail::is_awaitable_v<not_awaitable>);
  static_assert(!detail::is_awaitable_v<int>);

  static_assert(std::is_same_v<detail::await_result_t<Task<int>>, int>);
  static_assert(std::is_same_v<detail::await_result_t<Task<int>&>, int&>);
  static_assert(std::is_same_v<detail::await_result_t<Task<int&>>, int&>);
  static_assert(std::is_same_v<detail::await_result_t<Task<>>, void>);
  static_assert(std::is_same_v<detail::await_result_t<with_member_co_await>, std::string>);
  static_assert(std::is_same_v<detail::await_result_t<yields_rvalue_reference>, std::string&&>);

  // A plain awaiter is forwarded by reference; one made by operator co_await comes by value.
  counting_awaiter* none = nullptr;
  static_assert(std::is_same_v<decltype(detail::get_awaiter(*none)), counting_awaiter&>);
  static_assert(!std::is_reference_v<decltype(detail::get_awaiter(with_member_co_await{}))>);
  static_assert(!std::is_reference_v<decltype(detail::get_awaiter(adl::with_free_co_await{}))>);
  SUCCEED();
}

TEST_CASE("sync_wait returns values by value, references as references, and void", "[sync_wait]") {
  static_assert(std::is_same_v<decltype(sync_wait(answer())), int>);
  Task<int> kept = answer();
  static_assert(std::is_same_v<decltype(sync_wait(kept)), int&>);
  static_assert(std::is_same_v<decltype(sync_wait(std::declval<Task<int&>>())), int&>);
  static_assert(std::is_same_v<decltype(sync_wait(std::declval<Task<>>())), void>);
  // An rvalue reference would dangle once sync_wait returns: it becomes a value.
  static_assert(std::is_same_v<decltype(sync_wait(yields_rvalue_reference{})), std::string>);

  CHECK(sync_wait(answer()) == 42);
  int& stored = sync_wait(kept);
  CHECK(stored == 42);
  CHECK(&stored == &sync_wait(kept));  // the finished task's own value, not started again

  yields_rvalue_reference source;
  CHECK(sync_wait(source) == "moved out");
  CHECK(source.stored.empty());

  auto move_only = []() -> Task<std::unique_ptr<int>> { co_return std::make_unique<int>(4); };
  std::unique_ptr<int> owned = sync_wait(move_only());
  REQUIRE(owned);
  CHECK(*owned == 4);
}

TEST_CASE("sync_wait calls await_ready exactly once, and when it is true never suspends",
          "[sync_wait]") {
  int ready_calls = 0, suspend_calls = 0, resume_calls = 0;
  CHECK(sync_wait(counting_awaiter{true, ready_calls, suspend_calls, resume_calls}) == 11);
  CHECK(ready_calls == 1);
  CHECK(suspend_calls == 0);
  CHECK(resume_calls == 1);
}

TEST_CASE("sync_wait calls await_ready exactly once, then await_suspend once, when not ready",
          "[sync_wait]") {
  int ready_calls = 0, suspend_calls = 0, resume_calls = 0;
  counting_awaiter awaiter{false, ready_calls, suspend_calls, resume_calls};
  CHECK(sync_wait(awaiter) == 11);
  CHECK(ready_calls == 1);
  CHECK(suspend_calls == 1);
  CHECK(resume_calls == 1);
}

TEST_CASE("sync_wait finds member and free operator co_await", "[sync_wait]") {
  CHECK(sync_wait(with_member_co_await{}) == "member");
  CHECK(sync_wait(adl::with_free_co_await{}) == "free");
}

TEST_CASE("sync_wait blocks until an awaitable completes on another thread", "[sync_wait]") {
  std::thread worker;
  const std::thread::id resumed_on = sync_wait(resume_on_new_thread{worker});
  worker.join();
  CHECK(resumed_on != std::this_thread::get_id());
}

TEST_CASE("sync_wait of a Task that finishes on another thread", "[sync_wait]") {
  worker_thread worker;
  auto hop = [](worker_thread& w) -> Task<std::thread::id> {
    co_await w.schedule();
    co_return std::this_thread::get_id();
  };
  CHECK(sync_wait(hop(worker)) == worker.id());

  auto hop_and_fail = [](worker_thread& w) -> Task<> {
    co_await w.schedule();
    throw std::runtime_error("failed on the worker");
  };
  CHECK_THROWS_WITH(sync_wait(hop_and_fail(worker)), "failed on the worker");
}

// A task that finishes on the worker races its awaiter, which may still be inside its
// await_suspend on this thread: both orders must hand over exactly once.
TEST_CASE("nested tasks finishing on another thread hand over their result", "[sync_wait]") {
  worker_thread worker;
  auto leaf = [](worker_thread& w, int i) -> Task<int> {
    co_await w.schedule();
    co_return i;
  };
  auto loop = [&leaf](worker_thread& w, int count) -> Task<long> {
    long sum = 0;
    for (int i = 0; i < count; ++i) sum += co_await leaf(w, i);
    co_return sum;
  };
  constexpr int count = 2'000;
  CHECK(sync_wait(loop(worker, count)) == static_cast<long>(count) * (count - 1) / 2);
}

TEST_CASE("sync_wait rethrows exceptions, also from await_suspend", "[sync_wait]") {
  auto failing = []() -> Task<int> {
    throw std::invalid_argument("bad");
    co_return 0;
  };
  CHECK_THROWS_AS(sync_wait(failing()), std::invalid_argument);
  CHECK_THROWS_WITH(sync_wait(throws_from_await_suspend{}), "suspend failed");
}
