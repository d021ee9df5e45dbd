// Historic slots (hookset::Historic<N>): a set keeps a slot's last N calls and replays them to
// hooks registered later - a plugin loaded after start-up still receives Configure. Bounded
// eviction, clearing, one history shared by copies, frozen and shared versions; replay order,
// to the new hook only, results discarded, `last` empty, coroutine hooks; a throwing replay
// undoes the registration; keyed slots, add_hooks, nested sets, staging sets; threads.
#include "hookset_catch.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>
#include <hookset/shared_set.hpp>

namespace {
using Log = std::vector<std::string>;

// Keeps its last 3 calls. The default counts its runs: a replay never runs it.
inline std::atomic<int> configure_defaults{0};
struct Configure : hookset::Slot<void(std::string_view section, int value), hookset::Always,
                                 hookset::Historic<3>> {
  static void default_impl(std::string_view, int) { ++configure_defaults; }
};
// A fold: hooks get `last`.
struct Adjust : hookset::Slot<int(int), hookset::Always, hookset::Historic<4>> {
  static int default_impl(int x) { return x; }
};
// Not historic.
struct Plain : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Configure, Adjust, Plain>;

template <class S, class SetT, class... Args>
auto run(const SetT& set, Args&&... args) {
  return hookset::sync_wait(set.template call<S>(std::forward<Args>(args)...));
}

auto recorder(Log& log, std::string name = "") {
  return [&log, name](std::string_view section, int value) {
    log.push_back(name + std::string(section) + "=" + std::to_string(value));
  };
}

using Call = hookset::recorded_call_t<Configure>;
}  // namespace

TEST_CASE("a historic slot keeps its arguments as values: a string_view as a std::string") {
  STATIC_REQUIRE(std::is_same_v<Call, std::tuple<std::string, int>>);
  STATIC_REQUIRE(std::is_same_v<hookset::recorded_call_t<Adjust>, std::tuple<int>>);
  Set set;
  {
    std::string section = "model";
    run<Configure>(set, std::string_view(section), 1);
    section = "overwritten";  // what the call's view pointed to changes; the record does not
  }
  CHECK(set.history<Configure>() == std::vector<Call>{{"model", 1}});
}

TEST_CASE("the history keeps the last N calls, oldest first, dropping the oldest") {
  Set set;
  CHECK(set.history<Configure>().empty());
  for (int i = 1; i <= 5; ++i) run<Configure>(set, "s", i);
  CHECK(set.history<Configure>() == std::vector<Call>{{"s", 3}, {"s", 4}, {"s", 5}});
  run<Configure>(set, "t", 6);
  CHECK(set.history<Configure>() == std::vector<Call>{{"s", 4}, {"s", 5}, {"t", 6}});
  // Each slot has its own history.
  CHECK(set.history<Adjust>().empty());
}

TEST_CASE("a hook registered later receives the kept calls, oldest first, synchronously in add") {
  Set set;
  run<Configure>(set, "a", 1);
  run<Configure>(set, "b", 2);
  Log log;
  const int defaults_before = configure_defaults;
  set.add<Configure>(recorder(log));
  CHECK(log == Log{"a=1", "b=2"});
  CHECK(configure_defaults == defaults_before);  // the default is not replayed
  // Dispatches after the registration reach the hook as usual, and are kept.
  run<Configure>(set, "c", 3);
  CHECK(log == Log{"a=1", "b=2", "c=3"});
  CHECK(set.history<Configure>() == std::vector<Call>{{"a", 1}, {"b", 2}, {"c", 3}});
}

TEST_CASE("a replay reaches the new hook only: hooks registered earlier are not called again") {
  Set set;
  Log first;
  set.add<Configure>(recorder(first, "first:"));
  run<Configure>(set, "a", 1);
  Log second;
  set.add<Configure>(recorder(second, "second:"));
  CHECK(first == Log{"first:a=1"});
  CHECK(second == Log{"second:a=1"});
  // The replay is not a call: it is not kept.
  CHECK(set.history<Configure>().size() == 1);
}

