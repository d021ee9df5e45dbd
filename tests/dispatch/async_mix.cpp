// Asynchronous dispatch (docs/semantics.md, "Dispatch", "Errors and bad input"): coroutine hooks
// mixed with synchronous ones, asynchronous defaults, awaitables that are not hookset::Task, hooks
// that really suspend and are resumed later (from the test body or another thread), exceptions
// after a suspension, and dispatches awaited from inside coroutines, hooks included.
//
// Every default and hook appends to one log, so each test checks the full sequence of calls as
// well as the result.
#include "hookset_catch.hpp"

#include "test_support.hpp"

#include <atomic>
#include <coroutine>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

using test_support::fresh_log;
using test_support::Log;
using test_support::logged;
using test_support::note;
using test_support::show;
using ManualEvent = test_support::CrossThreadEvent;
using test_support::fold_hook;

// ---- test-local coroutine machinery --------------------------------------------------------

// An eager coroutine that awaits something and keeps its outcome: it starts at once, so a test
// can begin a dispatch, watch it suspend, resume it, and then look at the result. The frame
// stays alive (suspended at its end) until the Started object goes away.
template <class T>
class Started {
 public:
  struct promise_type {
    std::optional<T> value;
    std::exception_ptr error;

    Started get_return_object() noexcept {
      return Started(std::coroutine_handle<promise_type>::from_promise(*this));
    }
    std::suspend_never initial_suspend() const noexcept { return {}; }
    std::suspend_always final_suspend() const noexcept { return {}; }
    template <class U>
    void return_value(U&& v) {
      value.emplace(std::forward<U>(v));
    }
    void unhandled_exception() noexcept { error = std::current_exception(); }
  };

  Started(Started&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  Started& operator=(Started&&) = delete;
  ~Started() {
    if (handle_) handle_.destroy();
  }

  bool done() const { return handle_.done(); }
  bool failed() const { return done() && handle_.promise().error != nullptr; }
  T result() const {
    REQUIRE(done());
    if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    return *handle_.promise().value;
  }

 private:
  explicit Started(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
  std::coroutine_handle<promise_type> handle_;
};

template <class Awaitable>
auto start(Awaitable awaitable) -> Started<decltype(hookset::sync_wait(std::move(awaitable)))> {
  co_return co_await std::move(awaitable);
}
// For void awaitables: the value is just "finished".
template <class Awaitable>
Started<bool> start_void(Awaitable awaitable) {
  co_await std::move(awaitable);
  co_return true;
}

// ---- awaitables that are not hookset::Task -----------------------------------------------

// Ready at once: await_ready() is true.
template <class T>
struct Ready {
  T value;
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  T await_resume() { return std::move(value); }
};

// await_suspend returns bool false: "do not suspend after all".
template <class T>
struct DeclinesToSuspend {
  T value;
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<>) const noexcept { return false; }
  T await_resume() { return std::move(value); }
};

// Really suspends (void await_suspend) on a ManualEvent-like slot of its own, resumed by fire().
struct Parked {
  std::coroutine_handle<> waiter;
  std::atomic<bool> waiting{false};
  void fire() {
    REQUIRE(waiting.load());
    waiting = false;
    std::exchange(waiter, nullptr).resume();
  }
};
struct ParkedValue {
  Parked* parking;
  int value;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiting) const noexcept {
    parking->waiter = waiting;
    parking->waiting = true;
  }
  int await_resume() const {
    note("parked resumed");
    return value;
  }
};

// Not an awaiter itself: has a member operator co_await returning one.
struct ViaCoAwait {
  int value;
  Ready<int> operator co_await() const noexcept { return Ready<int>{value}; }
};

// Awaiter whose await_suspend returns a handle to transfer to (the waiting one: no suspension).
struct TransfersBack {
  int value;
  bool await_ready() const noexcept { return false; }
  std::coroutine_handle<> await_suspend(std::coroutine_handle<> waiting) const noexcept {
    return waiting;
  }
  int await_resume() const noexcept { return value; }
};

// ---- slots -----------------------------------------------------------------------------------

