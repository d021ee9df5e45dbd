#include "policy.hpp"

#include "metrics.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>

using namespace std::chrono_literals;

void add_metrics(ServiceHooks& hooks, Metrics& metrics) {
  hooks.intercept_all(
      [&metrics](auto next, auto&&... args) -> hookset::Task<typename decltype(next)::output> {
        const auto start = Metrics::clock::now();
        try {
          auto output = co_await next(args...);
          metrics.record_dispatch(next.slot_name(), Metrics::clock::now() - start, false);
          co_return output;
        } catch (...) {
          metrics.record_dispatch(next.slot_name(), Metrics::clock::now() - start, true);
          throw;
        }
      },
      {.name = "metrics"});
}

// "notes/../a.txt" -> "/workspace/a.txt": relative paths are the workspace's, and "." and ".."
// are resolved before any policy looks at the path.
std::string normalise_path(std::string_view raw) {
  std::filesystem::path path(raw);
  if (path.is_relative()) path = std::filesystem::path(workspace_root) / path;
  std::string normal = path.lexically_normal().generic_string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}
bool inside_workspace(std::string_view path) {
  return path.size() > workspace_root.size() && path.starts_with(workspace_root) &&
         path[workspace_root.size()] == '/';
}

void add_policies(ServiceHooks& hooks, Metrics& metrics) {
  // Every call (any key), first: counted per tool.
  hooks.add<CheckTool>(
      hookset::any_key,
      [&metrics](const ToolCall&, std::string_view tool) -> hookset::decision_t<CheckTool> {
        metrics.count_tool_call(tool);
        return hookset::pass();
      },
      {.name = "audit-every-call", .priority = hookset::Priority{-100}});
  // The fs_* tools: a string path, normalised (the rewritten call is what the tool gets).
  hooks.add<CheckTool>(
      hookset::glob("fs_*"),
      [](const ToolCall& call, std::string_view) -> hookset::decision_t<CheckTool> {
        const json::value* path = call.args.if_contains("path");
        if (!path || !path->is_string())
          return hookset::reject("fs tools need a string \"path\" argument");
        std::string normal = normalise_path(path->get_string());
        if (normal == path->get_string()) return hookset::pass();
        ToolCall rewritten = call;
        rewritten.args["path"] = normal;
        return hookset::rewrite(std::move(rewritten));
      },
      {.name = "fs-normalise-path", .priority = hookset::Priority{-10}});
  // Per-tool gates.
  hooks.add<CheckTool>(hookset::key("shell"),
                       [](const ToolCall&, std::string_view) -> hookset::decision_t<CheckTool> {
                         return hookset::reject("shell is disabled by policy");
                       },
                       {.name = "shell-disabled"});
  hooks.add<CheckTool>(
      hookset::key("http_get"),
      [](const ToolCall& call, std::string_view) -> hookset::decision_t<CheckTool> {
        if (call.url && call.url->scheme == "https") return hookset::pass();
        return hookset::reject("http_get allows https URLs only");
      },
      {.name = "http-get-https-only"});
}

// The write policy. The guard sits on the effect (a write to the workspace), not on the tool
// that asks for it: fs_write, a crawl's saved pages and any later tool pass the same hooks.
void add_write_policy(ServiceHooks& hooks, HookNames& names) {
  // Each hook registered under its name, remembered for the answers that name it.
  const auto add = [&hooks, &names](std::string name, auto hook) {
    names[hooks.add<CheckWrite>(std::move(hook), {.name = name})] = name;
  };
  // A mutator: the path as the workspace stores it ("crawl/../../etc/x" -> "/etc/x").
  add("normalise-path", [](const FileWrite& write) -> hookset::decision_t<CheckWrite> {
    std::string normal = normalise_path(write.path);
    if (normal == write.path) return hookset::pass();
    FileWrite rewritten = write;
    rewritten.path = std::move(normal);
    return hookset::rewrite(std::move(rewritten));
  });
  // Validators: they see the write as every mutator left it, whatever the registration order.
  add("workspace-only", hookset::validator([](const FileWrite& write) -> hookset::Validation {
        if (inside_workspace(write.path)) return hookset::pass();
        return hookset::reject(write.tool + " writes outside the workspace (" +
                               std::string(workspace_root) + "): " + write.path);
      }));
  // Names a file system takes: no control bytes (NUL ends a C string: "a\0.txt" would be "a"),
  // none longer than NAME_MAX (255 bytes), the path within PATH_MAX (4,096).
  add("portable-names", hookset::validator([](const FileWrite& write) -> hookset::Validation {
        if (write.path.size() > 4096) return hookset::reject("a path longer than 4096 bytes");
        for (const char c : write.path)
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
            return hookset::reject("a path with a control character (NUL, newline, ...)");
        for (std::size_t start = 0; start < write.path.size();) {
          const std::size_t end = std::min(write.path.find('/', start), write.path.size());
          if (end - start > 255) return hookset::reject("a file name longer than 255 bytes");
          start = end + 1;
        }
        return hookset::pass();
      }));
}

