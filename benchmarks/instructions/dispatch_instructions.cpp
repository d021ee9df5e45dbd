// The instruction-count benchmark's program: runs K dispatches of one scenario and exits.
//
//   dispatch_instructions <scenario> <implementation> <N> <K>
//
// benchmarks/instructions.py runs it under callgrind with K and with 0 and reports
// (instructions(K) - instructions(0)) / K: the instructions of one dispatch, deterministic, the
// set-up, the warm-up and the process's start and exit cancelled out. Scenarios, hook bodies and
// slots are the Google Benchmark programs' (support/common.hpp; the Signals2 and libsigc++ fold
// rows: support/signal_peers.hpp), so both tables measure the same code. `list` prints every
// <scenario> <implementation> pair with its hook counts.
#include "../support/common.hpp"
#include "../support/mini_task.hpp"
#include "../support/signal_peers.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <hookset/hookset.hpp>
#if HOOKSET_BENCH_HAVE_PLUGIN
#include <hookset/plugin.hpp>
#endif
#if HOOKSET_BENCH_HAVE_ASIO
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#endif

namespace hookset_bench {
namespace {

using counts = std::vector<std::int64_t>;
const counts all_counts{0, 1, 8, 64};

// Every dispatch's result goes through here: the compiler cannot drop the work.
int sink = 0;
void keep(int value) { benchmark::DoNotOptimize(sink += value); }
void keep(const std::optional<int>& value) { keep(value ? *value : -1); }

// One dispatch, never inlined into the loop: every implementation is measured as a call site in
// a function of its own, as in an application. (Inlined, the compiler hoists the dispatch's
// frame and set-up out of the loop for some implementations and not for others, depending on
// the size of the code: the counts then move with inlining decisions, not with the work.)
template <class Dispatch>
[[gnu::noinline]] auto dispatch_once(const Dispatch& dispatch, std::string_view s) {
  return dispatch(s);
}
// Every row's lambda - the call site measured - is inlined into dispatch_once, so that each row
// crosses one function boundary per dispatch. (GCC inlines no callee whose frame passes 256
// bytes into a function without a frame of its own - --param large-stack-frame-growth - and
// would leave such a row a tail call more than the others.)
#define MEASURED_CALL_SITE __attribute__((always_inline))

// Runs `dispatch(s)` k times after one warm-up call (which fills hookset's frame pools and any
// lazily initialised state, in the k = 0 run too).
template <class Dispatch>
void repeat(std::int64_t k, const Dispatch& dispatch) {
  keep(dispatch_once(dispatch, opaque_input()));
  for (std::int64_t i = 0; i < k; ++i) keep(dispatch_once(dispatch, opaque_input()));
}

template <class S, class Hook>
hookset::HookSet<S> set_of(std::int64_t n, Hook hook) {
  hookset::HookSet<S> set;
  for (std::int64_t i = 0; i < n; ++i) set.template add<S>(hook);
  return set;
}

template <class S, class Hook>
void hookset_sync(std::int64_t n, std::int64_t k, Hook hook) {
  const auto set = set_of<S>(n, hook);
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return hookset::sync_wait(set.template call<S>(s)); });
}

// ---- synchronous scenarios: hookset and the loop one writes by hand ---------------------------

void direct(std::int64_t, std::int64_t k) {
  repeat(k, [](std::string_view s) MEASURED_CALL_SITE { return AlwaysFold::default_impl(s); });
}

void fold_stdfunction(std::int64_t n, std::int64_t k) {
  const std::vector<std::function<int(std::string_view, int)>> hooks(static_cast<std::size_t>(n),
                                                                     int_fold_hook);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    int last = AlwaysFold::default_impl(s);
    for (const auto& hook : hooks) last = hook(s, last);
    return last;
  });
}

// The time table's always_fold peers: the default beside a signal whose combiner folds the slots'
// contributions (support/signal_peers.hpp). libsigc++ 3 only when it was found.
void fold_signals2(std::int64_t n, std::int64_t k) {
  signals2_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return default_value(s) + signal(s).value_or(0); });
}

