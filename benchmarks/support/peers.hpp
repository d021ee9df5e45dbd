#pragma once
// The peers' side of every synchronous scenario: the same semantics as the hookset slot, written
// as a plain loop over a container of hooks (function pointers or std::function), and the
// Boost.Signals2 combiners / libsigc++ accumulators that do the same work; plus measure(), the
// one timing loop every synchronous benchmark uses.
//
// Signals2 and libsigc++ slots cannot see the previous output, so in the fold scenarios their
// slots return the hook's contribution (s.size()) and the combiner / accumulator folds it into
// `last` (last + s.size(), exactly what fold_hook computes). Everywhere else the slots are the
// hooks themselves.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

// Peer headers are not ours to fix: no warnings from them.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wall"
#pragma GCC diagnostic ignored "-Wextra"
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <boost/optional.hpp>
#include <boost/signals2/signal.hpp>
#if HOOKSET_HAVE_SIGCXX
#include <sigc++/sigc++.h>
#endif
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

#include <benchmark/benchmark.h>

#include "alloc_counter.hpp"
#include "common.hpp"

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

// The contribution a Signals2 / libsigc++ slot returns in the fold scenarios.
inline constexpr auto size_hook = [](std::string_view s) noexcept {
  return static_cast<int>(s.size());
};

// ---- Boost.Signals2 combiners and libsigc++ accumulators
// --------------------------------------------- Both libraries call them with an iterator range
// whose dereference invokes the slot.

// Fold without the default: nullopt for no slots, else the fold of the outputs.
struct fold_combiner {
  using result_type = std::optional<int>;
  template <class It>
  result_type operator()(It first, It last) const {
    std::optional<int> acc;
    for (; first != last; ++first) acc = acc.value_or(0) + *first;
    return acc;
  }
};

// Short-circuit chain: nullopt for no slots, else the first empty output or the last output.
struct chain_combiner {
  using result_type = std::optional<std::optional<int>>;
  template <class It>
  result_type operator()(It first, It last) const {
    result_type out;
    for (; first != last; ++first) {
      out = *first;
      if (!*out) break;
    }
    return out;
  }
};

// Aggregate: collects every output (the default is connected as the first slot) and sums them.
struct aggregate_combiner {
  using result_type = int;
  template <class It>
  result_type operator()(It first, It last) const {
    std::vector<int> outputs;
    for (; first != last; ++first) outputs.push_back(*first);
    return Sum{}(std::move(outputs));
  }
};

// Singleton: the output of the (at most one) slot.
struct last_value_combiner {
  using result_type = std::optional<int>;
  template <class It>
  result_type operator()(It first, It last) const {
    result_type out;
    for (; first != last; ++first) out = *first;
    return out;
  }
};

template <class R, class Combiner>
using signals2_signal = boost::signals2::signal<R(std::string_view), Combiner>;

#if HOOKSET_HAVE_SIGCXX
template <class R, class Accumulator>
using sigcxx_signal = typename sigc::signal<R(std::string_view)>::template accumulated<Accumulator>;
#endif

}  // namespace hookset_bench
