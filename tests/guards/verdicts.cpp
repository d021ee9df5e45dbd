// Verdict slots (<hookset/guard.hpp>, docs/semantics.md "Verdict slots"): the verdicts of a slot's
// default and hooks are joined in a lattice (deny > ask > allow by default, or the user's own),
// the same whatever the registration or completion order; the result lists every contribution
// with its registration; under FailClosed a hook that throws or exceeds its own time limit
// contributes the lattice's failed verdict instead of failing the dispatch. Also: an Aggregate
// companion taking std::vector<Attributed<R>>, and plain aggregates left as they were.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::Permission;
using hookset::Task;
using hookset::Verdict;
using hookset::Verdicts;
using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;

namespace {

struct Check : hookset::VerdictSlot<Verdict<>(int), hookset::Always> {
  static Verdict<> default_impl(int) { return {Permission::allow, "default"}; }
};
struct CheckOnlyHooks : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback> {
  static Verdict<> default_impl(int) { return {Permission::ask, "nobody decided"}; }
};
// The long spelling, concurrent.
struct CheckConcurrently
    : hookset::Slot<Verdict<>(int), hookset::Fallback, hookset::Aggregate<hookset::JoinVerdicts<>>,
                    hookset::Output<Verdicts<>>, hookset::Concurrent> {
  static Verdict<> default_impl(int) { return {}; }
};
// A slot whose hooks fail closed unless registered otherwise.
struct Guarded : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
  static Verdict<> default_impl(int) { return {}; }
};

// A user lattice of four levels; `quarantine` is what a failed hook counts as.
enum class Risk { none, low, high, quarantine };
}  // namespace
template <>
struct hookset::verdict_lattice<Risk> {
  static constexpr Risk bottom = Risk::none;
  static constexpr Risk failed = Risk::quarantine;
  static constexpr Risk join(Risk a, Risk b) noexcept { return std::max(a, b); }
};
namespace {
struct Assess : hookset::VerdictSlot<Verdict<Risk>(int), hookset::Fallback> {
  static Verdict<Risk> default_impl(int) { return {}; }
};

// An aggregate of its own taking attributed outputs: "name=value" per output.
struct Label {
  std::vector<std::string> operator()(std::vector<hookset::Attributed<int>> outputs) const {
    std::vector<std::string> labels;
    for (const auto& o : outputs)
      labels.push_back((o.hook ? o.name : std::string("default")) + "=" + std::to_string(o.value));
    return labels;
  }
};
struct Labelled : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Label>,
                                hookset::Output<std::vector<std::string>>> {
  static int default_impl(int x) { return x; }
};
// A plain aggregate: unchanged (std::vector<R>, FailClosed fails the dispatch).
struct Sum {
  int operator()(std::vector<int> outputs) const {
    int total = 0;
    for (int o : outputs) total += o;
    return total;
  }
};
struct Total : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return x; }
};

using Set =
    hookset::HookSet<Check, CheckOnlyHooks, CheckConcurrently, Guarded, Assess, Labelled, Total>;

auto says(Permission decision, std::string reason) {
  return [decision, reason](int) { return Verdict<>{decision, reason}; };
}
std::vector<Permission> decisions(const Verdicts<>& v) {
  std::vector<Permission> out;
  for (const auto& c : v.contributions) out.push_back(c.value.decision);
  return out;
}

}  // namespace

TEST_CASE("a deny beats an allow in either registration order") {
  for (bool deny_first : {true, false}) {
    Set set;
    if (deny_first) set.add<CheckOnlyHooks>(says(Permission::deny, "no"));
    set.add<CheckOnlyHooks>(says(Permission::allow, "yes"));
    if (!deny_first) set.add<CheckOnlyHooks>(says(Permission::deny, "no"));
    const Verdicts<> v = hookset::sync_wait(set.call<CheckOnlyHooks>(1));
    CHECK(v.decision == Permission::deny);
    REQUIRE(v.decided_by() != nullptr);
    CHECK(v.decided_by()->value.reason == "no");
    CHECK(v.contributions.size() == 2);
  }
}

TEST_CASE("an ask beats an allow and loses to a deny, allows alone allow") {
  Set set;
  set.add<Check>(says(Permission::allow, "a"));
  CHECK(hookset::sync_wait(set.call<Check>(1)).decision == Permission::allow);
  set.add<Check>(says(Permission::ask, "b"));
  set.add<Check>(says(Permission::allow, "c"));
  CHECK(hookset::sync_wait(set.call<Check>(1)).decision == Permission::ask);
  set.add<Check>(says(Permission::deny, "d"));
  CHECK(hookset::sync_wait(set.call<Check>(1)).decision == Permission::deny);
}

