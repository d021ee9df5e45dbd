// Tripwires (<hookset/tripwire.hpp>, docs/semantics.md "Tripwires"): a verdict slot's hooks run
// alongside a piece of work; the first verdict above the bottom trips - the work is asked to
// stop at once, the guards still running too - and the outcome names the registration that
// tripped. Without a trip the work's result comes back once every guard has settled; the work
// can wait for that (the admission) before a side effect. Guards' failure policies and time
// limits apply (FailClosed: a failure trips); cancelling the tripwire reaches guards and work.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::Admission;
using hookset::Guarded;
using hookset::Permission;
using hookset::Task;
using hookset::Verdict;
using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;
using test_support::until_stopped;

namespace {

struct Watch : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback, hookset::Concurrent> {
  static Verdict<> default_impl(int) { return {}; }
};
// One after another, and the default counts (Always).
struct WatchInTurn : hookset::VerdictSlot<Verdict<>(int), hookset::Always> {
  static Verdict<> default_impl(int request) {
    if (request < 0) return {Permission::deny, "negative request"};
    return {};
  }
};
using Set = hookset::HookSet<Watch, WatchInTurn>;

// A guard that waits for `event`, then says `decision`.
auto guard_after(ManualEvent& event, Permission decision, std::string reason) {
  return [&event, decision, reason](int) -> Task<Verdict<>> {
    co_await event;
    co_return Verdict<>{decision, reason};
  };
}
// A guard that never decides by itself: it waits until asked to stop, and says so.
auto guard_until_stopped(std::vector<std::string>& log, std::string name) {
  return [&log, name](int) -> Task<Verdict<>> {
    until_stopped waiter{co_await hookset::current_stop_token()};
    co_await waiter;
    log.push_back(name + " stopped");
    co_return Verdict<>{};
  };
}
// Work that runs until stopped, then returns -1.
Task<int> work_until_stopped(std::vector<std::string>& log) {
  until_stopped waiter{co_await hookset::current_stop_token()};
  co_await waiter;
  log.push_back("work stopped");
  co_return -1;
}
Task<int> work_after_nothing() { co_return 3; }
Task<int> work_after(ManualEvent& event, std::vector<std::string>& log, int result) {
  co_await event;
  log.push_back("work done");
  co_return result;
}

}  // namespace

TEST_CASE("without a trip the work's result comes back once every guard has settled") {
  Set set;
  ManualEvent slow_guard, work_event;
  std::vector<std::string> log;
  const hookset::HookId slow =
      set.add<Watch>(guard_after(slow_guard, Permission::allow, "fine"), {.name = "slow"});
  set.add<Watch>([](int) { return Verdict<>{Permission::allow, "quick"}; });
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).around(work_after(work_event, log, 42)), out);
  work_event.fire();  // the work finishes first
  CHECK(log == std::vector<std::string>{"work done"});
  CHECK_FALSE(out.done);  // a guard is still out
  slow_guard.fire();
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  CHECK_FALSE(out.value->tripped());
  CHECK(out.value->value == 42);
  CHECK(out.value->verdicts.decision == Permission::allow);
  REQUIRE(out.value->verdicts.contributions.size() == 2);
  CHECK(out.value->verdicts.contributions[0].hook == slow);
}

TEST_CASE("the first guard that trips stops the work and the other guards at once") {
  Set set;
  ManualEvent deny_event;
  std::vector<std::string> log;
  set.add<Watch>(guard_until_stopped(log, "watcher"), {.name = "watcher"});
  const hookset::HookId denier = set.add<Watch>(
      guard_after(deny_event, Permission::deny, "path outside the workspace"), {.name = "paths"});
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)), out);
  CHECK(log.empty());
  deny_event.fire();  // the trip: everything else is stopped inside this call
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  CHECK(log == std::vector<std::string>{"work stopped", "watcher stopped"});
  REQUIRE(out.value->tripped());
  CHECK_FALSE(out.value->value);
  CHECK(out.value->trip->hook == denier);
  CHECK(out.value->trip->name == "paths");
  CHECK(out.value->trip->value.decision == Permission::deny);
  CHECK(out.value->trip->value.reason == "path outside the workspace");
  CHECK(out.value->verdicts.decision == Permission::deny);
}

TEST_CASE("an ask trips too: any verdict above the lattice's bottom") {
  Set set;
  set.add<Watch>([](int) { return Verdict<>{Permission::ask, "needs a human"}; });
  std::vector<std::string> log;
  const Guarded<int> g =
      hookset::sync_wait(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)));
  REQUIRE(g.tripped());
  CHECK(g.trip->value.decision == Permission::ask);
  // A synchronous trip happens before the work starts: the work never ran.
  CHECK(log.empty());
}

