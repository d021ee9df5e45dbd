// Slots with companions, and the singleton, each with N = 0, 1, 8, 64 registered hooks:
//   chain      Always + Chain<ShortCircuit>, std::optional<int>(std::string_view); no output is
//              empty, so the default and all N hooks run
//   aggregate  Always + Aggregate<Sum>, int(std::string_view): Sum({default, h1, ..., hN})
//   singleton  Singleton, int(std::string_view): N registrations, each replacing the previous
//              one, so one hook runs (the default at N = 0)
#include "support/alloc_counter.hpp"
#include "support/common.hpp"
#include "support/peers.hpp"

#include <functional>
#include <vector>

#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

template <class S, auto Hook, auto Expected>
void hookset_slot(benchmark::State& state, std::int64_t n) {
  hookset::HookSet<S> set;
  for (std::int64_t i = 0; i < n; ++i) set.template add<S>(Hook);
  measure(state, Expected(n),
          [&](std::string_view s) { return hookset::sync_wait(set.template call<S>(s)); });
}

// ---- chain
// ------------------------------------------------------------------------------------------

void chain_inline(benchmark::State& state, std::int64_t n) {
  measure(state, expected_chain(n), [n](std::string_view s) {
    std::optional<int> out = ChainSlot::default_impl(s);
    if (!out) return out;
    for (std::int64_t i = 0; i < n; ++i) {
      out = chain_hook(s);
      consume(out);
      if (!out) break;
    }
    return out;
  });
}

template <class Fn>
void chain_vector(benchmark::State& state, std::int64_t n) {
  const std::vector<Fn> hooks(static_cast<std::size_t>(n), Fn(chain_hook));
  measure(state, expected_chain(n),
          [&](std::string_view s) { return short_circuit_chain(hooks, s); });
}

template <class Signal>
void chain_signal(benchmark::State& state, std::int64_t n) {
  Signal signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(chain_hook);
  measure(state, expected_chain(n), [&](std::string_view s) {
    const std::optional<int> head = ChainSlot::default_impl(s);
    if (!head) return head;
    const std::optional<std::optional<int>> out = signal(s);
    return out ? *out : head;
  });
}

// ---- aggregate
// --------------------------------------------------------------------------------------

void aggregate_inline(benchmark::State& state, std::int64_t n) {
  measure(state, expected_aggregate(n), [n](std::string_view s) {
    std::vector<int> outputs;
    outputs.reserve(static_cast<std::size_t>(n) + 1);
    outputs.push_back(AggregateSlot::default_impl(s));
    for (std::int64_t i = 0; i < n; ++i) outputs.push_back(value_hook(s));
    return Sum{}(std::move(outputs));
  });
}

template <class Fn>
void aggregate_vector(benchmark::State& state, std::int64_t n) {
  const std::vector<Fn> hooks(static_cast<std::size_t>(n), Fn(value_hook));
  measure(state, expected_aggregate(n),
          [&](std::string_view s) { return aggregate_sum(hooks, s); });
}

// The default is the first slot: the combiner sees every output, as Aggregate does.
template <class Signal>
void aggregate_signal(benchmark::State& state, std::int64_t n) {
  Signal signal;
  signal.connect(&AggregateSlot::default_impl);
  for (std::int64_t i = 0; i < n; ++i) signal.connect(value_hook);
  measure(state, expected_aggregate(n), [&](std::string_view s) { return signal(s); });
}

// ---- singleton
// --------------------------------------------------------------------------------------

void singleton_inline(benchmark::State& state, std::int64_t n) {
  measure(state, expected_singleton(n), [n](std::string_view s) {
    return n == 0 ? SingletonSlot::default_impl(s) : value_hook(s);
  });
}

template <class Fn>
void singleton_vector(benchmark::State& state, std::int64_t n) {
  std::vector<Fn> hooks;
  for (std::int64_t i = 0; i < n; ++i) hooks.assign(1, Fn(value_hook));  // replaces the previous
  measure(state, expected_singleton(n), [&](std::string_view s) { return singleton(hooks, s); });
}

template <class Signal>
void singleton_signal(benchmark::State& state, std::int64_t n) {
  Signal signal;
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (requires { signal.disconnect_all_slots(); }) signal.disconnect_all_slots();
    else signal.clear();
    signal.connect(value_hook);
  }
  measure(state, expected_singleton(n), [&](std::string_view s) {
    const std::optional<int> out = signal(s);
    return out ? *out : SingletonSlot::default_impl(s);
  });
}

const bool registered = [] {
  using chain_std_fn = std::function<std::optional<int>(std::string_view)>;
  using value_std_fn = std::function<int(std::string_view)>;

  register_scenario("chain", "hookset", hookset_slot<ChainSlot, chain_hook, expected_chain>);
  register_scenario("chain", "inline", chain_inline);
  register_scenario("chain", "fnptr", chain_vector<chain_fn>);
  register_scenario("chain", "stdfunction", chain_vector<chain_std_fn>);
  register_scenario("chain", "signals2",
                    chain_signal<signals2_signal<std::optional<int>, chain_combiner>>);
#if HOOKSET_HAVE_SIGCXX
  register_scenario("chain", "sigcxx",
                    chain_signal<sigcxx_signal<std::optional<int>, chain_combiner>>);
#endif

  register_scenario("aggregate", "hookset",
                    hookset_slot<AggregateSlot, value_hook, expected_aggregate>);
  register_scenario("aggregate", "inline", aggregate_inline);
  register_scenario("aggregate", "fnptr", aggregate_vector<value_fn>);
  register_scenario("aggregate", "stdfunction", aggregate_vector<value_std_fn>);
  register_scenario("aggregate", "signals2",
                    aggregate_signal<signals2_signal<int, aggregate_combiner>>);
#if HOOKSET_HAVE_SIGCXX
  register_scenario("aggregate", "sigcxx",
                    aggregate_signal<sigcxx_signal<int, aggregate_combiner>>);
#endif

  register_scenario("singleton", "hookset",
                    hookset_slot<SingletonSlot, value_hook, expected_singleton>);
  register_scenario("singleton", "inline", singleton_inline);
  register_scenario("singleton", "fnptr", singleton_vector<value_fn>);
  register_scenario("singleton", "stdfunction", singleton_vector<value_std_fn>);
  register_scenario("singleton", "signals2",
                    singleton_signal<signals2_signal<int, last_value_combiner>>);
#if HOOKSET_HAVE_SIGCXX
  register_scenario("singleton", "sigcxx",
                    singleton_signal<sigcxx_signal<int, last_value_combiner>>);
#endif
  return true;
}();

}  // namespace
}  // namespace hookset_bench
