// Concurrent slots (Concurrent, MaxConcurrent<N>): hooks that suspend run at the same time; the
// aggregate gets the outputs in registration order whatever the completion order; a
// first-success chain answers with the first success in registration order and stops the hooks
// whose answers no longer matter; the limit holds; failures, failure policies and cancellation
// keep the structured lifetime (the dispatch completes after every hook it started).
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::Task;
using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;

namespace {

struct InOrder {
  std::vector<int> operator()(std::vector<int> outputs) const { return outputs; }
};
struct Collect : hookset::Slot<int(int), hookset::Fallback, hookset::Aggregate<InOrder>,
                               hookset::Output<std::vector<int>>, hookset::Concurrent> {
  static int default_impl(int x) { return -x; }
};
struct Pick : hookset::Slot<std::optional<int>(int), hookset::Fallback,
                            hookset::Chain<hookset::FirstSuccess>, hookset::Concurrent> {
  static std::optional<int> default_impl(int) { return -1; }
};
struct Notify : hookset::Slot<void(int), hookset::Always, hookset::MaxConcurrent<2>> {
  static void default_impl(int) {}
};
using Set = hookset::HookSet<Collect, Pick, Notify>;

// Hooks that wait for their own event, so that the test decides the completion order.
struct Gates {
  explicit Gates(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) events.push_back(std::make_unique<ManualEvent>());
    saw_stop.assign(n, false);
  }
  std::vector<std::unique_ptr<ManualEvent>> events;
  std::atomic<int> started{0};
  std::atomic<int> running{0};
  std::atomic<int> most_running{0};
  std::vector<bool> saw_stop;

  template <class T>
  Task<T> wait(std::size_t i, T value) {
    ++started;
    const int now = ++running;
    int most = most_running.load();
    while (now > most && !most_running.compare_exchange_weak(most, now)) {
    }
    co_await *events[i];
    const hookset::stop_token token = co_await hookset::current_stop_token();
    saw_stop[i] = token.stop_requested();
    --running;
    co_return value;
  }
  Task<void> wait_void(std::size_t i) { co_await wait<int>(i, 0); }
};

}  // namespace

TEST_CASE(
    "concurrent hooks all start before any finishes - and the aggregate gets registration order") {
  std::mt19937 random(20261123);
  for (int round = 0; round < 50; ++round) {
    constexpr std::size_t n = 6;
    Gates gates(n);
    Set set;
    for (std::size_t i = 0; i < n; ++i)
      set.add<Collect>(
          [&gates, i](int x) { return gates.wait<int>(i, x * 10 + static_cast<int>(i)); });
    Outcome<std::vector<int>> out;
    detach(set.call<Collect>(1), out);
    REQUIRE(gates.started == static_cast<int>(n));  // none waited for another
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    for (std::size_t i : order) {
      REQUIRE_FALSE(out.done);
      gates.events[i]->fire();
    }
    REQUIRE(out.done);
    REQUIRE_FALSE(out.error);
    CHECK(*out.value == std::vector<int>{10, 11, 12, 13, 14, 15});
  }
}

TEST_CASE("synchronous hooks of a concurrent slot run at their turn - mixed with suspending ones") {
  Gates gates(2);
  Set set;
  set.add<Collect>([](int x) { return x; });
  set.add<Collect>([&gates](int x) { return gates.wait<int>(0, x + 1); });
  set.add<Collect>([](int x) { return x + 2; });
  set.add<Collect>([&gates](int x) { return gates.wait<int>(1, x + 3); });
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(100), out);
  gates.events[1]->fire();
  gates.events[0]->fire();
  REQUIRE(out.done);
  CHECK(*out.value == std::vector<int>{100, 101, 102, 103});
}

TEST_CASE(
    "a first-success chain answers with the first success in registration order and stops the "
    "losers") {
  constexpr std::size_t n = 5;
  Gates gates(n);
  Set set;
  const std::optional<int> answers[n] = {std::nullopt, std::nullopt, 2, 3, std::nullopt};
  for (std::size_t i = 0; i < n; ++i)
    set.add<Pick>(
        [&gates, &answers, i](int) { return gates.wait<std::optional<int>>(i, answers[i]); });
  Outcome<std::optional<int>> out;
  detach(set.call<Pick>(0), out);
  CHECK(gates.started == static_cast<int>(n));
  gates.events[3]->fire();  // a success - but hooks before it may still answer
  gates.events[2]->fire();  // a success, earlier in registration order
  CHECK_FALSE(out.done);    // 0 and 1 could still answer
  gates.events[1]->fire();
  gates.events[0]->fire();  // now 2 is the first success; 4, still running, is stopped
  CHECK_FALSE(out.done);    // ... and waited for
  gates.events[4]->fire();
  REQUIRE(out.done);
  CHECK(out.value == std::optional<std::optional<int>>(std::optional<int>(2)));
  CHECK(gates.saw_stop[4]);
  CHECK_FALSE(gates.saw_stop[0]);
}

