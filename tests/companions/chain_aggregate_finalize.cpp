// Companions (docs/semantics.md, "Dispatch" table, rows with Chain / Aggregate / Finalize, and the
// companion paragraph): one test case per row and case, Output<T>, asynchronous companions,
// configured companions, companions that cannot be default-constructed, companion exceptions.
//
// The default, every hook and every companion call append to one log (companions with the
// input they were given), so each test checks the full sequence of calls as well as the result.
#include "hookset_catch.hpp"

#include "test_support.hpp"

#include <atomic>
#include <coroutine>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

using hookset::Flow;
using test_support::fresh_log;
using test_support::Log;
using test_support::note;

std::string list(const std::vector<int>& values) {
  std::string text = "{";
  for (std::size_t i = 0; i < values.size(); ++i)
    text += (i ? "," : "") + std::to_string(values[i]);
  return text + "}";
}

int sum(const std::vector<int>& values) {
  int total = 0;
  for (int v : values) total += v;
  return total;
}

// ---- companions
// ----------------------------------------------------------------------------------

// Chain: Break on a negative output.
struct BreakOnNegative {
  Flow operator()(const int& output) const {
    note("chain(" + std::to_string(output) + ")");
    return output < 0 ? Flow::Break : Flow::Continue;
  }
};
// Aggregate: the sum.
struct Sum {
  int operator()(std::vector<int> outputs) const {
    note("aggregate" + list(outputs));
    return sum(outputs);
  }
};
// Aggregate with Output<std::string>: the list as text.
struct Join {
  std::string operator()(std::vector<int> outputs) const {
    note("join" + list(outputs));
    return list(outputs);
  }
};
// Finalize: adds 1000.
struct Plus1000 {
  int operator()(int result) const {
    note("finalize(" + std::to_string(result) + ")");
    return result + 1000;
  }
};
// Finalize with Output<std::string>.
struct Describe {
  std::string operator()(int result) const {
    note("describe(" + std::to_string(result) + ")");
    return "result " + std::to_string(result);
  }
};

// Asynchronous versions.
struct AsyncBreakOnNegative {
  hookset::Task<Flow> operator()(const int& output) const {
    note("async chain(" + std::to_string(output) + ")");
    co_return output < 0 ? Flow::Break : Flow::Continue;
  }
};
struct AsyncSum {
  hookset::Task<int> operator()(std::vector<int> outputs) const {
    note("async aggregate" + list(outputs));
    co_return sum(outputs);
  }
};
struct AsyncJoin {
  hookset::Task<std::string> operator()(std::vector<int> outputs) const {
    note("async join" + list(outputs));
    co_return list(outputs);
  }
};
struct AsyncDescribe {
  hookset::Task<std::string> operator()(int result) const {
    note("async describe(" + std::to_string(result) + ")");
    co_return "result " + std::to_string(result);
  }
};

using ManualEvent = test_support::CrossThreadEvent;
ManualEvent* companion_gate = nullptr;

// An async chain that really suspends (on companion_gate) before answering.
struct SuspendingChain {
  hookset::Task<Flow> operator()(const int& output) const {
    note("suspending chain start(" + std::to_string(output) + ")");
    co_await *companion_gate;
    note("suspending chain end(" + std::to_string(output) + ")");
    co_return output < 0 ? Flow::Break : Flow::Continue;
  }
};

// Configurable companions: state given in the constructor, defaults when default-constructed.
struct AtLeast {
  int limit = 1000;
  AtLeast() = default;
  explicit AtLeast(int l) : limit(l) {}
  Flow operator()(const int& output) const {
    note("at least " + std::to_string(limit) + "(" + std::to_string(output) + ")");
    return output >= limit ? Flow::Break : Flow::Continue;
  }
};
struct Weighted {
  int weight = 1;
  Weighted() = default;
  explicit Weighted(int w) : weight(w) {}
  int operator()(std::vector<int> outputs) const {
    note("weighted " + std::to_string(weight) + list(outputs));
    return sum(outputs) * weight;
  }
};
struct Offset {
  int offset = 0;
  Offset() = default;
  explicit Offset(int o) : offset(o) {}
  int operator()(int result) const {
    note("offset " + std::to_string(offset) + "(" + std::to_string(result) + ")");
    return result + offset;
  }
};

// Counts its default constructions.
struct CountedChain {
  static inline int default_constructions = 0;
  int tag = 0;
  CountedChain() { ++default_constructions; }
  explicit CountedChain(int t) : tag(t) {}
  Flow operator()(const int& output) const {
    note("counted chain " + std::to_string(tag) + "(" + std::to_string(output) + ")");
    return Flow::Continue;
  }
};

