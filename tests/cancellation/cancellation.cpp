// Cancellation and deadlines in the core (no event loop: sync_wait and the default executor):
// a dispatch's stop token reaches the running hook (as an argument, through
// current_stop_token(), through nested dispatches), a cancelled or late dispatch ends with a
// typed error naming the slot (and the hook), after the hook it was running has finished, and
// nothing of it runs afterwards.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::sync_wait;
using hookset::Task;
using test_support::fresh_log;
using test_support::note;
using test_support::until_stopped;

namespace {

struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) {
    note("default");
    return x;
  }
};
struct Gate : hookset::Slot<int(int), hookset::Fallback> {
  static Task<int> default_impl(int x);
};
Task<int> Gate::default_impl(int x) {
  note("default waits");
  {
    const hookset::stop_token token = co_await hookset::current_stop_token();
    until_stopped waiter{token};
    co_await waiter;
  }
  note("default stopped");
  co_return x;
}

struct Sum {
  Task<int> operator()(std::vector<int> outputs) const {
    note("aggregate");
    {
      const hookset::stop_token token = co_await hookset::current_stop_token();
      until_stopped waiter{token};
      co_await waiter;
    }
    int total = 0;
    for (int v : outputs) total += v;
    co_return total;
  }
};
struct Collect : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return x; }
};
struct Inner : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Count, Gate, Collect, Inner>;

// A hook that waits until its dispatch is stopped, noting when it starts and ends.
Task<int> waiting_hook(std::string name, int x, std::optional<int> last) {
  note(name + " waits");
  {
    const hookset::stop_token token = co_await hookset::current_stop_token();
    until_stopped waiter{token};
    co_await waiter;
  }
  note(name + " stopped");
  co_return x + last.value_or(0);
}

template <class E, class Awaitable>
E expect_error(Awaitable&& awaitable) {
  try {
    (void)sync_wait(std::forward<Awaitable>(awaitable));
  } catch (const E& e) {
    return e;
  }
  FAIL("the dispatch did not end with the expected error");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("a dispatch whose stop token is already triggered runs nothing and ends cancelled") {
  auto& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) {
    note("hook");
    return x + *last;
  });
  hookset::stop_source source;
  source.request_stop();
  const auto error = expect_error<hookset::DispatchCancelled>(
      set.call<Count>(1).with_stop_token(source.get_token()));
  CHECK(error.slot == "Count");
  CHECK(std::string(error.what()).find("Count") != std::string::npos);
  CHECK(log.empty());
}

TEST_CASE(
    "a stop reaches the running Task hook - which finishes before the dispatch ends cancelled") {
  auto& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) { return waiting_hook("a", x, last); });
  set.add<Count>([](int x, std::optional<int> last) {
    note("b");
    return x + *last;
  });
  hookset::stop_source source;
  std::thread canceller([&] {
    while (test_support::logged().size() < 2) std::this_thread::sleep_for(1ms);
    source.request_stop();
  });
  expect_error<hookset::DispatchCancelled>(set.call<Count>(1).with_stop_token(source.get_token()));
  canceller.join();
  // The default ran, `a` was stopped and finished; `b` never ran.
  CHECK(log == test_support::Log{"default", "a waits", "a stopped"});
}

TEST_CASE("a hook may take the stop token as its last argument") {
  fresh_log();
  Set set;
  std::atomic<bool> possible{false};
  set.add<Count>([&](int x, std::optional<int> last, hookset::stop_token token) {
    possible = token.stop_possible();
    return x + *last;
  });
  hookset::stop_source source;
  CHECK(sync_wait(set.call<Count>(2).with_stop_token(source.get_token())) == 4);
  CHECK(possible);
  // Without a stop token the hook gets one that never stops.
  CHECK(sync_wait(set.call<Count>(2)) == 4);
  CHECK_FALSE(possible);
}

TEST_CASE("a synchronous hook that stops the dispatch: no later hook runs") {
  auto& log = fresh_log();
  Set set;
  hookset::stop_source source;
  set.add<Count>([&](int x, std::optional<int>) {
    note("first");
    source.request_stop();
    return x;
  });
  set.add<Count>([](int x, std::optional<int>) {
    note("second");
    return x;
  });
  expect_error<hookset::DispatchCancelled>(set.call<Count>(1).with_stop_token(source.get_token()));
  CHECK(log == test_support::Log{"default", "first"});
}

TEST_CASE("a dispatch deadline stops the running hook and ends in DispatchTimeout naming it") {
  auto& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) { return waiting_hook("slow", x, last); },
                 hookset::HookOptions{.name = "slow"});
  const auto start = std::chrono::steady_clock::now();
  const auto error = expect_error<hookset::DispatchTimeout>(set.call<Count>(1).with_timeout(30ms));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 30ms);
  CHECK(elapsed < 2s);
  CHECK(error.slot == "Count");
  CHECK(error.hook_name == "slow");
  CHECK_FALSE(error.per_hook);
  CHECK(std::string(error.what()).find("slow") != std::string::npos);
  CHECK(log == test_support::Log{"default", "slow waits", "slow stopped"});
}

