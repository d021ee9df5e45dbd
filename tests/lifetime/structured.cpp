// Structured lifetime (docs/semantics.md, "Structured lifetime"): nothing a dispatch or a tripwire
// started outlives it. A hook has finished when its coroutine frame is destroyed, its by-value
// parameters with it; a dispatch completes only after that, for every hook it started; a
// tripwire only after its work and every guard it started have finished, also when a work
// callable throws before it returns its awaitable; guards_first() starts the work only when
// every guard allowed. The parameters here carry a lifetime probe (lifetime_probe.hpp) that
// says which instances are still alive when the awaiting statement is over.
#include "hookset_catch.hpp"
#include "lifetime_probe.hpp"
#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Admission;
using hookset::Guarded;
using hookset::Next;
using hookset::Permission;
using hookset::Task;
using hookset::Verdict;
using test_support::CrossThreadEvent;
using test_support::ManualEvent;
using test_support::until_stopped;
namespace lifetime = test_support::lifetime;
using lifetime::Checked;
using lifetime::run_checked;

namespace {

// What every hook here takes by value: a coroutine hook's frame holds a copy.
struct Request {
  int x = 0;
  lifetime::Probe probe;
};

struct Sum {
  int operator()(const std::vector<int>& outputs) const {
    int sum = 0;
    for (int v : outputs) sum += v;
    return sum;
  }
};
struct Fan
    : hookset::Slot<int(Request), hookset::Fallback, hookset::Aggregate<Sum>, hookset::Concurrent> {
  static int default_impl(const Request&) { return 0; }
};
struct Fold : hookset::Slot<int(Request), hookset::Always> {
  static int default_impl(const Request& r) { return r.x; }
};
struct Guard : hookset::VerdictSlot<Verdict<>(Request), hookset::Fallback, hookset::Concurrent> {
  static Verdict<> default_impl(const Request&) { return {}; }
};
struct GuardInTurn : hookset::VerdictSlot<Verdict<>(Request), hookset::Fallback> {
  static Verdict<> default_impl(const Request&) { return {}; }
};
struct Plain : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Fan, Fold, Guard, GuardInTurn, Plain>;

// Hooks of the int(Request) slots: one returns x once `event` fires (any awaitable event type);
// the other once its dispatch is asked to stop (a fold hook ignores `last`).
template <class Event>
auto returns_after(Event& event) {
  return [&event](Request r) -> Task<int> {
    co_await event;
    co_return r.x;
  };
}
Task<int> until_asked_to_stop(Request r) {
  until_stopped waiter{co_await hookset::current_stop_token()};
  co_await waiter;
  co_return r.x;
}
auto fold_until_asked_to_stop = [](Request r, std::optional<int>) {
  return until_asked_to_stop(std::move(r));
};

std::string message_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("a concurrent dispatch completes after its hooks' frames - by-value parameters too") {
  Set set;
  ManualEvent first, second;
  set.add<Fan>(returns_after(first));
  set.add<Fan>(returns_after(second));
  const Request request{3, lifetime::Probe(1)};
  Checked out;
  run_checked([&] { return set.call<Fan>(request); }, 1, out);
  first.fire();
  second.fire();  // the dispatch completes inside this call, on this thread
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  CHECK(out.outlived.empty());
  CHECK(lifetime::late_destructions().empty());
}

TEST_CASE(
    "a concurrent dispatch whose hooks finish on other threads completes after their frames") {
  for (int round = 0; round < 50; ++round) {
    Set set;
    std::vector<std::unique_ptr<CrossThreadEvent>> events;
    for (int i = 0; i < 3; ++i) {
      events.push_back(std::make_unique<CrossThreadEvent>());
      set.add<Fan>(returns_after(*events.back()));
    }
    const Request request{1, lifetime::Probe(2)};
    Checked out;
    run_checked([&] { return set.call<Fan>(request); }, 2, out);
    std::vector<std::thread> firing;
    for (auto& event : events) firing.emplace_back([&event] { event->fire_when_waited_on(); });
    for (std::thread& t : firing) t.join();
    REQUIRE(out.done);
    REQUIRE_FALSE(out.error);
    CHECK(out.outlived.empty());
  }
  CHECK(lifetime::late_destructions().empty());
}

TEST_CASE("a tripwire whose work callable throws before returning its awaitable waits for guards") {
  Set set;
  std::vector<std::string> log;
  set.add<Guard>([&log](Request r) -> Task<Verdict<>> {
    until_stopped waiter{co_await hookset::current_stop_token()};
    co_await waiter;  // the work failed: the guards are asked to stop
    log.push_back("guard stopped, x=" + std::to_string(r.x));
    co_return Verdict<>{};
  });
  const Request request{5, lifetime::Probe(3)};
  auto throwing_work = [&log](Admission&) -> Task<int> {
    log.push_back("work called");
    throw std::runtime_error("work could not start");
  };
  Checked out;
  run_checked([&] { return hookset::tripwire(set.call<Guard>(request)).around(throwing_work); }, 3,
              out);
  REQUIRE(out.done);  // (the guard stopped inside the call that failed to start the work)
  CHECK(log == std::vector<std::string>{"work called", "guard stopped, x=5"});
  REQUIRE(out.error);
  CHECK(message_of(out.error) == "work could not start");
  CHECK(out.outlived.empty());
}

TEST_CASE("a tripwire whose work throws after suspending fails with it once the guards settled") {
  Set set;
  ManualEvent guard_event, work_event;
  set.add<Guard>([&guard_event](Request) -> Task<Verdict<>> {
    co_await guard_event;
    co_return Verdict<>{Permission::allow, "fine"};
  });
  const Request request{5, lifetime::Probe(4)};
  auto work = [&work_event](Admission&) -> Task<int> {
    co_await work_event;
    throw std::runtime_error("work failed");
  };
  Checked out;
  run_checked([&] { return hookset::tripwire(set.call<Guard>(request)).around(work); }, 4, out);
  work_event.fire();
  CHECK_FALSE(out.done);  // a guard is still out
  guard_event.fire();
  REQUIRE(out.done);
  REQUIRE(out.error);
  CHECK(message_of(out.error) == "work failed");
  CHECK(out.outlived.empty());
}

TEST_CASE("guards_first does not start the work when a guard fails synchronously (Propagate)") {
  Set set;
  set.add<GuardInTurn>([](Request) -> Verdict<> { throw std::runtime_error("guard failed"); },
                       {.name = "broken", .on_failure = hookset::FailurePolicy::propagate});
  bool work_started = false;
  auto work = [&work_started](Admission&) -> Task<int> {
    work_started = true;
    co_return 1;
  };
  const Request request{1, lifetime::Probe(5)};
  Checked out;
  run_checked(
      [&] { return hookset::tripwire(set.call<GuardInTurn>(request)).guards_first().around(work); },
      5, out);
  REQUIRE(out.done);
  CHECK_FALSE(work_started);
  REQUIRE(out.error);
  CHECK(message_of(out.error) == "guard failed");
  CHECK(out.outlived.empty());
}

TEST_CASE("guards_first does not start the work when stopped while a sequential guard runs") {
  Set set;
  set.add<GuardInTurn>([](Request) -> Task<Verdict<>> {
    until_stopped waiter{co_await hookset::current_stop_token()};
    co_await waiter;
    co_return Verdict<>{};  // (allows: but the tripwire was stopped)
  });
  bool work_started = false;
  auto work = [&work_started](Admission&) -> Task<int> {
    work_started = true;
    co_return 1;
  };
  hookset::stop_source stop;
  const Request request{1, lifetime::Probe(6)};
  Checked out;
  run_checked(
      [&] {
    return hookset::tripwire(set.call<GuardInTurn>(request))
        .guards_first()
        .with_stop_token(stop.get_token())
        .around(work);
      },
      6, out);
  CHECK_FALSE(out.done);
  stop.request_stop();
  REQUIRE(out.done);
  CHECK_FALSE(work_started);
  REQUIRE(out.error);
  CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
  CHECK(out.outlived.empty());
}

TEST_CASE("a tripwire stopped before it starts starts no work, guards first or not") {
  for (const bool guards_first : {true, false}) {
    Set set;
    int guards_run = 0;
    set.add<GuardInTurn>([&guards_run](Request) {
      ++guards_run;
      return Verdict<>{};
    });
    bool work_started = false;
    auto work = [&work_started](Admission&) -> Task<int> {
      work_started = true;
      co_return 1;
    };
    hookset::stop_source stop;
    stop.request_stop();
    Checked out;
    run_checked(
        [&] {
      auto wire = hookset::tripwire(set.call<GuardInTurn>(Request{1, lifetime::Probe(7)}))
                      .with_stop_token(stop.get_token());
      if (guards_first) return std::move(wire).guards_first().around(work);
      return std::move(wire).around(work);
        },
        7, out);
    INFO("guards first: " << guards_first);
    REQUIRE(out.done);
    CHECK_FALSE(work_started);
    CHECK(guards_run == 0);
    REQUIRE(out.error);
    CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
    CHECK(out.outlived.empty());
  }
}

TEST_CASE("a cancelled coroutine interceptor that answers leaves no context behind") {
  Set set;
  set.intercept<Fold>([](Next<Fold> next, Request r) -> Task<int> {
    try {
      co_return co_await next(r);
    } catch (const hookset::DispatchError&) {  // cancelled, or late
      co_return -1;                            // answers for the stopped dispatch
    }
  });
  set.add<Fold>(fold_until_asked_to_stop);
  hookset::stop_source stop;
  const Request request{2, lifetime::Probe(8)};
  Checked out;
  run_checked([&] { return set.call<Fold>(request).with_stop_token(stop.get_token()); }, 8, out);
  CHECK_FALSE(out.done);
  stop.request_stop();
  REQUIRE(out.done);
  REQUIRE_FALSE(out.error);
  CHECK(out.outlived.empty());
  // Nothing of it is left as this thread's context: the next dispatch with options starts clean.
  CHECK(hookset::detail::scoped_context() == nullptr);
  hookset::stop_source other;
  CHECK(hookset::sync_wait(set.call<Plain>(4).with_stop_token(other.get_token())) == 4);

  // The same when the stop comes from the timer thread, where the interceptor then answers:
  // that thread must not write this one's context (under Clang, code inlined into a coroutine
  // could, where the coroutine began: config.hpp).
  for (int round = 0; round < 3; ++round) {
    CHECK(hookset::sync_wait(set.call<Fold>(request).with_timeout(std::chrono::milliseconds(5))) ==
          -1);
    CHECK(hookset::detail::scoped_context() == nullptr);
    CHECK(hookset::sync_wait(set.call<Plain>(4).with_timeout(std::chrono::seconds(5))) == 4);
  }
}

TEST_CASE("a dispatch that completes inside the stop that stops it is not touched afterwards") {
  // The last hook running returns when asked to stop: the dispatch completes, and its awaiter
  // destroys it, inside the caller's request_stop().
  Set set;
  ManualEvent first, second;
  set.add<Fan>(returns_after(first));
  set.add<Fan>(returns_after(second));
  set.add<Fan>(until_asked_to_stop);
  set.add<Fold>(fold_until_asked_to_stop);
  const Request request{2, lifetime::Probe(9)};
  for (const bool concurrent : {true, false}) {
    hookset::stop_source stop;
    Checked out;
    if (concurrent)
      run_checked([&] { return set.call<Fan>(request).with_stop_token(stop.get_token()); }, 9, out);
    else
      run_checked([&] { return set.call<Fold>(request).with_stop_token(stop.get_token()); }, 9,
                  out);
    if (concurrent) {
      first.fire();  // (the hooks before the last one have finished)
      second.fire();
    }
    CHECK_FALSE(out.done);
    stop.request_stop();
    REQUIRE(out.done);
    REQUIRE(out.error);
    CHECK_THROWS_AS(std::rethrow_exception(out.error), hookset::DispatchCancelled);
    CHECK(out.outlived.empty());
  }
}
