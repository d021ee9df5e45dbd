// Concurrent dispatch (docs/semantics.md, "Errors and bad input": concurrent dispatches of an
// unchanged set from many threads are safe). Eight threads dispatch one shared set through
// sync_wait, over every mode, with synchronous hooks, coroutine hooks, coroutine hooks that hop to
// another thread (so a dispatch finishes on a thread other than the one that started it) and hooks
// that dispatch the same set again; every result is checked. Also: the same with an observer
// installed, and threads that copy the shared set and change their private copies while it is being
// dispatched.
//
// These tests are the ones the ThreadSanitizer stage of scripts/test.sh runs (CTest names start
// with "threads/"). Catch2 assertions are not thread-safe: worker threads count mismatches and
// the test body checks the counts.
#include "hookset_catch.hpp"

#include "test_support.hpp"

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

using hookset::Flow;
using hookset::Task;

constexpr int thread_count = 8;

int iterations() {
  const char* text = std::getenv("HOOKSET_THREAD_ITERATIONS");
  return text && *text ? std::atoi(text) : 4000;
}

// ---- another thread to hop to ----------------------------------------------------------------

// One worker thread resuming whatever coroutine is posted to it, in order.
class Resumer {
 public:
  Resumer() : worker_([this] { run(); }) {}
  ~Resumer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }
  Resumer(const Resumer&) = delete;
  Resumer& operator=(const Resumer&) = delete;

  void post(std::coroutine_handle<> handle) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(handle);
    }
    wake_.notify_one();
  }

  // co_await resumer.hop(): continue on the worker thread.
  auto hop() {
    struct awaiter {
      Resumer& resumer;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> handle) { resumer.post(handle); }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

 private:
  void run() {
    for (;;) {
      std::coroutine_handle<> next;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        next = queue_.front();
        queue_.pop_front();
      }
      next.resume();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::coroutine_handle<>> queue_;
  bool stopping_ = false;
  std::thread worker_;
};

Resumer* resumer = nullptr;  // set by each test for its duration

// ---- slots (every default returns its argument) ------------------------------------------------

struct BreakOnNegative {
  Flow operator()(const int& v) const { return v < 0 ? Flow::Break : Flow::Continue; }
};
struct Sum {
  int operator()(std::vector<int> outputs) const {
    int total = 0;
    for (int v : outputs) total += v;
    return total;
  }
};
struct AsyncTimes2 {
  Task<int> operator()(int r) const {
    co_await resumer->hop();
    co_return r * 2;
  }
};

struct Fold : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct AsyncFold : hookset::Slot<int(int), hookset::Fallback> {
  static Task<int> default_impl(int x) { co_return x; }
};
struct Gate : hookset::Slot<int(int), hookset::Fallback, hookset::Chain<BreakOnNegative>,
                            hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return x; }
};
struct Final : hookset::Slot<int(int), hookset::Always, hookset::Finalize<AsyncTimes2>> {
  static Task<int> default_impl(int x) { co_return x; }
};
struct Notify : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int) {}
};
struct Single : hookset::Slot<int(int), hookset::Singleton> {
  static int default_impl(int x) { return x; }
};
struct Nested : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};

using Set = hookset::HookSet<Fold, AsyncFold, Gate, Final, Notify, Single, Nested>;
constexpr int slot_count = 7;

std::atomic<long> notified{0};

