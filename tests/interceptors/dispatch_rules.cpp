// Interceptors and the rest of the dispatch rules: observers, cancellation and deadlines,
// failure policies, concurrent slots, pipelines, frozen and shared sets, snapshots.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::Next;
using hookset::Task;
using test_support::fresh_log;
using test_support::Log;
using test_support::ManualEvent;
using test_support::note;

namespace {

struct Count : hookset::Slot<int(int x), hookset::Always> {
  static int default_impl(int x) { return x; }
};

struct InOrder {
  std::vector<int> operator()(std::vector<int> outputs) const { return outputs; }
};
struct Collect : hookset::Slot<int(int), hookset::Fallback, hookset::Aggregate<InOrder>,
                               hookset::Output<std::vector<int>>, hookset::Concurrent> {
  static int default_impl(int x) { return -x; }
};

struct Call {
  std::string tool;
  std::string path;
};
struct Check : hookset::Slot<std::string(Call call), hookset::Pipeline> {
  static std::string default_impl(const Call& call) { return "ran " + call.tool + " " + call.path; }
};

using Set = hookset::HookSet<Count, Collect, Check>;

// Records hook events too (HookEvent::interceptor tells the interceptors' apart).
struct EventLog : test_support::RecordingObserver {
  std::vector<std::string> hooks;
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const hookset::HookEvent& e) override {
    hooks.push_back(std::string(e.interceptor ? "interceptor " : "hook ") + std::string(e.name) +
                    " begin #" + std::to_string(e.dispatch_id));
  }
  void on_hook_end(const hookset::HookEvent& e) override {
    hooks.push_back(std::string(e.interceptor ? "interceptor " : "hook ") + std::string(e.name) +
                    " end " + std::string(hookset::to_string(e.outcome)) + " #" +
                    std::to_string(e.dispatch_id));
  }
};

Task<int> wait_for_stop(std::string name, int x) {
  note(name + " waits");
  const hookset::stop_token token = co_await hookset::current_stop_token();
  test_support::until_stopped stopped{token};  // (the stop may come from the timer thread)
  co_await stopped;
  note(name + " stopped");
  co_return x;
}

template <class Error, class Awaitable>
Error expect_error(Awaitable&& awaitable) {
  try {
    hookset::sync_wait(std::forward<Awaitable>(awaitable));
  } catch (const Error& e) {
    return e;
  }
  FAIL("expected the dispatch to fail");
  throw std::logic_error("unreachable");
}

// The hook "add" of the event tests.
void add_named_hook(Set& set) {
  set.add<Count>([](int x, std::optional<int> last) { return x + *last; },
                 hookset::HookOptions{.name = "add"});
}

// The events of interceptors "outer" and "inner" around the hook "add" in the observed dispatch,
// each interceptor's end with its outcome.
std::vector<std::string> nested_events(const EventLog& observer, std::string_view inner_end,
                                       std::string_view outer_end) {
  const std::string id = " #" + std::to_string(observer.events.at(0).id);
  return {"interceptor outer begin" + id,
          "interceptor inner begin" + id,
          "hook add begin" + id,
          "hook add end ok" + id,
          "interceptor inner end " + std::string(inner_end) + id,
          "interceptor outer end " + std::string(outer_end) + id};
}

}  // namespace

TEST_CASE("observers see one dispatch - interceptors and hooks as hook events under its id") {
  fresh_log();
  Set set;
  EventLog observer;
  set.set_observer(&observer);
  add_named_hook(set);
  set.intercept<Count>([](Next<Count> next, int x) -> Task<int> { co_return co_await next(x) + 1; },
                       hookset::HookOptions{.name = "outer"});
  set.intercept<Count>([](Next<Count> next, int x) { return hookset::sync_wait(next(x)); },
                       hookset::HookOptions{.name = "inner"});
  CHECK(hookset::sync_wait(set.call<Count>(2)) == 5);
  REQUIRE(observer.events.size() == 2);
  CHECK(observer.events[0].kind == "begin");
  CHECK(observer.events[1].kind == "end");
  CHECK(observer.events[1].hooks_run == 1);
  CHECK_FALSE(observer.events[1].failed);
  CHECK(observer.hooks == nested_events(observer, "ok", "ok"));
}