#if HOOKSET_HAVE_SIGCXX
void fold_sigcxx(std::int64_t n, std::int64_t k) {
  sigcxx_signal<int, fold_combiner> signal;
  for (std::int64_t i = 0; i < n; ++i) signal.connect(size_hook);
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return default_value(s) + signal(s).value_or(0); });
}
#endif

void fallback_stdfunction(std::int64_t n, std::int64_t k) {
  const std::vector<std::function<int(std::string_view, const std::optional<int>&)>> hooks(
      static_cast<std::size_t>(n), opt_fold_hook);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    if (hooks.empty()) return FallbackFold::default_impl(s);
    std::optional<int> last;
    for (const auto& hook : hooks) last = hook(s, last);
    return *last;
  });
}

void chain_handwritten(std::int64_t n, std::int64_t k) {
  const std::vector<std::function<std::optional<int>(std::string_view)>> hooks(
      static_cast<std::size_t>(n), chain_hook);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    std::optional<int> last = ChainSlot::default_impl(s);
    if (!last.has_value()) return last;
    for (const auto& hook : hooks) {
      last = hook(s);
      if (!last.has_value()) break;
    }
    return last;
  });
}

void aggregate_stdfunction(std::int64_t n, std::int64_t k) {
  const std::vector<std::function<int(std::string_view)>> hooks(static_cast<std::size_t>(n),
                                                                value_hook);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    std::vector<int> outputs;
    outputs.reserve(hooks.size() + 1);
    outputs.push_back(AggregateSlot::default_impl(s));
    for (const auto& hook : hooks) outputs.push_back(hook(s));
    return Sum{}(std::move(outputs));
  });
}

void singleton_stdfunction(std::int64_t n, std::int64_t k) {
  std::function<int(std::string_view)> hook;
  if (n > 0) hook = value_hook;
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return hook ? hook(s) : SingletonSlot::default_impl(s); });
}

// ---- coroutine hooks: K dispatches co_awaited inside one coroutine ----------------------------

hookset::Task<void> coro_loop(const hookset::HookSet<CoroFold>& set, std::int64_t k) {
  keep(co_await set.call<CoroFold>(opaque_input()));
  for (std::int64_t i = 0; i < k; ++i) keep(co_await set.call<CoroFold>(opaque_input()));
}

void coro_hookset(std::int64_t n, std::int64_t k) {
  const auto set = set_of<CoroFold>(n, task_fold_hook);
  hookset::sync_wait(coro_loop(set, k));
}

inline constexpr auto mini_fold_hook = [](std::string_view s, int last) -> mini_task<int> {
  co_return last + static_cast<int>(s.size());
};
using mini_fold_fn = std::function<mini_task<int>(std::string_view, int)>;

mini_task<int> handcoro_dispatch(const std::vector<mini_fold_fn>& hooks, std::string_view s) {
  int last = CoroFold::default_impl(s);
  for (const auto& hook : hooks) last = co_await hook(s, last);
  co_return last;
}

mini_task<void> handcoro_loop(const std::vector<mini_fold_fn>& hooks, std::int64_t k) {
  keep(co_await handcoro_dispatch(hooks, opaque_input()));
  for (std::int64_t i = 0; i < k; ++i) keep(co_await handcoro_dispatch(hooks, opaque_input()));
}

// The hand-written loop inlined into the timed coroutine (no dispatch coroutine of its own):
// the floor of a coroutine loop.
mini_task<void> handcoro_inline_loop(const std::vector<mini_fold_fn>& hooks, std::int64_t k) {
  for (std::int64_t i = 0; i <= k; ++i) {
    const std::string_view s = opaque_input();
    int last = CoroFold::default_impl(s);
    for (const auto& hook : hooks) last = co_await hook(s, last);
    keep(last);
  }
}

