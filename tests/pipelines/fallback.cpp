// Pipeline + Fallback slots: the default decides like a hook, and only when no hook is
// registered. Without hooks its decision is the result (a pass or rewrite meaning "run
// normally" on the input); with hooks it does not run, and when every hook passes the result is
// Pass on the input as finally rewritten.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <stdexcept>
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
struct ToolMeta {
  std::string kind;
};
struct Ask {
  std::string reason;  // a custom terminal: ask the user
};

struct DecideToolCall : hookset::Slot<std::string(ToolCall, const ToolMeta&), hookset::Pipeline,
                                      hookset::Fallback, hookset::Terminals<Ask>> {
  // The slot's own decision type, named inside the slot.
  static hookset::decision_t<DecideToolCall> default_impl(const ToolCall& call,
                                                          const ToolMeta& meta) {
    test_support::note("default(" + call.args + ")");
    if (meta.kind == "dangerous") return hookset::reject("dangerous by default");
    if (meta.kind == "cached") return hookset::complete(std::string("cached output"));
    if (meta.kind == "untrimmed") return hookset::rewrite(ToolCall{call.tool, "trimmed"});
    if (meta.kind == "unknown") return Ask{"unknown tool"};
    return hookset::pass();
  }
};
// The same with an asynchronous default; Fallback written before Pipeline.
struct DecideAsync
    : hookset::Slot<int(int, const int& limit), hookset::Fallback, hookset::Pipeline> {
  static Task<hookset::Decision<int, int>> default_impl(const int& x, const int& limit) {
    test_support::note("async default");
    if (x > limit) co_return hookset::reject("over the limit");
    co_return hookset::rewrite(x * 2);
  }
};
using Set = hookset::HookSet<DecideToolCall, DecideAsync>;
using Decision = hookset::decision_t<DecideToolCall>;
using Result = hookset::pipeline_result_t<DecideToolCall>;

static_assert(
    std::is_same_v<Result, hookset::PipelineResult<ToolCall, std::string, hookset::Pass, Ask>>);

Result decide(const Set& set, std::string kind, ToolCall call = {"ls", "-l"}) {
  const ToolMeta meta{std::move(kind)};
  return hookset::sync_wait(set.call<DecideToolCall>(std::move(call), meta));
}

auto appending(std::string tag) {
  return [tag](const ToolCall& call, const ToolMeta&) -> Decision {
    test_support::note(tag + " saw " + call.args);
    return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}
auto passing(std::string tag) {
  return [tag](const ToolCall& call, const ToolMeta&) -> Task<Decision> {
    test_support::note(tag + " saw " + call.args);
    co_return hookset::pass();
  };
}

}  // namespace

TEST_CASE("no hook: the default's decision is the result") {
  Set set;
  SECTION("reject") {
    auto& log = test_support::fresh_log();
    const Result result = decide(set, "dangerous");
    CHECK(result.rejected());
    CHECK(result.reason() == "dangerous by default");
    CHECK_FALSE(result.passed());
    CHECK_FALSE(result.decided_by);
    CHECK(result.input == ToolCall{"ls", "-l"});
    CHECK(log == test_support::Log{"default(-l)"});
  }
  SECTION("complete") {
    const Result result = decide(set, "cached");
    CHECK(result.completed());
    CHECK(result.output() == "cached output");
  }
  SECTION("a custom terminal") {
    const Result result = decide(set, "unknown");
    CHECK(result.is<Ask>());
    CHECK(result.get<Ask>().reason == "unknown tool");
  }
  SECTION("pass: run normally on the input as given") {
    const Result result = decide(set, "plain");
    CHECK(result.passed());
    CHECK_FALSE(result.completed());
    CHECK_FALSE(result.rejected());
    CHECK(result.input == ToolCall{"ls", "-l"});
  }
  SECTION("rewrite: run normally on the rewritten input") {
    const Result result = decide(set, "untrimmed");
    CHECK(result.passed());
    CHECK(result.input == ToolCall{"ls", "trimmed"});
  }
}

TEST_CASE("hooks registered: the default does not run - all pass gives the last input") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<DecideToolCall>(appending("a"));
  set.add<DecideToolCall>(passing("p"));
  set.add<DecideToolCall>(appending("b"));
  // The default would reject this one: it is not asked.
  const Result result = decide(set, "dangerous", {"ls", ""});
  CHECK(result.passed());
  CHECK(result.input == ToolCall{"ls", "ab"});  // hook 1's rewrite reached hook 2 and 3
  CHECK_FALSE(result.decided_by);
  CHECK(log == test_support::Log{"a saw ", "p saw a", "b saw a"});
}