TEST_CASE("an interceptor's failure is reported as a failed interceptor and fails the dispatch") {
  fresh_log();
  Set set;
  EventLog observer;
  set.set_observer(&observer);
  set.intercept<Count>([](Next<Count>, int) -> int { throw std::runtime_error("refused"); },
                       hookset::HookOptions{.name = "guard"});
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<Count>(1)), "refused");
  REQUIRE(observer.events.size() == 2);
  CHECK(observer.events[1].failed);
  CHECK(observer.hooks.back().starts_with("interceptor guard end failed"));
}

TEST_CASE(
    "a coroutine interceptor's failure inside next() ends its event and the enclosing one's") {
  fresh_log();
  Set set;
  EventLog observer;
  set.set_observer(&observer);
  add_named_hook(set);
  set.intercept<Count>([](Next<Count> next, int x) -> Task<int> { co_return co_await next(x); },
                       hookset::HookOptions{.name = "outer"});
  set.intercept<Count>(
      [](Next<Count> next, int x) -> Task<int> {
        const int ran = co_await next(x);
        throw std::runtime_error("refused " + std::to_string(ran));
      },
      hookset::HookOptions{.name = "inner"});
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<Count>(2)), "refused 4");
  REQUIRE(observer.events.size() == 2);
  CHECK(observer.events[1].failed);
  CHECK(observer.events[1].hooks_run == 1);
  CHECK(observer.hooks == nested_events(observer, "failed", "failed"));
}

TEST_CASE(
    "cancellation: the hooks inside next() get the caller's stop token - a token already "
    "triggered runs no interceptor") {
  Log& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int>) { return wait_for_stop("hook", x); });
  set.intercept<Count>([](Next<Count> next, int x) -> Task<int> {
    note("interceptor");
    co_return co_await next(x);
  });
  hookset::stop_source source;
  test_support::Outcome<int> out;
  test_support::detach(set.call<Count>(1).with_stop_token(source.get_token()), out);
  CHECK_FALSE(out.done);
  CHECK(log == Log{"interceptor", "hook waits"});
  source.request_stop();
  REQUIRE(out.done);
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
  CHECK(log == Log{"interceptor", "hook waits", "hook stopped"});

  log.clear();
  hookset::stop_source already;
  already.request_stop();
  expect_error<hookset::DispatchCancelled>(set.call<Count>(1).with_stop_token(already.get_token()));
  CHECK(log.empty());
}