TEST_CASE("every contribution is listed, in registration order, with its id, name and reason") {
  Set set;
  const hookset::HookId first =
      set.add<Check>(says(Permission::ask, "check with a human"), {.name = "reviewer"});
  const hookset::HookId second = set.add<Check>(says(Permission::allow, "fine"));
  const hookset::HookId early = set.add<Check>(
      says(Permission::deny, "blocked"), {.name = "blocker", .priority = hookset::Priority{-1}});
  const Verdicts<> v = hookset::sync_wait(set.call<Check>(7));
  REQUIRE(v.contributions.size() == 4);
  // The default first (Always), with an empty id and name.
  CHECK_FALSE(v.contributions[0].hook);
  CHECK(v.contributions[0].name.empty());
  CHECK(v.contributions[0].value.reason == "default");
  CHECK(v.contributions[1].hook == early);
  CHECK(v.contributions[1].name == "blocker");
  CHECK(v.contributions[2].hook == first);
  CHECK(v.contributions[2].name == "reviewer");
  CHECK(v.contributions[2].value.reason == "check with a human");
  CHECK(v.contributions[3].hook == second);
  CHECK(v.contributions[3].name.empty());
  CHECK(v.decision == Permission::deny);
  CHECK(v.decided_by() == &v.contributions[1]);
}

TEST_CASE("a Fallback verdict slot: the default's verdict only when no hook is registered") {
  Set set;
  Verdicts<> v = hookset::sync_wait(set.call<CheckOnlyHooks>(1));
  CHECK(v.decision == Permission::ask);
  REQUIRE(v.contributions.size() == 1);
  CHECK_FALSE(v.contributions[0].hook);
  CHECK(v.contributions[0].value.reason == "nobody decided");
  set.add<CheckOnlyHooks>(says(Permission::allow, "ok"));
  v = hookset::sync_wait(set.call<CheckOnlyHooks>(1));
  CHECK(v.decision == Permission::allow);
  CHECK(v.contributions.size() == 1);
  CHECK(v.contributions[0].hook);
}

TEST_CASE("concurrent verdict hooks finishing in any order give the same join and listing") {
  const Permission said[] = {Permission::allow, Permission::deny, Permission::ask,
                             Permission::allow};
  std::vector<std::size_t> order{0, 1, 2, 3};
  int rounds = 0;
  do {
    std::vector<std::unique_ptr<ManualEvent>> events;
    for (int i = 0; i < 4; ++i) events.push_back(std::make_unique<ManualEvent>());
    Set set;
    for (std::size_t i = 0; i < 4; ++i)
      set.add<CheckConcurrently>(
          [&events, &said, i](int) -> Task<Verdict<>> {
            co_await *events[i];
            co_return Verdict<>{said[i], "hook " + std::to_string(i)};
          },
          {.name = "h" + std::to_string(i)});
    Outcome<Verdicts<>> out;
    detach(set.call<CheckConcurrently>(1), out);
    for (std::size_t i : order) {
      REQUIRE_FALSE(out.done);
      events[i]->fire();
    }
    REQUIRE(out.done);
    REQUIRE_FALSE(out.error);
    CHECK(out.value->decision == Permission::deny);
    CHECK(decisions(*out.value) == std::vector<Permission>(std::begin(said), std::end(said)));
    CHECK(out.value->contributions[1].name == "h1");
    CHECK(out.value->decided_by()->value.reason == "hook 1");
    ++rounds;
  } while (std::next_permutation(order.begin(), order.end()));
  CHECK(rounds == 24);
}