TEST_CASE("a replayed fold hook gets no `last`, and its result is discarded") {
  Set set;
  CHECK(run<Adjust>(set, 10) == 10);
  CHECK(run<Adjust>(set, 20) == 20);
  std::vector<std::pair<int, std::optional<int>>> seen;
  set.add<Adjust>([&seen](int x, std::optional<int> last) {
    seen.emplace_back(x, last);
    return x + 1000;
  });
  // Replayed: (10, none), (20, none) - the original dispatches had their results long ago.
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == std::pair<int, std::optional<int>>{10, std::nullopt});
  CHECK(seen[1] == std::pair<int, std::optional<int>>{20, std::nullopt});
  // A dispatch folds as usual: the default's output is the hook's `last`.
  CHECK(run<Adjust>(set, 30) == 1030);
  CHECK(seen.back() == std::pair<int, std::optional<int>>{30, 30});
}

TEST_CASE("a coroutine hook is replayed to completion inside add") {
  Set set;
  run<Adjust>(set, 1);
  run<Adjust>(set, 2);
  std::vector<int> seen;
  set.add<Adjust>([&seen](int x, std::optional<int> last) -> hookset::Task<int> {
    seen.push_back(x);
    co_return last.value_or(0) + x;
  });
  CHECK(seen == std::vector<int>{1, 2});
}

TEST_CASE("a slot without Historic keeps nothing and replays nothing, and costs no space") {
  Set set;
  run<Plain>(set, 1);
  int calls = 0;
  set.add<Plain>([&calls](int x, std::optional<int>) {
    ++calls;
    return x;
  });
  CHECK(calls == 0);
  CHECK(run<Plain>(set, 2) == 2);
  CHECK(calls == 1);
  // A set whose slots keep no history is as large as before: the history member is empty.
  // (One historic slot adds one shared pointer to its log.)
  struct Other : hookset::Slot<void(int), hookset::Always> {
    static void default_impl(int) {}
  };
  struct Kept : hookset::Slot<void(int), hookset::Always, hookset::Historic<1>> {
    static void default_impl(int) {}
  };
  STATIC_REQUIRE(sizeof(hookset::HookSet<Plain, Other>) ==
                 2 * sizeof(void*) + sizeof(hookset::Observer*) + sizeof(void*));
  STATIC_REQUIRE(sizeof(hookset::HookSet<Plain, Kept>) ==
                 sizeof(hookset::HookSet<Plain, Other>) + sizeof(std::shared_ptr<int>));
}

TEST_CASE("clear_history forgets the kept calls for every copy") {
  Set set;
  run<Configure>(set, "a", 1);
  const Set copy = set;
  copy.clear_history<Configure>();
  CHECK(set.history<Configure>().empty());
  Log log;
  set.add<Configure>(recorder(log));
  CHECK(log.empty());
  run<Configure>(set, "b", 2);
  CHECK(copy.history<Configure>() == std::vector<Call>{{"b", 2}});
}

TEST_CASE("copies, frozen versions and a SharedHookSet share one history") {
  Set set;
  Set copy = set;
  run<Configure>(copy, "copy", 1);
  CHECK(set.history<Configure>() == std::vector<Call>{{"copy", 1}});

  const auto frozen = Set(set).freeze();
  run<Configure>(frozen, "frozen", 2);
  CHECK(set.history<Configure>().back() == Call{"frozen", 2});
  CHECK(frozen.history<Configure>() == set.history<Configure>());

  // A set moved from keeps recording into the same history.
  Set moved = std::move(copy);
  run<Configure>(moved, "moved", 3);
  CHECK(set.history<Configure>() == std::vector<Call>{{"copy", 1}, {"frozen", 2}, {"moved", 3}});

  hookset::SharedHookSet<Configure, Adjust, Plain> shared(set);
  run<Configure>(shared, "shared", 4);
  CHECK(set.history<Configure>().back() == Call{"shared", 4});
  Log log;
  shared.update([&log](auto& next) { next.template add<Configure>(recorder(log)); });
  CHECK(log == Log{"frozen=2", "moved=3", "shared=4"});
  shared.clear_history<Configure>();
  CHECK(set.history<Configure>().empty());
  CHECK(shared.history<Configure>().empty());
}