TEST_CASE("a deadline already passed: nothing runs") {
  auto& log = fresh_log();
  Set set;
  expect_error<hookset::DispatchTimeout>(
      set.call<Count>(1).with_deadline(std::chrono::steady_clock::now() - 1ms));
  CHECK(log.empty());
}

TEST_CASE("a hook's own time limit: DispatchTimeout naming the hook - per hook") {
  auto& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) { return waiting_hook("slow", x, last); },
                 hookset::HookOptions{.name = "slow", .timeout = 20ms});
  set.add<Count>([](int x, std::optional<int> last) {
    note("after");
    return x + *last;
  });
  const auto error = expect_error<hookset::DispatchTimeout>(set.call<Count>(1));
  CHECK(error.per_hook);
  CHECK(error.hook_name == "slow");
  CHECK(log == test_support::Log{"default", "slow waits", "slow stopped"});
}

TEST_CASE("a hook's own time limit with FailOpen: skipped - reported - the dispatch goes on") {
  auto& log = fresh_log();
  Set set;
  test_support::RecordingObserver observer;
  set.set_observer(&observer);
  set.add<Count>([](int x, std::optional<int> last) { return waiting_hook("slow", x, last); },
                 {.name = "slow", .timeout = 10ms, .on_failure = hookset::FailOpen});
  set.add<Count>([](int x, std::optional<int> last) {
    note("after");
    return x * 10 + *last;
  });
  // As if `slow` had not run: last = default = 1, then 1 * 10 + 1.
  CHECK(sync_wait(set.call<Count>(1)) == 11);
  CHECK(log == test_support::Log{"default", "slow waits", "slow stopped", "after"});
  REQUIRE(observer.events.size() >= 3);
  bool warned = false;
  for (const auto& e : observer.events)
    warned = warned || (e.kind == "warning" && e.message.find("slow") != std::string::npos);
  CHECK(warned);
}

TEST_CASE("a hook's own time limit with FailClosed: HookFailed whose cause is the timeout") {
  fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) { return waiting_hook("gate", x, last); },
                 {.name = "gate", .timeout = 10ms, .on_failure = hookset::FailClosed});
  const auto error = expect_error<hookset::HookFailed>(set.call<Count>(1));
  CHECK(error.hook_name == "gate");
  CHECK_THROWS_AS(std::rethrow_exception(error.cause), hookset::DispatchTimeout);
}

TEST_CASE(
    "a synchronous hook over its time limit is timed out when it returns - its output discarded") {
  fresh_log();
  Set set;
  set.add<Count>(
      [](int x, std::optional<int>) {
    std::this_thread::sleep_for(30ms);
    return x * 1000;
      },
      {.name = "sleepy", .timeout = 5ms, .on_failure = hookset::FailOpen});
  CHECK(sync_wait(set.call<Count>(3)) == 3);  // the default's, the hook's 3000 discarded
}

TEST_CASE("a cancellation while the asynchronous default runs") {
  auto& log = fresh_log();
  Set set;
  hookset::stop_source source;
  std::thread canceller([&] {
    while (test_support::logged().empty()) std::this_thread::sleep_for(1ms);
    source.request_stop();
  });
  expect_error<hookset::DispatchCancelled>(set.call<Gate>(5).with_stop_token(source.get_token()));
  canceller.join();
  CHECK(log == test_support::Log{"default waits", "default stopped"});
}

TEST_CASE("a cancellation inside an asynchronous companion") {
  auto& log = fresh_log();
  Set set;
  set.add<Collect>([](int x) { return x; });
  hookset::stop_source source;
  std::thread canceller([&] {
    while (test_support::logged().empty()) std::this_thread::sleep_for(1ms);
    source.request_stop();
  });
  expect_error<hookset::DispatchCancelled>(
      set.call<Collect>(1).with_stop_token(source.get_token()));
  canceller.join();
  CHECK(log == test_support::Log{"aggregate"});
}

TEST_CASE("the stop token reaches the hooks of a dispatch nested in a hook") {
  auto& log = fresh_log();
  Set set;
  set.add<Inner>([](int x, std::optional<int> last) { return waiting_hook("inner", x, last); });
  set.add<Count>([&set](int x, std::optional<int>) -> Task<int> {
    note("outer");
    co_return co_await set.call<Inner>(x);  // no options of its own: the outer stop reaches it
  });
  hookset::stop_source source;
  std::thread canceller([&] {
    while (test_support::logged().size() < 3) std::this_thread::sleep_for(1ms);
    source.request_stop();
  });
  expect_error<hookset::DispatchCancelled>(set.call<Count>(1).with_stop_token(source.get_token()));
  canceller.join();
  CHECK(log == test_support::Log{"default", "outer", "inner waits", "inner stopped"});
}

TEST_CASE(
    "options travel with a moved dispatch - and a dispatch without a stop finishes normally") {
  fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int> last) -> Task<int> { co_return x + *last; });
  hookset::stop_source source;
  auto dispatch = set.call<Count>(4).with({.stop_token = source.get_token(), .timeout = 10s});
  auto moved = std::move(dispatch);
  CHECK(sync_wait(std::move(moved)) == 8);
}