TEST_CASE("FailClosed: a hook that throws contributes a deny with its error as the reason") {
  Set set;
  set.add<CheckOnlyHooks>(says(Permission::allow, "ok"));
  const hookset::HookId failing = set.add<CheckOnlyHooks>(
      [](int) -> Verdict<> { throw std::runtime_error("policy store unreachable"); },
      {.name = "store", .on_failure = hookset::FailClosed});
  // A coroutine that fails after suspending: the same.
  ManualEvent later;
  set.add<CheckOnlyHooks>(
      [&later](int) -> Task<Verdict<>> {
        co_await later;
        throw std::runtime_error("late failure");
      },
      {.on_failure = hookset::FailClosed});
  Outcome<Verdicts<>> out;
  detach(set.call<CheckOnlyHooks>(1), out);
  later.fire();
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  const Verdicts<>& v = *out.value;
  CHECK(v.decision == Permission::deny);
  REQUIRE(v.contributions.size() == 3);
  CHECK(v.contributions[1].hook == failing);
  CHECK(v.contributions[1].value.decision == Permission::deny);
  CHECK(v.contributions[1].value.reason == "policy store unreachable");
  CHECK(v.contributions[2].value.reason == "late failure");
}

TEST_CASE("FailClosed declared by the slot: a hook over its own time limit counts as a deny") {
  Set set;
  set.add<Guarded>(says(Permission::allow, "ok"));
  // A synchronous hook is checked when it returns; a coroutine is asked to stop.
  set.add<Guarded>(
      [](int) {
    std::this_thread::sleep_for(20ms);
    return Verdict<>{Permission::allow, "too late"};
      },
      {.name = "slow", .timeout = 1ms});
  set.add<Guarded>(
      [](int) -> Task<Verdict<>> {
        test_support::until_stopped stopped{co_await hookset::current_stop_token()};
        co_await stopped;
        co_return Verdict<>{Permission::allow, "stopped"};
      },
      {.name = "stuck", .timeout = 5ms});
  const Verdicts<> v = hookset::sync_wait(set.call<Guarded>(1).with_timeout(10s));
  CHECK(v.decision == Permission::deny);
  REQUIRE(v.contributions.size() == 3);
  CHECK(v.contributions[1].name == "slow");
  CHECK(v.contributions[1].value.decision == Permission::deny);
  CHECK(v.contributions[1].value.reason.find("time limit") != std::string::npos);
  CHECK(v.contributions[2].value.decision == Permission::deny);
  CHECK(v.decided_by()->name == "slow");
}

TEST_CASE("FailClosed: a failed hook's verdict carries its failure, a deny it returns does not") {
  Set set;
  set.add<Guarded>(says(Permission::deny, "on the blocklist"), {.name = "judge"});
  set.add<Guarded>([](int) -> Verdict<> { throw std::runtime_error("policy store unreachable"); },
                   {.name = "broken"});
  set.add<Guarded>(
      [](int) -> Task<Verdict<>> {
        test_support::until_stopped stopped{co_await hookset::current_stop_token()};
        co_await stopped;
        co_return Verdict<>{Permission::allow, "stopped"};
      },
      {.name = "late", .timeout = 5ms});
  const Verdicts<> v = hookset::sync_wait(set.call<Guarded>(1).with_timeout(10s));
  REQUIRE(v.contributions.size() == 3);
  const auto& judged = v.contributions[0].value;
  const auto& threw = v.contributions[1].value;
  const auto& timed_out = v.contributions[2].value;
  CHECK(judged.decision == Permission::deny);
  CHECK_FALSE(judged.failed());
  CHECK(threw.decision == Permission::deny);
  REQUIRE(threw.failed());
  CHECK_THROWS_WITH(std::rethrow_exception(threw.failure), "policy store unreachable");
  CHECK(timed_out.decision == Permission::deny);
  REQUIRE(timed_out.failed());
  bool per_hook_limit = false;
  try {
    std::rethrow_exception(timed_out.failure);
  } catch (const hookset::DispatchTimeout& error) {
    per_hook_limit = error.per_hook;
  }
  CHECK(per_hook_limit);
  // A user lattice's failed verdict carries it too.
  set.add<Assess>([](int) -> Verdict<Risk> { throw std::runtime_error("down"); },
                  {.on_failure = hookset::FailClosed});
  const Verdicts<Risk> r = hookset::sync_wait(set.call<Assess>(1));
  REQUIRE(r.contributions.size() == 1);
  CHECK(r.contributions[0].value.failed());
}