// Companions without a default constructor: they must be configured.
struct NeedsLimit {
  int limit;
  explicit NeedsLimit(int l) : limit(l) {}
  Flow operator()(const int& output) const {
    note("needs limit " + std::to_string(limit) + "(" + std::to_string(output) + ")");
    return output >= limit ? Flow::Break : Flow::Continue;
  }
};
struct NeedsWeight {
  int weight;
  explicit NeedsWeight(int w) : weight(w) {}
  int operator()(std::vector<int> outputs) const {
    note("needs weight " + std::to_string(weight) + list(outputs));
    return sum(outputs) * weight;
  }
};
struct NeedsOffset {
  int offset;
  explicit NeedsOffset(int o) : offset(o) {}
  int operator()(int result) const {
    note("needs offset " + std::to_string(offset) + "(" + std::to_string(result) + ")");
    return result + offset;
  }
};

// Companions that throw on a given input.
struct ThrowingChain {
  Flow operator()(const int& output) const {
    note("throwing chain(" + std::to_string(output) + ")");
    if (output == 13) throw std::runtime_error("chain failed");
    return Flow::Continue;
  }
};
struct ThrowingAggregate {
  int operator()(std::vector<int> outputs) const {
    note("throwing aggregate" + list(outputs));
    throw std::runtime_error("aggregate failed");
  }
};
struct ThrowingFinalize {
  hookset::Task<int> operator()(int result) const {
    note("throwing finalize(" + std::to_string(result) + ")");
    throw std::runtime_error("finalize failed");
    co_return 0;
  }
};

// ---- slots
// -----------------------------------------------------------------------------------------

// Every slot here is int(int) with a default that logs and returns its argument.
template <class... Options>
struct IntSlot : hookset::Slot<int(int), Options...> {
  static int default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    return x;
  }
};
template <class... Options>
struct AsyncIntSlot : hookset::Slot<int(int), Options...> {
  static hookset::Task<int> default_impl(int x) {
    note("async default(" + std::to_string(x) + ")");
    co_return x;
  }
};

using hookset::Aggregate;
using hookset::Always;
using hookset::Chain;
using hookset::Fallback;
using hookset::Finalize;
using hookset::Output;

struct AlwaysChain : IntSlot<Always, Chain<BreakOnNegative>> {};
struct AlwaysAggregate : IntSlot<Always, Aggregate<Sum>> {};
struct AlwaysChainAggregate : IntSlot<Always, Chain<BreakOnNegative>, Aggregate<Sum>> {};
struct FallbackChain : IntSlot<Fallback, Chain<BreakOnNegative>> {};
struct FallbackAggregate : IntSlot<Fallback, Aggregate<Sum>> {};
struct FallbackChainAggregate : IntSlot<Fallback, Chain<BreakOnNegative>, Aggregate<Sum>> {};

struct AlwaysAggregateText : IntSlot<Always, Aggregate<Join>, Output<std::string>> {};
struct FallbackAggregateText : IntSlot<Fallback, Aggregate<Join>, Output<std::string>> {};
struct FallbackChainAggregateText
    : IntSlot<Fallback, Chain<BreakOnNegative>, Aggregate<Join>, Output<std::string>> {};

struct AlwaysFinalize : IntSlot<Always, Finalize<Plus1000>> {};
struct FallbackFinalize : IntSlot<Fallback, Finalize<Plus1000>> {};
struct AlwaysChainFinalize : IntSlot<Always, Chain<BreakOnNegative>, Finalize<Plus1000>> {};
struct FallbackChainFinalize : IntSlot<Fallback, Chain<BreakOnNegative>, Finalize<Plus1000>> {};
struct AlwaysFinalizeText : IntSlot<Always, Finalize<Describe>, Output<std::string>> {};

struct AsyncAlwaysChain : AsyncIntSlot<Always, Chain<AsyncBreakOnNegative>> {};
struct AsyncAlwaysAggregate : AsyncIntSlot<Always, Aggregate<AsyncSum>> {};
struct AsyncFallbackChainAggregateText : AsyncIntSlot<Fallback, Chain<AsyncBreakOnNegative>,
                                                      Aggregate<AsyncJoin>, Output<std::string>> {};
struct AsyncFallbackChainFinalizeText
    : IntSlot<Fallback, Chain<AsyncBreakOnNegative>, Finalize<AsyncDescribe>, Output<std::string>> {
};
struct SuspendingChainSlot : IntSlot<Always, Chain<SuspendingChain>> {};

struct ConfiguredChain : IntSlot<Fallback, Chain<AtLeast>> {};
struct ConfiguredAggregate : IntSlot<Always, Aggregate<Weighted>> {};
struct ConfiguredFinalize : IntSlot<Fallback, Chain<AtLeast>, Finalize<Offset>> {};
struct CountedChainSlot : IntSlot<Always, Chain<CountedChain>> {};

struct NeedsChainConfig : IntSlot<Always, Chain<NeedsLimit>> {};
struct NeedsAggregateConfig : IntSlot<Fallback, Aggregate<NeedsWeight>> {};
struct NeedsFinalizeConfig : IntSlot<Always, Finalize<NeedsOffset>> {};
struct NamedNeedsConfig : IntSlot<Always, Chain<NeedsLimit>> {
  static constexpr std::string_view name = "policy.needs-limit";
};

