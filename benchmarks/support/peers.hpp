#pragma once
// The peers' side of every synchronous scenario: the same semantics as the hookset slot, written
// as a plain loop over a container of hooks (function pointers or std::function); the
// Boost.Signals2 combiners / libsigc++ accumulators that do the same work (signal_peers.hpp); plus
// measure(), the one timing loop every synchronous benchmark uses.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include <benchmark/benchmark.h>

#include "alloc_counter.hpp"
#include "common.hpp"
#include "signal_peers.hpp"

namespace hookset_bench {

// One warm-up dispatch (first-call caches, lazily built state) that must produce `expected`
// (else the benchmark reports an error: every implementation must do the same work), then the
// timed loop; counts the allocations of the timed loop only.
template <class Expected, class Dispatch>
void measure(benchmark::State& state, const Expected& expected, Dispatch&& dispatch) {
  if (!(dispatch(opaque_input()) == expected)) {
    state.SkipWithError("wrong result: this implementation does not do the scenario's work");
    return;
  }
  alloc_meter meter;
  for (auto _ : state) consume(dispatch(opaque_input()));
  meter.report(state);
  state.SetItemsProcessed(state.iterations());
}

// ---- the scenarios' semantics, over any container of hooks
// -----------------------------------------

// Always: last = default, then last = hook(s, last) for each hook.
template <class Hooks>
int always_fold(const Hooks& hooks, std::string_view s) {
  int last = default_value(s);
  for (const auto& hook : hooks) last = hook(s, last);
  return last;
}

// Fallback: the default only without hooks; the first hook gets nullopt.
template <class Hooks>
int fallback_fold(const Hooks& hooks, std::string_view s) {
  if (hooks.empty()) return default_value(s);
  std::optional<int> last;
  for (const auto& hook : hooks) last = hook(s, last);
  return *last;
}

// Always + Chain<ShortCircuit>: the default is checked first, the first empty output wins.
template <class Hooks>
std::optional<int> short_circuit_chain(const Hooks& hooks, std::string_view s) {
  std::optional<int> out = default_value(s);
  if (!out) return out;
  for (const auto& hook : hooks) {
    out = hook(s);
    if (!out) break;
  }
  return out;
}

// Always + Aggregate<Sum>: Sum({default, h1(s), ..., hN(s)}).
template <class Hooks>
int aggregate_sum(const Hooks& hooks, std::string_view s) {
  std::vector<int> outputs;
  outputs.reserve(hooks.size() + 1);
  outputs.push_back(default_value(s));
  for (const auto& hook : hooks) outputs.push_back(hook(s));
  return Sum{}(std::move(outputs));
}

// Singleton: the one hook (the last registered) replaces the default. `hooks` holds at most one.
template <class Hooks>
int singleton(const Hooks& hooks, std::string_view s) {
  return hooks.empty() ? default_value(s) : hooks.front()(s);
}

}  // namespace hookset_bench
