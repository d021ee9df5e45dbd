#pragma once
// What every dispatch benchmark shares: the input, the hook bodies (identical for hookset and
// every peer), the slot declarations, and the registration helper that names benchmarks
// `<scenario>/<implementation>/<N>` (benchmarks/report.py parses those names).
//
// Implementations, as report.py names them:
//   hookset      hookset::HookSet, dispatched with sync_wait(set.call<S>(s)) (or co_await)
//   inline       the same hook lambdas called directly, no type erasure: the floor
//   fnptr        a loop over std::vector of function pointers
//   stdfunction  a loop over std::vector<std::function<...>>
//   signals2     Boost.Signals2 signal with a combiner
//   sigcxx       libsigc++ 3 signal with an accumulator
//   handcoro     a hand-written coroutine loop co_awaiting std::function hooks that return a
//                minimal lazy task (default allocator)

#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include <hookset/hookset.hpp>

namespace hookset_bench {

inline constexpr std::string_view input = "benchmark input";

// Hook counts every scenario runs at.
inline constexpr std::int64_t hook_counts[] = {0, 1, 8, 64};

// Keeps the compiler from treating the input as a constant: every implementation calls this once
// per dispatch.
inline std::string_view opaque_input() {
  std::string_view s = input;
  benchmark::DoNotOptimize(s);
  return s;
}

// Makes a dispatch's result observable. A std::optional<int> is consumed as its parts: handing
// it to DoNotOptimize whole makes GCC 12 pack it into one register through the stack, a
// store-forwarding stall (~5 ns) that would be charged to every implementation alike.
inline void consume(int value) { benchmark::DoNotOptimize(value); }
inline void consume(const std::optional<int>& value) {
  int parts = value ? *value : -1;
  benchmark::DoNotOptimize(parts);
}

// ---- hook bodies
// ---------------------------------------------------------------------------------- Captureless
// lambdas: they convert to the peers' function pointers, and hookset stores them as they are. Each
// does one addition, so dispatch overhead is what is measured.

inline int default_value(std::string_view s) noexcept { return static_cast<int>(s.size()); }

// Fold slots (Always, Fallback): `last` is engaged except for a Fallback slot's first hook.
// hookset's hook shape: `last` is a std::optional<int> taken by value.
inline constexpr auto fold_hook = [](std::string_view s, std::optional<int> last) noexcept {
  return last.value_or(0) + static_cast<int>(s.size());
};
// The peers' fold hooks do the same arithmetic in the shape hand-written code would use:
// an Always fold's `last` is always there, so a plain int; a Fallback fold's first hook gets
// nullopt, so a std::optional, by const& (GCC 12 passes a std::optional<int> by value through a
// function pointer with a store-forwarding stall, ~7 ns a call: not the dispatch cost we want
// to compare against).
inline constexpr auto int_fold_hook = [](std::string_view s, int last) noexcept {
  return last + static_cast<int>(s.size());
};
inline constexpr auto opt_fold_hook =
    [](std::string_view s, const std::optional<int>& last) noexcept {
  return last.value_or(0) + static_cast<int>(s.size());
};
using int_fold_fn = int (*)(std::string_view, int);
using opt_fold_fn = int (*)(std::string_view, const std::optional<int>&);

// Chain<ShortCircuit>: every output has a value, so no hook breaks and all N run.
inline constexpr auto chain_hook = [](std::string_view s) noexcept -> std::optional<int> {
  return static_cast<int>(s.size());
};
using chain_fn = std::optional<int> (*)(std::string_view);

// Aggregate and Singleton hooks: one output each.
inline constexpr auto value_hook = [](std::string_view s) noexcept {
  return static_cast<int>(s.size()) + 1;
};
using value_fn = int (*)(std::string_view);

// The aggregate companion: sums the outputs (default first, then the hooks).
struct Sum {
  int operator()(std::vector<int> outputs) const noexcept {
    return std::accumulate(outputs.begin(), outputs.end(), 0);
  }
};

// Coroutine hook: the fold body, as a hookset::Task.
inline constexpr auto task_fold_hook = [](std::string_view s,
                                          std::optional<int> last) -> hookset::Task<int> {
  co_return last.value_or(0) + static_cast<int>(s.size());
};

// ---- slots --------------------------------------------------------------------------------------

struct AlwaysFold : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct FallbackFold : hookset::Slot<int(std::string_view), hookset::Fallback> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct ChainSlot : hookset::Slot<std::optional<int>(std::string_view), hookset::Always,
                                 hookset::Chain<hookset::ShortCircuit>> {
  static std::optional<int> default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct AggregateSlot
    : hookset::Slot<int(std::string_view), hookset::Always, hookset::Aggregate<Sum>> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct SingletonSlot : hookset::Slot<int(std::string_view), hookset::Singleton> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct CoroFold : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
struct MixFold : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};

// What a dispatch of each scenario returns for `input` with n hooks: every implementation is
// checked against it before it is timed.
inline int size_of_input() noexcept { return static_cast<int>(input.size()); }
inline int expected_fold(std::int64_t n) noexcept {
  return size_of_input() * static_cast<int>(1 + n);
}
inline int expected_fallback(std::int64_t n) noexcept {
  return size_of_input() * static_cast<int>(n == 0 ? 1 : n);
}
inline std::optional<int> expected_chain(std::int64_t) noexcept { return size_of_input(); }
inline int expected_aggregate(std::int64_t n) noexcept {
  return size_of_input() + static_cast<int>(n) * (size_of_input() + 1);
}
inline int expected_singleton(std::int64_t n) noexcept {
  return size_of_input() + (n == 0 ? 0 : 1);
}

// In the `mix` scenario hook i is a coroutine hook when i is even, else synchronous (so N = 1 is
// one coroutine hook, N = 8 four of each).
inline constexpr bool mix_hook_is_async(std::int64_t i) noexcept { return i % 2 == 0; }

// ---- registration
// ---------------------------------------------------------------------------------

// Registers `<scenario>/<impl>/<N>` for every hook count; `fn(state, n)` runs one benchmark.
// Returns the registrations, for further options (threads, ...).
template <class Fn>
std::vector<benchmark::internal::Benchmark*> register_scenario(const char* scenario,
                                                               const char* impl, Fn fn) {
  std::vector<benchmark::internal::Benchmark*> registered;
  for (std::int64_t n : hook_counts) {
    const std::string name = std::string(scenario) + "/" + impl + "/" + std::to_string(n);
    registered.push_back(benchmark::RegisterBenchmark(
        name.c_str(), [fn, n](benchmark::State& state) { fn(state, n); }));
  }
  return registered;
}

}  // namespace hookset_bench