TEST_CASE(
    "FailClosed in a concurrent verdict slot: the failure is a deny at its turn, siblings run on") {
  ManualEvent first, second;
  Set set;
  set.add<CheckConcurrently>([&first](int) -> Task<Verdict<>> {
    co_await first;
    co_return Verdict<>{Permission::allow, "first"};
  });
  set.add<CheckConcurrently>(
      [&second](int) -> Task<Verdict<>> {
        co_await second;
        throw std::runtime_error("crashed");
      },
      {.on_failure = hookset::FailClosed});
  bool third_stopped = true;
  ManualEvent third;
  set.add<CheckConcurrently>([&third, &third_stopped](int) -> Task<Verdict<>> {
    co_await third;
    third_stopped = (co_await hookset::current_stop_token()).stop_requested();
    co_return Verdict<>{Permission::ask, "third"};
  });
  Outcome<Verdicts<>> out;
  detach(set.call<CheckConcurrently>(1), out);
  second.fire();  // fails while the others still run: nobody is stopped
  third.fire();
  first.fire();
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  CHECK_FALSE(third_stopped);
  CHECK(decisions(*out.value) ==
        std::vector<Permission>{Permission::allow, Permission::deny, Permission::ask});
  CHECK(out.value->contributions[1].value.reason == "crashed");
}

TEST_CASE("FailOpen skips a failed verdict hook (with a warning), Propagate fails the dispatch") {
  Set set;
  test_support::RecordingObserver recorder;
  set.set_observer(&recorder);
  set.add<CheckOnlyHooks>(says(Permission::allow, "ok"));
  set.add<CheckOnlyHooks>([](int) -> Verdict<> { throw std::runtime_error("boom"); },
                          {.name = "flaky", .on_failure = hookset::FailOpen});
  const Verdicts<> v = hookset::sync_wait(set.call<CheckOnlyHooks>(1));
  CHECK(v.decision == Permission::allow);
  CHECK(v.contributions.size() == 1);
  CHECK(std::any_of(recorder.events.begin(), recorder.events.end(), [](const auto& e) {
    return e.kind == "warning" && e.message.find("flaky") != std::string::npos;
  }));

  Set strict;
  strict.add<CheckOnlyHooks>(says(Permission::allow, "ok"));
  strict.add<CheckOnlyHooks>([](int) -> Verdict<> { throw std::runtime_error("boom"); });
  CHECK_THROWS_WITH(hookset::sync_wait(strict.call<CheckOnlyHooks>(1)), "boom");
}

TEST_CASE("a cancelled verdict dispatch ends cancelled, whatever the running hook's policy") {
  Set set;
  set.add<Guarded>([](int) -> Task<Verdict<>> {
    test_support::until_stopped stopped{co_await hookset::current_stop_token()};
    co_await stopped;
    throw std::runtime_error("stopped");
  });
  hookset::stop_source stop;
  Outcome<Verdicts<>> out;
  detach(set.call<Guarded>(1).with_stop_token(stop.get_token()), out);
  REQUIRE_FALSE(out.done);
  stop.request_stop();
  REQUIRE(out.done);
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
}

TEST_CASE("a user lattice of four levels: join, and its own failed verdict") {
  Set set;
  set.add<Assess>([](int x) { return Verdict<Risk>{x > 10 ? Risk::high : Risk::low, "size"}; });
  set.add<Assess>([](int) { return Verdict<Risk>{Risk::none, "clean"}; });
  CHECK(hookset::sync_wait(set.call<Assess>(1)).decision == Risk::low);
  CHECK(hookset::sync_wait(set.call<Assess>(11)).decision == Risk::high);
  set.add<Assess>([](int) -> Verdict<Risk> { throw std::logic_error("scanner down"); },
                  {.on_failure = hookset::FailClosed});
  const Verdicts<Risk> v = hookset::sync_wait(set.call<Assess>(1));
  CHECK(v.decision == Risk::quarantine);
  CHECK(v.decided_by()->value.reason == "scanner down");
}

TEST_CASE("an aggregate may take attributed outputs, plain aggregates are as they were") {
  Set set;
  set.add<Labelled>([](int x) { return x + 1; }, {.name = "plus"});
  set.add<Labelled>([](int x) { return x * 2; }, {.name = "times"});
  CHECK(hookset::sync_wait(set.call<Labelled>(5)) ==
        std::vector<std::string>{"default=5", "plus=6", "times=10"});

  set.add<Total>([](int x) { return x + 1; });
  CHECK(hookset::sync_wait(set.call<Total>(5)) == 11);
  set.add<Total>([](int) -> int { throw std::runtime_error("no"); },
                 {.on_failure = hookset::FailClosed});
  CHECK_THROWS_AS(hookset::sync_wait(set.call<Total>(5)), hookset::HookFailed);
}
