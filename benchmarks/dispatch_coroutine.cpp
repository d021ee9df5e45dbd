// Coroutine hooks, dispatched from inside a coroutine, N = 0, 1, 8, 64:
//   coro  Always fold whose hooks are coroutines returning hookset::Task<int>
//   mix   Always fold whose hooks alternate: coroutine (even i) and synchronous (odd i)
// Each benchmark is one coroutine that runs the whole timed loop (`for (auto _ : state)
// co_await ...`), driven by one sync_wait, so a dispatch's cost is not sync_wait's setup.
// The peer (`handcoro`) is the same loop written by hand inside one coroutine, co_awaiting
// std::function hooks that return a minimal lazy task (support/mini_task.hpp) whose frames come
// from the default allocator.
#include "support/alloc_counter.hpp"
#include "support/common.hpp"
#include "support/mini_task.hpp"

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

// The peer's hooks: the same arithmetic as task_fold_hook / fold_hook, with an int `last`.
inline constexpr auto mini_fold_hook = [](std::string_view s, int last) -> mini_task<int> {
  co_return last + static_cast<int>(s.size());
};
using mini_fold_fn = std::function<mini_task<int>(std::string_view, int)>;
using sync_fold_fn = std::function<int(std::string_view, int)>;

// The timed loop for hookset: `dispatch(s)` returns the awaitable of one dispatch. The first
// dispatch must produce `expected`; it also fills the frame pool, so the loop measures the
// steady state.
template <class Dispatch>
hookset::Task<void> hookset_loop(benchmark::State& state, int expected, Dispatch dispatch) {
  if (co_await dispatch(opaque_input()) != expected) {
    state.SkipWithError("wrong result: this implementation does not do the scenario's work");
    co_return;
  }
  alloc_meter meter;
  for (auto _ : state) {
    const int result = co_await dispatch(opaque_input());
    benchmark::DoNotOptimize(result);
  }
  meter.report(state);
  state.SetItemsProcessed(state.iterations());
}

template <class S>
void run_hookset(benchmark::State& state, const hookset::HookSet<S>& set, int expected) {
  hookset::sync_wait(hookset_loop(state, expected,
                                  [&set](std::string_view s) { return set.template call<S>(s); }));
}

// ---- coro
// ---------------------------------------------------------------------------------------------

void coro_hookset(benchmark::State& state, std::int64_t n) {
  hookset::HookSet<CoroFold> set;
  for (std::int64_t i = 0; i < n; ++i) set.add<CoroFold>(task_fold_hook);
  run_hookset(state, set, expected_fold(n));
}

// The hand-written peer: the dispatch loop written out inside the timed coroutine, so a
// dispatch costs the hooks' frames and nothing else. (Nothing to warm up: every frame comes
// from operator new.)
mini_task<void> handcoro_fold_loop(benchmark::State& state, const std::vector<mini_fold_fn>& hooks,
                                   int expected) {
  {
    const std::string_view s = opaque_input();
    int last = CoroFold::default_impl(s);
    for (const auto& hook : hooks) last = co_await hook(s, last);
    if (last != expected) {
      state.SkipWithError("wrong result: this implementation does not do the scenario's work");
      co_return;
    }
  }
  alloc_meter meter;
  for (auto _ : state) {
    const std::string_view s = opaque_input();
    int last = CoroFold::default_impl(s);
    for (const auto& hook : hooks) last = co_await hook(s, last);
    benchmark::DoNotOptimize(last);
  }
  meter.report(state);
  state.SetItemsProcessed(state.iterations());
}

void coro_handcoro(benchmark::State& state, std::int64_t n) {
  const std::vector<mini_fold_fn> hooks(static_cast<std::size_t>(n), mini_fold_fn(mini_fold_hook));
  handcoro_fold_loop(state, hooks, expected_fold(n)).run_synchronously();
}

// ---- mix
// ----------------------------------------------------------------------------------------------

void mix_hookset(benchmark::State& state, std::int64_t n) {
  hookset::HookSet<MixFold> set;
  for (std::int64_t i = 0; i < n; ++i) {
    if (mix_hook_is_async(i)) set.add<MixFold>(task_fold_hook);
    else set.add<MixFold>(fold_hook);
  }
  run_hookset(state, set, expected_fold(n));
}

// A hand-written mixed list: each entry is either synchronous or a coroutine.
struct mix_entry {
  sync_fold_fn sync;
  mini_fold_fn async;
};

mini_task<void> handcoro_mix_loop(benchmark::State& state, const std::vector<mix_entry>& hooks,
                                  int expected) {
  {
    const std::string_view s = opaque_input();
    int last = MixFold::default_impl(s);
    for (const auto& hook : hooks) {
      if (hook.sync) last = hook.sync(s, last);
      else last = co_await hook.async(s, last);
    }
    if (last != expected) {
      state.SkipWithError("wrong result: this implementation does not do the scenario's work");
      co_return;
    }
  }
  alloc_meter meter;
  for (auto _ : state) {
    const std::string_view s = opaque_input();
    int last = MixFold::default_impl(s);
    for (const auto& hook : hooks) {
      if (hook.sync) last = hook.sync(s, last);
      else last = co_await hook.async(s, last);
    }
    benchmark::DoNotOptimize(last);
  }
  meter.report(state);
  state.SetItemsProcessed(state.iterations());
}

void mix_handcoro(benchmark::State& state, std::int64_t n) {
  std::vector<mix_entry> hooks;
  for (std::int64_t i = 0; i < n; ++i) {
    if (mix_hook_is_async(i)) hooks.push_back({{}, mini_fold_hook});
    else hooks.push_back({int_fold_hook, {}});
  }
  handcoro_mix_loop(state, hooks, expected_fold(n)).run_synchronously();
}

const bool registered = [] {
  register_scenario("coro", "hookset", coro_hookset);
  register_scenario("coro", "handcoro", coro_handcoro);
  register_scenario("mix", "hookset", mix_hookset);
  register_scenario("mix", "handcoro", mix_handcoro);
  return true;
}();

}  // namespace
}  // namespace hookset_bench