WriteEffect write_boundary(const ServiceHost& hooks, const HookNames& names, Workspace& workspace) {
  return [&hooks, &names, &workspace](FileWrite write) -> hookset::Task<std::string> {
    hookset::pipeline_result_t<CheckWrite> outcome =
        co_await hooks.call<CheckWrite>(std::move(write));
    if (outcome.rejected()) {
      const auto name = names.find(outcome.decided_by);
      throw EffectRefused(outcome.reason(), name == names.end() ? "CheckWrite" : name->second,
                          outcome.input.path);
    }
    if (outcome.completed()) co_return outcome.output();  // already there: nothing written
    workspace.write(outcome.input.path, std::move(outcome.input.content));
    co_return outcome.input.path;
  };
}

// Stands in for a call to a remote policy or audit service.
net::awaitable<void> remote_call(std::chrono::milliseconds latency) {
  net::steady_timer timer(co_await net::this_coro::executor, latency);
  co_await timer.async_wait(net::use_awaitable);  // operation_aborted when cut off
}

namespace {
std::atomic<std::chrono::milliseconds::rep> guard_limit_ms{500};
}  // namespace
void set_guard_time_limit(std::chrono::milliseconds limit) { guard_limit_ms = limit.count(); }
std::chrono::milliseconds guard_time_limit() { return std::chrono::milliseconds{guard_limit_ms}; }

void add_guards(ServiceHooks& hooks, std::chrono::milliseconds time_limit) {
  // Outbound requests: the egress policy (1 ms) and the URL reputation service (3 ms, a plugin:
  // plugins/url_reputation.cpp) judge each call that has a URL at the same time, as the tool
  // will fetch it (ToolCall::url: parsed, canonical). The egress policy answers first: the
  // machine the service runs on and private networks are out of bounds (a URL is no way to reach
  // the service itself), the internet in.
  hooks.add<PermitTool>(
      [](const ToolCall& call) -> net::awaitable<hookset::Verdict<>> {
        if (!call.url) co_return hookset::Verdict<>{};
        co_await remote_call(1ms);
        if (is_own_network(call.url->host))
          co_return hookset::Verdict<>{hookset::Permission::deny,
                                       "egress to this machine or a private network (" +
                                           call.url->host.text + ") is not allowed"};
        co_return hookset::Verdict<>{hookset::Permission::allow, "egress to the internet allowed"};
      },
      {.name = "egress-policy", .timeout = time_limit});
  // A crawl is watched while it runs: the crawl-budget service answers after 20 ms, and stops
  // crawls of more than 10 pages (which by then are well under way).
  hooks.add<WatchTool>(
      [](const ToolCall& call) -> net::awaitable<hookset::Verdict<>> {
        if (call.tool != "crawl") co_return hookset::Verdict<>{};
        co_await remote_call(20ms);
        const json::value* pages = call.args.if_contains("pages");
        if (pages && pages->is_int64() && pages->get_int64() > 10)
          co_return hookset::Verdict<>{hookset::Permission::deny, "crawl budget: at most 10 pages"};
        co_return hookset::Verdict<>{};
      },
      {.name = "crawl-budget", .timeout = time_limit});
}