TEST_CASE("a deny beats a concurrent allow whichever finishes first") {
  for (bool allow_first : {true, false}) {
    Set set;
    ManualEvent allow_event, deny_event;
    set.add<Watch>(guard_after(allow_event, Permission::allow, "ok"), {.name = "allow"});
    set.add<Watch>(guard_after(deny_event, Permission::deny, "no"), {.name = "deny"});
    std::vector<std::string> log;
    Outcome<Guarded<int>> out;
    detach(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)), out);
    if (allow_first) {
      allow_event.fire();
      CHECK_FALSE(out.done);
      deny_event.fire();
    } else {
      deny_event.fire();
      CHECK(allow_event.has_waiter());  // (stopped, but it does not listen: it finishes later)
      CHECK_FALSE(out.done);            // the tripwire waits for every guard it started
      allow_event.fire();
    }
    REQUIRE(out.done);
    REQUIRE(out.value->tripped());
    CHECK(out.value->trip->name == "deny");
    CHECK(log == std::vector<std::string>{"work stopped"});
  }
}

TEST_CASE("the admission waits for every guard, and refuses after a trip") {
  for (Permission last : {Permission::allow, Permission::deny}) {
    Set set;
    ManualEvent guard_event;
    set.add<Watch>(guard_after(guard_event, last, "last word"));
    std::vector<std::string> log;
    auto work = [&log](Admission& admission) -> Task<int> {
      log.push_back("prepared");
      const bool admitted = co_await admission.admit();
      log.push_back(admitted ? "committed" : "refused");
      co_return admitted ? 1 : 0;
    };
    Outcome<Guarded<int>> out;
    detach(hookset::tripwire(set.call<Watch>(1)).around(work), out);
    CHECK(log == std::vector<std::string>{"prepared"});  // no side effect before the guards
    guard_event.fire();
    REQUIRE(out.done);
    if (last == Permission::allow) {
      CHECK(log == std::vector<std::string>{"prepared", "committed"});
      CHECK(out.value->value == 1);
    } else {
      CHECK(log == std::vector<std::string>{"prepared", "refused"});
      CHECK(out.value->tripped());
    }
  }
}

TEST_CASE("guards first: the work starts only after every guard allowed") {
  Set set;
  ManualEvent guard_event;
  set.add<Watch>(guard_after(guard_event, Permission::allow, "ok"));
  std::vector<std::string> log;
  auto work = [&log](Admission& admission) -> Task<int> {
    log.push_back("work started");
    CHECK(co_await admission.admit());  // (settled already: at once)
    co_return 7;
  };
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).guards_first().around(work), out);
  CHECK(log.empty());
  guard_event.fire();
  REQUIRE(out.done);
  CHECK(log == std::vector<std::string>{"work started"});
  CHECK(out.value->value == 7);

  set.add<Watch>([](int) { return Verdict<>{Permission::deny, "no"}; });
  ManualEvent again;
  set.clear<Watch>();
  set.add<Watch>(guard_after(again, Permission::deny, "late no"));
  log.clear();
  Outcome<Guarded<int>> refused;
  detach(hookset::tripwire(set.call<Watch>(1)).guards_first().around(work), refused);
  again.fire();
  REQUIRE(refused.done);
  CHECK(refused.value->tripped());
  CHECK(log.empty());  // never started
}

TEST_CASE("a guard that fails under FailClosed trips, under FailOpen it does not count") {
  Set set;
  set.add<Watch>([](int) -> Verdict<> { throw std::runtime_error("policy server down"); },
                 {.name = "remote", .on_failure = hookset::FailClosed});
  std::vector<std::string> log;
  Guarded<int> g =
      hookset::sync_wait(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)));
  REQUIRE(g.tripped());
  CHECK(g.trip->name == "remote");
  CHECK(g.trip->value.decision == Permission::deny);
  CHECK(g.trip->value.reason == "policy server down");

  set.clear<Watch>();
  set.add<Watch>([](int) -> Verdict<> { throw std::runtime_error("flaky"); },
                 {.on_failure = hookset::FailOpen});
  ManualEvent work_event;
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).around(work_after(work_event, log, 5)), out);
  work_event.fire();
  REQUIRE(out.done);
  CHECK_FALSE(out.value->tripped());
  CHECK(out.value->value == 5);
}

