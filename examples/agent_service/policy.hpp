#pragma once
// The policy of the agent service, in hooks: its slots, the hooks registered on them at start-up
// (policies, guards, audits, the metrics interceptor), and a tool call's way through them.
#include "tools.hpp"

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace net = boost::asio;
namespace http = boost::beast::http;
namespace json = boost::json;

class Metrics;

struct ToolCall {
  std::string tool;
  json::object args;
};

// The policy pipeline of a tool call: hooks pass, rewrite or refuse it; when all pass, the
// default runs the tool on the call as finally rewritten. Keyed by the tool's name (the last
// parameter): a hook is registered for one tool, a family of tools (a glob) or every tool, and a
// call runs only the hooks of its tool.
// (The default is a coroutine on the io_context: a slow tool works a page at a time, and is
// stopped between pages when a guard watching the call objects.)
struct CheckTool : hookset::Slot<json::value(ToolCall call, std::string_view tool),
                                 hookset::Pipeline, hookset::Keyed> {
  static net::awaitable<json::value> default_impl(const ToolCall& call, std::string_view tool) {
    const Tool* found = tool_registry().find(tool);
    if (!found) throw ToolError("unknown tool: " + std::string(tool));
    if (found->per_page.count() > 0) {
      const std::int64_t pages = page_count(call.args);
      net::steady_timer page(co_await net::this_coro::executor);
      for (std::int64_t done = 0; done < pages; ++done) {
        page.expires_after(found->per_page);
        co_await page.async_wait(net::use_awaitable);  // operation_aborted when stopped
      }
    }
    co_return found->run(call.args);
  }
};

// May a call be made at all? Guards judge it concurrently (remote policy services, as
// asio::awaitable coroutines); their verdicts are joined - a deny beats any allow, whichever
// answers first - and a guard that fails or runs out of time denies (FailClosed).
struct PermitTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall& call), hookset::Always,
                                         hookset::Concurrent> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
  static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
};

// Guards that watch a call while it runs (a tripwire around CheckTool's dispatch): the first
// objection stops the tool at once, and nothing the tool would change is changed.
struct WatchTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall& call), hookset::Always,
                                        hookset::Concurrent> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
  static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
};

// Audit notes, in registration order, the hooks that found nothing left out.
struct CollectNotes {
  std::vector<std::string> operator()(std::vector<std::optional<std::string>> notes) const {
    std::vector<std::string> found;
    for (auto& note : notes)
      if (note) found.push_back(std::move(*note));
    return found;
  }
};
// The audits of a call and its verdict ("ok", "refused", "failed"): concurrent remote checks.
struct AuditCall : hookset::Slot<std::optional<std::string>(ToolCall call, std::string verdict),
                                 hookset::Always, hookset::Aggregate<CollectNotes>,
                                 hookset::Output<std::vector<std::string>>, hookset::Concurrent> {
  static std::optional<std::string> default_impl(const ToolCall&, const std::string&) {
    return std::nullopt;
  }
};

using ServiceHooks = hookset::HookSet<PermitTool, CheckTool, WatchTool, AuditCall>;

// Around every dispatch of every slot of the set (one interceptor, set-wide): its count,
// latency and failures.
void add_metrics(ServiceHooks& hooks, Metrics& metrics);
// The policy pipeline's hooks (CheckTool).
void add_policies(ServiceHooks& hooks, Metrics& metrics);
// The guards: PermitTool's before a call, WatchTool's while it runs.
void add_guards(ServiceHooks& hooks);
// The audits of every call (AuditCall).
void add_audits(ServiceHooks& hooks);

// A call's answer: its HTTP status and JSON body.
struct ToolAnswer {
  http::status status;
  json::value body;
};
json::value error_body(std::string message);
// POST /tool: the request's body (a JSON call) to its answer, through the slots above.
net::awaitable<ToolAnswer> call_tool(const ServiceHooks& hooks, const std::string& body);