struct ChainThrows : IntSlot<Always, Chain<ThrowingChain>> {};
struct AggregateThrows : IntSlot<Always, Aggregate<ThrowingAggregate>> {};
struct FinalizeThrows : IntSlot<Fallback, Finalize<ThrowingFinalize>> {};

using Set = hookset::HookSet<
    AlwaysChain, AlwaysAggregate, AlwaysChainAggregate, FallbackChain, FallbackAggregate,
    FallbackChainAggregate, AlwaysAggregateText, FallbackAggregateText, FallbackChainAggregateText,
    AlwaysFinalize, FallbackFinalize, AlwaysChainFinalize, FallbackChainFinalize,
    AlwaysFinalizeText, AsyncAlwaysChain, AsyncAlwaysAggregate, AsyncFallbackChainAggregateText,
    AsyncFallbackChainFinalizeText, SuspendingChainSlot, ConfiguredChain, ConfiguredAggregate,
    ConfiguredFinalize, CountedChainSlot, NeedsChainConfig, NeedsAggregateConfig,
    NeedsFinalizeConfig, NamedNeedsConfig, ChainThrows, AggregateThrows, FinalizeThrows>;

// ---- hooks
// -----------------------------------------------------------------------------------------

// Hooks of a non-fold slot: log their name and argument, return `output` (test_support::plain_hook
// is the synchronous one).
using test_support::plain_hook;
auto async_hook(std::string name, int output) {
  return [name, output](int x) -> hookset::Task<int> {
    note(name + "(" + std::to_string(x) + ")");
    co_return output;
  };
}
// A hook of a fold slot (Finalize without Chain/Aggregate): last*10 + tag, or tag.
using test_support::fold_hook;

struct WarningRecorder : hookset::Observer {
  std::vector<std::string> warnings;
  void on_warning(std::string_view slot, std::string_view message) override {
    warnings.push_back(std::string(slot) + ": " + std::string(message));
  }
};
using test_support::ScopedObserver;

}  // namespace

using hookset::sync_wait;

// ================================================================================================
// Always + Chain
// ================================================================================================

TEST_CASE("Always+Chain, no hooks: the default is returned and the chain is invoked on it") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysChain>(5)) == 5);
  REQUIRE(log == Log{"default(5)", "chain(5)"});
}

TEST_CASE("Always+Chain, no hooks: a Break verdict on the default does not change the result") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysChain>(-5)) == -5);
  REQUIRE(log == Log{"default(-5)", "chain(-5)"});
}

TEST_CASE("Always+Chain: Break on the default returns it and no hook runs") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChain>(plain_hook("h1", 1));
  set.add<AlwaysChain>(plain_hook("h2", 2));
  REQUIRE(sync_wait(set.call<AlwaysChain>(-1)) == -1);
  REQUIRE(log == Log{"default(-1)", "chain(-1)"});
}

TEST_CASE("Always+Chain: hooks run without last after the default, the first Break wins") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChain>(plain_hook("h1", 10));
  set.add<AlwaysChain>(plain_hook("h2", -20));
  set.add<AlwaysChain>(plain_hook("h3", -30));
  REQUIRE(sync_wait(set.call<AlwaysChain>(1)) == -20);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(-20)"});
}

TEST_CASE("Always+Chain: if every output continues, the last hook's output is the result") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChain>(plain_hook("h1", 10));
  set.add<AlwaysChain>(plain_hook("h2", 20));
  set.add<AlwaysChain>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<AlwaysChain>(1)) == 30);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(20)", "h3(1)",
                     "chain(30)"});
}

TEST_CASE("Always+Chain: a Break from the last hook is returned like any other") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChain>(plain_hook("h1", 10));
  set.add<AlwaysChain>(plain_hook("h2", -2));
  REQUIRE(sync_wait(set.call<AlwaysChain>(1)) == -2);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(-2)"});
}

// ================================================================================================
// Always + Aggregate
// ================================================================================================

TEST_CASE("Always+Aggregate, no hooks: aggregate({default})") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysAggregate>(7)) == 7);
  REQUIRE(log == Log{"default(7)", "aggregate{7}"});
}

TEST_CASE("Always+Aggregate: aggregate({default, h1, h2, ...}), hooks without last") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysAggregate>(plain_hook("h1", 10));
  set.add<AlwaysAggregate>(plain_hook("h2", 20), hookset::Priority{-1});
  set.add<AlwaysAggregate>(plain_hook("h3", -300));
  REQUIRE(sync_wait(set.call<AlwaysAggregate>(1)) == 1 + 20 + 10 - 300);
  REQUIRE(log == Log{"default(1)", "h2(1)", "h1(1)", "h3(1)", "aggregate{1,20,10,-300}"});
}

// ================================================================================================
// Always + Chain + Aggregate
// ================================================================================================

TEST_CASE("Always+Chain+Aggregate, no hooks: aggregate({default})") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysChainAggregate>(3)) == 3);
  REQUIRE(log == Log{"default(3)", "chain(3)", "aggregate{3}"});
}