void coro_handcoro(std::int64_t n, std::int64_t k) {
  const std::vector<mini_fold_fn> hooks(static_cast<std::size_t>(n), mini_fold_hook);
  handcoro_loop(hooks, k).run_synchronously();
}

void coro_handcoro_inline(std::int64_t n, std::int64_t k) {
  const std::vector<mini_fold_fn> hooks(static_cast<std::size_t>(n), mini_fold_hook);
  handcoro_inline_loop(hooks, k).run_synchronously();
}

// ---- observed dispatch ------------------------------------------------------------------------

struct CountingObserver : hookset::Observer {
  bool hook_events = false;
  std::uint64_t events = 0;
  void on_dispatch_begin(std::string_view, std::uint64_t) override { ++events; }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t, std::exception_ptr) override {
    ++events;
  }
  std::optional<hookset::HookEventSampler> sampler;  // hook events for a sampled fraction
  bool wants_hook_events() const noexcept override {
    return sampler ? sampler->sample() : hook_events;
  }
  void on_hook_begin(const hookset::HookEvent&) override { ++events; }
  void on_hook_end(const hookset::HookEvent&) override { ++events; }
};

enum class watching { none, dispatches, hooks, sampled_hooks };

void observed(std::int64_t n, std::int64_t k, watching what) {
  CountingObserver observer;
  observer.hook_events = what == watching::hooks;
  if (what == watching::sampled_hooks) observer.sampler.emplace(100);  // 1 %
  auto set = set_of<AlwaysFold>(n, fold_hook);
  if (what != watching::none) set.set_observer(&observer);
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return hookset::sync_wait(set.call<AlwaysFold>(s)); });
  keep(static_cast<int>(observer.events));
}

// ---- an interceptor around the dispatch --------------------------------------------------------
// One pass-through interceptor, synchronous or a coroutine; the hand-written peer is a
// std::function middleware around the std::function loop.

enum class interceptor_kind { sync, coroutine };

template <interceptor_kind Kind>
void intercepted(std::int64_t n, std::int64_t k) {
  auto set = set_of<AlwaysFold>(n, fold_hook);
  if constexpr (Kind == interceptor_kind::sync)
    set.intercept<AlwaysFold>([](hookset::Next<AlwaysFold> next, std::string_view s) {
      return hookset::sync_wait(next(s));
    });
  else
    set.intercept<AlwaysFold>(
        [](hookset::Next<AlwaysFold> next, std::string_view s) -> hookset::Task<int> {
          co_return co_await next(s);
        });
  repeat(k, [&](std::string_view s)
                MEASURED_CALL_SITE { return hookset::sync_wait(set.call<AlwaysFold>(s)); });
}

void intercepted_handwritten(std::int64_t n, std::int64_t k) {
  const std::vector<std::function<int(std::string_view, int)>> hooks(static_cast<std::size_t>(n),
                                                                     int_fold_hook);
  const std::function<int(std::string_view)> rest = [&](std::string_view s) {
    int last = AlwaysFold::default_impl(s);
    for (const auto& hook : hooks) last = hook(s, last);
    return last;
  };
  const std::function<int(const std::function<int(std::string_view)>&, std::string_view)>
      middleware = [](const std::function<int(std::string_view)>& next, std::string_view s) {
        return next(s);
      };
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE { return middleware(rest, s); });
}

// ---- a dispatch awaited inside an asio::awaitable ---------------------------------------------

#if HOOKSET_BENCH_HAVE_ASIO
namespace net = boost::asio;

enum class asio_way { await_dispatch, async_call, sync_then_post };

template <asio_way Way>
net::awaitable<void> asio_loop(const hookset::HookSet<AlwaysFold>& set, std::int64_t k) {
  for (std::int64_t i = 0; i <= k; ++i) {
    const std::string_view s = opaque_input();
    if constexpr (Way == asio_way::await_dispatch) {
      keep(co_await set.call<AlwaysFold>(s));
    } else if constexpr (Way == asio_way::async_call) {
      keep(co_await hookset::asio::async_call(set.call<AlwaysFold>(s), net::use_awaitable));
    } else {
      keep(hookset::sync_wait(set.call<AlwaysFold>(s)));
      co_await net::post(net::use_awaitable);
    }
  }
}

