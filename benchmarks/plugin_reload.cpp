// Reloading a plugin (<hookset/plugin.hpp>) while two threads dispatch its slot continuously.
//
// `plugin_reload/loaded/8`: PluginHost::reload swaps a plugin of 8 hooks for another build of
// it (two builds of instructions/fold_plugin.cpp, alternately), timed from the call to its
// return (manual time): open the new build, run its entry point, publish. The old build is still
// loaded when its turn comes again (the closer closes a library 20 ms after its last list goes),
// so the dynamic linker shares it. `plugin_reload_cold/loaded/8`: each reload waits, untimed,
// for the build it replaced to be closed, so every reload maps its library afresh;
// `plugin_reload_cold/idle/8`: the same with no dispatch running (on a 2-core machine the two
// dispatching threads leave the reloading one a share of the cores).
// Target: <= 1 ms plus the dispatches that were running.
#include <atomic>
#include <chrono>
#include <string_view>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include <hookset/plugin.hpp>

#include "support/common.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using Host = hookset::PluginHost<hookset::HookSet<hookset_bench::AlwaysFold>>;

template <bool Cold, int Dispatchers>
void plugin_reload(benchmark::State& state) {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_BENCH_FOLD_PLUGIN);
  std::atomic<bool> stop{false};
  std::atomic<long> dispatches{0};
  std::vector<std::thread> dispatchers;
  for (int t = 0; t != Dispatchers; ++t)
    dispatchers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        benchmark::DoNotOptimize(
            hookset::sync_wait(host.call<hookset_bench::AlwaysFold>(hookset_bench::input)));
        dispatches.fetch_add(1, std::memory_order_relaxed);
      }
    });
  const char* builds[] = {HOOKSET_BENCH_FOLD_PLUGIN_B, HOOKSET_BENCH_FOLD_PLUGIN};
  std::size_t next = 0;
  for (auto _ : state) {
    const auto start = clock_type::now();
    hookset::Unloaded old = host.reload(plugin, builds[next]);
    const auto end = clock_type::now();
    state.SetIterationTime(std::chrono::duration<double>(end - start).count());
    if (Cold) old.wait();
    next ^= 1;
  }
  stop = true;
  for (std::thread& dispatcher : dispatchers) dispatcher.join();
  if (hookset::sync_wait(host.call<hookset_bench::AlwaysFold>(hookset_bench::input)) <= 0)
    state.SkipWithError("the plugin's hooks did not run");
  state.counters["dispatches"] = static_cast<double>(dispatches.load());
  host.unload(plugin).wait();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) long hookset_bench_plugin_hooks() { return 8; }

BENCHMARK(plugin_reload<false, 2>)
    ->Name("plugin_reload/loaded/8")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(plugin_reload<true, 2>)
    ->Name("plugin_reload_cold/loaded/8")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);
BENCHMARK(plugin_reload<true, 0>)
    ->Name("plugin_reload_cold/idle/8")
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond)
    ->Iterations(200);
