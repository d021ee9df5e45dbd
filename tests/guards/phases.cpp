// Phases of a pipeline slot (docs/semantics.md "Pipeline slots", "Phases: mutate, then
// validate"): hooks registered as hookset::validator(fn) run after every mutating hook, whatever
// the registration order, on the final input, which they see as const and can only pass or
// reject. The first rejection (in the validators' own order) ends the dispatch, attributed to
// that validator; a mutator's terminal decision ends it before any validator runs.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Task;
using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;

namespace {

struct ToolCall {
  std::string tool;
  std::string args;
};
struct Workspace {
  std::string root;
};

struct RunTool : hookset::Slot<std::string(ToolCall, const Workspace&), hookset::Pipeline> {
  static std::string default_impl(const ToolCall& call, const Workspace&) {
    test_support::note("default(" + call.args + ")");
    return "ran " + call.tool + " " + call.args;
  }
};
// Pipeline + Fallback: the default decides only when no hook is registered.
struct Admit : hookset::Slot<int(std::string), hookset::Pipeline, hookset::Fallback> {
  static hookset::decision_t<Admit> default_impl(const std::string&) {
    return hookset::reject("no policy");
  }
};
// Keyed by the tool's name: each key's hooks keep the phases.
struct RunKeyed
    : hookset::Slot<std::string(std::string, std::string), hookset::Pipeline, hookset::Keyed> {
  static std::string default_impl(const std::string& args, const std::string& tool) {
    return tool + " " + args;
  }
};
using Set = hookset::HookSet<RunTool, Admit, RunKeyed>;
using Decision = hookset::decision_t<RunTool>;
using Result = hookset::pipeline_result_t<RunTool>;

const Workspace workspace{"/work"};

Result run(const Set& set, std::string args = "") {
  return hookset::sync_wait(set.call<RunTool>(ToolCall{"ls", std::move(args)}, workspace));
}

// A mutating hook appending `tag` to the arguments.
auto append(std::string tag) {
  return [tag](const ToolCall& call, const Workspace&) -> Decision {
    test_support::note(tag + " saw '" + call.args + "'");
    return hookset::rewrite(ToolCall{call.tool, call.args + tag});
  };
}
// A validator noting what it saw, passing.
auto inspect(std::string tag) {
  return hookset::validator([tag](const ToolCall& call, const Workspace&) -> hookset::Validation {
    test_support::note(tag + " saw '" + call.args + "'");
    return hookset::pass();
  });
}
// A validator noting its turn, rejecting with `reason`.
auto refuse(std::string tag, std::string reason) {
  return hookset::validator(
      [tag, reason](const ToolCall&, const Workspace&) -> hookset::Validation {
        test_support::note(tag);
        return hookset::reject(reason);
      });
}

}  // namespace

TEST_CASE("validators run on the final input after every mutator - even when registered first") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(inspect("v1"));
  set.add<RunTool>(append("a"));
  set.add<RunTool>(inspect("v2"), hookset::Priority{-100});  // a priority orders validators only
  set.add<RunTool>(append("b"), hookset::Priority{50});
  set.add<RunTool>(append("c"));
  const Result result = run(set);
  CHECK(result.completed());
  CHECK(result.output() == "ran ls acb");
  CHECK(result.input.args == "acb");
  CHECK(result.decided_by == hookset::HookId{});
  CHECK(log == test_support::Log{"a saw ''", "c saw 'a'", "b saw 'ac'", "v2 saw 'acb'",
                                 "v1 saw 'acb'", "default(acb)"});
  CHECK(set.count<RunTool>() == 5);
}

TEST_CASE("the first rejecting validator ends the dispatch and is named in decided_by") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(inspect("v1"));
  const hookset::HookId second = set.add<RunTool>(refuse("v2", "path outside the workspace"));
  set.add<RunTool>(refuse("v3", "too late"));
  set.add<RunTool>(append("a"));
  const Result result = run(set);
  CHECK(result.rejected());
  CHECK(result.reason() == "path outside the workspace");
  CHECK(result.decided_by == second);
  CHECK(result.input.args == "a");
  CHECK(log == test_support::Log{"a saw ''", "v1 saw 'a'", "v2"});  // no v3, no default
}

