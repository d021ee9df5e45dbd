// `co_await x` on a named awaitable inside a hookset::Task awaits x itself (issue 41). GCC 12
// awaited a copy when the promise's await_transform handed x back as a reference (GCC bug 99575):
// a gate that keeps its waiter in itself kept it in the copy and the dispatch never resumed, and
// a non-copyable awaiter did not compile. Each gate is checked right after the first suspension,
// so a copy fails the test instead of hanging it.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <atomic>
#include <coroutine>
#include <optional>
#include <string_view>
#include <utility>

#include <hookset/hookset.hpp>

using hookset::Task;

namespace {

// Suspends whoever awaits it until open(): only the gate itself knows its waiter.
struct Gate {
  std::coroutine_handle<> waiting;

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) noexcept { waiting = h; }
  void await_resume() const noexcept {}

  bool has_waiter() const noexcept { return static_cast<bool>(waiting); }
  void open() { std::exchange(waiting, nullptr).resume(); }
};

// The same, neither copyable nor movable: it holds a std::atomic.
struct AtomicGate : Gate {
  std::atomic<bool> flag{false};
};

// Awaitable through a member operator co_await that refers to its (non-copyable) awaiter.
struct Door {
  AtomicGate latch;
  AtomicGate& operator co_await() & noexcept { return latch; }
};

Gate default_gate;  // the coroutine default's: a default is a static function

struct Score : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct GatedDefault : hookset::Slot<int(int), hookset::Always> {
  static Task<int> default_impl(int x) {
    co_await default_gate;
    co_return x + 1;
  }
};
struct ScoreByTool : hookset::Slot<int(int, std::string_view), hookset::Always, hookset::Keyed> {
  static int default_impl(int x, std::string_view) { return x; }
};
using Set = hookset::HookSet<Score, GatedDefault, ScoreByTool>;

// Starts the dispatch, which must wait at the gate itself; opens the gate from here and checks
// the dispatch completed with `expected`.
template <class Dispatch>
void check_opened_from_outside(Gate& gate, Dispatch dispatch, int expected) {
  test_support::Outcome<int> outcome;
  test_support::detach(std::move(dispatch), outcome);
  REQUIRE_FALSE(outcome.done);
  REQUIRE(gate.has_waiter());  // else a copy of the gate holds the waiter: nobody can resume it
  gate.open();
  REQUIRE(outcome.done);
  REQUIRE_FALSE(outcome.error);
  CHECK(*outcome.value == expected);
}

// Counts the copies and moves of every Counted since the last take(). Suspends until resumed
// from outside, and yields whether the object resumed is the one that suspended.
struct Counted {
  static inline int copies = 0;
  static inline int moves = 0;
  static inline Counted* suspended = nullptr;
  static std::pair<int, int> take() { return {std::exchange(copies, 0), std::exchange(moves, 0)}; }

  std::coroutine_handle<> waiting;

  Counted() = default;
  Counted(const Counted&) noexcept { ++copies; }
  Counted(Counted&&) noexcept { ++moves; }

  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> h) noexcept {
    waiting = h;
    suspended = this;
  }
  bool await_resume() const noexcept { return std::exchange(suspended, nullptr) == this; }
};

}  // namespace

TEST_CASE("a gate awaited by name in a coroutine hook is the gate itself") {
  Set set;
  Gate gate;
  set.add<Score>([&gate](int x, std::optional<int> last) -> Task<int> {
    co_await gate;
    co_return *last + x * 10;
  });
  check_opened_from_outside(gate, set.call<Score>(2), 22);
}

TEST_CASE("a gate awaited by name in a coroutine default is the gate itself") {
  Set set;
  check_opened_from_outside(default_gate, set.call<GatedDefault>(2), 3);
}

TEST_CASE("a gate awaited by name in a coroutine interceptor is the gate itself") {
  Set set;
  Gate gate;
  set.intercept<Score>([&gate](hookset::Next<Score> next, int x) -> Task<int> {
    co_await gate;
    co_return co_await next(x) + 100;
  });
  check_opened_from_outside(gate, set.call<Score>(2), 102);
}

TEST_CASE("a gate awaited by name in a keyed coroutine hook is the gate itself") {
  Set set;
  Gate gate;
  set.add<ScoreByTool>(hookset::key("gated"),
                       [&gate](int x, std::string_view, std::optional<int> last) -> Task<int> {
                         co_await gate;
                         co_return *last + x * 10;
                       });
  check_opened_from_outside(gate, set.call<ScoreByTool>(2, "gated"), 22);
}

TEST_CASE("a non-copyable awaiter awaited by name, directly or through operator co_await") {
  AtomicGate gate;
  Door door;
  auto body = [&]() -> Task<int> {
    co_await gate;
    co_await door;
    co_return 1;
  };
  test_support::Outcome<int> outcome;
  test_support::detach(body(), outcome);
  REQUIRE(gate.has_waiter());
  gate.open();
  REQUIRE(door.latch.has_waiter());
  door.latch.open();
  REQUIRE(outcome.done);
  CHECK(*outcome.value == 1);
}

TEST_CASE("an awaiter is never copied: by name not moved either, as an rvalue moved at most once") {
  std::pair<int, int> named, moved, temporary;  // (copies, moves)
  auto body = [&]() -> Task<int> {
    Counted counted;
    int same = co_await counted;
    named = Counted::take();
    same += co_await std::move(counted);
    moved = Counted::take();
    same += co_await Counted{};
    temporary = Counted::take();
    co_return same;
  };
  test_support::Outcome<int> outcome;
  test_support::detach(body(), outcome);
  for (int awaits = 0; awaits < 3; ++awaits) {
    REQUIRE(Counted::suspended);
    Counted::suspended->waiting.resume();
  }
  REQUIRE(outcome.done);
  CHECK(*outcome.value == 3);  // each resumed the object that suspended
  CHECK(named.first == 0);
  CHECK(named.second == 0);
  CHECK(moved.first == 0);
  CHECK(moved.second <= 1);
  CHECK(temporary.first == 0);
  CHECK(temporary.second <= 1);
}
