// Keyed slots in every mode and with every companion: a key's dispatch behaves exactly like an
// ordinary dispatch of the same slot over the hooks selected for that key - in particular, the
// default of a Fallback slot runs for a key exactly when no hook is selected for it.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Task;
using test_support::Log;
using test_support::note;

namespace {

std::string text(std::string_view view) { return std::string(view); }

template <class... Options>
struct Fold : hookset::Slot<int(int x, std::string_view tool), Options..., hookset::Keyed> {
  static int default_impl(int x, std::string_view tool) {
    note("default " + text(tool));
    return x;
  }
};
struct AlwaysFold : Fold<hookset::Always> {};
struct FallbackFold : Fold<hookset::Fallback> {};
struct Single : Fold<hookset::Singleton> {};

// A fold hook: logs and appends its tag to the previous output's digits.
auto folding(std::string name, int tag) {
  return [name, tag](int, std::string_view tool, std::optional<int> last) {
    note(name + " " + text(tool) + " last=" + test_support::show(last));
    return last ? *last * 10 + tag : tag;
  };
}

struct RunTool : hookset::Slot<std::string(std::string args, std::string_view tool),
                               hookset::Pipeline, hookset::Keyed> {
  static std::string default_impl(const std::string& args, std::string_view tool) {
    note("default " + text(tool) + "(" + args + ")");
    return text(tool) + " ran " + args;
  }
};
struct DecideTool : hookset::Slot<std::string(std::string args, std::string_view tool),
                                  hookset::Pipeline, hookset::Fallback, hookset::Keyed> {
  static hookset::decision_t<DecideTool> default_impl(const std::string&, std::string_view tool) {
    note("default " + text(tool));
    if (tool == "rm") return hookset::reject("rm needs a hook");
    return hookset::pass();
  }
};
template <class S>
auto appending(std::string tag) {
  return [tag](const std::string& args, std::string_view tool) -> hookset::decision_t<S> {
    note(tag + " " + text(tool) + "(" + args + ")");
    return hookset::rewrite(args + tag);
  };
}

struct Sum {
  int operator()(std::vector<int> outputs) const {
    int sum = 0;
    for (int o : outputs) sum += o;
    return sum;
  }
};
struct Join {
  std::string operator()(std::vector<int> outputs) const {
    std::string joined;
    for (int o : outputs) joined += std::to_string(o) + ";";
    return joined;
  }
};
struct Plus1000 {
  int operator()(int result) const { return result + 1000; }
};
struct Offset {
  int offset = 0;
  int operator()(int result) const { return result + offset; }
};
struct StopAtNegative {
  hookset::Flow operator()(const int& output) const {
    return output < 0 ? hookset::Flow::Break : hookset::Flow::Continue;
  }
};

template <class... Options>
struct Plain : hookset::Slot<int(int x, std::string_view tool), Options..., hookset::Keyed> {
  static int default_impl(int x, std::string_view tool) {
    note("default " + text(tool));
    return x;
  }
};
struct Chained : Plain<hookset::Always, hookset::Chain<StopAtNegative>> {};
struct Summed : Plain<hookset::Always, hookset::Aggregate<Sum>> {};
struct Joined : Plain<hookset::Fallback, hookset::Aggregate<Join>, hookset::Output<std::string>> {};
struct Finalized : Plain<hookset::Always, hookset::Finalize<Offset>> {};
struct Picked
    : hookset::Slot<std::optional<int>(int x, std::string_view tool), hookset::Fallback,
                    hookset::Chain<hookset::FirstSuccess>, hookset::Keyed> {
  static std::optional<int> default_impl(int, std::string_view) { return -1; }
};

// Finalize keeps a slot folding: its hooks also get `last`.
auto fold_returning(int output) {
  return [output](int, std::string_view, std::optional<int>) { return output; };
}

auto returning(std::string name, int output) {
  return [name, output](int, std::string_view tool) {
    note(name + " " + text(tool));
    return output;
  };
}

using Set = hookset::HookSet<AlwaysFold, FallbackFold, Single, RunTool, DecideTool, Chained,
                             Summed, Joined, Finalized, Picked>;

template <class S, class... Args>
auto run(const Set& set, Args&&... args) {
  return hookset::sync_wait(set.call<S>(std::forward<Args>(args)...));
}

}  // namespace

TEST_CASE("keyed Always and Fallback fold slots: the default runs for a key without hooks only "
          "where the mode says") {
  Set set;
  set.add<AlwaysFold>(hookset::key("a"), folding("a1", 1));
  set.add<AlwaysFold>(hookset::prefix("a"), folding("a*", 2));
  set.add<AlwaysFold>(hookset::key("b"), folding("b1", 3));
  auto& log = test_support::fresh_log();
  CHECK(run<AlwaysFold>(set, 7, "a") == 712);
  CHECK(log == Log{"default a", "a1 a last=7", "a* a last=71"});
  log.clear();
  CHECK(run<AlwaysFold>(set, 7, "c") == 7);
  CHECK(log == Log{"default c"});

  set.add<FallbackFold>(hookset::key("a"), folding("a1", 1));
  set.add<FallbackFold>(hookset::glob("a?"), folding("a?", 2));
  log.clear();
  CHECK(run<FallbackFold>(set, 7, "a") == 1);  // hooks for "a": no default
  CHECK(log == Log{"a1 a last=nullopt"});
  log.clear();
  CHECK(run<FallbackFold>(set, 7, "ab") == 2);  // a matcher selects "ab": no default either
  CHECK(log == Log{"a? ab last=nullopt"});
  log.clear();
  CHECK(run<FallbackFold>(set, 7, "b") == 7);  // nothing selects "b": the default
  CHECK(log == Log{"default b"});
}

