// Tripwires under random schedules: random guards (verdicts, synchronous or not, failing under
// FailClosed, FailOpen or Propagate, listening to their stop token or not) around work that
// prepares, asks for admission and then commits a side effect; the events that let each of
// them go on are fired in a random order - on this thread, or (one iteration in four) from two
// other threads at once. In every schedule:
//   - no side effect after a trip, and none without every guard having settled;
//   - the outcome is the lattice join of what the guards said: tripped exactly when some guard
//     that ran said ask or deny (or failed under FailClosed), and the trip names such a guard;
//   - a failed or timed-out guard under FailClosed never yields an allow;
//   - a guard failing under Propagate fails the run.
// HOOKSET_GUARDS_ITERATIONS sets the number of schedules (default 3,000: CI's size;
// scripts/soak.sh runs 1,000,000 under ASan and under TSan); HOOKSET_SEED the seed.
#include "hookset_catch.hpp"
#include "test_support.hpp"

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

namespace {

struct Watch : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback, hookset::Concurrent> {
  static Verdict<> default_impl(int) { return {}; }
};
struct WatchInTurn : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback> {
  static Verdict<> default_impl(int) { return {}; }
};
using Set = hookset::HookSet<Watch, WatchInTurn>;

// An event that may be fired before or after it is awaited, from any thread; the waiter is
// resumed on the firing thread. Awaited as a named object.
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

enum class Ends { says, throws };
struct GuardPlan {
  bool sync = false;
  Ends ends = Ends::says;
  Permission says = Permission::allow;
  hookset::FailurePolicy on_failure = hookset::FailurePolicy::propagate;
};

// What the guards and the work did, for the checks.
struct Record {
  std::atomic<int> settled{0};  // guards that returned or threw
  std::atomic<int> settled_at_admit{-1};
  std::atomic<bool> committed{false};
  std::atomic<bool> admitted_answer{false};
  std::atomic<bool> asked_admission{false};
};

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
  long trips = 0, allowed = 0, failed = 0;

  for (long iteration = 0; iteration < iterations; ++iteration) {
    Set set;
    const bool concurrent = below(4) != 0;
    const bool guards_first = below(4) == 0;
    const bool threaded = below(4) == 0;
    const int n = below(5);
    std::vector<GuardPlan> plans(static_cast<std::size_t>(n));
    std::vector<std::unique_ptr<Gate>> gates;
    for (int i = 0; i < n + 1; ++i) gates.push_back(std::make_unique<Gate>());
    Record record;
    for (int i = 0; i < n; ++i) {
      GuardPlan& plan = plans[static_cast<std::size_t>(i)];
      plan.sync = below(3) == 0;
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
      auto finish = [&record, plan]() -> Verdict<> {
        record.settled.fetch_add(1);
        if (plan.ends == Ends::throws) throw std::runtime_error("guard failed");
        return Verdict<>{plan.says, "said"};
      };
      if (plan.sync) {
        auto guard = [finish](int) { return finish(); };
        if (concurrent) set.add<Watch>(guard, options);
        else set.add<WatchInTurn>(guard, options);
      } else {
        auto guard = [finish, gate](int) -> Task<Verdict<>> {
          co_await *gate;
          co_return finish();
        };
        if (concurrent) set.add<Watch>(guard, options);
        else set.add<WatchInTurn>(guard, options);
      }
    }
    Gate* work_gate = gates.back().get();
    auto work = [&record, work_gate](Admission& admission) -> Task<int> {
      co_await *work_gate;
      record.asked_admission = true;
      const bool admitted = co_await admission.admit();
      record.admitted_answer = admitted;
      if (admitted) {
        record.settled_at_admit = record.settled.load();
        record.committed = true;  // the side effect
      }
      co_return 1;
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

    test_support::Outcome<Guarded<int>> out;
    auto tripwire = [&] {
      if (concurrent) {
        auto wire = hookset::tripwire(set.call<Watch>(1));
        if (guards_first) return std::move(wire).guards_first().around(work);
        return std::move(wire).around(work);
      }
      auto wire = hookset::tripwire(set.call<WatchInTurn>(1));
      if (guards_first) return std::move(wire).guards_first().around(work);
      return std::move(wire).around(work);
    };
    // (Both branches return the same Task type: the guard slots differ only in mode.)
    std::vector<std::size_t> order(gates.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), random);
    std::atomic<bool> done{false};
    if (!threaded) {
      test_support::detach(tripwire(), out);
      for (std::size_t i : order) gates[i]->fire();
    } else {
      // Two threads fire their halves of the order while this one starts the run.
      std::vector<std::size_t> half[2];
      for (std::size_t k = 0; k < order.size(); ++k) half[k % 2].push_back(order[k]);
      std::atomic<bool> go{false};
      std::vector<std::thread> firing;
      for (auto& part : half)
        firing.emplace_back([&go, &gates, part] {
          while (!go.load()) std::this_thread::yield();
          for (std::size_t i : part) gates[i]->fire();
        });
      go = true;
      test_support::detach(tripwire(), out);
      for (auto& t : firing) t.join();
    }
    (void)done;
    REQUIRE(out.done);  // every gate fired: the run has ended

    INFO("iteration " << iteration << ", " << n << " guards, concurrent " << concurrent
                      << ", guards first " << guards_first << ", threaded " << threaded);
    // No side effect without every guard settled, none after a trip.
    if (record.committed) {
      CHECK(record.settled_at_admit.load() == n);
    }
    if (out.error) {
      ++failed;
      // Only a Propagate failure fails the run (none of the schedules cancels).
      REQUIRE(expect_failure);
      CHECK_THROWS_WITH(std::rethrow_exception(out.error), "guard failed");
      CHECK_FALSE(record.committed);
      continue;
    }
    const Guarded<int>& g = *out.value;
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
      CHECK(g.value == 1);
      CHECK(g.verdicts.decision == Permission::allow);
      CHECK(record.committed);
      CHECK(record.settled.load() == n);
    }
  }
  // (The plans make all three outcomes common.)
  if (iterations >= 1000) {
    CHECK(trips > 0);
    CHECK(allowed > 0);
    CHECK(failed > 0);
  }
}