TEST_CASE("a guard that fails under Propagate stops the work and fails the tripwire") {
  Set set;
  ManualEvent fail_event;
  set.add<Watch>([&fail_event](int) -> Task<Verdict<>> {
    co_await fail_event;
    throw std::runtime_error("guard broke");
  });
  std::vector<std::string> log;
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)), out);
  fail_event.fire();
  REQUIRE(out.done);
  CHECK(log == std::vector<std::string>{"work stopped"});
  REQUIRE(out.error);
  CHECK_THROWS_WITH(std::rethrow_exception(out.error), "guard broke");
}

// A tripwire over one guard named "slow" that runs until stopped, under FailClosed with the
// given time limit, around work that runs until stopped. (The guard logs into `log`, which
// outlives the set's hook.)
Guarded<int> trip_on_slow_guard(Set& set, std::chrono::milliseconds timeout,
                                std::vector<std::string>& log, std::vector<std::string>& work_log) {
  set.add<Watch>(guard_until_stopped(log, "slow guard"),
                 {.name = "slow", .timeout = timeout, .on_failure = hookset::FailClosed});
  return hookset::sync_wait(
      hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(work_log)));
}

TEST_CASE("a guard over its own time limit trips under FailClosed") {
  std::vector<std::string> log;
  Set set;
  std::vector<std::string> work_log;
  const Guarded<int> g = trip_on_slow_guard(set, 20ms, log, work_log);
  REQUIRE(g.tripped());
  CHECK(g.trip->name == "slow");
  CHECK(g.trip->value.decision == Permission::deny);
  CHECK_THAT(g.trip->value.reason, Catch::Matchers::ContainsSubstring("slow"));
  CHECK(work_log == std::vector<std::string>{"work stopped"});
}

TEST_CASE("a trip by a failed guard carries the failure, a trip by a deny does not") {
  std::vector<std::string> log;
  Set set;
  std::vector<std::string> work_log;
  const Guarded<int> timed_out = trip_on_slow_guard(set, 5ms, log, work_log);
  REQUIRE(timed_out.tripped());
  CHECK(timed_out.trip->value.failed());
  CHECK_THROWS_AS(std::rethrow_exception(timed_out.trip->value.failure), hookset::DispatchTimeout);

  set.clear<Watch>();
  set.add<Watch>(
      [](int) -> Verdict<> {
        return {Permission::deny, "over budget"};
      },
      {.name = "budget", .on_failure = hookset::FailClosed});
  const Guarded<int> denied = hookset::sync_wait(
      hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(work_log)));
  REQUIRE(denied.tripped());
  CHECK(denied.trip->name == "budget");
  CHECK_FALSE(denied.trip->value.failed());
}

TEST_CASE("cancelling the tripwire reaches the guards and the work") {
  Set set;
  std::vector<std::string> log;
  set.add<Watch>(guard_until_stopped(log, "guard"));
  hookset::stop_source stop;
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1))
             .with_stop_token(stop.get_token())
             .around(work_until_stopped(log)),
         out);
  CHECK_FALSE(out.done);
  stop.request_stop();
  REQUIRE(out.done);
  CHECK(log.size() == 2);  // both stopped (in the order their stop callbacks ran)
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
}

TEST_CASE("guards in turn: the default's verdict can trip, attributed to no registration") {
  Set set;
  std::vector<std::string> log;
  set.add<WatchInTurn>([](int) { return Verdict<>{}; }, {.name = "allows"});
  Guarded<int> g = hookset::sync_wait(
      hookset::tripwire(set.call<WatchInTurn>(-1)).around(work_until_stopped(log)));
  REQUIRE(g.tripped());
  CHECK_FALSE(g.trip->hook);
  CHECK(g.trip->value.reason == "negative request");
  CHECK(log.empty());

  ManualEvent work_event;
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<WatchInTurn>(1)).around(work_after(work_event, log, 3)), out);
  work_event.fire();
  REQUIRE(out.done);
  CHECK(out.value->value == 3);
  CHECK(out.value->verdicts.contributions.size() == 2);  // the default's and the hook's
}