TEST_CASE("Always+Chain+Aggregate: every output continues: aggregate({default, h1, h2, h3})") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainAggregate>(plain_hook("h1", 10));
  set.add<AlwaysChainAggregate>(plain_hook("h2", 20));
  set.add<AlwaysChainAggregate>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<AlwaysChainAggregate>(1)) == 61);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(20)", "h3(1)",
                     "chain(30)", "aggregate{1,10,20,30}"});
}

TEST_CASE(
    "Always+Chain+Aggregate: on Break the breaking output is added and the outputs so far "
    "aggregated") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainAggregate>(plain_hook("h1", 10));
  set.add<AlwaysChainAggregate>(plain_hook("h2", -20));
  set.add<AlwaysChainAggregate>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<AlwaysChainAggregate>(1)) == -9);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(-20)",
                     "aggregate{1,10,-20}"});
}

TEST_CASE(
    "Always+Chain+Aggregate: Break on the default aggregates just the default, no hook runs") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainAggregate>(plain_hook("h1", 10));
  REQUIRE(sync_wait(set.call<AlwaysChainAggregate>(-4)) == -4);
  REQUIRE(log == Log{"default(-4)", "chain(-4)", "aggregate{-4}"});
}

// ================================================================================================
// Fallback + Chain
// ================================================================================================

TEST_CASE("Fallback+Chain, no hooks: the default is returned without being chain-checked") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackChain>(8)) == 8);
  REQUIRE(sync_wait(set.call<FallbackChain>(-8)) == -8);
  REQUIRE(log == Log{"default(8)", "default(-8)"});
}

TEST_CASE("Fallback+Chain: hooks run without last, the first Break wins, the default never runs") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChain>(plain_hook("h1", 10));
  set.add<FallbackChain>(plain_hook("h2", -20));
  set.add<FallbackChain>(plain_hook("h3", -30));
  REQUIRE(sync_wait(set.call<FallbackChain>(1)) == -20);
  REQUIRE(log == Log{"h1(1)", "chain(10)", "h2(1)", "chain(-20)"});
}

TEST_CASE("Fallback+Chain: a Break from the first hook stops at once") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChain>(plain_hook("h1", -1));
  set.add<FallbackChain>(plain_hook("h2", 2));
  REQUIRE(sync_wait(set.call<FallbackChain>(5)) == -1);
  REQUIRE(log == Log{"h1(5)", "chain(-1)"});
}

TEST_CASE(
    "Fallback+Chain: if every hook continues, the default runs at the end and its output is "
    "returned") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChain>(plain_hook("h1", 10));
  set.add<FallbackChain>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<FallbackChain>(4)) == 4);
  REQUIRE(log == Log{"h1(4)", "chain(10)", "h2(4)", "chain(20)", "default(4)"});
}

// ================================================================================================
// Fallback + Aggregate
// ================================================================================================

TEST_CASE(
    "Fallback+Aggregate, no hooks: the default is returned directly, the aggregate is not called") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackAggregate>(6)) == 6);
  REQUIRE(log == Log{"default(6)"});
}

TEST_CASE("Fallback+Aggregate with Output<T>, no hooks: aggregate({default})") {
  Log& log = fresh_log();
  const Set set;
  STATIC_REQUIRE(
      std::is_same_v<decltype(sync_wait(set.call<FallbackAggregateText>(6))), std::string>);
  REQUIRE(sync_wait(set.call<FallbackAggregateText>(6)) == "{6}");
  REQUIRE(log == Log{"default(6)", "join{6}"});
}

TEST_CASE("Fallback+Aggregate: aggregate({h1, h2, ...}), the default excluded and not run") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackAggregate>(plain_hook("h1", 10));
  set.add<FallbackAggregate>(plain_hook("h2", -20));
  set.add<FallbackAggregate>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<FallbackAggregate>(1)) == 20);
  REQUIRE(log == Log{"h1(1)", "h2(1)", "h3(1)", "aggregate{10,-20,30}"});
}

TEST_CASE("Fallback+Aggregate with Output<T> and hooks: aggregate({h1, h2}), default excluded") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackAggregateText>(plain_hook("h1", 10));
  set.add<FallbackAggregateText>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<FallbackAggregateText>(1)) == "{10,20}");
  REQUIRE(log == Log{"h1(1)", "h2(1)", "join{10,20}"});
}

// ================================================================================================
// Fallback + Chain + Aggregate
// ================================================================================================

TEST_CASE(
    "Fallback+Chain+Aggregate, no hooks: the default returned directly, neither chain nor "
    "aggregate called") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackChainAggregate>(-3)) == -3);
  REQUIRE(log == Log{"default(-3)"});
}

TEST_CASE("Fallback+Chain+Aggregate with Output<T>, no hooks: aggregate({default}), no chain") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackChainAggregateText>(-3)) == "{-3}");
  REQUIRE(log == Log{"default(-3)", "join{-3}"});
}

