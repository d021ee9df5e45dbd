// Tripwires under random schedules: random guards (verdicts, synchronous or not, failing under
// FailClosed, FailOpen or Propagate, listening to their stop token or not) around work that
// prepares, asks for admission and then commits a side effect - or whose callable throws before
// it returns its awaitable, or that throws after it suspended - with or without guards_first(),
// stopped from outside before it starts, during the run, or not at all. The events that let
// each of them go on are fired in a random order: on this thread, or (one iteration in four)
// from two other threads at once. One schedule in eight dispatches the guards alone (a plain
// Concurrent or sequential dispatch). In every schedule:
//   - no side effect after a trip, and none without every guard having settled;
//   - with guards_first(), no work started before every guard settled, nor after a trip, a
//     failure of the guards or a stop;
//   - the outcome is the lattice join of what the guards said: tripped only when some guard said
//     ask or deny (or failed under FailClosed), and the trip names such a guard; allowed only
//     when none did, nothing failed and nothing stopped it;
//   - a failed or timed-out guard under FailClosed never yields an allow;
//   - a run fails only with a Propagate failure of a guard, the work's own exception, or
//     DispatchCancelled when it was stopped;
//   - structured lifetime (lifetime_probe.hpp): when the statement awaiting the run is over,
//     nothing the run created is alive - the guards' and the work's frames with their by-value
//     parameters.
// HOOKSET_GUARDS_ITERATIONS sets the number of schedules (default 3,000: CI's size;
// scripts/soak.sh runs 1,000,000 under ASan and under TSan); HOOKSET_SEED the seed.
#include "hookset_catch.hpp"
#include "lifetime_probe.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <atomic>
#include <coroutine>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Admission;
using hookset::Guarded;
using hookset::Permission;
using hookset::Task;
using hookset::Verdict;
using hookset::Verdicts;
namespace lifetime = test_support::lifetime;

namespace {

// What guards and work take by value: their frames hold a copy.
struct Request {
  int x = 0;
  lifetime::Probe probe;
};

struct Watch : hookset::VerdictSlot<Verdict<>(Request), hookset::Fallback, hookset::Concurrent> {
  static Verdict<> default_impl(const Request&) { return {}; }
};
struct WatchInTurn : hookset::VerdictSlot<Verdict<>(Request), hookset::Fallback> {
  static Verdict<> default_impl(const Request&) { return {}; }
};
using Set = hookset::HookSet<Watch, WatchInTurn>;

// An event that may be fired before or after it is awaited, more than once, from any thread;
// the waiter is resumed on the (first) firing thread. Awaited as a named object.
class Gate {
 public:
  void fire() {
    std::coroutine_handle<> waiter;
    {
      std::lock_guard lock(mutex_);
      fired_ = true;
      waiter = std::exchange(waiter_, nullptr);
    }
    if (waiter) waiter.resume();
  }
  auto operator co_await() & noexcept {
    struct awaiter {
      Gate& gate;
      bool await_ready() const noexcept { return false; }
      bool await_suspend(std::coroutine_handle<> waiting) noexcept {
        std::lock_guard lock(gate.mutex_);
        if (gate.fired_) return false;
        gate.waiter_ = waiting;
        return true;
      }
      void await_resume() const noexcept {}
    };
    return awaiter{*this};
  }