// The shared set: hook t of a fold slot adds t to `last` (or to x when there is none); a Gate hook
// outputs x + t. Some hooks are coroutines, some hop to the resumer thread before answering.
void populate(Set& set) {
  for (int t = 1; t <= 4; ++t)
    set.add<Fold>([t](int, std::optional<int> last) { return *last + t; });
  set.add<AsyncFold>(
      [](int x, std::optional<int> last) -> Task<int> { co_return last.value_or(x) + 1; });
  set.add<AsyncFold>([](int x, std::optional<int> last) -> Task<int> {
    co_await resumer->hop();
    co_return last.value_or(x) + 2;
  });
  set.add<AsyncFold>([](int x, std::optional<int> last) { return last.value_or(x) + 3; });
  set.add<Gate>([](int x) { return x + 1; });
  set.add<Gate>([](int x) -> Task<int> {
    co_await resumer->hop();
    co_return x + 2;
  });
  set.add<Gate>([](int x) -> Task<int> { co_return x + 3; });
  set.add<Final>([](int, std::optional<int> last) { return *last + 1; });
  set.add<Final>([](int, std::optional<int> last) -> Task<int> {
    co_await resumer->hop();
    co_return *last + 2;
  });
  set.add<Notify>([](int) { notified.fetch_add(1, std::memory_order_relaxed); });
  set.add<Notify>([](int) -> Task<void> {
    notified.fetch_add(1, std::memory_order_relaxed);
    co_return;
  });
  set.add<Single>([](int x) { return x * 3; });
  set.add<Nested>([&set](int x, std::optional<int> last) -> Task<int> {
    co_return *last + co_await set.call<AsyncFold>(x);  // a dispatch of the same set, from a hook
  });
}

// The result of slot `slot` for argument x, per the dispatch table (docs/semantics.md); -1 for the
// void slot.
int expected(int slot, int x) {
  switch (slot) {
    case 0:
      return x + 10;
    case 1:
      return x + 6;
    case 2: {
      int total = 0;
      for (int t = 1; t <= 3; ++t) {
        total += x + t;
        if (x + t < 0) break;
      }
      return total;
    }
    case 3:
      return (x + 3) * 2;
    case 4:
      return -1;
    case 5:
      return x * 3;
    default:
      return 2 * x + 6;
  }
}

int dispatch(const Set& set, int slot, int x) {
  switch (slot) {
    case 0:
      return hookset::sync_wait(set.call<Fold>(x));
    case 1:
      return hookset::sync_wait(set.call<AsyncFold>(x));
    case 2:
      return hookset::sync_wait(set.call<Gate>(x));
    case 3:
      return hookset::sync_wait(set.call<Final>(x));
    case 4:
      hookset::sync_wait(set.call<Notify>(x));
      return -1;
    case 5:
      return hookset::sync_wait(set.call<Single>(x));
    default:
      return hookset::sync_wait(set.call<Nested>(x));
  }
}

// Runs `body(thread_index)` on eight threads started together; returns when all are done.
template <class Body>
void on_threads(Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < thread_count) std::this_thread::yield();
      body(t);
    });
  for (std::thread& thread : threads) thread.join();
}

struct CountingObserver : hookset::Observer {
  std::atomic<long> begins{0};
  std::atomic<long> ends{0};
  std::atomic<long> hooks_run{0};
  void on_dispatch_begin(std::string_view, std::uint64_t) override { begins.fetch_add(1); }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t hooks,
                       std::exception_ptr) override {
    ends.fetch_add(1);
    hooks_run.fetch_add(static_cast<long>(hooks));
  }
};

}  // namespace

TEST_CASE(
    "eight threads dispatch one shared set: sync, coroutine, thread-hopping and re-dispatching "
    "hooks") {
  Resumer hops;
  resumer = &hops;
  notified = 0;
  Set set;
  populate(set);
  const int n = iterations();

  std::atomic<long> wrong{0};
  std::atomic<long> notifies{0};
  on_threads([&](int t) {
    for (int i = 0; i < n; ++i) {
      const int slot = (i + t) % slot_count;
      const int x = (t * 7919 + i * 31) % 2000 - 5;  // a few negative ones for the chain
      if (slot == 4) notifies.fetch_add(1, std::memory_order_relaxed);
      if (dispatch(set, slot, x) != expected(slot, x)) wrong.fetch_add(1);
    }
  });
  resumer = nullptr;
  REQUIRE(wrong == 0);
  REQUIRE(notified == 2 * notifies);
  REQUIRE(notifies > 0);
}