template <asio_way Way>
void asio_await(std::int64_t n, std::int64_t k) {
  const auto set = set_of<AlwaysFold>(n, fold_hook);
  net::io_context io(1);
  net::co_spawn(io, asio_loop<Way>(set, k), net::detached);
  io.run();
}
#endif

// ---- keyed slots: an exact-key dispatch with 1,000 keys registered, and the same hooks on an
// ordinary slot of the same signature ------------------------------------------------------------

struct KeyedFold : hookset::Slot<int(std::string_view s, std::string_view tool), hookset::Always,
                                 hookset::Keyed> {
  static int default_impl(std::string_view s, std::string_view) noexcept {
    return default_value(s);
  }
};
struct UnkeyedFold
    : hookset::Slot<int(std::string_view s, std::string_view tool), hookset::Always> {
  static int default_impl(std::string_view s, std::string_view) noexcept {
    return default_value(s);
  }
};
constexpr auto keyed_fold_hook =
    [](std::string_view s, std::string_view, std::optional<int> last) noexcept {
  return last.value_or(0) + static_cast<int>(s.size());
};
const std::string keyed_dispatched = "tool_0500";

std::string_view opaque_tool() {
  std::string_view tool = keyed_dispatched;
  benchmark::DoNotOptimize(tool);
  return tool;
}

void keyed_hookset(std::int64_t n, std::int64_t k) {
  hookset::HookSet<KeyedFold> set;
  for (int i = 0; i < 1000; ++i) {
    std::string digits = std::to_string(i);
    const std::string key = "tool_" + std::string(4 - digits.size(), '0') + digits;
    const std::int64_t hooks = key == keyed_dispatched ? n : 1;
    for (std::int64_t j = 0; j < hooks; ++j) set.add<KeyedFold>(hookset::key(key), keyed_fold_hook);
  }
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    return hookset::sync_wait(set.call<KeyedFold>(s, opaque_tool()));
  });
}

// A key without an exact registration in a slot with a matcher: the dispatch runs a list
// filtered for the key (built per dispatch: what matched, here the N prefix hooks).
void keyed_filtered(std::int64_t n, std::int64_t k) {
  hookset::HookSet<KeyedFold> set;
  for (int i = 0; i < 1000; ++i) {
    std::string digits = std::to_string(i);
    set.add<KeyedFold>(hookset::key("tool_" + std::string(4 - digits.size(), '0') + digits),
                       keyed_fold_hook);
  }
  for (std::int64_t j = 0; j < n; ++j)
    set.add<KeyedFold>(hookset::prefix("tool_"), keyed_fold_hook);
  static const std::string unregistered = "tool_x";
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    std::string_view tool = unregistered;
    benchmark::DoNotOptimize(tool);
    return hookset::sync_wait(set.call<KeyedFold>(s, tool));
  });
}

// The hand-written peer of an exact-key dispatch: a hash map from each key to its hooks, looked
// up with the dispatched string_view (a transparent hash: no std::string made), then the loop.
struct key_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept {
    return std::hash<std::string_view>{}(key);
  }
};

void keyed_handwritten(std::int64_t n, std::int64_t k) {
  std::unordered_map<std::string, std::vector<std::function<int(std::string_view, int)>>, key_hash,
                     std::equal_to<>>
      hooks;
  for (int i = 0; i < 1000; ++i) {
    std::string digits = std::to_string(i);
    std::string key = "tool_" + std::string(4 - digits.size(), '0') + digits;
    const std::int64_t count = key == keyed_dispatched ? n : 1;
    if (count > 0) hooks[std::move(key)].assign(static_cast<std::size_t>(count), int_fold_hook);
  }
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    const std::string_view tool = opaque_tool();
    int last = KeyedFold::default_impl(s, tool);
    if (const auto found = hooks.find(tool); found != hooks.end())
      for (const auto& hook : found->second) last = hook(s, last);
    return last;
  });
}