TEST_CASE(
    "a hook that throws during its replay is not registered: add throws, the set is as it was") {
  Set set;
  Log log;
  const hookset::HookId kept = set.add<Configure>(recorder(log));
  run<Configure>(set, "a", 1);
  run<Configure>(set, "b", 2);
  int replayed = 0;
  CHECK_THROWS_AS(set.add<Configure>([&replayed](std::string_view section, int) {
    ++replayed;
    if (section == "b") throw std::runtime_error("cannot configure b");
  }),
                  std::runtime_error);
  CHECK(replayed == 2);  // "a" went through, "b" threw
  CHECK(set.count<Configure>() == 1);
  CHECK(set.holds(kept));
  log.clear();
  run<Configure>(set, "c", 3);
  CHECK(log == Log{"c=3"});
  CHECK(replayed == 2);  // the failed registration is gone
}

namespace {
// An object for add_hooks: Configure (historic) throws on demand, Adjust (historic) and Plain.
struct Plugin {
  Log* log;
  bool fail = false;
  void operator()(Configure, std::string_view section, int value) const {
    if (fail) throw std::runtime_error("plugin failed");
    log->push_back("configure " + std::string(section) + "=" + std::to_string(value));
  }
  int operator()(Adjust, int x, std::optional<int> last) const {
    log->push_back("adjust " + std::to_string(x) + (last ? " with last" : " without last"));
    return x;
  }
  int operator()(Plain, int x, std::optional<int>) const {
    log->push_back("plain " + std::to_string(x));
    return x;
  }
};
}  // namespace

TEST_CASE("add_hooks replays each historic slot's history to the object, in slot order") {
  Set set;
  run<Configure>(set, "a", 1);
  run<Adjust>(set, 5);
  run<Plain>(set, 7);
  Log log;
  const auto ids = set.add_hooks(Plugin{&log});
  CHECK(ids.size() == 3);
  CHECK(log == Log{"configure a=1", "adjust 5 without last"});
}

TEST_CASE("add_hooks whose replay throws registers nothing, in any slot") {
  Set set;
  run<Configure>(set, "a", 1);
  Log log;
  CHECK_THROWS_AS(set.add_hooks(Plugin{&log, /*fail=*/true}), std::runtime_error);
  CHECK(set.count<Configure>() == 0);
  CHECK(set.count<Adjust>() == 0);
  CHECK(set.count<Plain>() == 0);
}

TEST_CASE("replay_history_to replays to a staging set's hooks only, extend_and_replay merges too") {
  Set app;
  Log old_hooks;
  app.add<Configure>(recorder(old_hooks, "old:"));
  run<Configure>(app, "a", 1);
  run<Configure>(app, "b", 2);

  // A plugin loader registers a plugin's hooks into a staging set, of the same type.
  Set staging;
  Log plugin;
  staging.add<Configure>(recorder(plugin, "p1:"));
  staging.add<Configure>(recorder(plugin, "p2:"));
  SECTION("replay_history_to: each kept call, oldest first, to every newcomer in order") {
    app.replay_history_to(staging);
    CHECK(plugin == Log{"p1:a=1", "p2:a=1", "p1:b=2", "p2:b=2"});
    CHECK(app.count<Configure>() == 1);             // neither set changes
    CHECK(old_hooks == Log{"old:a=1", "old:b=2"});  // not replayed to
  }
  SECTION("extend_and_replay") {
    app.extend_and_replay(staging);
    CHECK(plugin == Log{"p1:a=1", "p2:a=1", "p1:b=2", "p2:b=2"});
    CHECK(app.count<Configure>() == 3);
    CHECK(old_hooks == Log{"old:a=1", "old:b=2"});  // not replayed to
    plugin.clear();
    old_hooks.clear();
    run<Configure>(app, "c", 3);
    CHECK(old_hooks == Log{"old:c=3"});
    CHECK(plugin == Log{"p1:c=3", "p2:c=3"});
  }
  SECTION("extend_and_replay whose replay throws leaves the set as it was") {
    staging.add<Configure>([](std::string_view, int) { throw std::runtime_error("no"); });
    CHECK_THROWS_AS(app.extend_and_replay(staging), std::runtime_error);
    CHECK(app.count<Configure>() == 1);
    CHECK(plugin == Log{"p1:a=1", "p2:a=1"});  // the third newcomer threw on the first call
  }
}

