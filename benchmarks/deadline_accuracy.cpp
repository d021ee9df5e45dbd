// How punctual a dispatch deadline is, through <hookset/asio.hpp>: a slot whose only hook is an
// asio::awaitable waiting an hour on a timer, dispatched with `with_timeout(d)` on an io_context;
// measured from the dispatch's start to its completion handler, minus d. The hook must have
// stopped (its coroutine cancelled and unwound) before the dispatch completes: each run checks
// it and the benchmark fails (SkipWithError) if not, or if the dispatch did not fail with
// hookset::DispatchTimeout.
//
// Rows `deadline/hookset/<d in ms>`: the wall time of one dispatch (UseManualTime), and the
// counters `late_ms_mean` and `late_ms_max` (lateness over all iterations). Target: a deadline
// fires within 5 ms of its time on an idle machine.
#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>

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

struct Slow : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Slow>;

int hooks_running = 0;  // one io_context thread: no synchronisation needed

net::awaitable<int> hang(int x, std::optional<int> last) {
  ++hooks_running;
  struct leave {
    ~leave() { --hooks_running; }
  } on_exit;
  net::steady_timer timer(co_await net::this_coro::executor, 1h);
  co_await timer.async_wait(net::use_awaitable);
  co_return x + last.value_or(0);
}

void deadline(benchmark::State& state) {
  const auto limit = std::chrono::milliseconds(state.range(0));
  net::io_context io;
  Set set;
  set.add<Slow>(hang);
  double late_sum_ms = 0, late_max_ms = 0;
  std::int64_t runs = 0;
  for (auto _ : state) {
    bool timed_out = false;
    int running_at_completion = -1;
    clock_type::time_point completed;
    const auto start = clock_type::now();
    hookset::asio::async_call(io.get_executor(), set.call<Slow>(1).with_timeout(limit),
                              [&](std::exception_ptr error, int) {
      completed = clock_type::now();
      running_at_completion = hooks_running;
      try {
        if (error) std::rethrow_exception(error);
      } catch (const hookset::DispatchTimeout&) {
        timed_out = true;
      } catch (...) {
      }
    });
    io.run();
    io.restart();
    if (!timed_out || running_at_completion != 0) {
      state.SkipWithError(!timed_out ? "the dispatch did not end with hookset::DispatchTimeout"
                                     : "the hook was still running when the dispatch completed");
      break;
    }
    const std::chrono::duration<double> took = completed - start;
    state.SetIterationTime(took.count());
    const double late_ms =
        std::chrono::duration<double, std::milli>(completed - start - limit).count();
    late_sum_ms += late_ms;
    late_max_ms = std::max(late_max_ms, late_ms);
    ++runs;
  }
  if (runs > 0) {
    state.counters["late_ms_mean"] = late_sum_ms / static_cast<double>(runs);
    state.counters["late_ms_max"] = late_max_ms;
  }
}

}  // namespace

BENCHMARK(deadline)
    ->Name("deadline/hookset")
    ->Arg(1)
    ->Arg(10)
    ->Arg(50)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