struct SyncDefault : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    return x;
  }
};
struct AsyncDefault : hookset::Slot<int(int), hookset::Always> {
  static hookset::Task<int> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    co_return x;
  }
};
struct AsyncFallback : hookset::Slot<int(int), hookset::Fallback> {
  static hookset::Task<int> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    co_return -x;
  }
};
struct AsyncSingleton : hookset::Slot<int(int), hookset::Singleton> {
  static hookset::Task<int> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    co_return -x;
  }
};
struct AsyncVoid : hookset::Slot<void(int), hookset::Always> {
  static hookset::Task<void> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    co_return;
  }
};
struct AsyncFallbackVoid : hookset::Slot<void(int), hookset::Fallback> {
  static hookset::Task<> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    co_return;
  }
};

// A default that returns an awaitable which is not a Task.
struct AwaitableDefault : hookset::Slot<int(int), hookset::Always> {
  static Ready<int> default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    return Ready<int>{x + 1000};
  }
};

// A default that suspends on an event owned by the test.
ManualEvent* default_gate = nullptr;
struct SuspendingDefault : hookset::Slot<int(int), hookset::Always> {
  static hookset::Task<int> default_impl(int x) {
    note("default start(" + std::to_string(x) + ")");
    co_await *default_gate;
    note("default end(" + std::to_string(x) + ")");
    co_return x;
  }
};

// A move-only parameter, to see it stays alive and identical across suspensions.
struct OwnsInt : hookset::Slot<int(std::unique_ptr<int>), hookset::Always> {
  static hookset::Task<int> default_impl(const std::unique_ptr<int>& p) {
    note("default(" + std::to_string(*p) + ")");
    co_return *p;
  }
};

// Two slots that dispatch each other through the set (nested dispatch).
struct Outer : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) {
    note("outer default(" + std::to_string(x) + ")");
    return x;
  }
};
struct Inner : hookset::Slot<int(int), hookset::Fallback> {
  static hookset::Task<int> default_impl(int x) {
    note("inner default(" + std::to_string(x) + ")");
    co_return x * 100;
  }
};
struct Notify : hookset::Slot<void(std::string), hookset::Always> {
  static void default_impl(const std::string& what) { note("notify default(" + what + ")"); }
};

using Set = hookset::HookSet<SyncDefault, AsyncDefault, AsyncFallback, AsyncSingleton, AsyncVoid,
                             AsyncFallbackVoid, AwaitableDefault, SuspendingDefault, OwnsInt, Outer,
                             Inner, Notify>;

// ---- hooks -------------------------------------------------------------------------------------

// Fold hooks for int(int) (test_support::fold_hook is the synchronous one): log their name,
// argument and last; return last*10+tag (tag if no last).
auto afold_hook(std::string name, int tag) {
  return [name, tag](int x, std::optional<int> last) -> hookset::Task<int> {
    note(name + "(" + std::to_string(x) + ", last=" + show(last) + ")");
    co_return last ? *last * 10 + tag : tag;
  };
}
// Suspends on `gate` between its two log entries.
auto suspending_fold(std::string name, int tag, ManualEvent& gate) {
  return [name, tag, &gate](int x, std::optional<int> last) -> hookset::Task<int> {
    note(name + " start(" + std::to_string(x) + ", last=" + show(last) + ")");
    co_await gate;
    note(name + " end(" + std::to_string(x) + ")");
    co_return last ? *last * 10 + tag : tag;
  };
}
// Suspends on `gate`, then throws.
auto failing_after_suspension(std::string name, ManualEvent& gate) {
  return [name, &gate](int x, std::optional<int> last) -> hookset::Task<int> {
    note(name + " start(" + std::to_string(x) + ", last=" + show(last) + ")");
    co_await gate;
    note(name + " throws");
    throw std::runtime_error(name + " failed after suspension");
  };
}

// A dispatch awaited from inside a coroutine, the way application code does it.
hookset::Task<int> two_dispatches(const Set& set, int x) {
  const int first = co_await set.call<SyncDefault>(x);
  note("between dispatches");
  const int second = co_await set.call<AsyncFallback>(first);
  co_return first + second;
}

}  // namespace

using hookset::sync_wait;

// ================================================================================================
// Coroutine hooks mixed with synchronous ones
// ================================================================================================