void keyed_unkeyed(std::int64_t n, std::int64_t k) {
  const auto set = set_of<UnkeyedFold>(n, keyed_fold_hook);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    return hookset::sync_wait(set.call<UnkeyedFold>(s, opaque_tool()));
  });
}

// ---- verdicts: a VerdictSlot against a plain Aggregate slot joining the same verdicts ---------

hookset::Verdict<> verdict_of(std::string_view s) noexcept {
  return {s.size() > 1000 ? hookset::Permission::deny : hookset::Permission::allow, {}};
}
struct VerdictSlot : hookset::VerdictSlot<hookset::Verdict<>(std::string_view), hookset::Always> {
  static hookset::Verdict<> default_impl(std::string_view s) noexcept { return verdict_of(s); }
};
struct JoinPlain {
  hookset::Permission operator()(std::vector<hookset::Verdict<>> verdicts) const noexcept {
    hookset::Permission joined = hookset::Permission::allow;
    for (const auto& v : verdicts) joined = std::max(joined, v.decision);
    return joined;
  }
};
struct PlainVerdicts
    : hookset::Slot<hookset::Verdict<>(std::string_view), hookset::Always,
                    hookset::Aggregate<JoinPlain>, hookset::Output<hookset::Permission>> {
  static hookset::Verdict<> default_impl(std::string_view s) noexcept { return verdict_of(s); }
};
void verdict_hookset(std::int64_t n, std::int64_t k) {
  const auto set = set_of<VerdictSlot>(n, verdict_of);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    return static_cast<int>(hookset::sync_wait(set.call<VerdictSlot>(s)).decision);
  });
}
void verdict_aggregate(std::int64_t n, std::int64_t k) {
  const auto set = set_of<PlainVerdicts>(n, verdict_of);
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    return static_cast<int>(hookset::sync_wait(set.call<PlainVerdicts>(s)));
  });
}

// ---- a plugin's hooks --------------------------------------------------------------------------

#if HOOKSET_BENCH_HAVE_PLUGIN
// The `fold hookset` rows' hooks registered by a plugin (instructions/fold_plugin.cpp), loaded
// into a PluginHost; dispatched on its current version, as the other rows dispatch their set.
long plugin_hooks = 0;

void fold_plugin(std::int64_t n, std::int64_t k) {
  plugin_hooks = static_cast<long>(n);
  hookset::PluginHost<hookset::HookSet<AlwaysFold>> host;
  host.load(HOOKSET_BENCH_FOLD_PLUGIN);
  const auto version = host.current();
  repeat(k, [&](std::string_view s) MEASURED_CALL_SITE {
    return hookset::sync_wait(version->template call<AlwaysFold>(s));
  });
}
#endif

// ---- the table of scenarios -------------------------------------------------------------------

struct scenario {
  const char* name;
  const char* implementation;
  counts hook_counts;
  void (*run)(std::int64_t n, std::int64_t k);
};

