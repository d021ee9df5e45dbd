// What observing costs a dispatch: `observer`, the always_fold scenario (Always fold,
// int(std::string_view), hooks take `last`) at N = 0 and 8 hooks, with
//   hookset          no observer installed (the same work as always_fold/hookset)
//   set_dispatch     a per-set observer that counts dispatch begin/end (no hook events)
//   set_hooks        a per-set observer that also asks for hook events and counts them
//   global_dispatch  a process-wide observer that counts dispatch begin/end (no hook events)
//   global_hooks     a process-wide observer that also asks for hook events and counts them
//   clock_floor      no observer, and 2 N std::chrono::steady_clock::now() readings per dispatch:
//                    the clock readings hook events need (a start and an end per hook), alone
//   stdfunction      the std::function loop of always_fold: report.py compares hookset's ratio
//                    to it here and in dispatch_fold, so that the two programs, run minutes apart
//                    on a shared machine, are compared at the same speed
// Every observer checks afterwards that it saw one begin and one end per dispatch (and per hook).
#include "support/alloc_counter.hpp"
#include "support/common.hpp"
#include "support/peers.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

// The cheapest useful observer: counts what it is told (one thread dispatches).
class counting_observer final : public hookset::Observer {
 public:
  explicit counting_observer(bool hook_events) noexcept : hook_events_(hook_events) {}

  void on_dispatch_begin(std::string_view, std::uint64_t) override { ++dispatch_begins; }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t, std::exception_ptr) override {
    ++dispatch_ends;
  }
  bool wants_hook_events() const noexcept override { return hook_events_; }
  void on_hook_begin(const hookset::HookEvent&) override { ++hook_begins; }
  void on_hook_end(const hookset::HookEvent&) override { ++hook_ends; }

  std::uint64_t dispatch_begins = 0;
  std::uint64_t dispatch_ends = 0;
  std::uint64_t hook_begins = 0;
  std::uint64_t hook_ends = 0;

 private:
  bool hook_events_;
};

enum class observed { none, per_set, process_wide };

template <observed Where, bool HookEvents>
void observer_fold(benchmark::State& state, std::int64_t n) {
  hookset::HookSet<AlwaysFold> set;
  for (std::int64_t i = 0; i < n; ++i) set.add<AlwaysFold>(fold_hook);
  counting_observer observer(HookEvents);
  if constexpr (Where == observed::per_set) set.set_observer(&observer);
  const hookset::ScopedObserver scoped(Where == observed::process_wide ? &observer : nullptr);

  measure(state, expected_fold(n),
          [&](std::string_view s) { return hookset::sync_wait(set.call<AlwaysFold>(s)); });

  if constexpr (Where != observed::none) {
    // The timed dispatches and measure()'s warm-up.
    const std::uint64_t dispatches = static_cast<std::uint64_t>(state.iterations()) + 1;
    const std::uint64_t hooks = HookEvents ? dispatches * static_cast<std::uint64_t>(n) : 0;
    if (observer.dispatch_begins != dispatches || observer.dispatch_ends != dispatches ||
        observer.hook_begins != hooks || observer.hook_ends != hooks)
      state.SkipWithError("the observer did not see every dispatch (and hook) it asked for");
  }
}

// What per-hook events cannot avoid: the dispatch, plus a clock reading at each hook's start
// and at its end.
void clock_floor(benchmark::State& state, std::int64_t n) {
  hookset::HookSet<AlwaysFold> set;
  for (std::int64_t i = 0; i < n; ++i) set.add<AlwaysFold>(fold_hook);
  measure(state, expected_fold(n), [&](std::string_view s) {
    const int result = hookset::sync_wait(set.call<AlwaysFold>(s));
    for (std::int64_t i = 0; i < 2 * n; ++i)
      benchmark::DoNotOptimize(std::chrono::steady_clock::now());
    return result;
  });
}

void stdfunction_fold(benchmark::State& state, std::int64_t n) {
  using Fn = std::function<int(std::string_view, int)>;
  const std::vector<Fn> hooks(static_cast<std::size_t>(n), Fn(int_fold_hook));
  measure(state, expected_fold(n), [&](std::string_view s) { return always_fold(hooks, s); });
}

const bool registered = [] {
  const std::pair<const char*, void (*)(benchmark::State&, std::int64_t)> implementations[] = {
      {"hookset", observer_fold<observed::none, false>},
      {"set_dispatch", observer_fold<observed::per_set, false>},
      {"set_hooks", observer_fold<observed::per_set, true>},
      {"global_dispatch", observer_fold<observed::process_wide, false>},
      {"global_hooks", observer_fold<observed::process_wide, true>},
      {"clock_floor", clock_floor},
      {"stdfunction", stdfunction_fold},
  };
  for (const auto& [impl, fn] : implementations) {
    for (std::int64_t n : {0, 8}) {
      const std::string name = std::string("observer/") + impl + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [fn = fn, n](benchmark::State& state) { fn(state, n); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace hookset_bench