TEST_CASE(
    "Fallback+Chain+Aggregate: on Break, aggregate(outputs so far), later hooks and default do not "
    "run") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainAggregate>(plain_hook("h1", 10));
  set.add<FallbackChainAggregate>(plain_hook("h2", -20));
  set.add<FallbackChainAggregate>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<FallbackChainAggregate>(1)) == -10);
  REQUIRE(log == Log{"h1(1)", "chain(10)", "h2(1)", "chain(-20)", "aggregate{10,-20}"});
}

TEST_CASE(
    "Fallback+Chain+Aggregate: if every hook continues, aggregate(all hook outputs), the default "
    "is NOT run") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainAggregate>(plain_hook("h1", 10));
  set.add<FallbackChainAggregate>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<FallbackChainAggregate>(1)) == 30);
  REQUIRE(log == Log{"h1(1)", "chain(10)", "h2(1)", "chain(20)", "aggregate{10,20}"});
}

TEST_CASE("Fallback+Chain+Aggregate with Output<T>: Break output included, default not run") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainAggregateText>(plain_hook("h1", -1));
  set.add<FallbackChainAggregateText>(plain_hook("h2", 2));
  REQUIRE(sync_wait(set.call<FallbackChainAggregateText>(9)) == "{-1}");
  REQUIRE(log == Log{"h1(9)", "chain(-1)", "join{-1}"});
}

// ================================================================================================
// ... + Finalize
// ================================================================================================

TEST_CASE("Always+Finalize, no hooks: finalize(default)") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysFinalize>(2)) == 1002);
  REQUIRE(log == Log{"default(2)", "finalize(2)"});
}

TEST_CASE(
    "Always+Finalize with hooks: the hooks fold with last as in Always, then finalize(result)") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysFinalize>(fold_hook("h1", 1));
  set.add<AlwaysFinalize>(fold_hook("h2", 2));
  REQUIRE(sync_wait(set.call<AlwaysFinalize>(3)) == 1312);
  REQUIRE(log == Log{"default(3)", "h1(3, last=3)", "h2(3, last=31)", "finalize(312)"});
}

TEST_CASE(
    "Fallback+Finalize: finalize(default) without hooks, with hooks finalize(fold from nullopt)") {
  Log& log = fresh_log();
  Set set;
  REQUIRE(sync_wait(set.call<FallbackFinalize>(4)) == 1004);
  set.add<FallbackFinalize>(fold_hook("h1", 1));
  set.add<FallbackFinalize>(fold_hook("h2", 2));
  REQUIRE(sync_wait(set.call<FallbackFinalize>(5)) == 1012);
  REQUIRE(log ==
          Log{"default(4)", "finalize(4)", "h1(5, last=nullopt)", "h2(5, last=1)", "finalize(12)"});
}

TEST_CASE("Always+Chain+Finalize, no hooks: finalize(default), after the chain saw it") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysChainFinalize>(-6)) == 994);
  REQUIRE(log == Log{"default(-6)", "chain(-6)", "finalize(-6)"});
}

TEST_CASE("Always+Chain+Finalize: a Break on the default is finalized") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainFinalize>(plain_hook("h1", 10));
  REQUIRE(sync_wait(set.call<AlwaysChainFinalize>(-1)) == 999);
  REQUIRE(log == Log{"default(-1)", "chain(-1)", "finalize(-1)"});
}

TEST_CASE("Always+Chain+Finalize: the first Break from a hook is finalized, later hooks skipped") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainFinalize>(plain_hook("h1", -10));
  set.add<AlwaysChainFinalize>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<AlwaysChainFinalize>(1)) == 990);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(-10)", "finalize(-10)"});
}

TEST_CASE("Always+Chain+Finalize: all Continue: finalize(last hook's output)") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysChainFinalize>(plain_hook("h1", 10));
  set.add<AlwaysChainFinalize>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<AlwaysChainFinalize>(1)) == 1020);
  REQUIRE(log == Log{"default(1)", "chain(1)", "h1(1)", "chain(10)", "h2(1)", "chain(20)",
                     "finalize(20)"});
}

TEST_CASE("Fallback+Chain+Finalize: no hooks: finalize(default), no chain") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackChainFinalize>(-2)) == 998);
  REQUIRE(log == Log{"default(-2)", "finalize(-2)"});
}

TEST_CASE("Fallback+Chain+Finalize: the breaking hook output is finalized") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainFinalize>(plain_hook("h1", 10));
  set.add<FallbackChainFinalize>(plain_hook("h2", -20));
  set.add<FallbackChainFinalize>(plain_hook("h3", 30));
  REQUIRE(sync_wait(set.call<FallbackChainFinalize>(1)) == 980);
  REQUIRE(log == Log{"h1(1)", "chain(10)", "h2(1)", "chain(-20)", "finalize(-20)"});
}