TEST_CASE(
    "Always: coroutine and synchronous hooks mix in every position, with a sync or async default") {
  // Bit i of `pattern` makes hook i a coroutine; each combination folds identically.
  for (int pattern = 0; pattern < 8; ++pattern) {
    for (const bool async_default : {false, true}) {
      INFO("pattern " << pattern << ", async default " << async_default);
      Log& log = fresh_log();
      Set set;
      for (int i = 0; i < 3; ++i) {
        const std::string name = "h" + std::to_string(i + 1);
        if (pattern & (1 << i)) {
          set.add<SyncDefault>(afold_hook(name, i + 1));
          set.add<AsyncDefault>(afold_hook(name, i + 1));
        } else {
          set.add<SyncDefault>(fold_hook(name, i + 1));
          set.add<AsyncDefault>(fold_hook(name, i + 1));
        }
      }
      const int result = async_default ? sync_wait(set.call<AsyncDefault>(4))
                                       : sync_wait(set.call<SyncDefault>(4));
      REQUIRE(result == 4123);
      REQUIRE(log == Log{"default(4)", "h1(4, last=4)", "h2(4, last=41)", "h3(4, last=412)"});
    }
  }
}

TEST_CASE(
    "Fallback: coroutine and synchronous hooks mix in every position, the async default never "
    "runs") {
  for (int pattern = 0; pattern < 8; ++pattern) {
    INFO("pattern " << pattern);
    Log& log = fresh_log();
    Set set;
    for (int i = 0; i < 3; ++i) {
      const std::string name = "h" + std::to_string(i + 1);
      if (pattern & (1 << i)) set.add<AsyncFallback>(afold_hook(name, i + 1));
      else set.add<AsyncFallback>(fold_hook(name, i + 1));
    }
    REQUIRE(sync_wait(set.call<AsyncFallback>(5)) == 123);
    REQUIRE(log == Log{"h1(5, last=nullopt)", "h2(5, last=1)", "h3(5, last=12)"});
  }
}

TEST_CASE("void Always: coroutine and synchronous hooks mix, async default first") {
  Log& log = fresh_log();
  Set set;
  set.add<AsyncVoid>([](int x) -> hookset::Task<> {
    note("h1(" + std::to_string(x) + ")");
    co_return;
  });
  set.add<AsyncVoid>([](int x) { note("h2(" + std::to_string(x) + ")"); });
  set.add<AsyncVoid>([](int x) -> hookset::Task<void> {
    note("h3(" + std::to_string(x) + ")");
    co_return;
  });
  sync_wait(set.call<AsyncVoid>(6));
  REQUIRE(log == Log{"default(6)", "h1(6)", "h2(6)", "h3(6)"});
}

TEST_CASE("void Fallback with coroutine hooks never runs the async default") {
  Log& log = fresh_log();
  Set set;
  sync_wait(set.call<AsyncFallbackVoid>(1));
  set.add<AsyncFallbackVoid>([](int x) -> hookset::Task<> {
    note("h1(" + std::to_string(x) + ")");
    co_return;
  });
  set.add<AsyncFallbackVoid>([](int x) { note("h2(" + std::to_string(x) + ")"); });
  sync_wait(set.call<AsyncFallbackVoid>(2));
  REQUIRE(log == Log{"default(1)", "h1(2)", "h2(2)"});
}

// ================================================================================================
// Asynchronous defaults
// ================================================================================================

TEST_CASE("an async default alone: Always, Fallback and Singleton without hooks return its value") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AsyncDefault>(1)) == 1);
  REQUIRE(sync_wait(set.call<AsyncFallback>(2)) == -2);
  REQUIRE(sync_wait(set.call<AsyncSingleton>(3)) == -3);
  sync_wait(set.call<AsyncVoid>(4));
  REQUIRE(log == Log{"default(1)", "default(2)", "default(3)", "default(4)"});
}

TEST_CASE("Singleton with a coroutine hook: the hook replaces the async default") {
  Log& log = fresh_log();
  Set set;
  set.add<AsyncSingleton>([](int x) -> hookset::Task<int> {
    note("only(" + std::to_string(x) + ")");
    co_return x * 3;
  });
  REQUIRE(sync_wait(set.call<AsyncSingleton>(7)) == 21);
  REQUIRE(log == Log{"only(7)"});
}