TEST_CASE("hooks registered: a hook's terminal decision ends it - later hooks do not run") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<DecideToolCall>(appending("a"));
  const auto gate =
      set.add<DecideToolCall>([](const ToolCall& call, const ToolMeta& meta) -> Task<Decision> {
        test_support::note("gate saw " + call.args);
        if (meta.kind == "dangerous") co_return hookset::reject("blocked by the gate");
        if (meta.kind == "cached") co_return hookset::complete(std::string("from the gate"));
        co_return Ask{"gate asks"};
      });
  set.add<DecideToolCall>(appending("z"));

  const Result rejected = decide(set, "dangerous", {"ls", ""});
  CHECK(rejected.rejected());
  CHECK(rejected.reason() == "blocked by the gate");
  CHECK(rejected.decided_by == gate);
  CHECK(rejected.input.args == "a");
  CHECK(log == test_support::Log{"a saw ", "gate saw a"});

  CHECK(decide(set, "cached").output() == "from the gate");
  CHECK(decide(set, "other").is<Ask>());
}

TEST_CASE("removing the last hook hands the decision back to the default") {
  auto& log = test_support::fresh_log();
  Set set;
  const auto id = set.add<DecideToolCall>(passing("p"));
  CHECK(decide(set, "dangerous").passed());
  set.remove(id);
  CHECK(decide(set, "dangerous").rejected());
  CHECK(log == test_support::Log{"p saw -l", "default(-l)"});
}

TEST_CASE("hooks that all failed open leave the decision to the default (as Fallback slots)") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<DecideToolCall>(
      [](const ToolCall&, const ToolMeta&) -> Decision { throw std::runtime_error("down"); },
      {.on_failure = hookset::FailOpen});
  CHECK(decide(set, "dangerous").rejected());
  CHECK(log == test_support::Log{"default(-l)"});
}

TEST_CASE("an asynchronous deciding default - and Task hooks instead of it") {
  auto& log = test_support::fresh_log();
  Set set;
  const int limit = 10;
  const auto doubled = hookset::sync_wait(set.call<DecideAsync>(4, limit));
  CHECK(doubled.passed());
  CHECK(doubled.input == 8);
  const auto over = hookset::sync_wait(set.call<DecideAsync>(40, limit));
  CHECK(over.rejected());
  CHECK(over.reason() == "over the limit");
  CHECK(log == test_support::Log{"async default", "async default"});

  set.add<DecideAsync>([](const int& x, const int&) -> Task<hookset::Decision<int, int>> {
    co_return hookset::rewrite(x + 1);
  });
  set.add<DecideAsync>([](const int& x, const int& lim) -> Task<hookset::Decision<int, int>> {
    if (x > lim) co_return hookset::reject("hook: over the limit");
    co_return hookset::pass();
  });
  const auto passed = hookset::sync_wait(set.call<DecideAsync>(40 - 31, limit));
  CHECK(passed.passed());
  CHECK(passed.input == 10);
  const auto rejected = hookset::sync_wait(set.call<DecideAsync>(10, limit));
  CHECK(rejected.reason() == "hook: over the limit");
  CHECK(log.size() == 2);  // the default ran no more
}

TEST_CASE("observed dispatches decide the same - and report each hook's decision") {
  struct Audit : hookset::Observer {
    std::vector<std::string> lines;
    bool wants_hook_events() const noexcept override { return true; }
    void on_hook_end(const hookset::HookEvent& e) override {
      lines.push_back(std::string(e.name) + ": " + std::string(e.decision));
    }
  } audit;
  Set set;
  set.set_observer(&audit);
  CHECK(decide(set, "dangerous").rejected());  // no hook: the default, watched
  CHECK(audit.lines.empty());                  // (the default is no hook)
  set.add<DecideToolCall>(appending("a"), {.name = "normalise"});
  set.add<DecideToolCall>(passing("p"), {.name = "inspect"});
  const Result result = decide(set, "dangerous", {"ls", ""});
  CHECK(result.passed());
  CHECK(result.input.args == "a");
  CHECK(audit.lines == std::vector<std::string>{"normalise: rewrite", "inspect: pass"});
}