TEST_CASE("Fallback+Chain+Finalize: all Continue: the default runs at the end and is finalized") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainFinalize>(plain_hook("h1", 10));
  REQUIRE(sync_wait(set.call<FallbackChainFinalize>(7)) == 1007);
  REQUIRE(log == Log{"h1(7)", "chain(10)", "default(7)", "finalize(7)"});
}

// ================================================================================================
// Output<T>
// ================================================================================================

TEST_CASE("Output<T> with Aggregate changes the dispatch's result type (Always+Aggregate)") {
  Log& log = fresh_log();
  Set set;
  STATIC_REQUIRE(
      std::is_same_v<decltype(sync_wait(set.call<AlwaysAggregateText>(1))), std::string>);
  REQUIRE(sync_wait(set.call<AlwaysAggregateText>(1)) == "{1}");
  set.add<AlwaysAggregateText>(plain_hook("h1", 2));
  set.add<AlwaysAggregateText>(plain_hook("h2", 3));
  REQUIRE(sync_wait(set.call<AlwaysAggregateText>(1)) == "{1,2,3}");
  REQUIRE(log == Log{"default(1)", "join{1}", "default(1)", "h1(1)", "h2(1)", "join{1,2,3}"});
}

TEST_CASE("Output<T> with Finalize changes the dispatch's result type (Always+Finalize)") {
  Log& log = fresh_log();
  Set set;
  STATIC_REQUIRE(std::is_same_v<decltype(sync_wait(set.call<AlwaysFinalizeText>(1))), std::string>);
  set.add<AlwaysFinalizeText>(fold_hook("h1", 4));
  REQUIRE(sync_wait(set.call<AlwaysFinalizeText>(1)) == "result 14");
  REQUIRE(log == Log{"default(1)", "h1(1, last=1)", "describe(14)"});
}

TEST_CASE("Output<T>: the result type inside a coroutine is T as well") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackChainAggregateText>(plain_hook("h1", 5));
  auto in_coroutine = [](const Set& s) -> hookset::Task<std::string> {
    std::string text = co_await s.call<FallbackChainAggregateText>(2);
    co_return text + "!";
  };
  REQUIRE(sync_wait(in_coroutine(set)) == "{5}!");
  REQUIRE(log == Log{"h1(2)", "chain(5)", "join{5}"});
}

// ================================================================================================
// Asynchronous companions
// ================================================================================================

TEST_CASE(
    "async chain companion (Task<Flow>) with an async default: Break on the default returns it") {
  Log& log = fresh_log();
  Set set;
  set.add<AsyncAlwaysChain>(plain_hook("h1", 1));
  REQUIRE(sync_wait(set.call<AsyncAlwaysChain>(-1)) == -1);
  REQUIRE(log == Log{"async default(-1)", "async chain(-1)"});
}

TEST_CASE("async chain companion with sync and async hooks: the first Break wins") {
  Log& log = fresh_log();
  Set set;
  set.add<AsyncAlwaysChain>(async_hook("h1", 10));
  set.add<AsyncAlwaysChain>(plain_hook("h2", 20));
  set.add<AsyncAlwaysChain>(async_hook("h3", -30));
  set.add<AsyncAlwaysChain>(plain_hook("h4", 40));
  REQUIRE(sync_wait(set.call<AsyncAlwaysChain>(1)) == -30);
  REQUIRE(log == Log{"async default(1)", "async chain(1)", "h1(1)", "async chain(10)", "h2(1)",
                     "async chain(20)", "h3(1)", "async chain(-30)"});
}

TEST_CASE("async aggregate companion (Task<R>): aggregate({default, h1, h2})") {
  Log& log = fresh_log();
  Set set;
  REQUIRE(sync_wait(set.call<AsyncAlwaysAggregate>(2)) == 2);
  set.add<AsyncAlwaysAggregate>(async_hook("h1", 10));
  set.add<AsyncAlwaysAggregate>(plain_hook("h2", 20));
  REQUIRE(sync_wait(set.call<AsyncAlwaysAggregate>(3)) == 33);
  REQUIRE(log == Log{"async default(2)", "async aggregate{2}", "async default(3)", "h1(3)", "h2(3)",
                     "async aggregate{3,10,20}"});
}

TEST_CASE("async chain and async aggregate with Output<T> on a Fallback slot") {
  Log& log = fresh_log();
  Set set;
  STATIC_REQUIRE(std::is_same_v<decltype(sync_wait(set.call<AsyncFallbackChainAggregateText>(1))),
                                std::string>);
  // No hooks: as Fallback+Aggregate with Output<T>: aggregate({default}), no chain.
  REQUIRE(sync_wait(set.call<AsyncFallbackChainAggregateText>(1)) == "{1}");
  set.add<AsyncFallbackChainAggregateText>(async_hook("h1", 10));
  set.add<AsyncFallbackChainAggregateText>(plain_hook("h2", -20));
  set.add<AsyncFallbackChainAggregateText>(async_hook("h3", 30));
  REQUIRE(sync_wait(set.call<AsyncFallbackChainAggregateText>(2)) == "{10,-20}");
  REQUIRE(log == Log{"async default(1)", "async join{1}", "h1(2)", "async chain(10)", "h2(2)",
                     "async chain(-20)", "async join{10,-20}"});
}

