// Concurrent hooks: `concurrent_timers`, an Aggregate slot with 8 asio::awaitable hooks, each
// waiting on a 10 ms asio::steady_timer (a remote call's latency) and answering 1, dispatched
// from an asio::awaitable on a one-thread io_context. Wall-clock time per dispatch (real time, a
// few iterations):
//   hookset     the slot is Concurrent: the hooks wait at the same time (~10 ms)
//   sequential  the same hooks on the same kind of slot without Concurrent: one after another
//               (~80 ms)
// Every dispatch must aggregate all 8 answers.

#include "support/alloc_counter.hpp"
#include "support/asio_run.hpp"
#include "support/common.hpp"

#include <chrono>
#include <exception>
#include <numeric>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;

constexpr std::int64_t timer_hooks = 8;
constexpr auto hook_latency = 10ms;

struct Count {
  int operator()(std::vector<int> answers) const noexcept {
    return std::accumulate(answers.begin(), answers.end(), 0);
  }
};
// The default answers 0, each hook 1: a dispatch returns the number of hooks that answered.
struct GatherConcurrent
    : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Count>, hookset::Concurrent> {
  static int default_impl(int) noexcept { return 0; }
};
struct GatherSequential : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Count>> {
  static int default_impl(int) noexcept { return 0; }
};

// A hook that waits for a remote answer: 10 ms on the io_context's timers.
inline constexpr auto timer_hook = [](int) -> net::awaitable<int> {
  net::steady_timer timer(co_await net::this_coro::executor, hook_latency);
  co_await timer.async_wait(net::use_awaitable);
  co_return 1;
};

template <class S>
net::awaitable<void> timed_loop(benchmark::State& state, const hookset::HookSet<S>& set) {
  int answered = co_await set.template call<S>(1);  // warm-up
  alloc_meter meter;
  for (auto _ : state) {
    answered = co_await set.template call<S>(1);
    if (answered != timer_hooks) break;
  }
  meter.report(state);
  if (answered != timer_hooks) state.SkipWithError("a dispatch did not gather every hook's answer");
}

template <class S>
void concurrent_timers(benchmark::State& state) {
  hookset::HookSet<S> set;
  for (std::int64_t i = 0; i < timer_hooks; ++i) set.template add<S>(timer_hook);
  run_on_io_context(state, timed_loop(state, set));
}

const bool registered = [] {
  const std::string suffix = "/" + std::to_string(timer_hooks);
  // Few iterations: each is 10 to 80 ms of waiting.
  benchmark::RegisterBenchmark(("concurrent_timers/hookset" + suffix).c_str(),
                               concurrent_timers<GatherConcurrent>)
      ->Iterations(5)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark(("concurrent_timers/sequential" + suffix).c_str(),
                               concurrent_timers<GatherSequential>)
      ->Iterations(2)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace hookset_bench