TEST_CASE(
    "a deadline covers the whole dispatch: DispatchTimeout reaches the interceptor, "
    "which may answer instead") {
  Log& log = fresh_log();
  Set set;
  set.add<Count>([](int x, std::optional<int>) { return wait_for_stop("slow", x); },
                 hookset::HookOptions{.name = "slow"});
  const hookset::HookId id = set.intercept<Count>([](Next<Count> next, int x) -> Task<int> {
    try {
      co_return co_await next(x);
    } catch (const hookset::DispatchTimeout& e) {
      note("timed out in " + e.hook_name);
      co_return -1;
    }
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK(hookset::sync_wait(set.call<Count>(1).with_timeout(30ms)) == -1);
  CHECK(std::chrono::steady_clock::now() - start >= 30ms);
  CHECK(log == Log{"slow waits", "slow stopped", "timed out in slow"});

  // Without the translating interceptor, the timeout is the dispatch's.
  set.remove(id);
  set.intercept<Count>([](Next<Count> next, int x) { return next(x); });
  const auto error = expect_error<hookset::DispatchTimeout>(set.call<Count>(1).with_timeout(20ms));
  CHECK(error.hook_name == "slow");
}

TEST_CASE("failure policies of the hooks hold inside next()") {
  fresh_log();
  Set set;
  set.add<Count>([](int, std::optional<int>) -> int { throw std::runtime_error("broken"); },
                 hookset::HookOptions{.name = "broken", .on_failure = hookset::FailOpen});
  set.add<Count>([](int x, std::optional<int> last) { return *last + x; });
  set.intercept<Count>([](Next<Count> next, int x) { return hookset::sync_wait(next(x)) * 10; });
  CHECK(hookset::sync_wait(set.call<Count>(2)) == 40);  // the failed hook skipped: 2 + 2
}

TEST_CASE("a concurrent slot under an interceptor: hooks still overlap, outputs in order") {
  fresh_log();
  Set set;
  ManualEvent first;
  ManualEvent second;
  set.add<Collect>([&](int x) -> Task<int> {
    co_await first;
    co_return x + 1;
  });
  set.add<Collect>([&](int x) -> Task<int> {
    co_await second;
    co_return x + 2;
  });
  set.intercept<Collect>([](Next<Collect> next, int x) -> Task<std::vector<int>> {
    std::vector<int> outputs = co_await next(x);
    outputs.push_back(0);
    co_return outputs;
  });
  test_support::Outcome<std::vector<int>> out;
  test_support::detach(set.call<Collect>(10), out);
  CHECK(first.has_waiter());
  CHECK(second.has_waiter());  // both started: concurrent inside next()
  second.fire();
  CHECK_FALSE(out.done);
  first.fire();
  REQUIRE(out.done);
  CHECK(*out.value == std::vector<int>{11, 12, 0});
}

TEST_CASE("pipelines: an interceptor rewrites the input, refuses alone, or reads the decision") {
  Log& log = fresh_log();
  Set set;
  set.add<Check>([](const Call& call) -> hookset::decision_t<Check> {
    note("gate " + call.path);
    if (call.path.starts_with("/etc")) return hookset::reject("outside the workspace");
    return hookset::pass();
  });
  set.intercept<Check>(
      [](Next<Check> next, const Call& call) -> Task<hookset::call_result_t<Check>> {
        if (call.tool == "shell")
          co_return hookset::call_result_t<Check>{hookset::Reject{"no shell"}, call, {}};
        Call normalised = call;
        if (normalised.path.empty()) normalised.path = "/work";
        auto result = co_await next(normalised);
        if (result.rejected()) note("refused: " + result.reason());
        co_return result;
      });
  const auto ran = hookset::sync_wait(set.call<Check>(Call{"read", ""}));
  REQUIRE(ran.completed());
  CHECK(ran.output() == "ran read /work");
  CHECK(ran.input.path == "/work");
  const auto refused = hookset::sync_wait(set.call<Check>(Call{"read", "/etc/passwd"}));
  CHECK(refused.reason() == "outside the workspace");
  const auto shell = hookset::sync_wait(set.call<Check>(Call{"shell", "/work"}));
  CHECK(shell.reason() == "no shell");
  CHECK(log == Log{"gate /work", "gate /etc/passwd", "refused: outside the workspace"});
}

TEST_CASE(
    "frozen and shared sets keep their interceptors - a running dispatch keeps the "
    "interceptors and hooks it started with") {
  Log& log = fresh_log();
  Set set;
  set.intercept<Count>([](Next<Count> next, int x) { return hookset::sync_wait(next(x)) + 100; });
  const auto frozen = set.freeze();
  CHECK(hookset::sync_wait(frozen.call<Count>(1)) == 101);

  hookset::SharedHookSet<Count, Collect, Check> shared;
  shared.update([](auto& s) {
    s.template intercept<Count>(
        [](Next<Count> next, int x) -> Task<int> { co_return co_await next(x) * 2; });
  });
  CHECK(hookset::sync_wait(shared.call<Count>(3)) == 6);

  // A dispatch suspended inside next() while its interceptor is removed and a hook added.
  ManualEvent gate;
  Set live;
  live.add<Count>([&](int x, std::optional<int>) -> Task<int> {
    note("hook");
    co_await gate;
    co_return x;
  });
  const hookset::HookId interceptor =
      live.intercept<Count>([](Next<Count> next, int x) -> Task<int> {
        note("interceptor");
        co_return co_await next(x) + 1000;
      });
  test_support::Outcome<int> out;
  test_support::detach(live.call<Count>(7), out);
  CHECK(live.remove(interceptor));
  live.add<Count>([](int, std::optional<int>) {
    note("added later");
    return 0;
  });
  gate.fire();
  REQUIRE(out.done);
  CHECK(*out.value == 1007);
  CHECK(log == Log{"interceptor", "hook"});
  CHECK(hookset::sync_wait(live.call<Count>(7)) == 0);  // the new list, no interceptor
}