TEST_CASE("async finalize with Output<T> wraps a chain early exit and the all-Continue default") {
  Log& log = fresh_log();
  Set set;
  STATIC_REQUIRE(std::is_same_v<decltype(sync_wait(set.call<AsyncFallbackChainFinalizeText>(1))),
                                std::string>);
  REQUIRE(sync_wait(set.call<AsyncFallbackChainFinalizeText>(1)) == "result 1");
  const hookset::HookId breaking = set.add<AsyncFallbackChainFinalizeText>(async_hook("h1", -5));
  REQUIRE(sync_wait(set.call<AsyncFallbackChainFinalizeText>(2)) == "result -5");
  set.remove(breaking);
  set.add<AsyncFallbackChainFinalizeText>(async_hook("h2", 5));
  REQUIRE(sync_wait(set.call<AsyncFallbackChainFinalizeText>(3)) == "result 3");
  REQUIRE(log == Log{"default(1)", "async describe(1)",                 //
                     "h1(2)", "async chain(-5)", "async describe(-5)",  //
                     "h2(3)", "async chain(5)", "default(3)", "async describe(3)"});
}

TEST_CASE("an async chain companion that suspends, resumed from another thread") {
  Log& log = fresh_log();
  ManualEvent gate;
  companion_gate = &gate;
  Set set;
  set.add<SuspendingChainSlot>(plain_hook("h1", -1));
  set.add<SuspendingChainSlot>(plain_hook("h2", 2));
  std::thread resumer([&gate] {
    gate.fire_when_waited_on();  // the chain on the default
    gate.fire_when_waited_on();  // the chain on h1's output
  });
  const int result = sync_wait(set.call<SuspendingChainSlot>(3));
  resumer.join();
  REQUIRE(result == -1);
  REQUIRE(log == Log{"default(3)", "suspending chain start(3)", "suspending chain end(3)", "h1(3)",
                     "suspending chain start(-1)", "suspending chain end(-1)"});
  companion_gate = nullptr;
}

// ================================================================================================
// Configured companions
// ================================================================================================

TEST_CASE(
    "configure<S>(chain): the configured instance's state decides, configuring again replaces it "
    "silently") {
  Log& log = fresh_log();
  WarningRecorder recorder;
  ScopedObserver scoped(&recorder);
  Set set;
  set.add<ConfiguredChain>(plain_hook("h1", 3));
  set.add<ConfiguredChain>(plain_hook("h2", 6));
  set.add<ConfiguredChain>(plain_hook("h3", 9));

  // Default-constructed: limit 1000, nothing breaks, the Fallback default has the last word.
  REQUIRE(sync_wait(set.call<ConfiguredChain>(0)) == 0);
  REQUIRE(log == Log{"h1(0)", "at least 1000(3)", "h2(0)", "at least 1000(6)", "h3(0)",
                     "at least 1000(9)", "default(0)"});

  fresh_log();
  set.configure<ConfiguredChain>(AtLeast(5));
  REQUIRE(sync_wait(set.call<ConfiguredChain>(0)) == 6);
  REQUIRE(log == Log{"h1(0)", "at least 5(3)", "h2(0)", "at least 5(6)"});

  fresh_log();
  set.configure<ConfiguredChain>(AtLeast(2));
  REQUIRE(sync_wait(set.call<ConfiguredChain>(0)) == 3);
  REQUIRE(log == Log{"h1(0)", "at least 2(3)"});
  REQUIRE(recorder.warnings.empty());
}

TEST_CASE(
    "configure<S>(aggregate) and configure<S>(finalize) instances are used by later dispatches") {
  Log& log = fresh_log();
  Set set;
  set.add<ConfiguredAggregate>(plain_hook("h1", 10));
  REQUIRE(sync_wait(set.call<ConfiguredAggregate>(1)) == 11);
  set.configure<ConfiguredAggregate>(Weighted(3));
  REQUIRE(sync_wait(set.call<ConfiguredAggregate>(1)) == 33);

  set.add<ConfiguredFinalize>(plain_hook("f1", 50));
  set.configure<ConfiguredFinalize>(Offset(7));
  set.configure<ConfiguredFinalize>(AtLeast(40));  // the chain of the same slot, independently
  REQUIRE(sync_wait(set.call<ConfiguredFinalize>(2)) == 57);
  REQUIRE(log == Log{"default(1)", "h1(1)", "weighted 1{1,10}", "default(1)", "h1(1)",
                     "weighted 3{1,10}", "f1(2)", "at least 40(50)", "offset 7(50)"});
}

