// Pipeline slots with pass-through parameters: Slot<R(Input, const Meta&, Budget), Pipeline>.
// Only the first parameter is threaded: hooks rewrite it, later hooks and the default see the
// rewrite. The others reach every hook and the default as the caller gave them - a const&
// parameter as the caller's own object (never copied), a value parameter as the one copy the
// dispatch holds - whatever the hooks decide.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <string>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Task;

namespace {

struct ToolCall {
  std::string tool;
  std::string args;
  friend bool operator==(const ToolCall&, const ToolCall&) = default;
};

// Counts its copies: a pass-through const& parameter must reach hooks and default uncopied.
struct ToolMeta {
  std::string owner;
  static inline int copies = 0;
  explicit ToolMeta(std::string o) : owner(std::move(o)) {}
  ToolMeta(const ToolMeta& other) : owner(other.owner) { ++copies; }
  ToolMeta& operator=(const ToolMeta&) = delete;
};

// What each hook (and the default) saw: the input, and where the pass-through objects were.
struct Sighting {
  std::string who;
  std::string args;
  const ToolMeta* meta;
  const int* budget;
  int budget_value;
};
inline std::vector<Sighting> sightings;

struct CheckCall
    : hookset::Slot<std::string(ToolCall, const ToolMeta&, int budget), hookset::Pipeline> {
  static std::string default_impl(const ToolCall& call, const ToolMeta& meta, const int& budget) {
    sightings.push_back({"default", call.args, &meta, &budget, budget});
    return call.tool + " " + call.args + " for " + meta.owner;
  }
};
struct AsyncCheck : hookset::Slot<int(int, const ToolMeta&), hookset::Pipeline> {
  static Task<int> default_impl(int x, const ToolMeta& meta) {
    co_return x + static_cast<int>(meta.owner.size());
  }
};
using Set = hookset::HookSet<CheckCall, AsyncCheck>;
using Decision = hookset::decision_t<CheckCall>;

// A hook that appends `tag` to the input (synchronous, or as a Task) and records what it saw.
auto appending(std::string tag) {
  return [tag](const ToolCall& call, const ToolMeta& meta, const int& budget) -> Decision {
    sightings.push_back({tag, call.args, &meta, &budget, budget});
    return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}
auto appending_async(std::string tag) {
  return [tag](const ToolCall& call, const ToolMeta& meta, const int& budget) -> Task<Decision> {
    sightings.push_back({tag, call.args, &meta, &budget, budget});
    co_return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}
auto passing(std::string tag) {
  return [tag](const ToolCall& call, const ToolMeta& meta, const int& budget) -> Decision {
    sightings.push_back({tag, call.args, &meta, &budget, budget});
    return hookset::pass();
  };
}

}  // namespace

TEST_CASE("hooks and the default get the pass-through parameters unchanged - a const& uncopied") {
  sightings.clear();
  Set set;
  set.add<CheckCall>(appending("a"));
  set.add<CheckCall>(passing("p"));
  set.add<CheckCall>(appending_async("b"));
  set.add<CheckCall>(appending("c"));
  const ToolMeta meta{"alice"};
  ToolMeta::copies = 0;
  const auto result = hookset::sync_wait(set.call<CheckCall>(ToolCall{"ls", ""}, meta, 7));
  CHECK(ToolMeta::copies == 0);
  CHECK(result.completed());
  CHECK(result.output() == "ls abc for alice");
  CHECK(result.input == ToolCall{"ls", "abc"});  // only the input was rewritten
  REQUIRE(sightings.size() == 5);
  const std::vector<std::string> expected_who{"a", "p", "b", "c", "default"};
  const std::vector<std::string> expected_args{"", "a", "a", "ab", "abc"};
  for (std::size_t i = 0; i < sightings.size(); ++i) {
    CAPTURE(i);
    CHECK(sightings[i].who == expected_who[i]);
    CHECK(sightings[i].args == expected_args[i]);       // each sees the previous rewrite
    CHECK(sightings[i].meta == &meta);                  // the caller's object itself
    CHECK(sightings[i].budget == sightings[0].budget);  // the dispatch's one copy of the value
    CHECK(sightings[i].budget_value == 7);
  }
}

TEST_CASE("without hooks the default gets the input and the pass-through parameters") {
  sightings.clear();
  Set set;
  const ToolMeta meta{"bob"};
  ToolMeta::copies = 0;
  const auto result = hookset::sync_wait(set.call<CheckCall>(ToolCall{"cat", "x"}, meta, 3));
  CHECK(ToolMeta::copies == 0);
  CHECK(result.output() == "cat x for bob");
  REQUIRE(sightings.size() == 1);
  CHECK(sightings[0].meta == &meta);
  CHECK(sightings[0].budget_value == 3);
}

TEST_CASE("a terminal decision ends the dispatch - it may depend on the pass-through parameters") {
  sightings.clear();
  Set set;
  set.add<CheckCall>(appending("a"));
  const auto gate = set.add<CheckCall>(
      [](const ToolCall& call, const ToolMeta& meta, const int& budget) -> Task<Decision> {
        if (budget < static_cast<int>(call.args.size()) || meta.owner == "mallory")
          co_return hookset::reject("over budget or untrusted");
        co_return hookset::pass();
      });
  set.add<CheckCall>(appending("z"));
  const ToolMeta trusted{"alice"}, untrusted{"mallory"};

  const auto rejected = hookset::sync_wait(set.call<CheckCall>(ToolCall{"ls", ""}, untrusted, 9));
  CHECK(rejected.rejected());
  CHECK(rejected.decided_by == gate);
  CHECK(rejected.input.args == "a");
  CHECK(sightings.size() == 1);  // neither the last hook nor the default ran

  sightings.clear();
  const auto over = hookset::sync_wait(set.call<CheckCall>(ToolCall{"ls", "xyz"}, trusted, 2));
  CHECK(over.rejected());
  const auto ran = hookset::sync_wait(set.call<CheckCall>(ToolCall{"ls", ""}, trusted, 9));
  CHECK(ran.output() == "ls az for alice");
}

TEST_CASE("an asynchronous default and Task hooks with a pass-through parameter") {
  Set set;
  set.add<AsyncCheck>(
      [](const int& x, const ToolMeta& meta) -> Task<hookset::decision_t<AsyncCheck>> {
        co_return hookset::rewrite(x * static_cast<int>(meta.owner.size()));
      });
  set.add<AsyncCheck>([](const int& x, const ToolMeta&) -> hookset::decision_t<AsyncCheck> {
    return hookset::rewrite(x + 1);
  });
  const ToolMeta meta{"abc"};
  ToolMeta::copies = 0;
  const auto result = hookset::sync_wait(set.call<AsyncCheck>(2, meta));
  CHECK(ToolMeta::copies == 0);
  CHECK(result.input == 7);         // 2 * 3 + 1
  CHECK(result.output() == 7 + 3);  // the default adds the owner's length
}

TEST_CASE("pass-through parameters reach stateful hooks and add_hooks objects") {
  struct Counter {
    int seen = 0;
    Decision operator()(const ToolCall& call, const ToolMeta& meta, const int& budget) {
      ++seen;
      return hookset::rewrite(ToolCall{call.tool, call.args + meta.owner + std::to_string(budget)});
    }
  };
  struct Plugin {
    Decision operator()(CheckCall, const ToolCall& call, const ToolMeta&, const int&) const {
      return hookset::rewrite(ToolCall{call.tool, call.args + "!"});
    }
  };
  Set set;
  hookset::Stateful<Counter> counter{Counter{}};
  set.add<CheckCall>(counter);
  set.add_hooks(Plugin{});
  const ToolMeta meta{"eve"};
  const auto result = hookset::sync_wait(set.call<CheckCall>(ToolCall{"ls", ""}, meta, 1));
  CHECK(result.input.args == "eve1!");
  CHECK(hookset::sync_wait(counter.with_lock([](Counter& c) { return c.seen; })) == 1);
}