void add_audits(ServiceHooks& hooks) {
  hooks.add<AuditCall>(
      [](const ToolCall& call, const std::string&) -> net::awaitable<std::optional<std::string>> {
        co_await remote_call(2ms);
        const std::string args = json::serialize(call.args);
        if (args.find("sk-") != std::string::npos || args.find("password") != std::string::npos)
          co_return "secrets-scan: the arguments look like they hold a secret";
        co_return std::nullopt;
      },
      {.name = "secrets-scan", .timeout = 500ms, .on_failure = hookset::FailOpen});
  hooks.add<AuditCall>(
      [](const ToolCall& call,
         const std::string& verdict) -> net::awaitable<std::optional<std::string>> {
        co_await remote_call(3ms);
        co_return "compliance-log: recorded " + call.tool + " (" + verdict + ")";
      },
      {.name = "compliance-log", .timeout = 500ms, .on_failure = hookset::FailOpen});
  // An export to a remote log that never answers: cut off after 50 ms and skipped, every time.
  hooks.add<AuditCall>(
      [](const ToolCall&, const std::string&) -> net::awaitable<std::optional<std::string>> {
        co_await remote_call(10s);
        co_return "siem-export: delivered";
      },
      {.name = "siem-export", .timeout = 50ms, .on_failure = hookset::FailOpen});
}

json::value error_body(std::string message) { return {{"error", std::move(message)}}; }

namespace {

json::array describe(const hookset::Verdicts<>& verdicts) {
  json::array list;
  for (const auto& contribution : verdicts.contributions) {
    const hookset::Permission decision = contribution.value.decision;
    json::object entry{{"guard", contribution.hook ? contribution.name : "default"},
                       {"decision", decision == hookset::Permission::allow ? "allow"
                                    : decision == hookset::Permission::ask ? "ask"
                                                                           : "deny"},
                       {"reason", contribution.value.reason}};
    if (contribution.value.failed()) entry["failed"] = true;  // it did not judge: see below
    list.push_back(std::move(entry));
  }
  return list;
}

// What a call's answer says so far, and the verdict its audits get.
struct Outcome {
  json::object answer;
  http::status status = http::status::ok;
  std::string verdict = "ok";
  std::optional<std::chrono::seconds> retry_after{};

  void refuse(const std::string& reason, const std::string& by) {
    status = http::status::forbidden;
    verdict = "refused";
    answer["refused"] = true;
    answer["reason"] = reason;
    answer["refused_by"] = by;
  }
  // A guard that could not decide (it threw, or ran out of time: under load, a remote policy
  // service down) is no refusal: 503, try again.
  void undecided(const hookset::Attributed<hookset::Verdict<>>& guard) {
    status = http::status::service_unavailable;
    verdict = "unavailable";
    retry_after = std::chrono::seconds{1};
    answer["failed_guard"] = guard.name;
    answer["error"] =
        "guard " + guard.name + " could not decide (" + guard.value.reason + "): try again later";
  }
  void fail(http::status code, const std::string& error) {
    status = code;
    verdict = "failed";
    answer["error"] = error;
  }
};

// 1. May the call be made at all? A deny that a guard judged is a refusal (403); when every
// objection is a guard that could not decide, the service cannot tell (503).
void judge_permit(const hookset::Verdicts<>& permit, Outcome& outcome) {
  outcome.answer["verdicts"] = describe(permit);
  const hookset::Attributed<hookset::Verdict<>>* undecided = nullptr;
  for (const auto& contribution : permit.contributions) {
    if (contribution.value.decision == hookset::Permission::allow) continue;
    if (!contribution.value.failed()) {
      outcome.refuse(contribution.value.reason, contribution.hook ? contribution.name : "default");
      return;
    }
    if (!undecided) undecided = &contribution;
  }
  if (undecided) outcome.undecided(*undecided);
}

// 2. The call itself: CheckTool's pipeline (its hooks pass, rewrite or refuse the call; its
// default runs the tool), with WatchTool's guards watching it - a tripwire. The first guard
// that objects stops the tool at once; what the tool's result would change (a crawl's saved
// pages) is changed only once every guard has allowed (the admission), through the write effect.
net::awaitable<void> run_watched(const ServiceHost::frozen_type& hooks, const ToolCall& call,
                                 std::string_view key, Outcome& result, ToolCall& checked) {
  using Checked = hookset::pipeline_result_t<CheckTool>;
  auto work = [&](hookset::Admission& admission) -> hookset::Task<Checked> {
    Checked outcome = co_await hooks.call<CheckTool>(call, key);
    if (outcome.completed())
      if (const Tool* tool = tool_registry().find(call.tool); tool && tool->commit)
        if (co_await admission.admit()) co_await tool->commit(outcome.output());
    co_return outcome;
  };
  auto watched = hookset::tripwire(hooks.call<WatchTool>(call)).around(work);
  hookset::Guarded<Checked> guarded =
      co_await hookset::asio::async_run(std::move(watched), net::use_awaitable);
  json::object& answer = result.answer;
  if (guarded.tripped()) {
    answer["stopped"] = true;
    answer["stopped_by"] = guarded.trip->name;
    if (guarded.trip->value.failed()) {
      result.undecided(*guarded.trip);
    } else {
      result.status = http::status::forbidden;
      result.verdict = "stopped";
      answer["reason"] = guarded.trip->value.reason;
    }
    co_return;
  }
  Checked& outcome = *guarded.value;
  checked = outcome.input;
  answer["args"] = outcome.input.args;
  answer["rewritten"] = outcome.input.args != call.args;
  if (outcome.rejected()) {
    result.status = http::status::forbidden;
    result.verdict = "refused";
    answer["refused"] = true;
    answer["reason"] = outcome.reason();
  } else {
    answer["result"] = outcome.output();
  }
}

}  // namespace