TEST_CASE("work of no result, and a guard dispatch with options of its own") {
  Set set;
  ManualEvent guard_event;
  set.add<Watch>(guard_after(guard_event, Permission::allow, "ok"));
  bool ran = false;
  auto work = [&ran]() -> Task<void> {
    ran = true;
    co_return;
  };
  hookset::stop_source guards_only;
  Outcome<Guarded<void>> out;
  detach(
      hookset::tripwire(set.call<Watch>(1).with_stop_token(guards_only.get_token())).around(work()),
      out);
  CHECK(ran);
  guards_only.request_stop();  // stops the guards: the guarded run fails, cancelled
  CHECK(guard_event.has_waiter());
  guard_event.fire();
  REQUIRE(out.done);
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
}

namespace {
struct Step : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using StepSet = hookset::HookSet<Step>;
}  // namespace

TEST_CASE("a dispatch with options of its own inside the work is stopped by a trip") {
  // The work awaits a dispatch given its own timeout (its hooks see that dispatch's stop token
  // first): the trip's stop still reaches its hook, through the work's token.
  StepSet steps;
  std::vector<std::string> log;
  steps.add<Step>([&log](int x, std::optional<int>) -> Task<int> {
    until_stopped waiter{co_await hookset::current_stop_token()};
    co_await waiter;
    log.push_back("step stopped");
    co_return x;
  });
  auto work = [&]() -> Task<int> {
    auto step = steps.call<Step>(1).with_timeout(std::chrono::hours(1));
    co_return co_await std::move(step);
  };
  Set set;
  ManualEvent deny_event;
  set.add<Watch>(guard_after(deny_event, Permission::deny, "stop"));
  Outcome<Guarded<int>> out;
  detach(hookset::tripwire(set.call<Watch>(1)).around(work()), out);
  CHECK(log.empty());
  deny_event.fire();
  REQUIRE(out.done);
  CHECK(log == std::vector<std::string>{"step stopped"});
  CHECK(out.value->tripped());
}

TEST_CASE(
    "an interceptor on the guards' slot: guards' trips count as they finish, its own answer too") {
  // It overrules: what the guards said becomes an allow, unless it sees an "escalate" reason,
  // which it turns into a deny of its own.
  auto overrule = [](hookset::Next<Watch> next, int request) -> Task<hookset::Verdicts<>> {
    hookset::Verdicts<> verdicts = co_await next(request);
    for (const auto& contribution : verdicts.contributions)
      if (contribution.value.reason == "escalate")
        co_return hookset::Verdicts<>{Permission::deny, {}};
    co_return hookset::Verdicts<>{};
  };
  SECTION("a guard's deny trips as it finishes, before the interceptor answers") {
    Set set;
    set.intercept<Watch>(overrule);
    ManualEvent deny_event;
    std::vector<std::string> log;
    set.add<Watch>(guard_after(deny_event, Permission::deny, "no"), {.name = "denier"});
    Outcome<Guarded<int>> out;
    detach(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)), out);
    deny_event.fire();
    REQUIRE(out.done);
    REQUIRE(out.value->tripped());
    CHECK(out.value->trip->name == "denier");
  }
  SECTION("a guard's failure ends the run as it happens, even if the interceptor answers for it") {
    Set set;
    set.intercept<Watch>([](hookset::Next<Watch> next, int request) -> Task<hookset::Verdicts<>> {
      try {
        co_return co_await next(request);
      } catch (const std::runtime_error&) {
        co_return hookset::Verdicts<>{};  // (too late: the work was stopped at the failure)
      }
    });
    std::vector<std::string> log;
    ManualEvent fail_event;
    set.add<Watch>(
        [&fail_event](int) -> Task<Verdict<>> {
          co_await fail_event;
          throw std::runtime_error("broken");
        },
        {.on_failure = hookset::FailurePolicy::propagate});
    Outcome<Guarded<int>> out;
    detach(hookset::tripwire(set.call<Watch>(1)).around(work_until_stopped(log)), out);
    fail_event.fire();
    REQUIRE(out.done);
    CHECK(log == std::vector<std::string>{"work stopped"});
    REQUIRE(out.error);
    CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
  }
  SECTION("the interceptor's own deny trips once the guards' dispatch ends, naming no guard") {
    Set set;
    set.intercept<Watch>(overrule);
    set.add<Watch>([](int) { return Verdict<>{Permission::allow, "escalate"}; }, {.name = "asks"});
    Outcome<Guarded<int>> out;
    detach(hookset::tripwire(set.call<Watch>(1)).around(work_after_nothing()), out);
    REQUIRE(out.done);
    REQUIRE(out.value->tripped());
    CHECK(out.value->trip->value.decision == Permission::deny);
    CHECK(out.value->trip->hook == hookset::HookId{});
    CHECK(out.value->trip->name.empty());
  }
}
