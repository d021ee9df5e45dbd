#pragma once
// The policy of the agent service, all of it in hooks on the slots of slots.hpp (PermitTool,
// CheckTool, WatchTool, CheckWrite, AuditCall), and a tool call's way through them (call_tool).
// add_policies, add_guards, add_write_policy and add_audits (policy.cpp) register the program's
// own hooks; the guards that can be replaced while the service runs are plugins (plugins/,
// guard_plugins.hpp).
#include "slots.hpp"

#include <boost/beast/http/status.hpp>

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace http = boost::beast::http;

class Metrics;

// Around every dispatch of every slot of the set (one interceptor, set-wide): its count,
// latency and failures.
void add_metrics(ServiceHooks& hooks, Metrics& metrics);
// The policy pipeline's hooks (CheckTool).
void add_policies(ServiceHooks& hooks, Metrics& metrics);
// The guards of the program's own: PermitTool's egress policy before a call, WatchTool's crawl
// budget while it runs, each with `time_limit`. (The URL reputation guard is a plugin:
// plugins/url_reputation.cpp.)
void add_guards(ServiceHooks& hooks, std::chrono::milliseconds time_limit);
// The time limit guard_time_limit() gives the plugins (slots.hpp): set before they load.
void set_guard_time_limit(std::chrono::milliseconds limit);
// The audits of every call (AuditCall).
void add_audits(ServiceHooks& hooks);

// The names of registrations, for answers that name the hook that decided (a pipeline's result
// gives its HookId).
using HookNames = std::map<hookset::HookId, std::string>;
// The write policy (CheckWrite): the path normalised, then validators - inside the workspace,
// names a file system would take; their names go to `names`.
void add_write_policy(ServiceHooks& hooks, HookNames& names);
// The effect boundary: the one way to write `workspace`, each write through CheckWrite's hooks
// (the host's current version).
WriteEffect write_boundary(const ServiceHost& hooks, const HookNames& names, Workspace& workspace);

// A call's answer: its HTTP status, JSON body, and for a 503 when to try again.
struct ToolAnswer {
  http::status status;
  json::value body;
  std::optional<std::chrono::seconds> retry_after{};
};
json::value error_body(std::string message);
// POST /tool: the request's body (a JSON call) to its answer, through the slots - every dispatch
// of the call on one version of the host's hooks (a plugin reloaded meanwhile is not half seen).
net::awaitable<ToolAnswer> call_tool(const ServiceHost& host, const std::string& body);
