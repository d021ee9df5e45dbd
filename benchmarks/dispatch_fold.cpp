// Fold slots: `always_fold` (Always, int(std::string_view), hooks take `last`) and
// `fallback_fold` (Fallback), each with N = 0, 1, 8, 64 hooks, against the peers; and
// `always_fold_mt`: one unchanged set (N = 8) dispatched from one and from two threads.
#include "support/alloc_counter.hpp"
#include "support/common.hpp"
#include "support/peers.hpp"

#include <functional>
#include <type_traits>
#include <vector>

#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

template <class S>
hookset::HookSet<S> fold_set(std::int64_t n) {
  hookset::HookSet<S> set;
  for (std::int64_t i = 0; i < n; ++i) set.template add<S>(fold_hook);
  return set;
}

template <class S>
void hookset_fold(benchmark::State& state, std::int64_t n) {
  const auto set = fold_set<S>(n);
  const int expected = std::is_same_v<S, FallbackFold> ? expected_fallback(n) : expected_fold(n);
  measure(state, expected,
          [&](std::string_view s) { return hookset::sync_wait(set.template call<S>(s)); });
}

// ---- always_fold
// ----------------------------------------------------------------------------------

void always_inline(benchmark::State& state, std::int64_t n) {
  measure(state, expected_fold(n), [n](std::string_view s) {
    int last = default_value(s);
    for (std::int64_t i = 0; i < n; ++i) {
      last = fold_hook(s, last);
      benchmark::DoNotOptimize(last);  // one hook body per hook, not a closed form
    }
    return last;
  });
}

template <class Fn>
void always_vector(benchmark::State& state, std::int64_t n) {
  const std::vector<Fn> hooks(static_cast<std::size_t>(n), Fn(int_fold_hook));
  measure(state, expected_fold(n), [&](std::string_view s) { return always_fold(hooks, s); });
}

void always_signals2(benchmark::State& state, std::int64_t n) {
  signals2_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  measure(state, expected_fold(n),
          [&](std::string_view s) { return default_value(s) + signal(s).value_or(0); });
}

#if HOOKSET_HAVE_SIGCXX
void always_sigcxx(benchmark::State& state, std::int64_t n) {
  sigcxx_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  measure(state, expected_fold(n),
          [&](std::string_view s) { return default_value(s) + signal(s).value_or(0); });
}
#endif

// ---- fallback_fold
// --------------------------------------------------------------------------------

void fallback_inline(benchmark::State& state, std::int64_t n) {
  measure(state, expected_fallback(n), [n](std::string_view s) {
    if (n == 0) return default_value(s);
    std::optional<int> last;
    for (std::int64_t i = 0; i < n; ++i) {
      int value = fold_hook(s, last);
      benchmark::DoNotOptimize(value);
      last = value;
    }
    return *last;
  });
}

template <class Fn>
void fallback_vector(benchmark::State& state, std::int64_t n) {
  const std::vector<Fn> hooks(static_cast<std::size_t>(n), Fn(opt_fold_hook));
  measure(state, expected_fallback(n), [&](std::string_view s) { return fallback_fold(hooks, s); });
}

void fallback_signals2(benchmark::State& state, std::int64_t n) {
  signals2_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  measure(state, expected_fallback(n), [&](std::string_view s) {
    const std::optional<int> folded = signal(s);
    return folded ? *folded : default_value(s);
  });
}

#if HOOKSET_HAVE_SIGCXX
void fallback_sigcxx(benchmark::State& state, std::int64_t n) {
  sigcxx_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  measure(state, expected_fallback(n), [&](std::string_view s) {
    const std::optional<int> folded = signal(s);
    return folded ? *folded : default_value(s);
  });
}
#endif

// ---- always_fold_mt: threads share one unchanged set
// ------------------------------------------------

constexpr std::int64_t mt_hooks = 8;

void mt_hookset(benchmark::State& state) {
  static const auto set = fold_set<AlwaysFold>(mt_hooks);
  measure(state, expected_fold(mt_hooks),
          [&](std::string_view s) { return hookset::sync_wait(set.call<AlwaysFold>(s)); });
}

void mt_stdfunction(benchmark::State& state) {
  using Fn = std::function<int(std::string_view, int)>;
  static const std::vector<Fn> hooks(mt_hooks, Fn(int_fold_hook));
  measure(state, expected_fold(mt_hooks),
          [&](std::string_view s) { return always_fold(hooks, s); });
}

void mt_fnptr(benchmark::State& state) {
  static const std::vector<int_fold_fn> hooks(mt_hooks, int_fold_fn(int_fold_hook));
  measure(state, expected_fold(mt_hooks),
          [&](std::string_view s) { return always_fold(hooks, s); });
}

const bool registered = [] {
  using int_std_fn = std::function<int(std::string_view, int)>;
  using opt_std_fn = std::function<int(std::string_view, const std::optional<int>&)>;

  register_scenario("always_fold", "hookset", hookset_fold<AlwaysFold>);
  register_scenario("always_fold", "inline", always_inline);
  register_scenario("always_fold", "fnptr", always_vector<int_fold_fn>);
  register_scenario("always_fold", "stdfunction", always_vector<int_std_fn>);
  register_scenario("always_fold", "signals2", always_signals2);
#if HOOKSET_HAVE_SIGCXX
  register_scenario("always_fold", "sigcxx", always_sigcxx);
#endif

  register_scenario("fallback_fold", "hookset", hookset_fold<FallbackFold>);
  register_scenario("fallback_fold", "inline", fallback_inline);
  register_scenario("fallback_fold", "fnptr", fallback_vector<opt_fold_fn>);
  register_scenario("fallback_fold", "stdfunction", fallback_vector<opt_std_fn>);
  register_scenario("fallback_fold", "signals2", fallback_signals2);
#if HOOKSET_HAVE_SIGCXX
  register_scenario("fallback_fold", "sigcxx", fallback_sigcxx);
#endif

  const std::string suffix = "/" + std::to_string(mt_hooks);
  for (auto [impl, fn] :
       {std::pair{"hookset", &mt_hookset}, std::pair{"stdfunction", &mt_stdfunction},
        std::pair{"fnptr", &mt_fnptr}}) {
    benchmark::RegisterBenchmark(("always_fold_mt/" + std::string(impl) + suffix).c_str(), fn)
        ->Threads(1)
        ->Threads(2)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace hookset_bench