TEST_CASE("validators see one and the same input - none sees another one's change") {
  std::vector<const ToolCall*> seen;
  Set set;
  for (int i = 0; i < 3; ++i)
    set.add<RunTool>(hookset::validator([&seen](const ToolCall& call, const Workspace& where) {
      seen.push_back(&call);
      CHECK(&where == &workspace);  // passed through as the caller's own object
      return call.args == "x" ? hookset::Validation(hookset::pass()) : hookset::reject("changed");
    }));
  set.add<RunTool>([](const ToolCall& call, const Workspace&) -> Decision {
    return hookset::rewrite(ToolCall{call.tool, "x"});
  });
  CHECK(run(set, "y").completed());
  REQUIRE(seen.size() == 3);
  CHECK(seen[0] == seen[1]);
  CHECK(seen[1] == seen[2]);
  // Nothing a validator can return rewrites or completes.
  STATIC_REQUIRE(std::is_constructible_v<hookset::Validation, hookset::Pass>);
  STATIC_REQUIRE(std::is_constructible_v<hookset::Validation, hookset::Reject>);
  STATIC_REQUIRE(!std::is_constructible_v<hookset::Validation, hookset::Rewrite<ToolCall>>);
  STATIC_REQUIRE(!std::is_constructible_v<hookset::Validation, hookset::Complete<std::string>>);
  STATIC_REQUIRE(!std::is_constructible_v<hookset::Validation, Decision>);
  STATIC_REQUIRE(!std::is_default_constructible_v<hookset::Validation>);
}

TEST_CASE("a mutator that completes or rejects ends the dispatch before any validator") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(inspect("v1"));
  const hookset::HookId cache =
      set.add<RunTool>([](const ToolCall& call, const Workspace&) -> Decision {
        if (call.args == "cached") return hookset::complete(std::string("from cache"));
        if (call.args == "rm") return hookset::reject("destructive");
        return hookset::pass();
      });
  Result completed = run(set, "cached");
  CHECK(completed.completed());
  CHECK(completed.output() == "from cache");
  CHECK(completed.decided_by == cache);
  Result rejected = run(set, "rm");
  CHECK(rejected.rejected());
  CHECK(rejected.reason() == "destructive");
  CHECK(rejected.decided_by == cache);
  CHECK(log.empty());  // neither the validator nor the default ran
  CHECK(run(set, "ok").completed());
  CHECK(log == test_support::Log{"v1 saw 'ok'", "default(ok)"});
}

TEST_CASE("a Task validator - also one that suspends - and a validator taking a stop token") {
  auto& log = test_support::fresh_log();
  ManualEvent ready;
  Set set;
  set.add<RunTool>(hookset::validator(
      [&ready](const ToolCall& call, const Workspace&) -> Task<hookset::Validation> {
        test_support::note("async saw '" + call.args + "'");
        co_await ready;
        if (call.args.find("..") != std::string::npos) co_return hookset::reject("escapes");
        co_return hookset::pass();
      }));
  set.add<RunTool>(append("/.."));
  set.add<RunTool>(
      hookset::validator([](const ToolCall&, const Workspace&, hookset::stop_token token) {
        test_support::note(token.stop_possible() ? "token" : "no token");
        return hookset::Validation(hookset::pass());
      }),
      {.name = "with token", .priority = hookset::Priority{-1}});

  Outcome<Result> outcome;
  detach(set.call<RunTool>(ToolCall{"cat", "a"}, workspace), outcome);
  CHECK(!outcome.done);  // the async validator waits
  CHECK(log == test_support::Log{"/.. saw 'a'", "no token", "async saw 'a/..'"});
  ready.fire();
  REQUIRE(outcome.done);
  REQUIRE(!outcome.error);
  CHECK(outcome.value->rejected());
  CHECK(outcome.value->reason() == "escapes");

  log.clear();
  hookset::stop_source source;
  auto dispatch =
      set.call<RunTool>(ToolCall{"cat", "b"}, workspace).with_stop_token(source.get_token());
  const Result result = hookset::sync_wait(std::move(dispatch));
  CHECK(result.rejected());  // (`ready` stays fired: no suspension)
  CHECK(log == test_support::Log{"/.. saw 'b'", "token", "async saw 'b/..'"});
}

TEST_CASE("priorities and named order arrange the validators among themselves") {
  auto& log = test_support::fresh_log();
  Set set;
  set.add<RunTool>(refuse("late", "second"), {.name = "late", .priority = hookset::Priority{5}});
  const hookset::HookId early = set.add<RunTool>(
      refuse("early", "first"), {.name = "early", .priority = hookset::Priority{-5}});
  set.add<RunTool>(append("m"), {.name = "mutator", .priority = hookset::Priority{100}});
  Result result = run(set);
  CHECK(result.decided_by == early);
  CHECK(result.reason() == "first");
  CHECK(log == test_support::Log{"m saw ''", "early"});

  // Named order within the phase; across phases a name can only agree with it.
  log.clear();
  set.add<RunTool>(refuse("named", "third"),
                   {.name = "named", .before = {"early"}, .after = {"mutator"}});
  result = run(set);
  CHECK(result.reason() == "third");
  CHECK(log == test_support::Log{"m saw ''", "named"});
  CHECK_THROWS_AS(set.add<RunTool>(inspect("x"), {.name = "x", .before = {"mutator"}}),
                  hookset::OrderingError);
  CHECK_THROWS_AS(set.add<RunTool>(append("y"), {.name = "y", .after = {"early"}}),
                  hookset::OrderingError);
  CHECK(set.count<RunTool>() == 4);                                  // the set unchanged by either
  set.add<RunTool>(append("z"), {.name = "z", .before = {"late"}});  // agrees: allowed
  CHECK(set.count<RunTool>() == 5);
}