TEST_CASE(
    "eight threads dispatch one shared set with an observer installed: every dispatch begins and "
    "ends once") {
  Resumer hops;
  resumer = &hops;
  Set set;
  populate(set);
  const int n = iterations() / 2;
  CountingObserver observer;
  hookset::Observer* previous = hookset::set_observer(&observer);

  std::atomic<long> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < n; ++i) {
      const int slot = (i * 3 + t) % slot_count;
      const int x = (t * 104729 + i) % 500;
      if (dispatch(set, slot, x) != expected(slot, x)) wrong.fetch_add(1);
    }
  });
  hookset::set_observer(previous);
  resumer = nullptr;
  REQUIRE(wrong == 0);
  // A Nested dispatch runs an AsyncFold dispatch inside it: count those too.
  long nested = 0;
  for (int t = 0; t < thread_count; ++t)
    for (int i = 0; i < n; ++i) nested += (i * 3 + t) % slot_count == 6 ? 1 : 0;
  REQUIRE(observer.begins == static_cast<long>(thread_count) * n + nested);
  REQUIRE(observer.ends == observer.begins);
  REQUIRE(observer.hooks_run > 0);
}

TEST_CASE("threads copy a shared set and change their copies while the original is dispatched") {
  Resumer hops;
  resumer = &hops;
  Set shared;
  populate(shared);
  const int n = iterations() / 4;

  std::atomic<long> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < n; ++i) {
      if (t % 2 == 0) {  // dispatchers of the original
        const int slot = (i + t) % slot_count;
        if (dispatch(shared, slot, i) != expected(slot, i)) wrong.fetch_add(1);
        continue;
      }
      // The rest copy it (a const operation on the original), then change and dispatch the copy.
      Set mine(shared);
      const hookset::HookId extra =
          mine.add<Fold>([](int, std::optional<int> last) { return *last + 100; });
      mine.add<Single>([](int x) { return x * 5; });
      if (dispatch(mine, 0, i) != i + 110) wrong.fetch_add(1);
      if (dispatch(mine, 5, i) != i * 5) wrong.fetch_add(1);
      if (!mine.remove(extra)) wrong.fetch_add(1);
      mine.extend(shared);  // Fold: the original's four hooks again
      if (dispatch(mine, 0, i) != i + 20) wrong.fetch_add(1);
      if (dispatch(mine, 3, i) != (i + 6) * 2) wrong.fetch_add(1);  // Final: both hooks twice
      if (dispatch(mine, 6, i) != 3 * i + 12)
        wrong.fetch_add(1);  // both Nested hooks dispatch `shared`
    }
  });
  resumer = nullptr;
  REQUIRE(wrong == 0);
  REQUIRE(shared.count<Fold>() == 4);
  REQUIRE(hookset::sync_wait(shared.call<Fold>(1)) == 11);
}

namespace {

// Where a dispatch started by finish_into() leaves its value. `done` is stored with release
// ordering; the starting thread may poll it relaxed (no synchronisation) and acquire it later.
struct Landing {
  std::atomic<bool> done{false};
  int value = 0;
};

template <class Awaitable>
test_support::Detached finish_into(Awaitable dispatch, Landing& landing) {
  landing.value = co_await std::move(dispatch);
  landing.done.store(true, std::memory_order_release);
}

}  // namespace

TEST_CASE(
    "a dispatch completes on another thread while the thread that started it destroys the set") {
  // The last reference to the dispatched hooks is dropped by whichever thread comes last, with no
  // synchronisation between the two but the library's own reference count.
  Resumer hops;
  resumer = &hops;
  Set shared;
  populate(shared);
  const int n = iterations() / 4;

  std::atomic<long> wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < n; ++i) {
      auto mine = std::make_unique<Set>(shared);
      mine->add<Fold>([](int, std::optional<int> last) -> Task<int> {
        co_await resumer->hop();  // the rest of the dispatch runs on the resumer thread
        co_return *last + 100;
      });
      mine->add<Fold>([t](int, std::optional<int> last) { return *last + t; });
      Landing landing;
      finish_into(mine->call<Fold>(i), landing);
      if (i % 2 == 0) mine.reset();  // while the dispatch may still run
      while (!landing.done.load(std::memory_order_relaxed)) std::this_thread::yield();
      mine.reset();  // after it ran, without synchronising with it
      const bool landed = landing.done.load(std::memory_order_acquire);
      if (!landed || landing.value != i + 10 + 100 + t) wrong.fetch_add(1);
    }
  });
  resumer = nullptr;
  REQUIRE(wrong == 0);
}

// Stateful<T> hooks under concurrency (two dispatches reaching the same stateful hook take turns)
// belong here too; they come with Stateful<T> itself.
