#pragma once
// The slots of the agent service and their set, ServiceHooks: what the program and the guard
// plugins it loads (plugins/, hookset::PluginHost<ServiceHooks>) both declare - a plugin
// includes this header and not the server's. A tool call's way (call_tool, policy.hpp):
//
//   PermitTool   may the call be made? Guards judge it, concurrently; a deny beats any allow
//                (403), a guard that could not decide - it threw, or ran out of time - makes
//                the answer 503 with Retry-After: overload is not refusal.
//   CheckTool    the pipeline, keyed by the tool's name: audit, normalise, gate per tool; its
//                default runs the tool, while
//   WatchTool    guards watch it (a tripwire): the first objection stops it at once.
//   CheckWrite   every change any tool makes to the workspace: the effect boundary. Its hooks
//                normalise the path and validate the write, whichever tool asked for it.
//   AuditCall    audits of the call and its outcome, concurrently, each within its time limit.
//
// The hooks see the call parsed: a tool's URL argument as a WebAddress (addresses.hpp), its host
// canonical.
#include "tools.hpp"

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>
#include <hookset/plugin.hpp>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace net = boost::asio;
namespace json = boost::json;

// May a call be made at all? Guards judge it concurrently (remote policy services, as
// asio::awaitable coroutines); their verdicts are joined - a deny beats any allow, whichever
// answers first - and a guard that fails or runs out of time denies (FailClosed), its verdict
// saying it failed (Verdict::failed()).
struct PermitTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall& call), hookset::Always,
                                         hookset::Concurrent> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
  static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
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
    co_return co_await hookset::asio::async_run(found->run(call), net::use_awaitable);
  }
};

// Guards that watch a call while it runs (a tripwire around CheckTool's dispatch): the first
// objection stops the tool at once, and nothing the tool would change is changed.
struct WatchTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall& call), hookset::Always,
                                        hookset::Concurrent> {
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
  static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
};

// Every write to the workspace, whichever tool makes it (fs_write, a crawl's saved pages, any
// tool added later): the effect boundary (write_boundary) dispatches this slot for each, and
// writes only what its hooks pass, as they leave it - or nothing, when a hook completes the write
// itself (its output: where the content already is). Put the guard on the effect, not on the
// tool: no tool can write around it. With no hook registered its default refuses every write.
struct CheckWrite
    : hookset::Slot<std::string(FileWrite write), hookset::Pipeline, hookset::Fallback> {
  static hookset::decision_t<CheckWrite> default_impl(const FileWrite&) {
    return hookset::reject("no write policy: the workspace is read-only");
  }
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

using ServiceHooks = hookset::HookSet<PermitTool, CheckTool, WatchTool, CheckWrite, AuditCall>;

// The program's hooks and its plugins', published together (docs/plugins.md): dispatched with
// call<S>(...) or through current(), the version of the moment.
using ServiceHost = hookset::PluginHost<ServiceHooks>;

// Stands in for a call to a remote policy or audit service. The program's (policy.cpp), and its
// plugins' too: the program exports its symbols (hookset_plugin_host), a plugin calls this one.
net::awaitable<void> remote_call(std::chrono::milliseconds latency);
// The time limit of each guard (--guard-timeout-ms): the program's, which its plugins' guards
// take too (read when they register).
std::chrono::milliseconds guard_time_limit();