TEST_CASE("observers see each validator's decision - pass or reject") {
  struct Audit : hookset::Observer {
    std::vector<std::string> lines;
    bool wants_hook_events() const noexcept override { return true; }
    void on_hook_end(const hookset::HookEvent& e) override {
      lines.push_back(std::string(e.name) + ": " + std::string(e.decision) +
                      (e.reason.empty() ? "" : " - " + std::string(e.reason)));
    }
  } audit;
  Set set;
  set.set_observer(&audit);
  set.add<RunTool>(refuse("v2", "not allowed"), {.name = "deny"});
  set.add<RunTool>(inspect("v1"), {.name = "inspect", .priority = hookset::Priority{-1}});
  set.add<RunTool>(append("a"), {.name = "normalise"});
  CHECK(run(set).rejected());
  CHECK(audit.lines == std::vector<std::string>{"normalise: rewrite", "inspect: pass",
                                                "deny: reject - not allowed"});
}

TEST_CASE("extend and remove keep the phases") {
  auto& log = test_support::fresh_log();
  Set validators;
  const hookset::HookId v = validators.add<RunTool>(inspect("v"));
  Set set;
  set.add<RunTool>(append("a"));
  set.extend(validators);
  Set more;
  more.add<RunTool>(append("b"));
  set.extend(more);  // b merges after a, still before the validator
  CHECK(run(set).input.args == "ab");
  CHECK(log == test_support::Log{"a saw ''", "b saw 'a'", "v saw 'ab'", "default(ab)"});
  CHECK(set.remove(v));
  log.clear();
  run(set);
  CHECK(log == test_support::Log{"a saw ''", "b saw 'a'", "default(ab)"});
}

TEST_CASE("Pipeline + Fallback - validators are hooks - all pass is Pass - FailOpen passes") {
  Set set;
  CHECK(hookset::sync_wait(set.call<Admit>("x")).rejected());  // no hook: the default decides
  set.add<Admit>(hookset::validator([](const std::string& s) -> hookset::Validation {
    if (s.empty()) return hookset::reject("empty");
    return hookset::pass();
  }));
  set.add<Admit>(hookset::validator([](const std::string&) -> hookset::Validation {
                   throw std::runtime_error("checker down");
                 }),
                 {.on_failure = hookset::FailOpen});
  // A borrowed validator with state of its own, called as it is (not const).
  struct Counter {
    int calls = 0;
    hookset::Validation operator()(const std::string&) {
      ++calls;
      return hookset::pass();
    }
  } counter;
  set.add<Admit>(hookset::validator(std::ref(counter)));
  const auto admitted = hookset::sync_wait(set.call<Admit>("x"));
  CHECK(counter.calls == 1);
  CHECK(admitted.passed());
  CHECK(admitted.input == "x");
  CHECK(hookset::sync_wait(set.call<Admit>("")).reason() == "empty");
}

TEST_CASE("keyed pipelines - each key's hooks keep the phases") {
  Set set;
  std::vector<std::string> seen;
  set.add<RunKeyed>(hookset::any_key,
                    hookset::validator([&seen](const std::string& args, const std::string&) {
                      seen.push_back("audit " + args);
                      return hookset::Validation(hookset::pass());
                    }));
  set.add<RunKeyed>(
      hookset::key("rm"), hookset::validator([](const std::string& args, const std::string&) {
        return args.find("-rf") != std::string::npos ? hookset::reject("recursive delete")
                                                     : hookset::Validation(hookset::pass());
      }));
  set.add<RunKeyed>(
      hookset::key("rm"),
      [](const std::string& args, const std::string&) -> hookset::decision_t<RunKeyed> {
        return hookset::rewrite("-rf " + args);  // registered last, runs first
      });
  const auto rm = hookset::sync_wait(set.call<RunKeyed>(std::string("tmp"), std::string("rm")));
  CHECK(rm.rejected());
  CHECK(rm.reason() == "recursive delete");
  const auto ls = hookset::sync_wait(set.call<RunKeyed>(std::string("tmp"), std::string("ls")));
  CHECK(ls.output() == "ls tmp");
  CHECK(seen == std::vector<std::string>{"audit -rf tmp", "audit tmp"});
}
