#include "policy.hpp"

#include "metrics.hpp"

#include <chrono>
#include <exception>
#include <filesystem>
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
  // Validators (hookset::validator) check the call as the mutating hooks below leave it, whatever
  // the order they are registered in: they can only pass or refuse it, never rewrite it. Here
  // fs_write's path is a normalised string by then (fs-normalise-path, a mutator, ran first).
  hooks.add<CheckTool>(
      hookset::key("fs_write"),
      hookset::validator([](const ToolCall& call, std::string_view) -> hookset::Validation {
        const std::string_view path = call.args.at("path").get_string();
        if (inside_workspace(path)) return hookset::pass();
        return hookset::reject("fs_write outside the workspace (" + std::string(workspace_root) +
                               "): " + std::string(path));
      }),
      {.name = "fs-write-workspace-only"});
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
        const json::value* url = call.args.if_contains("url");
        if (url && url->is_string() && url->get_string().starts_with("https://"))
          return hookset::pass();
        return hookset::reject("http_get allows https URLs only");
      },
      {.name = "http-get-https-only"});
}

// Stands in for a call to a remote audit service.
net::awaitable<void> remote_call(std::chrono::milliseconds latency) {
  net::steady_timer timer(co_await net::this_coro::executor, latency);
  co_await timer.async_wait(net::use_awaitable);  // operation_aborted when cut off
}

void add_guards(ServiceHooks& hooks) {
  // Outbound requests: the egress policy (1 ms) and the URL reputation service (3 ms) judge each
  // http_get at the same time; the egress policy answers first, and allows.
  hooks.add<PermitTool>(
      [](const ToolCall& call) -> net::awaitable<hookset::Verdict<>> {
        if (call.tool != "http_get") co_return hookset::Verdict<>{};
        co_await remote_call(1ms);
        co_return hookset::Verdict<>{hookset::Permission::allow, "egress to the internet allowed"};
      },
      {.name = "egress-policy", .timeout = 500ms});
  hooks.add<PermitTool>(
      [](const ToolCall& call) -> net::awaitable<hookset::Verdict<>> {
        if (call.tool != "http_get") co_return hookset::Verdict<>{};
        co_await remote_call(3ms);
        const json::value* url = call.args.if_contains("url");
        if (url && url->is_string() && url->get_string().find("evil.example") != json::string::npos)
          co_return hookset::Verdict<>{hookset::Permission::deny, "host on the blocklist"};
        co_return hookset::Verdict<>{};
      },
      {.name = "url-reputation", .timeout = 500ms});
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
      {.name = "crawl-budget", .timeout = 500ms});
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

json::array describe(const hookset::Verdicts<>& verdicts) {
  json::array list;
  for (const auto& contribution : verdicts.contributions) {
    const hookset::Permission decision = contribution.value.decision;
    list.push_back({{"guard", contribution.hook ? contribution.name : "default"},
                    {"decision", decision == hookset::Permission::allow ? "allow"
                                 : decision == hookset::Permission::ask ? "ask"
                                                                        : "deny"},
                    {"reason", contribution.value.reason}});
  }
  return list;
}

// 2. The call itself: CheckTool's pipeline (its hooks pass, rewrite or refuse the call; its
// default runs the tool), with WatchTool's guards watching it - a tripwire. The first guard
// that objects stops the tool at once; what the tool's result would change (a crawl's saved
// pages) is changed only once every guard has allowed (the admission).
net::awaitable<void> run_watched(const ServiceHooks& hooks, const ToolCall& call,
                                 std::string_view key, json::object& answer, http::status& status,
                                 std::string& verdict, ToolCall& checked) {
  using Checked = hookset::pipeline_result_t<CheckTool>;
  auto work = [&](hookset::Admission& admission) -> hookset::Task<Checked> {
    Checked outcome = co_await hooks.call<CheckTool>(call, key);
    if (outcome.completed())
      if (const Tool* tool = tool_registry().find(call.tool); tool && tool->commit)
        if (co_await admission.admit()) tool->commit(outcome.output());
    co_return outcome;
  };
  auto watched = hookset::tripwire(hooks.call<WatchTool>(call)).around(work);
  hookset::Guarded<Checked> guarded =
      co_await hookset::asio::async_run(std::move(watched), net::use_awaitable);
  if (guarded.tripped()) {
    status = http::status::forbidden;
    verdict = "stopped";
    answer["stopped"] = true;
    answer["reason"] = guarded.trip->value.reason;
    answer["stopped_by"] = guarded.trip->name;
    co_return;
  }
  Checked& outcome = *guarded.value;
  checked = outcome.input;
  answer["args"] = outcome.input.args;
  answer["rewritten"] = outcome.input.args != call.args;
  if (outcome.rejected()) {
    status = http::status::forbidden;
    verdict = "refused";
    answer["refused"] = true;
    answer["reason"] = outcome.reason();
  } else {
    answer["result"] = outcome.output();
  }
}

net::awaitable<ToolAnswer> call_tool(const ServiceHooks& hooks, const std::string& body) {
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
  if (!tool_registry().find(call.tool))
    co_return ToolAnswer{
        http::status::not_found,
        {{"error", "unknown tool: " + call.tool}, {"tools", tool_registry().names()}}};

  // The key the hooks see: the tool's name, alive for both dispatches.
  const std::string name = call.tool;
  const std::string_view key = name;
  json::object answer{{"tool", name}};
  http::status status = http::status::ok;
  std::string verdict = "ok";
  ToolCall checked = call;
  try {
    // 1. May the call be made at all? PermitTool's guards, concurrently, joined by verdict.
    const hookset::Verdicts<> permit = co_await hooks.call<PermitTool>(call);
    answer["verdicts"] = describe(permit);
    if (permit.decision != hookset::Permission::allow) {
      const auto* by = permit.decided_by();
      status = http::status::forbidden;
      verdict = "refused";
      answer["refused"] = true;
      answer["reason"] = by->value.reason;
      answer["refused_by"] = by->name;
    } else {
      co_await run_watched(hooks, call, key, answer, status, verdict, checked);
    }
  } catch (const QuotaExceeded& error) {
    status = http::status::insufficient_storage;
    verdict = "failed";
    answer["error"] = error.what();
  } catch (const ToolError& error) {
    status = http::status::unprocessable_entity;
    verdict = "failed";
    answer["error"] = error.what();
  } catch (const std::exception& error) {
    status = http::status::internal_server_error;
    verdict = "failed";
    answer["error"] = std::string("tool call failed: ") + error.what();
  }
  try {
    std::vector<std::string> notes =
        co_await hooks.call<AuditCall>(checked, verdict).with_timeout(2s);
    answer["audit"] = json::value_from(notes);
  } catch (const std::exception& error) {
    answer["audit_error"] = error.what();  // the audits failed: the answer still comes
  }
  co_return ToolAnswer{status, answer};
}