namespace {
struct Tool : hookset::Slot<void(int call, std::string tool), hookset::Always, hookset::Keyed,
                            hookset::Historic<8>> {
  static void default_impl(int, const std::string&) {}
};
using Tools = hookset::HookSet<Tool>;
using Host = hookset::HookSet<Tools, Plain>;
}  // namespace

TEST_CASE("a keyed hook is replayed the kept calls for the keys it is registered for") {
  Tools set;
  run<Tool>(set, 1, "fs_read");
  run<Tool>(set, 2, "shell");
  run<Tool>(set, 3, "fs_write");
  std::vector<int> fs;
  std::vector<int> shell;
  std::vector<int> all;
  set.add<Tool>(hookset::glob("fs_*"), [&fs](int call, const std::string&) { fs.push_back(call); });
  set.add<Tool>(hookset::key("shell"),
                [&shell](int call, const std::string&) { shell.push_back(call); });
  set.add<Tool>([&all](int call, const std::string&) { all.push_back(call); });
  CHECK(fs == std::vector<int>{1, 3});
  CHECK(shell == std::vector<int>{2});
  CHECK(all == std::vector<int>{1, 2, 3});
}

TEST_CASE("a nested set keeps the history of its slots, also when dispatched through its host") {
  Host host;
  run<Tool>(host, 1, "shell");
  run<Tool>(host.nested<Tools>(), 2, "shell");
  CHECK(host.nested<Tools>().history<Tool>().size() == 2);
  CHECK(host.history<Tool>().size() == 2);
  std::vector<int> calls;
  host.add<Tool>([&calls](int call, const std::string&) { calls.push_back(call); });
  CHECK(calls == std::vector<int>{1, 2});
  // A staging host: its nested set's hooks get the nested history.
  Host staging;
  std::vector<int> staged;
  staging.nested<Tools>().add<Tool>(
      [&staged](int call, const std::string&) { staged.push_back(call); });
  host.replay_history_to(staging);
  CHECK(staged == std::vector<int>{1, 2});
}

namespace {
struct Checked {
  std::string path;
};
struct CheckPath
    : hookset::Slot<std::string(Checked, int), hookset::Pipeline, hookset::Historic<2>> {
  static std::string default_impl(const Checked& c, int) { return c.path; }
};
using Pipes = hookset::HookSet<CheckPath>;
}  // namespace

TEST_CASE("a pipeline hook is replayed the kept inputs, and its decision is discarded") {
  Pipes set;
  Checked input{"/etc"};
  run<CheckPath>(set, input, 1);
  std::vector<std::string> seen;
  set.add<CheckPath>([&seen](const Checked& c, int) -> hookset::decision_t<CheckPath> {
    seen.push_back(c.path);
    return hookset::reject("outside the workspace");
  });
  CHECK(seen == std::vector<std::string>{"/etc"});
  CHECK(set.history<CheckPath>().size() == 1);
}