const scenario scenarios[] = {
    {"fold", "direct", {0}, direct},
    {"fold", "hookset", all_counts,
     [](std::int64_t n, std::int64_t k) { hookset_sync<AlwaysFold>(n, k, fold_hook); }},
    {"fold", "stdfunction", all_counts, fold_stdfunction},
#if HOOKSET_BENCH_HAVE_PLUGIN
    {"fold", "plugin", {1, 8}, fold_plugin},
#endif
    {"fold", "signals2", all_counts, fold_signals2},
#if HOOKSET_HAVE_SIGCXX
    {"fold", "sigcxx", all_counts, fold_sigcxx},
#endif
    {"fallback", "hookset", all_counts,
     [](std::int64_t n, std::int64_t k) { hookset_sync<FallbackFold>(n, k, fold_hook); }},
    {"fallback", "stdfunction", all_counts, fallback_stdfunction},
    {"chain", "hookset", all_counts,
     [](std::int64_t n, std::int64_t k) { hookset_sync<ChainSlot>(n, k, chain_hook); }},
    {"chain", "handwritten", all_counts, chain_handwritten},
    {"aggregate", "hookset", all_counts,
     [](std::int64_t n, std::int64_t k) { hookset_sync<AggregateSlot>(n, k, value_hook); }},
    {"aggregate", "stdfunction", all_counts, aggregate_stdfunction},
    {"verdict", "hookset", {0, 8}, verdict_hookset},
    {"verdict", "aggregate", {0, 8}, verdict_aggregate},
    {"singleton",
     "hookset",
     {0, 1},
     [](std::int64_t n, std::int64_t k) { hookset_sync<SingletonSlot>(n, k, value_hook); }},
    {"singleton", "stdfunction", {0, 1}, singleton_stdfunction},
    {"keyed", "hookset", {0, 1, 8}, keyed_hookset},
    {"keyed", "unkeyed", {0, 1, 8}, keyed_unkeyed},
    {"keyed", "filtered", {1, 8}, keyed_filtered},
    {"keyed", "handwritten", {0, 1, 8}, keyed_handwritten},
    {"coro", "hookset", all_counts, coro_hookset},
    {"coro", "handcoro", all_counts, coro_handcoro},
    {"coro", "handcoro_inline", all_counts, coro_handcoro_inline},
    {"observed",
     "none",
     {8},
     [](std::int64_t n, std::int64_t k) { observed(n, k, watching::none); }},
    {"observed",
     "dispatch_events",
     {8},
     [](std::int64_t n, std::int64_t k) { observed(n, k, watching::dispatches); }},
    {"observed",
     "hook_events",
     {8},
     [](std::int64_t n, std::int64_t k) { observed(n, k, watching::hooks); }},
    {"observed",
     "hook_events_1pct",
     {8},
     [](std::int64_t n, std::int64_t k) { observed(n, k, watching::sampled_hooks); }},
    {"intercepted", "sync", {0, 8}, intercepted<interceptor_kind::sync>},
    {"intercepted", "coroutine", {0, 8}, intercepted<interceptor_kind::coroutine>},
    {"intercepted", "handwritten", {0, 8}, intercepted_handwritten},
#if HOOKSET_BENCH_HAVE_ASIO
    {"asio_await", "hookset", {0, 8}, asio_await<asio_way::await_dispatch>},
    {"asio_await", "async_call", {0, 8}, asio_await<asio_way::async_call>},
    {"asio_await", "sync_post", {0, 8}, asio_await<asio_way::sync_then_post>},
#endif
};

}  // namespace
}  // namespace hookset_bench

#if HOOKSET_BENCH_HAVE_PLUGIN
extern "C" __attribute__((visibility("default"))) long hookset_bench_plugin_hooks() {
  return hookset_bench::plugin_hooks;
}
#endif

int main(int argc, char** argv) {
  using namespace hookset_bench;
  if (argc == 2 && std::string_view(argv[1]) == "list") {
    for (const scenario& s : scenarios) {
      std::printf("%s %s", s.name, s.implementation);
      for (std::int64_t n : s.hook_counts) std::printf(" %lld", static_cast<long long>(n));
      std::printf("\n");
    }
    return 0;
  }
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <scenario> <implementation> <N> <K> | list\n", argv[0]);
    return 2;
  }
  const std::int64_t n = std::atoll(argv[3]);
  const std::int64_t k = std::atoll(argv[4]);
  for (const scenario& s : scenarios) {
    if (std::string_view(argv[1]) == s.name && std::string_view(argv[2]) == s.implementation) {
      s.run(n, k);
      return 0;
    }
  }
  std::fprintf(stderr, "unknown scenario %s %s\n", argv[1], argv[2]);
  return 2;
}