TEST_CASE("a default that returns a non-Task awaitable") {
  Log& log = fresh_log();
  Set set;
  REQUIRE(sync_wait(set.call<AwaitableDefault>(1)) == 1001);
  set.add<AwaitableDefault>(fold_hook("h1", 1));
  REQUIRE(sync_wait(set.call<AwaitableDefault>(2)) == 10021);
  REQUIRE(log == Log{"default(1)", "default(2)", "h1(2, last=1002)"});
}

TEST_CASE("a default that suspends: hooks wait for it, then run in order") {
  Log& log = fresh_log();
  ManualEvent gate;
  default_gate = &gate;
  Set set;
  set.add<SuspendingDefault>(fold_hook("h1", 1));
  set.add<SuspendingDefault>(afold_hook("h2", 2));

  auto run = start(set.call<SuspendingDefault>(3));
  REQUIRE_FALSE(run.done());
  REQUIRE(gate.has_waiter());
  REQUIRE(log == Log{"default start(3)"});

  gate.fire();
  REQUIRE(run.done());
  REQUIRE(run.result() == 312);
  REQUIRE(log == Log{"default start(3)", "default end(3)", "h1(3, last=3)", "h2(3, last=31)"});
  default_gate = nullptr;
}

// ================================================================================================
// Awaitables that are not hookset::Task
// ================================================================================================

TEST_CASE(
    "hooks may return any awaitable of R: ready, declining to suspend, symmetric transfer, "
    "operator co_await") {
  Log& log = fresh_log();
  Set set;
  set.add<SyncDefault>([](int x, std::optional<int> last) {
    note("ready(" + std::to_string(x) + ", last=" + show(last) + ")");
    return Ready<int>{*last * 10 + 1};
  });
  set.add<SyncDefault>([](int x, std::optional<int> last) {
    note("declines(" + std::to_string(x) + ", last=" + show(last) + ")");
    return DeclinesToSuspend<int>{*last * 10 + 2};
  });
  set.add<SyncDefault>([](int x, std::optional<int> last) {
    note("transfers(" + std::to_string(x) + ", last=" + show(last) + ")");
    return TransfersBack{*last * 10 + 3};
  });
  set.add<SyncDefault>([](int x, std::optional<int> last) {
    note("co_await(" + std::to_string(x) + ", last=" + show(last) + ")");
    return ViaCoAwait{*last * 10 + 4};
  });
  REQUIRE(sync_wait(set.call<SyncDefault>(9)) == 91234);
  REQUIRE(log == Log{"default(9)", "ready(9, last=9)", "declines(9, last=91)",
                     "transfers(9, last=912)", "co_await(9, last=9123)"});
}

TEST_CASE(
    "a hook returning a non-Task awaiter that really suspends is resumed later from the test") {
  Log& log = fresh_log();
  Parked parking;
  Set set;
  set.add<SyncDefault>([&parking](int x, std::optional<int> last) {
    note("parks(" + std::to_string(x) + ", last=" + show(last) + ")");
    return ParkedValue{&parking, *last + 1};
  });
  set.add<SyncDefault>(fold_hook("after", 7));

  auto run = start(set.call<SyncDefault>(10));
  REQUIRE_FALSE(run.done());
  REQUIRE(log == Log{"default(10)", "parks(10, last=10)"});

  parking.fire();
  REQUIRE(run.done());
  REQUIRE(run.result() == 117);
  REQUIRE(log == Log{"default(10)", "parks(10, last=10)", "parked resumed", "after(10, last=11)"});
}

// ================================================================================================
// Hooks that suspend and are resumed later
// ================================================================================================

TEST_CASE(
    "a coroutine hook that suspends: the dispatch waits, later hooks run only after it resumes") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<SyncDefault>(fold_hook("h1", 1));
  set.add<SyncDefault>(suspending_fold("h2", 2, gate));
  set.add<SyncDefault>(afold_hook("h3", 3));
  set.add<SyncDefault>(fold_hook("h4", 4));

  auto run = start(set.call<SyncDefault>(2));
  REQUIRE_FALSE(run.done());
  REQUIRE(gate.has_waiter());
  REQUIRE(log == Log{"default(2)", "h1(2, last=2)", "h2 start(2, last=21)"});

  gate.fire();
  REQUIRE(run.done());
  REQUIRE(run.result() == 21234);
  REQUIRE(log == Log{"default(2)", "h1(2, last=2)", "h2 start(2, last=21)", "h2 end(2)",
                     "h3(2, last=212)", "h4(2, last=2123)"});
}