TEST_CASE("keyed Singleton: per key, the last selecting registration in the slot's order runs - "
          "a registration replaces the one with the same selector") {
  test_support::RecordingObserver observer;
  Set set;
  set.set_observer(&observer);
  const auto any = set.add<Single>(returning("any", 1));
  const auto a1 = set.add<Single>(hookset::key("a"), returning("a1", 2));
  set.add<Single>(hookset::key("b"), returning("b", 3));
  CHECK(observer.events.empty());
  const auto a2 = set.add<Single>(hookset::key("a"), returning("a2", 4));
  REQUIRE(observer.events.size() == 1);
  CHECK(observer.events[0].kind == "warning");
  CHECK_FALSE(set.holds(a1));
  CHECK(set.count<Single>() == 3);

  auto& log = test_support::fresh_log();
  CHECK(run<Single>(set, 0, "a") == 4);
  CHECK(run<Single>(set, 0, "b") == 3);
  CHECK(run<Single>(set, 0, "zzz") == 1);
  CHECK(log == Log{"a2 a", "b b", "any zzz"});

  // A newer any-key registration comes last in the slot's order: it now wins for every key.
  const auto any2 = set.add<Single>(hookset::any_key, returning("any2", 5));
  CHECK_FALSE(set.holds(any));
  CHECK(run<Single>(set, 0, "a") == 5);
  CHECK(run<Single>(set, 0, "zzz") == 5);
  // Remove it: no any-key registration is left; "a" has its own, "zzz" gets the default.
  CHECK(set.remove(any2));
  CHECK(run<Single>(set, 0, "a") == 4);
  log.clear();
  CHECK(run<Single>(set, 9, "zzz") == 9);
  CHECK(log == Log{"default zzz"});
  CHECK(set.remove(a2));
  CHECK(run<Single>(set, 9, "a") == 9);
}

TEST_CASE("keyed Pipeline: a key's hooks decide in order, then the default runs on the final input") {
  Set set;
  set.add<RunTool>(hookset::key("ls"), appending<RunTool>("+ls"));
  set.add<RunTool>(appending<RunTool>("+all"), hookset::Priority{-1});
  set.add<RunTool>(hookset::key("rm"), [](const std::string&, std::string_view) {
    return hookset::decision_t<RunTool>(hookset::reject("no rm"));
  });
  auto& log = test_support::fresh_log();
  const auto ls = run<RunTool>(set, std::string("-l"), "ls");
  CHECK(ls.completed());
  CHECK(ls.output() == "ls ran -l+all+ls");
  CHECK(log == Log{"+all ls(-l)", "+ls ls(-l+all)", "default ls(-l+all+ls)"});
  const auto rm = run<RunTool>(set, std::string("-rf"), "rm");
  CHECK(rm.rejected());
  CHECK(rm.reason() == "no rm");
  log.clear();
  const auto cat = run<RunTool>(set, std::string("x"), "cat");
  CHECK(cat.output() == "cat ran x+all");
  CHECK(log == Log{"+all cat(x)", "default cat(x+all)"});
}

TEST_CASE("keyed Pipeline + Fallback: the default decides for a key without hooks only") {
  Set set;
  set.add<DecideTool>(hookset::key("ls"), appending<DecideTool>("+ls"));
  auto& log = test_support::fresh_log();
  const auto ls = run<DecideTool>(set, std::string("-l"), "ls");
  CHECK(ls.passed());
  CHECK(ls.input == "-l+ls");
  CHECK(log == Log{"+ls ls(-l)"});
  log.clear();
  const auto rm = run<DecideTool>(set, std::string("-rf"), "rm");
  CHECK(rm.rejected());
  CHECK(rm.reason() == "rm needs a hook");
  CHECK(log == Log{"default rm"});
  // A hook for every key: the default no longer decides for "rm" either.
  set.add<DecideTool>(appending<DecideTool>("+any"));
  log.clear();
  const auto rm2 = run<DecideTool>(set, std::string("-rf"), "rm");
  CHECK(rm2.passed());
  CHECK(rm2.input == "-rf+any");
  CHECK(log == Log{"+any rm(-rf)"});
}