 private:
  std::mutex mutex_;
  bool fired_ = false;
  std::coroutine_handle<> waiter_;
};
struct fire_gate {
  Gate* gate;
  void operator()() const noexcept { gate->fire(); }
};

enum class Ends { says, throws };
struct GuardPlan {
  bool sync = false;
  bool listens = false;  // a coroutine guard that also goes on when asked to stop
  Ends ends = Ends::says;
  Permission says = Permission::allow;
  hookset::FailurePolicy on_failure = hookset::FailurePolicy::propagate;
};
enum class WorkEnds { returns, throws_before, throws_after };
enum class Stop { never, before, during };

// What the guards and the work did, for the checks.
struct Record {
  std::atomic<int> settled{0};  // guards that returned or threw
  std::atomic<bool> work_called{false};
  std::atomic<int> settled_at_start{-1};
  std::atomic<int> settled_at_admit{-1};
  std::atomic<bool> committed{false};
  std::atomic<bool> admitted_answer{false};
  std::atomic<bool> asked_admission{false};
};

Verdict<> finish_guard(Record& record, const GuardPlan& plan) {
  record.settled.fetch_add(1);
  if (plan.ends == Ends::throws) throw std::runtime_error("guard failed");
  return Verdict<>{plan.says, "said"};
}
Task<Verdict<>> coroutine_guard(Request, Record& record, GuardPlan plan, Gate& gate) {
  std::optional<hookset::stop_callback<fire_gate>> on_stop;
  if (plan.listens) {
    const hookset::stop_token token = co_await hookset::current_stop_token();
    on_stop.emplace(token, fire_gate{&gate});
  }
  co_await gate;
  on_stop.reset();
  co_return finish_guard(record, plan);
}
Task<int> work_body(Request, Record& record, Gate& gate, Admission& admission, bool throws) {
  co_await gate;
  if (throws) throw std::runtime_error("work failed");
  record.asked_admission = true;
  const bool admitted = co_await admission.admit();
  record.admitted_answer = admitted;
  if (admitted) {
    record.settled_at_admit = record.settled.load();
    record.committed = true;  // the side effect
  }
  co_return 1;
}

std::string error_text(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const hookset::DispatchCancelled&) {
    return "cancelled";
  } catch (const std::exception& e) {
    return e.what();
  }
}

