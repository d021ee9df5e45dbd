// Pipeline slots: each hook gets the current input and decides - pass it on (maybe rewritten)
// or end the dispatch (complete, reject, the slot's own terminal kinds). Rewrites thread through
// synchronous and Task hooks; each terminal decision at the first, middle and last hook; no
// hooks; the default on the rewritten input; priorities and named order; the audit events.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <optional>
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
struct Pause {
  std::string reason;
};
struct Escalate {};

struct RunTool
    : hookset::Slot<std::string(ToolCall), hookset::Pipeline, hookset::Terminals<Pause, Escalate>> {
  static std::string default_impl(const ToolCall& call) {
    test_support::note("default(" + call.tool + " " + call.args + ")");
    return "ran " + call.tool + " " + call.args;
  }
};
struct AsyncDefault : hookset::Slot<int(int), hookset::Pipeline> {
  static Task<int> default_impl(int x) { co_return x * 10; }
};
using Set = hookset::HookSet<RunTool, AsyncDefault>;
using Decision = hookset::decision_t<RunTool>;
using Result = hookset::pipeline_result_t<RunTool>;

// A synchronous or Task hook that appends `tag` to the arguments (a rewrite), noting what it saw.
auto append(std::string tag, bool async) {
  return [tag, async](const ToolCall& call) -> Task<Decision> {
    test_support::note(tag + " saw " + call.args);
    (void)async;
    co_return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}
auto append_sync(std::string tag) {
  return [tag](const ToolCall& call) -> Decision {
    test_support::note(tag + " saw " + call.args);
    return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}

Result run(const Set& set, ToolCall call = {"ls", ""}) {
  return hookset::sync_wait(set.call<RunTool>(call));
}

}  // namespace

TEST_CASE("no hooks: the default completes on the input as given") {
  auto& log = test_support::fresh_log();
  Set set;
  const Result result = run(set, {"ls", "-l"});
  CHECK(result.completed());
  CHECK(result.output() == "ran ls -l");
  CHECK(result.input == ToolCall{"ls", "-l"});
  CHECK_FALSE(result.decided_by);
  CHECK(log == test_support::Log{"default(ls -l)"});
}

TEST_CASE(
    "rewrites thread through synchronous and Task hooks - the default runs on the final input") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(append_sync("a"));
  set.add<RunTool>(append("b", true));
  set.add<RunTool>([](const ToolCall& call) -> Decision {
    test_support::note("c saw " + call.args);
    return hookset::pass();
  });
  set.add<RunTool>(append_sync("d"));
  const Result result = run(set);
  CHECK(result.output() == "ran ls abd");
  CHECK(result.input.args == "abd");
  CHECK(log == test_support::Log{"a saw ", "b saw a", "c saw ab", "d saw ab", "default(ls abd)"});
}

TEST_CASE("each terminal decision at the first - middle and last hook ends the dispatch there") {
  const std::vector<std::pair<std::string, Decision>> terminals = {
      {"complete", hookset::complete(std::string("done early"))},
      {"reject", hookset::reject("not allowed")},
      {"pause", Pause{"needs approval"}},
      {"escalate", Escalate{}}};
  for (const auto& [name, terminal] : terminals) {
    for (std::size_t at = 0; at < 3; ++at) {
      CAPTURE(name, at);
      auto& log = test_support::fresh_log();
      Set set;
      std::vector<hookset::HookId> ids;
      for (std::size_t i = 0; i < 3; ++i) {
        const std::string tag(1, static_cast<char>('a' + i));
        if (i == at)
          ids.push_back(
              set.add<RunTool>([tag, decision = terminal](const ToolCall& call) -> Task<Decision> {
                test_support::note(tag + " saw " + call.args);
                co_return decision;
              }));
        else ids.push_back(set.add<RunTool>(append_sync(tag)));
      }
      const Result result = run(set);
      CHECK(log.size() == at + 1);  // later hooks and the default did not run
      CHECK(result.decided_by == ids[at]);
      CHECK(result.input.args.size() == at);  // the rewrites before it
      if (name == "complete") CHECK(result.output() == "done early");
      if (name == "reject") CHECK(result.reason() == "not allowed");
      if (name == "pause") CHECK(result.get<Pause>().reason == "needs approval");
      if (name == "escalate") CHECK(result.is<Escalate>());
    }
  }
}

TEST_CASE("an asynchronous default completes the pipeline") {
  Set set;
  set.add<AsyncDefault>(
      [](int x) -> hookset::decision_t<AsyncDefault> { return hookset::rewrite(x + 1); });
  const auto result = hookset::sync_wait(set.call<AsyncDefault>(4));
  CHECK(result.output() == 50);
  CHECK(result.input == 5);
}

TEST_CASE("priorities and named order decide who sees the input first") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(append_sync("late"), hookset::Priority{10});
  set.add<RunTool>(append_sync("early"), hookset::Priority{-10});
  set.add<RunTool>(append_sync("normaliser"),
                   {.name = "normaliser", .priority = hookset::Priority{5}});
  set.add<RunTool>(append_sync("checker"),
                   {.name = "checker", .after = {"normaliser"}});  // priority 0
  const Result result = run(set);
  CHECK(result.input.args == "earlynormalisercheckerlate");
  CHECK(log.size() == 5);
}

TEST_CASE("the audit trail: each hook's decision - reason and rewrite reach the observer") {
  struct Audit : hookset::Observer {
    std::vector<std::string> lines;
    bool wants_hook_events() const noexcept override { return true; }
    void on_hook_end(const hookset::HookEvent& e) override {
      lines.push_back(std::string(e.name) + ": " + std::string(e.decision) +
                      (e.rewritten ? " (rewritten)" : "") +
                      (e.reason.empty() ? "" : " - " + std::string(e.reason)));
    }
  } audit;
  Set set;
  set.set_observer(&audit);
  set.add<RunTool>(append_sync("x"), {.name = "normalise"});
  set.add<RunTool>([](const ToolCall&) { return Decision(hookset::pass()); }, {.name = "inspect"});
  set.add<RunTool>([](const ToolCall&) { return Decision(Pause{"human review"}); },
                   {.name = "gate"});
  run(set);
  CHECK(audit.lines == std::vector<std::string>{"normalise: rewrite (rewritten)", "inspect: pass",
                                                "gate: Pause - human review"});
  audit.lines.clear();
  Set rejecting;
  rejecting.set_observer(&audit);
  rejecting.add<RunTool>([](const ToolCall&) { return Decision(hookset::reject("no shell")); },
                         {.name = "policy"});
  CHECK(run(rejecting).rejected());
  CHECK(audit.lines == std::vector<std::string>{"policy: reject - no shell"});
}

TEST_CASE("a failing pipeline hook with FailOpen passes the input on unchanged") {
  Set set;
  set.add<RunTool>(append_sync("a"));
  set.add<RunTool>([](const ToolCall&) -> Decision { throw std::runtime_error("down"); },
                   {.on_failure = hookset::FailOpen});
  set.add<RunTool>(append_sync("b"));
  CHECK(run(set).input.args == "ab");
}