TEST_CASE("keyed Chain, Aggregate, Output and Finalize slots combine only the key's hooks") {
  Set set;
  set.add<Chained>(hookset::key("a"), returning("a1", 1));
  set.add<Chained>(hookset::key("a"), returning("a-neg", -5));
  set.add<Chained>(returning("any", 3));
  auto& log = test_support::fresh_log();
  CHECK(run<Chained>(set, 0, "a") == -5);  // Break at the negative output: "any" never runs
  CHECK(log == Log{"default a", "a1 a", "a-neg a"});
  CHECK(run<Chained>(set, 0, "b") == 3);

  set.add<Summed>(hookset::key("a"), returning("a", 10));
  set.add<Summed>(hookset::prefix(""), returning("all", 100));
  CHECK(run<Summed>(set, 1, "a") == 111);
  CHECK(run<Summed>(set, 1, "b") == 101);

  set.add<Joined>(hookset::key("a"), returning("a", 2));
  set.add<Joined>(hookset::glob("a*"), returning("a*", 3));
  CHECK(run<Joined>(set, 9, "a") == "2;3;");
  CHECK(run<Joined>(set, 9, "ab") == "3;");
  CHECK(run<Joined>(set, 9, "b") == "9;");  // no hook for "b": aggregate({default})

  set.add<Finalized>(hookset::key("a"), fold_returning(5));
  CHECK(run<Finalized>(set, 1, "a") == 5);
  CHECK(run<Finalized>(set, 1, "b") == 1);
  // A configured companion reaches every key's list, precomputed or filtered.
  set.configure<Finalized>(Offset{1000});
  set.add<Finalized>(hookset::matching([](const std::string& k) { return k == "m"; }),
                     fold_returning(7));
  CHECK(run<Finalized>(set, 1, "a") == 1005);
  CHECK(run<Finalized>(set, 1, "m") == 1007);
  CHECK(run<Finalized>(set, 1, "b") == 1001);

  set.add<Picked>(hookset::key("a"), [](int, std::string_view) { return std::optional<int>(); });
  set.add<Picked>(hookset::key("a"), [](int x, std::string_view) { return std::optional<int>(x); });
  CHECK(run<Picked>(set, 4, "a") == std::optional<int>(4));
  CHECK(run<Picked>(set, 4, "b") == std::optional<int>(-1));
}

namespace {
struct InOrder {
  std::vector<int> operator()(std::vector<int> outputs) const { return outputs; }
};
struct Gathered : hookset::Slot<int(int x, std::string_view tool), hookset::Always,
                                hookset::Aggregate<InOrder>, hookset::Output<std::vector<int>>,
                                hookset::Concurrent, hookset::Keyed> {
  static int default_impl(int x, std::string_view) { return -x; }
};
}  // namespace

TEST_CASE("keyed Concurrent slot: a key's coroutine hooks run at the same time, outputs in order") {
  hookset::HookSet<Gathered> set;
  test_support::ManualEvent first;
  test_support::ManualEvent second;
  int started = 0;
  auto waiting = [&started](test_support::ManualEvent& event, int value) {
    return [&started, &event, value](int, std::string_view) -> Task<int> {
      ++started;
      co_await event;
      co_return value;
    };
  };
  set.add<Gathered>(hookset::key("a"), waiting(first, 1));
  set.add<Gathered>(hookset::prefix("a"), waiting(second, 2));
  set.add<Gathered>(hookset::key("b"), [](int, std::string_view) -> Task<int> { co_return 99; });

  test_support::Outcome<std::vector<int>> outcome;
  test_support::detach(set.call<Gathered>(5, "a"), outcome);
  CHECK(started == 2);  // both started before either finished
  CHECK_FALSE(outcome.done);
  // An edit while the dispatch is suspended changes nothing for it.
  set.clear<Gathered>();
  second.fire();
  CHECK_FALSE(outcome.done);
  first.fire();
  REQUIRE(outcome.done);
  REQUIRE_FALSE(outcome.error);
  CHECK(*outcome.value == std::vector<int>{-5, 1, 2});
  CHECK(hookset::sync_wait(set.call<Gathered>(5, "a")) == std::vector<int>{-5});
}

TEST_CASE("keyed: interceptors wrap the dispatch of every key, with the key among the arguments") {
  Set set;
  set.add<Summed>(hookset::key("a"), returning("a", 10));
  set.add<Summed>(hookset::glob("b*"), returning("b*", 20));
  const auto id = set.intercept<Summed>([](hookset::Next<Summed> next, int x,
                                           std::string_view tool) -> Task<int> {
    note("around " + text(tool));
    co_return co_await next(x, tool) + 1000;
  });
  auto& log = test_support::fresh_log();
  CHECK(run<Summed>(set, 1, "a") == 1011);   // precomputed list
  CHECK(run<Summed>(set, 1, "bc") == 1021);  // filtered list
  CHECK(run<Summed>(set, 1, "z") == 1001);   // no hook for the key
  CHECK(log == Log{"around a", "default a", "a a", "around bc", "default bc", "b* bc",
                   "around z", "default z"});
  CHECK(set.remove(id));
  CHECK(run<Summed>(set, 1, "a") == 11);
}