TEST_CASE("threads dispatch a shared set's historic slot while another registers hooks") {
  hookset::SharedHookSet<Configure, Adjust, Plain> shared;
  constexpr int threads = 3;
  constexpr int calls_per_thread = 300;
  std::atomic<bool> go{false};
  std::vector<std::thread> dispatchers;
  for (int t = 0; t < threads; ++t)
    dispatchers.emplace_back([&shared, &go, t] {
      while (!go) std::this_thread::yield();
      for (int i = 0; i < calls_per_thread; ++i)
        hookset::sync_wait(shared.call<Configure>("thread", t * calls_per_thread + i));
    });
  // Each registered hook counts what reaches it, by replay or by dispatch.
  constexpr int hooks = 20;
  std::vector<std::shared_ptr<std::atomic<int>>> received;
  go = true;
  for (int h = 0; h < hooks; ++h) {
    auto count = std::make_shared<std::atomic<int>>(0);
    received.push_back(count);
    shared.update([count](auto& next) {
      next.template add<Configure>([count](std::string_view, int) { ++*count; });
    });
    std::this_thread::yield();
  }
  for (std::thread& thread : dispatchers) thread.join();
  const auto history = shared.history<Configure>();
  REQUIRE(history.size() == 3);  // the bound
  for (const Call& call : history) CHECK(std::get<0>(call) == "thread");
  // Every hook got at most the calls made and its replay (3). (A call concurrent with the update
  // that registers a hook may reach it twice or not at all: docs/semantics.md.)
  for (const auto& count : received) CHECK(*count <= threads * calls_per_thread + 3);
  // After the threads are done, a new hook gets exactly the kept calls.
  int replayed = 0;
  shared.update([&replayed](auto& next) {
    next.template add<Configure>([&replayed](std::string_view, int) { ++replayed; });
  });
  CHECK(replayed == 3);
}

namespace {
struct Choose : hookset::Slot<std::string(int), hookset::Singleton, hookset::Historic<2>> {
  static std::string default_impl(int) { return "default"; }
};
// A slot whose hooks fail open in a dispatch.
struct Audit : hookset::Slot<void(int), hookset::Always, hookset::Historic<2>> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailOpen;
  static void default_impl(int) {}
};
using More = hookset::HookSet<Choose, Audit, Adjust>;

struct Tally {
  std::vector<int> seen;
  int operator()(int x, std::optional<int>) {
    seen.push_back(x);
    return x;
  }
};
}  // namespace

TEST_CASE("a Singleton hook whose replay throws leaves the hook it would replace in place") {
  More set;
  set.add<Choose>([](int) { return std::string("first"); });
  CHECK(run<Choose>(set, 1) == "first");
  CHECK_THROWS_AS(set.add<Choose>([](int) -> std::string { throw std::runtime_error("no"); }),
                  std::runtime_error);
  CHECK(run<Choose>(set, 2) == "first");
  // A replacement that takes its replay replaces it; its replayed results go nowhere.
  std::vector<int> replayed;
  set.add<Choose>([&replayed](int n) {
    replayed.push_back(n);
    return std::string("second");
  });
  CHECK(replayed == std::vector<int>{1, 2});
  CHECK(run<Choose>(set, 3) == "second");
}

TEST_CASE("a replay is not a dispatch: a FailOpen hook that throws in it is not registered") {
  More set;
  run<Audit>(set, 1);
  CHECK_THROWS_AS(set.add<Audit>([](int) { throw std::runtime_error("audit down"); },
                                 {.on_failure = hookset::FailOpen}),
                  std::runtime_error);
  CHECK(set.count<Audit>() == 0);
}

TEST_CASE("a Stateful hook and a hook taking a stop token are replayed too") {
  More set;
  run<Adjust>(set, 4);
  run<Adjust>(set, 5);
  hookset::Stateful tally{Tally{}};
  set.add<Adjust>(tally);
  CHECK(hookset::sync_wait(tally.with_lock([](Tally& t) { return t.seen; })) ==
        std::vector<int>{4, 5});
  bool stop_possible = true;
  set.add<Adjust>([&stop_possible](int x, std::optional<int>, hookset::stop_token stop) {
    stop_possible = stop.stop_possible();
    return x;
  });
  CHECK_FALSE(stop_possible);  // a token that never stops
}