TEST_CASE("several hooks suspend in turn, each is resumed from the test body") {
  Log& log = fresh_log();
  ManualEvent first;
  ManualEvent second;
  Set set;
  set.add<AsyncFallback>(suspending_fold("a", 1, first));
  set.add<AsyncFallback>(fold_hook("b", 2));
  set.add<AsyncFallback>(suspending_fold("c", 3, second));

  auto run = start(set.call<AsyncFallback>(1));
  REQUIRE(log == Log{"a start(1, last=nullopt)"});
  REQUIRE_FALSE(second.has_waiter());

  first.fire();
  REQUIRE_FALSE(run.done());
  REQUIRE(second.has_waiter());
  REQUIRE(log ==
          Log{"a start(1, last=nullopt)", "a end(1)", "b(1, last=1)", "c start(1, last=12)"});

  second.fire();
  REQUIRE(run.done());
  REQUIRE(run.result() == 123);
  REQUIRE(log.back() == "c end(1)");
  REQUIRE(log.size() == 5);
}

TEST_CASE("a suspended hook resumed on another thread completes the sync_wait of the dispatch") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<SyncDefault>(suspending_fold("h1", 1, gate));
  set.add<SyncDefault>(fold_hook("h2", 2));

  std::thread resumer([&gate] { gate.fire_when_waited_on(); });
  const int result = sync_wait(set.call<SyncDefault>(5));
  resumer.join();
  REQUIRE(result == 512);
  REQUIRE(log == Log{"default(5)", "h1 start(5, last=5)", "h1 end(5)", "h2(5, last=51)"});
}

TEST_CASE("a suspended void hook: the remaining hooks run after it is resumed") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<AsyncVoid>([&gate](int x) -> hookset::Task<> {
    note("h1 start(" + std::to_string(x) + ")");
    co_await gate;
    note("h1 end(" + std::to_string(x) + ")");
  });
  set.add<AsyncVoid>([](int x) { note("h2(" + std::to_string(x) + ")"); });

  auto run = start_void(set.call<AsyncVoid>(8));
  REQUIRE(log == Log{"default(8)", "h1 start(8)"});
  gate.fire();
  REQUIRE(run.done());
  REQUIRE(run.result());
  REQUIRE(log == Log{"default(8)", "h1 start(8)", "h1 end(8)", "h2(8)"});
}

TEST_CASE("a move-only value parameter stays alive and identical across a hook's suspension") {
  Log& log = fresh_log();
  ManualEvent gate;
  std::vector<const void*> seen;
  Set set;
  set.add<OwnsInt>(
      [&gate, &seen](const std::unique_ptr<int>& p, std::optional<int> last) -> hookset::Task<int> {
        seen.push_back(&p);
        note("h1 start(" + std::to_string(*p) + ", last=" + show(last) + ")");
        co_await gate;
        note("h1 end(" + std::to_string(*p) + ")");
        seen.push_back(&p);
        co_return *last + *p;
      });
  set.add<OwnsInt>([&seen](const std::unique_ptr<int>& p, std::optional<int> last) {
    seen.push_back(&p);
    note("h2(" + std::to_string(*p) + ", last=" + show(last) + ")");
    return *last + 1;
  });

  auto run = start(set.call<OwnsInt>(std::make_unique<int>(21)));  // a temporary argument
  REQUIRE_FALSE(run.done());
  gate.fire();
  REQUIRE(run.result() == 43);
  REQUIRE(log == Log{"default(21)", "h1 start(21, last=21)", "h1 end(21)", "h2(21, last=42)"});
  REQUIRE(seen.size() == 3);
  REQUIRE(seen[0] == seen[1]);
  REQUIRE(seen[1] == seen[2]);
}

TEST_CASE("a dispatch takes its view of the hooks when it starts, not when call() is made") {
  Log& log = fresh_log();
  Set set;
  auto pending = set.call<SyncDefault>(1);  // created, not started
  set.add<SyncDefault>(fold_hook("added before start", 5));
  REQUIRE(sync_wait(std::move(pending)) == 15);
  REQUIRE(log == Log{"default(1)", "added before start(1, last=1)"});
}

