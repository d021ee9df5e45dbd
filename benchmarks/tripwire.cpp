// Tripwires (<hookset/tripwire.hpp>) on a one-thread io_context, through <hookset/asio.hpp>.
//
// `tripwire_trip/hookset/1`: a guard (an asio::awaitable hook) waits 1 ms on a timer and denies;
// the work, an asio::awaitable, waits an hour on a timer. Measured (manual time) from the
// moment the guard returns its deny to the moment the work's wait ends with operation_aborted:
// how long a trip takes to stop the work. Each run checks the outcome tripped and the work had
// been stopped (else SkipWithError). Target: ≤ 0.1 ms.
//
// `tripwire_pass/hookset/4`: 4 synchronous guards allowing, around work that completes at once:
// the tripwire's cost when it does not trip; `tripwire_pass/sequential/4`: the same dispatch
// awaited, then the same work awaited, one after the other (max(guards, work) is at most
// that). Target: the tripwire adds ≤ 1 µs.
#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include <benchmark/benchmark.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using hookset::Permission;
using hookset::Verdict;

struct Watch : hookset::VerdictSlot<Verdict<>(int), hookset::Fallback, hookset::Concurrent> {
  static Verdict<> default_impl(int) { return {}; }
};
using Set = hookset::HookSet<Watch>;

// One io_context thread: no synchronisation needed.
clock_type::time_point tripped_at, stopped_at;
bool work_stopped = false;

net::awaitable<Verdict<>> deny_after_a_millisecond(int) {
  net::steady_timer timer(co_await net::this_coro::executor, 1ms);
  co_await timer.async_wait(net::use_awaitable);
  tripped_at = clock_type::now();
  co_return Verdict<>{Permission::deny, "tripped"};
}
net::awaitable<int> work_for_an_hour() {
  net::steady_timer timer(co_await net::this_coro::executor, 1h);
  try {
    co_await timer.async_wait(net::use_awaitable);
  } catch (const boost::system::system_error&) {
    stopped_at = clock_type::now();
    work_stopped = true;
    throw;
  }
  co_return 1;
}

hookset::Task<void> run_trip(Set& set, hookset::asio::executor_binding& binding,
                             hookset::Guarded<int>& outcome) {
  auto guards = set.call<Watch>(1).on(binding);
  outcome = co_await hookset::tripwire(std::move(guards)).on(binding).around(work_for_an_hour());
}

void trip(benchmark::State& state) {
  net::io_context io;
  auto keep_running = net::make_work_guard(io);
  std::thread io_thread([&io] { io.run(); });  // the io_context's one thread
  hookset::asio::executor_binding binding(io.get_executor());
  Set set;
  set.add<Watch>(deny_after_a_millisecond);
  double stop_max_us = 0;
  for (auto _ : state) {
    work_stopped = false;
    hookset::Guarded<int> outcome;
    // (This thread only waits: the guards, the work and the tripwire run on the io thread.)
    hookset::sync_wait(run_trip(set, binding, outcome));
    if (!outcome.tripped() || !work_stopped) {
      state.SkipWithError(!outcome.tripped() ? "the guarded run did not trip"
                                             : "the work was not stopped");
      break;
    }
    const std::chrono::duration<double> took = stopped_at - tripped_at;
    state.SetIterationTime(took.count());
    stop_max_us = std::max(stop_max_us, took.count() * 1e6);
  }
  keep_running.reset();
  io_thread.join();
  state.counters["stop_us_max"] = stop_max_us;
}

// ---- passing guards ------------------------------------------------------------------------

hookset::Task<int> work_at_once() { co_return 1; }
void add_allowing_guards(Set& set, int n) {
  for (int i = 0; i < n; ++i) set.add<Watch>([](int) { return Verdict<>{Permission::allow, {}}; });
}

hookset::Task<int> guarded_run(Set& set) {
  auto guards = set.call<Watch>(1);
  hookset::Guarded<int> outcome =
      co_await hookset::tripwire(std::move(guards)).around(work_at_once());
  co_return *outcome.value;
}
hookset::Task<int> sequential_run(Set& set) {
  const hookset::Verdicts<> verdicts = co_await set.call<Watch>(1);
  if (verdicts.decision != Permission::allow) co_return 0;
  co_return co_await work_at_once();
}

template <hookset::Task<int> (*run)(Set&)>
void pass(benchmark::State& state) {
  Set set;
  add_allowing_guards(set, static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(hookset::sync_wait(run(set)));
}

}  // namespace

BENCHMARK(trip)->Name("tripwire_trip/hookset/1")->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(pass<guarded_run>)->Name("tripwire_pass/hookset")->Arg(4);
BENCHMARK(pass<sequential_run>)->Name("tripwire_pass/sequential")->Arg(4);