TEST_CASE("a first-success chain where nobody knows: the default answers after all finished") {
  Gates gates(3);
  Set set;
  for (std::size_t i = 0; i < 3; ++i)
    set.add<Pick>([&gates, i](int) { return gates.wait<std::optional<int>>(i, std::nullopt); });
  Outcome<std::optional<int>> out;
  detach(set.call<Pick>(0), out);
  for (std::size_t i : {2u, 0u, 1u}) gates.events[i]->fire();
  REQUIRE(out.done);
  CHECK(out.value == std::optional<std::optional<int>>(std::optional<int>(-1)));
}

TEST_CASE("MaxConcurrent<2>: never more than two hooks in flight") {
  constexpr std::size_t n = 6;
  Gates gates(n);
  Set set;
  for (std::size_t i = 0; i < n; ++i)
    set.add<Notify>([&gates, i](int) { return gates.wait_void(i); });
  Outcome<int> out;
  detach(
      [&]() -> Task<int> {
        co_await set.call<Notify>(0);
        co_return 0;
      }(),
      out);
  CHECK(gates.started == 2);
  for (std::size_t i : {1u, 0u, 3u, 2u, 5u, 4u}) gates.events[i]->fire();
  REQUIRE(out.done);
  CHECK(gates.started == static_cast<int>(n));
  CHECK(gates.most_running == 2);
}

TEST_CASE(
    "a failing concurrent hook: the others are stopped and waited for - then the dispatch fails") {
  Gates gates(3);
  Set set;
  set.add<Collect>([&gates](int x) { return gates.wait<int>(0, x); });
  set.add<Collect>([](int) -> Task<int> { throw std::runtime_error("plugin broke"); });
  set.add<Collect>([&gates](int x) { return gates.wait<int>(2, x); });
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(1), out);
  CHECK(gates.started == 1);  // the failure came first: hook 2 never starts
  CHECK_FALSE(out.done);      // hook 0 still runs (asked to stop): the dispatch waits for it
  gates.events[0]->fire();
  REQUIRE(out.done);
  CHECK(gates.saw_stop[0]);
  CHECK(gates.running == 0);
  CHECK_THROWS_WITH(std::rethrow_exception(out.error), "plugin broke");
}

TEST_CASE("FailOpen in a concurrent aggregate: the failed hook's output is left out") {
  Gates gates(2);
  Set set;
  set.add<Collect>([&gates](int x) { return gates.wait<int>(0, x); });
  set.add<Collect>([](int) -> Task<int> { throw std::runtime_error("flaky"); },
                   {.name = "flaky", .on_failure = hookset::FailOpen});
  set.add<Collect>([&gates](int x) { return gates.wait<int>(1, x + 2); });
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(1), out);
  gates.events[1]->fire();
  gates.events[0]->fire();
  REQUIRE(out.done);
  CHECK(*out.value == std::vector<int>{1, 3});
}

TEST_CASE("cancelling a concurrent dispatch stops every running hook and waits for them") {
  Gates gates(3);
  Set set;
  for (std::size_t i = 0; i < 3; ++i)
    set.add<Collect>([&gates, i](int x) { return gates.wait<int>(i, x); });
  hookset::stop_source source;
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(1).with_stop_token(source.get_token()), out);
  source.request_stop();
  gates.events[1]->fire();
  gates.events[0]->fire();
  CHECK_FALSE(out.done);
  gates.events[2]->fire();
  REQUIRE(out.done);
  CHECK(gates.saw_stop[0]);
  CHECK(gates.saw_stop[1]);
  CHECK(gates.saw_stop[2]);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
}

TEST_CASE("eight concurrent hooks each waiting 10 ms take about 10 ms - not 80") {
  // Sleeps on the default executor's timer thread (which resumes the hook there).
  class sleep_for {
   public:
    explicit sleep_for(std::chrono::milliseconds delay) : delay_(delay) {}
    auto operator co_await() & noexcept {
      struct awaiter {
        sleep_for& self;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> waiting) {
          // The timer may fire (and the resumed hook destroy this object) before start_timer
          // has returned: the callback waits until the handle is stored.
          auto stored = std::make_shared<std::mutex>();
          std::lock_guard storing(*stored);
          self.timer_ = hookset::default_executor().start_timer(
              std::chrono::steady_clock::now() + self.delay_, [stored, waiting] {
                { std::lock_guard wait_for_store(*stored); }
                waiting.resume();
              });
        }
        void await_resume() const noexcept {}
      };
      return awaiter{*this};
    }

   private:
    std::chrono::milliseconds delay_;
    std::unique_ptr<hookset::Executor::Timer> timer_;
  };
  Set set;
  for (int i = 0; i < 8; ++i)
    set.add<Collect>([](int x) -> Task<int> {
      sleep_for nap(10ms);
      co_await nap;
      co_return x;
    });
  const auto start = std::chrono::steady_clock::now();
  const auto outputs = hookset::sync_wait(set.call<Collect>(1));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(outputs.size() == 8);
  CHECK(elapsed < 70ms);
}