TEST_CASE(
    "a configured companion is used instead of a default-constructed one (no default "
    "construction)") {
  Log& log = fresh_log();
  Set set;
  CountedChain::default_constructions = 0;
  REQUIRE(sync_wait(set.call<CountedChainSlot>(1)) == 1);
  REQUIRE(CountedChain::default_constructions == 1);  // one per dispatch when not configured

  set.configure<CountedChainSlot>(CountedChain(42));
  CountedChain::default_constructions = 0;
  REQUIRE(sync_wait(set.call<CountedChainSlot>(2)) == 2);
  REQUIRE(log == Log{"default(1)", "counted chain 0(1)", "default(2)", "counted chain 42(2)"});
  REQUIRE(CountedChain::default_constructions == 0);
}

TEST_CASE(
    "a chain type that cannot be default-constructed: dispatch without configure throws "
    "logic_error naming the slot") {
  Log& log = fresh_log();
  Set set;
  set.add<NeedsChainConfig>(plain_hook("h1", 10));
  REQUIRE_THROWS_AS(sync_wait(set.call<NeedsChainConfig>(1)), std::logic_error);
  REQUIRE_THROWS_WITH(sync_wait(set.call<NeedsChainConfig>(1)),
                      Catch::Matchers::ContainsSubstring("NeedsChainConfig"));
  REQUIRE(log.empty());  // nothing ran

  set.configure<NeedsChainConfig>(NeedsLimit(5));
  REQUIRE(sync_wait(set.call<NeedsChainConfig>(1)) == 10);
  REQUIRE(log == Log{"default(1)", "needs limit 5(1)", "h1(1)", "needs limit 5(10)"});
}

TEST_CASE("the logic_error for an unconfigured companion names a slot by its declared name") {
  fresh_log();
  const Set set;
  REQUIRE_THROWS_WITH(sync_wait(set.call<NamedNeedsConfig>(1)),
                      Catch::Matchers::ContainsSubstring("policy.needs-limit"));
  try {
    sync_wait(set.call<NamedNeedsConfig>(1));
    FAIL("no exception");
  } catch (const std::logic_error& error) {
    REQUIRE(std::string(error.what()).find("policy.needs-limit") != std::string::npos);
  }
}

TEST_CASE(
    "aggregate and finalize types that cannot be default-constructed must be configured too") {
  Log& log = fresh_log();
  Set set;
  REQUIRE_THROWS_AS(sync_wait(set.call<NeedsAggregateConfig>(1)), std::logic_error);
  REQUIRE_THROWS_WITH(sync_wait(set.call<NeedsAggregateConfig>(1)),
                      Catch::Matchers::ContainsSubstring("NeedsAggregateConfig"));
  REQUIRE_THROWS_AS(sync_wait(set.call<NeedsFinalizeConfig>(1)), std::logic_error);
  REQUIRE_THROWS_WITH(sync_wait(set.call<NeedsFinalizeConfig>(1)),
                      Catch::Matchers::ContainsSubstring("NeedsFinalizeConfig"));
  REQUIRE(log.empty());

  set.configure<NeedsAggregateConfig>(NeedsWeight(2));
  set.configure<NeedsFinalizeConfig>(NeedsOffset(100));
  set.add<NeedsAggregateConfig>(plain_hook("a1", 4));
  set.add<NeedsAggregateConfig>(plain_hook("a2", 5));
  REQUIRE(sync_wait(set.call<NeedsAggregateConfig>(1)) == 18);
  REQUIRE(sync_wait(set.call<NeedsFinalizeConfig>(1)) == 101);
  REQUIRE(log == Log{"a1(1)", "a2(1)", "needs weight 2{4,5}", "default(1)", "needs offset 100(1)"});
}

// ================================================================================================
// Companion exceptions
// ================================================================================================

TEST_CASE(
    "an exception from a chain companion propagates, later hooks do not run, the set stays "
    "usable") {
  Log& log = fresh_log();
  Set set;
  set.add<ChainThrows>(plain_hook("h1", 13));
  set.add<ChainThrows>(plain_hook("h2", 2));
  REQUIRE_THROWS_WITH(sync_wait(set.call<ChainThrows>(1)), "chain failed");
  REQUIRE(log == Log{"default(1)", "throwing chain(1)", "h1(1)", "throwing chain(13)"});
  fresh_log();
  REQUIRE_THROWS_WITH(sync_wait(set.call<ChainThrows>(13)), "chain failed");
  REQUIRE(log == Log{"default(13)", "throwing chain(13)"});
  REQUIRE(set.count<ChainThrows>() == 2);
}

TEST_CASE("an exception from an aggregate or finalize companion propagates out of the dispatch") {
  Log& log = fresh_log();
  Set set;
  set.add<AggregateThrows>(plain_hook("h1", 1));
  REQUIRE_THROWS_WITH(sync_wait(set.call<AggregateThrows>(0)), "aggregate failed");
  set.add<FinalizeThrows>(fold_hook("f1", 1));
  REQUIRE_THROWS_WITH(sync_wait(set.call<FinalizeThrows>(0)), "finalize failed");
  REQUIRE(log == Log{"default(0)", "h1(0)", "throwing aggregate{0,1}", "f1(0, last=nullopt)",
                     "throwing finalize(1)"});
}