TEST_CASE("a dispatch suspended in a hook keeps running over the hooks it started with") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<SyncDefault>(suspending_fold("h1", 1, gate));
  const hookset::HookId h2 = set.add<SyncDefault>(fold_hook("h2", 2));

  auto run = start(set.call<SyncDefault>(3));
  REQUIRE_FALSE(run.done());
  REQUIRE(set.remove(h2));  // removed meanwhile: still runs here
  set.add<SyncDefault>(fold_hook("late", 9), hookset::Priority{-5});  // added meanwhile: does not
  gate.fire();
  REQUIRE(run.result() == 312);
  REQUIRE(log == Log{"default(3)", "h1 start(3, last=3)", "h1 end(3)", "h2(3, last=31)"});

  // The next dispatch sees the new list.
  fresh_log();
  auto next = start(set.call<SyncDefault>(4));
  gate.fire();
  REQUIRE(next.result() == 491);
  REQUIRE(log == Log{"default(4)", "late(4, last=4)", "h1 start(4, last=49)", "h1 end(4)"});
}

// ================================================================================================
// Exceptions from coroutine hooks
// ================================================================================================

TEST_CASE(
    "an exception thrown by a coroutine hook before it suspends propagates, later hooks do not "
    "run") {
  Log& log = fresh_log();
  Set set;
  set.add<SyncDefault>(afold_hook("h1", 1));
  set.add<SyncDefault>([](int x, std::optional<int> last) -> hookset::Task<int> {
    note("h2(" + std::to_string(x) + ", last=" + show(last) + ")");
    throw std::runtime_error("h2 failed");
    co_return 0;
  });
  set.add<SyncDefault>(afold_hook("h3", 3));
  REQUIRE_THROWS_WITH(sync_wait(set.call<SyncDefault>(1)), "h2 failed");
  REQUIRE(log == Log{"default(1)", "h1(1, last=1)", "h2(1, last=11)"});
}

TEST_CASE(
    "an exception thrown by a coroutine hook after it suspended reaches the awaiting coroutine") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<SyncDefault>(fold_hook("h1", 1));
  set.add<SyncDefault>(failing_after_suspension("h2", gate));
  set.add<SyncDefault>(fold_hook("h3", 3));

  auto run = start(set.call<SyncDefault>(6));
  REQUIRE_FALSE(run.done());
  gate.fire();
  REQUIRE(run.done());
  REQUIRE(run.failed());
  REQUIRE_THROWS_WITH(run.result(), "h2 failed after suspension");
  REQUIRE(log == Log{"default(6)", "h1(6, last=6)", "h2 start(6, last=61)", "h2 throws"});
  REQUIRE(set.count<SyncDefault>() == 3);
}

TEST_CASE(
    "an exception after suspension, resumed on another thread, is rethrown by sync_wait, the set "
    "stays usable") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<AsyncFallback>(failing_after_suspension("h1", gate));
  set.add<AsyncFallback>(afold_hook("h2", 2));

  std::thread resumer([&gate] { gate.fire_when_waited_on(); });
  REQUIRE_THROWS_WITH(sync_wait(set.call<AsyncFallback>(2)), "h1 failed after suspension");
  resumer.join();
  REQUIRE(logged() == Log{"h1 start(2, last=nullopt)", "h1 throws"});

  // Unchanged and usable: the next dispatch fails the same way, at the same point.
  fresh_log();
  std::thread again([&gate] { gate.fire_when_waited_on(); });
  REQUIRE_THROWS_AS(sync_wait(set.call<AsyncFallback>(3)), std::runtime_error);
  again.join();
  REQUIRE(log == Log{"h1 start(3, last=nullopt)", "h1 throws"});
  REQUIRE(set.count<AsyncFallback>() == 2);
}

TEST_CASE("an exception from a suspending async default propagates and no hook runs") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<AsyncSingleton>([&gate](int x) -> hookset::Task<int> {
    note("only start(" + std::to_string(x) + ")");
    co_await gate;
    throw std::out_of_range("singleton failed");
  });
  auto run = start(set.call<AsyncSingleton>(1));
  gate.fire();
  REQUIRE_THROWS_AS(run.result(), std::out_of_range);
  REQUIRE(log == Log{"only start(1)"});
}