namespace {
// A hook that notes its own stop token, then waits on its gate.
struct Watched {
  explicit Watched(std::size_t n) : gates(n), tokens(n) {}
  Gates gates;
  std::vector<hookset::stop_token> tokens;
  Task<int> wait(std::size_t i, int value) {
    tokens[i] = co_await hookset::current_stop_token();
    co_return co_await gates.wait<int>(i, value);
  }
};
}  // namespace

TEST_CASE(
    "a failing concurrent hook stops the hooks registered before it at once, not at its turn") {
  Watched hooks(3);
  Set set;
  for (std::size_t i = 0; i < 3; ++i)
    set.add<Collect>([&hooks, i](int x) { return hooks.wait(i, x); });
  set.add<Collect>([](int) -> Task<int> { throw std::runtime_error("boom"); });
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(1), out);
  // The last hook failed at once: the three before it are asked to stop now...
  CHECK(hooks.tokens[0].stop_requested());
  CHECK(hooks.tokens[1].stop_requested());
  CHECK(hooks.tokens[2].stop_requested());
  // ...and the dispatch ends when they have finished, with that failure.
  hooks.gates.events[2]->fire();
  hooks.gates.events[0]->fire();
  CHECK_FALSE(out.done);
  hooks.gates.events[1]->fire();
  REQUIRE(out.done);
  CHECK_THROWS_WITH(std::rethrow_exception(out.error), "boom");
}

TEST_CASE("a failing concurrent hook under FailClosed in the middle: every sibling stops at once") {
  Watched hooks(3);
  Set set;
  set.add<Collect>([&hooks](int x) { return hooks.wait(0, x); });
  set.add<Collect>([&hooks](int x) { return hooks.wait(1, x); });
  set.add<Collect>([](int) -> Task<int> { throw std::runtime_error("denied"); },
                   {.name = "policy", .on_failure = hookset::FailClosed});
  set.add<Collect>([&hooks](int x) { return hooks.wait(2, x); });
  Outcome<std::vector<int>> out;
  detach(set.call<Collect>(1), out);
  // (The hook after the failure never started: a failure stops the starting.)
  CHECK(hooks.gates.started == 2);
  CHECK(hooks.tokens[0].stop_requested());
  CHECK(hooks.tokens[1].stop_requested());
  hooks.gates.events[1]->fire();
  hooks.gates.events[0]->fire();
  REQUIRE(out.done);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::HookFailed);
}

TEST_CASE("a late concurrent hook that fails while an earlier one waits on a timer: ends in ms") {
  // The shape of the report: four hooks, the last fails at once, the first would wait 2 s on a
  // stop-aware wait. The dispatch must end as soon as the first has stopped.
  Set set;
  for (int i = 0; i < 3; ++i)
    set.add<Collect>([](int x) -> Task<int> {
      const hookset::stop_token token = co_await hookset::current_stop_token();
      test_support::until_stopped waiter{token};
      co_await waiter;  // (stop-aware; nothing else ends it)
      co_return x;
    });
  set.add<Collect>([](int) -> Task<int> { throw std::runtime_error("boom"); });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<Collect>(1).with_timeout(2s)), "boom");
  CHECK(std::chrono::steady_clock::now() - start < 1s);
}

TEST_CASE("MaxConcurrent: a deadline ends a dispatch whose next hook waits for a free place") {
  Set set;
  std::atomic<int> started{0};
  for (int i = 0; i < 4; ++i)
    set.add<Notify>([&started](int) -> Task<void> {
      ++started;
      const hookset::stop_token token = co_await hookset::current_stop_token();
      test_support::until_stopped waiter{token};
      co_await waiter;
    });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(hookset::sync_wait(set.call<Notify>(1).with_timeout(50ms)),
                  hookset::DispatchTimeout);
  CHECK(std::chrono::steady_clock::now() - start < 1s);
  CHECK(started == 2);  // the other two never got a place
}

TEST_CASE("a first-success chain answered: a hook it stopped may fail, the answer stands") {
  Gates gates(3);
  Set set;
  set.add<Pick>([&gates](int x) { return gates.wait<std::optional<int>>(0, x * 7); });
  set.add<Pick>([&gates](int) { return gates.wait<std::optional<int>>(1, std::nullopt); });
  set.add<Pick>([&gates](int) -> Task<std::optional<int>> {
    co_await gates.wait<int>(2, 0);
    if (gates.saw_stop[2]) throw std::runtime_error("stopped: no answer");
    co_return 99;
  });
  Outcome<std::optional<int>> out;
  detach(set.call<Pick>(1), out);
  gates.events[0]->fire();  // the first hook answers: the others are asked to stop
  gates.events[2]->fire();  // the third fails because it was stopped, before the second ends
  CHECK_FALSE(out.done);
  gates.events[1]->fire();
  REQUIRE(out.done);
  CHECK_FALSE(out.error);
  CHECK(out.value == std::optional<int>(7));
}