std::uint64_t seed_from_environment() {
  if (const char* s = std::getenv("HOOKSET_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}
long iterations_from_environment() {
  if (const char* s = std::getenv("HOOKSET_GUARDS_ITERATIONS")) return std::atol(s);
  return 3000;
}

}  // namespace

TEST_CASE("random schedules keep every tripwire rule") {
  const std::uint64_t seed = seed_from_environment();
  const long iterations = iterations_from_environment();
  INFO("HOOKSET_SEED=" << seed);
  std::mt19937_64 random(seed);
  auto below = [&](int n) { return static_cast<int>(random() % static_cast<unsigned>(n)); };
  long trips = 0, allowed = 0, failed = 0, cancelled = 0, work_failures = 0, dispatches = 0;

  for (long iteration = 0; iteration < iterations; ++iteration) {
    Set set;
    const int owner = static_cast<int>(iteration % 1000000000);
    const bool concurrent = below(4) != 0;
    const bool guards_first = below(4) == 0;
    const bool threaded = below(4) == 0;
    const bool guards_alone = below(8) == 0;  // a plain dispatch of the guards, no tripwire
    const int stop_draw = below(8);
    const Stop stop_plan = stop_draw < 4    ? Stop::never
                           : stop_draw == 4 ? Stop::before
                                            : Stop::during;
    const int work_draw = below(10);
    const WorkEnds work_ends = work_draw == 0   ? WorkEnds::throws_before
                               : work_draw == 1 ? WorkEnds::throws_after
                                                : WorkEnds::returns;
    const int n = below(5);
    std::vector<GuardPlan> plans(static_cast<std::size_t>(n));
    std::vector<std::unique_ptr<Gate>> gates;
    for (int i = 0; i < n + 1; ++i) gates.push_back(std::make_unique<Gate>());
    Record record;
    for (int i = 0; i < n; ++i) {
      GuardPlan& plan = plans[static_cast<std::size_t>(i)];
      plan.sync = below(3) == 0;
      plan.listens = !plan.sync && below(2) == 0;
      plan.ends = below(5) == 0 ? Ends::throws : Ends::says;
      const int verdict = below(6);  // allow most of the time
      plan.says = verdict < 4    ? Permission::allow
                  : verdict == 4 ? Permission::ask
                                 : Permission::deny;
      const int policy = below(3);
      plan.on_failure = policy == 0   ? hookset::FailurePolicy::fail_closed
                        : policy == 1 ? hookset::FailurePolicy::fail_open
                                      : hookset::FailurePolicy::propagate;
      hookset::HookOptions options{.name = "g" + std::to_string(i), .on_failure = plan.on_failure};
      Gate* gate = gates[static_cast<std::size_t>(i)].get();
      auto add = [&](auto guard) {
        if (concurrent) set.add<Watch>(guard, options);
        else set.add<WatchInTurn>(guard, options);
      };
      if (plan.sync) add([&record, plan](Request) { return finish_guard(record, plan); });
      else
        add([&record, plan, gate](Request request) {
          return coroutine_guard(std::move(request), record, plan, *gate);
        });
    }
    Gate* work_gate = gates.back().get();
    const Request request{1, lifetime::Probe(owner)};
    auto work = [&record, work_gate, work_ends, request](Admission& admission) -> Task<int> {
      record.work_called = true;
      record.settled_at_start = record.settled.load();
      if (work_ends == WorkEnds::throws_before) throw std::runtime_error("work failed");
      return work_body(request, record, *work_gate, admission, work_ends == WorkEnds::throws_after);
    };

    // What the guards said, as the lattice and the failure policies make of it. Only guards
    // that ran count: in turn, a Propagate failure ends the dispatch before the later ones.
    bool expect_trip = false, expect_failure = false;
    for (const GuardPlan& plan : plans) {
      if (plan.ends == Ends::throws) {
        if (plan.on_failure == hookset::FailurePolicy::fail_closed) expect_trip = true;
        if (plan.on_failure == hookset::FailurePolicy::propagate) expect_failure = true;
      } else if (plan.says != Permission::allow) {
        expect_trip = true;
      }
    }

    hookset::stop_source stop;
    if (stop_plan == Stop::before) stop.request_stop();
    lifetime::Checked out;
    std::optional<Guarded<int>> guarded;
    std::optional<Verdicts<>> verdicts;
    auto start = [&] {
      if (guards_alone) {
        if (concurrent) {
          lifetime::run_checked(
              [&] { return set.call<Watch>(request).with_stop_token(stop.get_token()); }, owner,
              out, [&](Verdicts<> v) { verdicts.emplace(std::move(v)); });
        } else {
          lifetime::run_checked(
              [&] { return set.call<WatchInTurn>(request).with_stop_token(stop.get_token()); },
              owner, out, [&](Verdicts<> v) { verdicts.emplace(std::move(v)); });
        }
        return;
      }
      auto keep = [&](Guarded<int> g) { guarded.emplace(std::move(g)); };
      lifetime::run_checked(
          [&] {
        auto wire = [&](auto guards) {
          auto tripwire = hookset::tripwire(std::move(guards)).with_stop_token(stop.get_token());
          if (guards_first) return std::move(tripwire).guards_first().around(work);
          return std::move(tripwire).around(work);
        };
        // (Both slots' dispatches make the same Task type: they differ only in mode.)
        if (concurrent) return wire(set.call<Watch>(request));
        return wire(set.call<WatchInTurn>(request));
          },
          owner, out, keep);
    };
    // The events: every gate, and the stop when it comes during the run.
    std::vector<std::size_t> order(gates.size() + (stop_plan == Stop::during ? 1 : 0));
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    auto happen = [&](std::size_t event) {
      if (event == gates.size()) stop.request_stop();
      else gates[event]->fire();
    };
    if (!threaded) {
      start();
      for (std::size_t i : order) happen(i);
    } else {
      // Two threads go through their halves of the order while this one starts the run.
      std::vector<std::size_t> half[2];
      for (std::size_t k = 0; k < order.size(); ++k) half[k % 2].push_back(order[k]);
      std::atomic<bool> go{false};
      std::vector<std::thread> firing;
      for (auto& part : half)
        firing.emplace_back([&go, &happen, part] {
          while (!go.load()) std::this_thread::yield();
          for (std::size_t i : part) happen(i);
        });
      go = true;
      start();
      for (auto& t : firing) t.join();
    }
    REQUIRE(out.done);  // every event happened: the run has ended

    INFO("iteration " << iteration << ", " << n << " guards, concurrent " << concurrent
                      << ", guards first " << guards_first << ", threaded " << threaded
                      << ", guards alone " << guards_alone << ", stop "
                      << static_cast<int>(stop_plan) << ", work " << static_cast<int>(work_ends));
    // Nothing the run created outlives it.
    CHECK(out.outlived == std::vector<std::string>{});
    const std::string error = out.error ? error_text(out.error) : std::string();
    if (stop_plan == Stop::before) {
      CHECK(error == "cancelled");
      CHECK(record.settled.load() == 0);
      CHECK_FALSE(record.work_called);
    }
    if (error == "cancelled") {
      ++cancelled;
      CHECK(stop_plan != Stop::never);
    }
    if (error == "guard failed") CHECK(expect_failure);

    if (guards_alone) {
      ++dispatches;
      if (out.error) {
        CHECK((error == "cancelled" || error == "guard failed"));
        continue;
      }
      // The join: a FailClosed failure counts as deny, a FailOpen one not at all.
      CHECK_FALSE(expect_failure);
      REQUIRE(verdicts);
      CHECK((verdicts->decision != Permission::allow) == expect_trip);
      CHECK(record.settled.load() == n);
      continue;
    }

    // No side effect without every guard settled, none after a trip.
    if (record.committed) {
      CHECK(record.settled_at_admit.load() == n);
      CHECK(record.admitted_answer);
    }
    // guards_first: the work started only once every guard had settled, and then only when
    // nothing had ended the run.
    if (guards_first && record.work_called) {
      CHECK(record.settled_at_start.load() == n);
      CHECK_FALSE(expect_failure);
      CHECK_FALSE(expect_trip);
    }
    if (error == "work failed") {
      ++work_failures;
      CHECK(work_ends != WorkEnds::returns);
      CHECK(record.work_called);
    }
    if (out.error) {
      ++failed;
      CHECK((error == "cancelled" || error == "guard failed" || error == "work failed"));
      CHECK_FALSE(record.committed);
      continue;
    }
    REQUIRE(guarded);
    const Guarded<int>& g = *guarded;
    if (g.tripped()) {
      ++trips;
      CHECK_FALSE(record.committed);
      CHECK_FALSE(g.value);
      CHECK(g.trip->value.decision != Permission::allow);
      // The trip names a guard that said so, or failed closed.
      REQUIRE(g.trip->name.size() >= 2);
      const GuardPlan& by = plans[static_cast<std::size_t>(std::stoi(g.trip->name.substr(1)))];
      if (by.ends == Ends::throws) {
        CHECK(by.on_failure == hookset::FailurePolicy::fail_closed);
        CHECK(g.trip->value.decision == Permission::deny);
      } else {
        CHECK(by.says == g.trip->value.decision);
      }
      CHECK(expect_trip);
      if (record.asked_admission) CHECK_FALSE(record.admitted_answer);
    } else {
      ++allowed;
      // No guard denied, asked or failed closed: allowed, after every guard settled.
      CHECK_FALSE(expect_trip);
      CHECK_FALSE(expect_failure);
      CHECK(work_ends == WorkEnds::returns);
      CHECK(g.value == 1);
      CHECK(g.verdicts.decision == Permission::allow);
      CHECK(record.settled.load() == n);
      // Committed, unless the stop came after the guards settled and before the work asked
      // (the work answered anyway: its result is the tripwire's).
      if (stop_plan == Stop::never) CHECK(record.committed);
    }
    // Without a stop, a run whose guards all allowed and whose work returned is allowed.
    if (stop_plan == Stop::never && !expect_trip && !expect_failure &&
        work_ends == WorkEnds::returns)
      CHECK((!out.error && !g.tripped()));
  }
  CHECK(lifetime::late_destructions() == std::vector<std::string>{});
  // (The plans make every outcome common.)
  if (iterations >= 1000) {
    CHECK(trips > 0);
    CHECK(allowed > 0);
    CHECK(failed > 0);
    CHECK(cancelled > 0);
    CHECK(work_failures > 0);
    CHECK(dispatches > 0);
  }
}