// ================================================================================================
// Dispatches awaited inside coroutines, nested dispatch
// ================================================================================================

TEST_CASE("a dispatch co_awaited inside a coroutine (Task<int> f(set))") {
  Log& log = fresh_log();
  Set set;
  set.add<SyncDefault>(afold_hook("s1", 1));
  set.add<AsyncFallback>(fold_hook("f1", 2));
  REQUIRE(sync_wait(two_dispatches(set, 3)) == 31 + 2);
  REQUIRE(log == Log{"default(3)", "s1(3, last=3)", "between dispatches", "f1(31, last=nullopt)"});
}

TEST_CASE("a dispatch co_awaited inside a coroutine that suspends, driven from the test") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<SyncDefault>(suspending_fold("s1", 1, gate));
  auto run = start(two_dispatches(set, 2));
  REQUIRE_FALSE(run.done());
  REQUIRE(log == Log{"default(2)", "s1 start(2, last=2)"});
  gate.fire();
  REQUIRE(run.result() == 21 - 21);  // AsyncFallback without hooks: -first
  REQUIRE(log == Log{"default(2)", "s1 start(2, last=2)", "s1 end(2)", "between dispatches",
                     "default(21)"});
}

TEST_CASE("nested dispatch: a hook co_awaits another slot of the same set") {
  Log& log = fresh_log();
  Set set;
  set.add<Inner>(afold_hook("inner h1", 1));
  set.add<Inner>(fold_hook("inner h2", 2));
  set.add<Outer>([&set](int x, std::optional<int> last) -> hookset::Task<int> {
    note("outer h1 start(" + std::to_string(x) + ", last=" + show(last) + ")");
    const int inner = co_await set.call<Inner>(x + 1);
    note("outer h1 end(inner=" + std::to_string(inner) + ")");
    co_return *last + inner;
  });
  set.add<Outer>(fold_hook("outer h2", 5));
  REQUIRE(sync_wait(set.call<Outer>(1)) == (1 + 12) * 10 + 5);
  REQUIRE(log == Log{"outer default(1)", "outer h1 start(1, last=1)", "inner h1(2, last=nullopt)",
                     "inner h2(2, last=1)", "outer h1 end(inner=12)", "outer h2(1, last=13)"});
}

TEST_CASE(
    "nested dispatch through the async default of the inner slot, and a void slot dispatched from "
    "a hook") {
  Log& log = fresh_log();
  Set set;
  set.add<Outer>([&set](int x, std::optional<int> last) -> hookset::Task<int> {
    const int inner = co_await set.call<Inner>(x);  // no Inner hooks: its async default
    co_await set.call<Notify>("inner gave " + std::to_string(inner));
    co_return *last + inner;
  });
  set.add<Notify>([](const std::string& what) { note("notify hook(" + what + ")"); });
  REQUIRE(sync_wait(set.call<Outer>(2)) == 202);
  REQUIRE(log == Log{"outer default(2)", "inner default(2)", "notify default(inner gave 200)",
                     "notify hook(inner gave 200)"});
}

TEST_CASE("nested dispatch whose inner hook suspends: both dispatches resume in order") {
  Log& log = fresh_log();
  ManualEvent gate;
  Set set;
  set.add<Inner>(suspending_fold("inner", 4, gate));
  set.add<Outer>([&set](int x, std::optional<int> last) -> hookset::Task<int> {
    note("outer hook start");
    const int inner = co_await set.call<Inner>(x);
    note("outer hook end");
    co_return *last * 100 + inner;
  });
  set.add<Outer>(fold_hook("outer after", 1));

  auto run = start(set.call<Outer>(7));
  REQUIRE_FALSE(run.done());
  REQUIRE(log == Log{"outer default(7)", "outer hook start", "inner start(7, last=nullopt)"});
  gate.fire();
  REQUIRE(run.result() == 7041);
  REQUIRE(log == Log{"outer default(7)", "outer hook start", "inner start(7, last=nullopt)",
                     "inner end(7)", "outer hook end", "outer after(7, last=704)"});
}