net::awaitable<ToolAnswer> call_tool(const ServiceHost& host, const std::string& body) {
  boost::system::error_code parse_error;
  json::value parsed = json::parse(body, parse_error);
  if (parse_error)
    co_return ToolAnswer{http::status::bad_request,
                         error_body("malformed JSON: " + parse_error.message())};
  const json::object* object = parsed.if_object();
  const json::value* tool = object ? object->if_contains("tool") : nullptr;
  const json::value* args = object ? object->if_contains("args") : nullptr;
  if (!tool || !tool->is_string() || (args && !args->is_object()))
    co_return ToolAnswer{
        http::status::bad_request,
        error_body(R"(expected {"tool": "<name>", "args": {...}} ("args" optional))")};
  ToolCall call{std::string(tool->get_string()), args ? args->get_object() : json::object{}};
  const Tool* found = tool_registry().find(call.tool);
  if (!found)
    co_return ToolAnswer{
        http::status::not_found,
        {{"error", "unknown tool: " + call.tool}, {"tools", tool_registry().names()}}};
  // The URL as it will be fetched, before any hook sees the call.
  if (!found->url_argument.empty()) {
    const json::value* url = call.args.if_contains(found->url_argument);
    std::string why = "it is not a string";
    std::optional<WebAddress> address;
    if (url && url->is_string()) address = parse_web_address(url->get_string(), why);
    if (!address)
      co_return ToolAnswer{http::status::unprocessable_entity,
                           error_body("argument \"" + found->url_argument +
                                      "\" is not a URL the guards can judge: " + why)};
    call.args[found->url_argument] = address->text;
    call.url = std::move(address);
  }

  // One version of the hooks for the whole call, kept until its last dispatch ends: a guard
  // plugin reloaded meanwhile judges the next call, never half of this one.
  const std::shared_ptr<const ServiceHost::frozen_type> hooks = host.current();
  // The key the hooks see: the tool's name, alive for both dispatches.
  const std::string name = call.tool;
  const std::string_view key = name;
  Outcome outcome;
  outcome.answer["tool"] = name;
  ToolCall checked = call;
  try {
    const hookset::Verdicts<> permit = co_await hooks->call<PermitTool>(call);
    judge_permit(permit, outcome);
    if (outcome.status == http::status::ok)
      co_await run_watched(*hooks, call, key, outcome, checked);
  } catch (const EffectRefused& refused) {
    outcome.refuse(refused.what(), refused.by);
    outcome.answer["effect"] = {{"kind", "write"}, {"path", refused.path}};
  } catch (const QuotaExceeded& error) {
    outcome.fail(http::status::insufficient_storage, error.what());
  } catch (const ToolError& error) {
    outcome.fail(http::status::unprocessable_entity, error.what());
  } catch (const std::exception& error) {
    outcome.fail(http::status::internal_server_error,
                 std::string("tool call failed: ") + error.what());
  }
  try {
    std::vector<std::string> notes =
        co_await hooks->call<AuditCall>(checked, outcome.verdict).with_timeout(2s);
    outcome.answer["audit"] = json::value_from(notes);
  } catch (const std::exception& error) {
    outcome.answer["audit_error"] = error.what();  // the audits failed: the answer still comes
  }
  co_return ToolAnswer{outcome.status, outcome.answer, outcome.retry_after};
}