TEST_CASE("nested dispatch: an exception in the inner dispatch propagates through the outer hook") {
  Log& log = fresh_log();
  Set set;
  set.add<Inner>([](int x, std::optional<int>) -> hookset::Task<int> {
    note("inner(" + std::to_string(x) + ")");
    throw std::domain_error("inner failed");
    co_return 0;
  });
  set.add<Outer>([&set](int x, std::optional<int> last) -> hookset::Task<int> {
    note("outer hook");
    co_return *last + co_await set.call<Inner>(x);
  });
  set.add<Outer>(fold_hook("never", 1));
  REQUIRE_THROWS_AS(sync_wait(set.call<Outer>(1)), std::domain_error);
  REQUIRE(log == Log{"outer default(1)", "outer hook", "inner(1)"});
}

TEST_CASE("a synchronous hook may sync_wait a nested dispatch of the same set") {
  Log& log = fresh_log();
  Set set;
  set.add<Inner>(fold_hook("inner", 3));
  set.add<Outer>([&set](int x, std::optional<int> last) {
    note("outer hook");
    return *last + sync_wait(set.call<Inner>(x));
  });
  REQUIRE(sync_wait(set.call<Outer>(4)) == 7);
  REQUIRE(log == Log{"outer default(4)", "outer hook", "inner(4, last=nullopt)"});
}

TEST_CASE(
    "awaited from a coroutine type of the user's own: hooks start in the co_await expression") {
  fresh_log();
  Set set;
  ManualEvent gate;
  std::thread::id first_hook_thread, second_hook_thread, resumed_thread;
  set.add<SyncDefault>([&](int x, std::optional<int> last) {
    first_hook_thread = std::this_thread::get_id();
    note("sync hook");
    return x + *last;
  });
  set.add<SyncDefault>([&](int x, std::optional<int> last) -> hookset::Task<int> {
    note("coroutine hook waits");
    co_await gate;
    second_hook_thread = std::this_thread::get_id();
    co_return x + *last;
  });
  auto body = [&]() -> Started<int> {
    note("before co_await");
    const int value = co_await set.call<SyncDefault>(1);
    resumed_thread = std::this_thread::get_id();
    note("after co_await");
    co_return value;
  };
  Started<int> running = body();
  // The first hook ran on this thread, inside the co_await, before the body suspended.
  CHECK(logged() == Log{"before co_await", "default(1)", "sync hook", "coroutine hook waits"});
  CHECK(first_hook_thread == std::this_thread::get_id());
  CHECK_FALSE(running.done());
  std::thread other([&] { gate.fire_when_waited_on(); });
  other.join();
  // The rest ran where the suspended hook was resumed, and so did the awaiting body.
  REQUIRE(running.done());
  CHECK(running.result() == 1 + (1 + 1));
  CHECK(second_hook_thread != std::this_thread::get_id());
  CHECK(resumed_thread == second_hook_thread);
  CHECK(logged().back() == "after co_await");
}

// A coroutine hook's Task is made by calling its callable, and what that call runs before it
// returns the Task is the hook's synchronous part: it sees the context of the coroutine awaiting
// the dispatch, as a synchronous hook does - also when an earlier hook suspended and was resumed
// from elsewhere (here the test body, whose thread has no context in scope), so the hooks after
// it run inside the dispatch's driver.
static hookset::Task<int> plus_one(int last) { co_return last + 1; }

TEST_CASE("a coroutine hook's synchronous part runs in the awaiting context after a suspension") {
  fresh_log();
  Set set;
  ManualEvent gate;
  std::vector<const hookset::detail::await_context*> seen;
  set.add<SyncDefault>([&](int, std::optional<int> last) -> hookset::Task<int> {
    co_await gate;
    co_return *last + 1;
  });
  set.add<SyncDefault>([&](int, std::optional<int> last) -> hookset::Task<int> {
    seen.push_back(hookset::detail::scoped_context());  // (not a coroutine: this runs now)
    return plus_one(*last);
  });
  hookset::detail::await_context caller_context;  // what a Stateful hook's lock pushes, say
  auto body = [&]() -> hookset::Task<int> {
    co_await hookset::detail::exchange_await_context{&caller_context};
    co_return co_await set.call<SyncDefault>(1);
  };
  Started<int> running = start(body());
  REQUIRE_FALSE(running.done());
  REQUIRE(hookset::detail::scoped_context() == nullptr);
  gate.fire();
  REQUIRE(running.done());
  CHECK(running.result() == 3);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == &caller_context);
}
