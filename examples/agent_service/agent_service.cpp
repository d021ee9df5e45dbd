// An agent's tool service over HTTP/JSON (Boost.Beast, Boost.JSON), every tool call going
// through hookset:
//
//   POST /tool      {"tool": "fs_read", "args": {"path": "notes.txt"}}  -> the tool's result,
//                   a refusal with its reason (403), or an error (400, 404, 413, 422)
//   GET  /health    the service ("ok", or "draining" once it stops) and its tools
//   GET  /ready     200 "ready", or 503 "draining" once it stops
//   GET  /metrics   requests by route and status, their latency histograms, and every slot's
//                   dispatch count and latency; Prometheus' text format with ?format=prometheus
//                   or Accept: text/plain
//   POST /shutdown  stops the service (as SIGINT and SIGTERM do): idle connections are closed,
//                   requests begun are answered with "Connection: close"
// (HEAD wherever GET is.)
//
// A call is first judged by PermitTool's guards, concurrently, their verdicts joined (a verdict
// slot): a deny beats an allow whichever answers first, and a guard that fails denies
// (FailClosed) - http_get to a blocklisted host is refused by the URL reputation guard. Then
// CheckTool, a pipeline slot keyed by the tool's name: an audit hook for every key, a hook for
// the keys matching "fs_*" normalising the path (a rewrite the answer shows), per-tool gates on
// exact keys (shell refused, http_get for https only), and a validator that sees the call after
// every rewrite, whatever the order they were registered in (fs_write refused outside the
// workspace: mutate, then validate); when every hook passes, the slot's default runs the tool.
// While it runs, WatchTool's guards watch it (a tripwire): the first that objects stops the tool at
// once - a crawl of more than 10 pages is stopped in the middle by the crawl-budget guard - and
// what the tool's result would change (a crawl's saved pages) is changed only once every guard has
// allowed. Then the AuditCall slot runs its audit hooks concurrently, as asio::awaitable coroutines
// on the io_context: each with its own time limit, and one of them (an export to a remote log
// that never answers) cut off after 50 ms and skipped (FailOpen), so the answer still comes.
// One set-wide interceptor measures every dispatch of every slot for GET /metrics; with
// --trace, hookset::TraceWriters record the last dispatches, hooks and warnings. The tools are
// simulated: fs_* and crawl work on an in-memory workspace, http_get and shell never leave the
// process.
//
// Usage: example_agent_service [--port N] [--port-file F] [--trace F] [--trace-events N]
//          [--access-log F] [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]
//          [--max-connections N] [--workspace-bytes N] [--max-fds N]
//   --port 0 (the default) binds a free port; --port-file receives the bound port once the
//   service listens; --trace writes a Chrome trace of the last dispatches and hooks at shutdown
//   (the last --trace-events, 20,000 by default, at least half as many); --access-log: a line
//   per request (with its X-Request-Id) to F, standard output by default ("-").
//   Timeouts: a connection idle between requests 60 s, a request's header section 10 s from its
//   first byte, its body 30 s. --max-connections (1,000): beyond them a new connection is
//   answered 503 and closed. --workspace-bytes (1 MiB): the fs_* workspace's quota (paths and
//   contents), a write beyond it 507. --max-fds lowers the descriptor limit (to try the service
//   at it: accept then backs off, 5 ms doubling to 1 s).
#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>
#include <hookset/trace.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
// Boost.JSON header-only: its implementation, compiled into this program once.
#include <boost/json/src.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

constexpr std::size_t max_body_bytes = 64 * 1024;
constexpr std::string_view workspace_root = "/workspace";

// ---------------------------------------------------------------------------------------------
// The tools: a registry filled at start-up. Simulated: no file, network or process is touched.
// ---------------------------------------------------------------------------------------------

// A tool that cannot do what it was asked (a missing file, a missing argument): 422.
struct ToolError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tool {
  std::string name;
  std::string description;
  std::function<json::value(const json::object& args)> run;
  // A slow tool works a page at a time (its "pages" argument), each taking this long; it can be
  // stopped between pages (operation_aborted).
  std::chrono::milliseconds per_page{0};
  // What the tool's result changes, made only once the call's guards have all allowed it.
  std::function<void(const json::value& result)> commit{};
};

class ToolRegistry {
 public:
  void add(Tool tool) {
    std::string name = tool.name;
    tools_.insert_or_assign(std::move(name), std::move(tool));
  }
  const Tool* find(std::string_view name) const {
    auto found = tools_.find(name);
    return found == tools_.end() ? nullptr : &found->second;
  }
  json::array describe() const {
    json::array list;
    for (const auto& [name, tool] : tools_)
      list.push_back(json::object{{"name", name}, {"description", tool.description}});
    return list;
  }
  json::array names() const {
    json::array list;
    for (const auto& entry : tools_) list.push_back(json::string(entry.first));
    return list;
  }

 private:
  std::map<std::string, Tool, std::less<>> tools_;
};

// A write that would take the workspace past its quota: 507, saying by how much.
struct QuotaExceeded : ToolError {
  using ToolError::ToolError;
};

// The workspace the fs_* tools see: files in memory, shared by every connection, and capped: the
// bytes of every file's path and content together stay within the quota (paths count too, or
// many empty files with long names would fill the memory instead).
class Workspace {
 public:
  explicit Workspace(std::size_t quota_bytes) : quota_bytes_(quota_bytes) {
    const std::string readme = "/workspace/README.md";
    files_[readme] = "Notes for the agent: keep answers short.\n";
    used_bytes_ = readme.size() + files_[readme].size();
  }
  std::optional<std::string> read(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto found = files_.find(path);
    if (found == files_.end()) return std::nullopt;
    return found->second;
  }
  void write(const std::string& path, std::string content) {
    std::lock_guard lock(mutex_);
    auto found = files_.find(path);
    const std::size_t replaced = found == files_.end() ? 0 : path.size() + found->second.size();
    const std::size_t after = used_bytes_ - replaced + path.size() + content.size();
    if (after > quota_bytes_)
      throw QuotaExceeded("workspace quota exceeded: writing " + std::to_string(content.size()) +
                          " bytes to " + path + " would bring the workspace to " +
                          std::to_string(after) + " bytes, over its quota of " +
                          std::to_string(quota_bytes_) + " bytes");
    files_[path] = std::move(content);
    used_bytes_ = after;
  }

 private:
  const std::size_t quota_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> files_;
  std::size_t used_bytes_ = 0;
};

std::string string_arg(const json::object& args, std::string_view name) {
  const json::value* value = args.if_contains(name);
  if (!value || !value->is_string())
    throw ToolError("argument \"" + std::string(name) + "\" must be a string");
  return std::string(value->get_string());
}

// A slow tool's "pages": 1 to 1,000.
std::int64_t page_count(const json::object& args) {
  const json::value* pages = args.if_contains("pages");
  if (!pages || !pages->is_int64() || pages->get_int64() < 1 || pages->get_int64() > 1000)
    throw ToolError("argument \"pages\" must be a number from 1 to 1000");
  return pages->get_int64();
}

// "Discovery": the tools this build offers, registered once at start-up.
ToolRegistry& tool_registry() {
  static ToolRegistry registry;
  return registry;
}
void discover_tools(Workspace& workspace) {
  ToolRegistry& tools = tool_registry();
  tools.add({"fs_read", "read a file of the workspace", [&workspace](const json::object& args) {
               const std::string path = string_arg(args, "path");
               std::optional<std::string> content = workspace.read(path);
               if (!content) throw ToolError("no such file: " + path);
               return json::value{{"path", path}, {"content", *content}};
             }});
  tools.add({"fs_write", "write a file of the workspace", [&workspace](const json::object& args) {
               const std::string path = string_arg(args, "path");
               std::string content = string_arg(args, "content");
               const std::size_t bytes = content.size();
               workspace.write(path, std::move(content));
               return json::value{{"path", path}, {"bytes", bytes}};
             }});
  tools.add({"http_get", "fetch a URL (simulated)",
             [](const json::object& args) {
    const std::string url = string_arg(args, "url");
    return json::value{{"url", url}, {"status", 200}, {"body", "<simulated page of " + url + ">"}};
             }});
  tools.add({"shell", "run a shell command (simulated)",
             [](const json::object& args) {
    return json::value{{"stdout", "<simulated output of " + string_arg(args, "command") + ">"}};
             }});
  // Slow (2 ms a page), and its pages saved to the workspace - once every guard has allowed.
  tools.add({"crawl", "fetch a site's pages and save them to /workspace/crawl/ (simulated)",
             [](const json::object& args) {
    const std::string site = string_arg(args, "site");
    const std::int64_t pages = page_count(args);
    std::string content;
    for (std::int64_t page = 1; page <= pages; ++page)
      content += "<simulated page " + std::to_string(page) + " of " + site + ">\n";
    return json::value{{"site", site},
                       {"pages", pages},
                       {"saved_to", "/workspace/crawl/" + site + ".txt"},
                       {"content", content}};
             },
             2ms,
             [&workspace](const json::value& result) {
    workspace.write(std::string(result.at("saved_to").get_string()),
                    std::string(result.at("content").get_string()));
  }});
}

// ---------------------------------------------------------------------------------------------
// The slots.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Metrics: HTTP requests and responses, per slot the dispatches, errors and latency (measured by
// a set-wide interceptor, add_metrics), and the audit hooks skipped (reported to this observer).
// ---------------------------------------------------------------------------------------------

class Metrics : public hookset::Observer {
 public:
  using clock = std::chrono::steady_clock;

  void count_request(std::string_view route) {
    std::lock_guard lock(mutex_);
    ++requests_;
    ++routes_[std::string(route)];
  }
  void count_response(unsigned status) {
    std::lock_guard lock(mutex_);
    ++statuses_[std::to_string(status)];
  }
  // A client gone before its request was complete.
  void count_aborted() {
    std::lock_guard lock(mutex_);
    ++aborted_;
  }
  // A connection over the cap, answered 503 and closed.
  void count_turned_away() {
    std::lock_guard lock(mutex_);
    ++turned_away_;
  }
  // A request's latency, from its first byte read to its answer written, by route.
  void record_latency(std::string_view route, clock::duration took) {
    const auto us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    std::lock_guard lock(mutex_);
    Latency& latency = latencies_[std::string(route)];
    ++latency.count;
    latency.total_us += us;
    for (std::size_t i = 0; i < latency_buckets.size(); ++i)
      latency.at_most[i] += us <= latency_buckets[i].us ? 1 : 0;
  }
  // An accept that failed (at the descriptor limit, say): each one, the backoff's waits apart.
  void count_accept_failure() {
    std::lock_guard lock(mutex_);
    ++accept_failures_;
  }
  void count_tool_call(std::string_view tool) {
    std::lock_guard lock(mutex_);
    ++tool_calls_[std::string(tool)];
  }
  std::uint64_t requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

  void record_dispatch(std::string_view slot, clock::duration took, bool failed) {
    const auto us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    std::lock_guard lock(mutex_);
    SlotStats& stats = slots_[std::string(slot)];
    ++stats.count;
    stats.errors += failed ? 1 : 0;
    stats.total_us += us;
    stats.max_us = std::max(stats.max_us, us);
  }
  // The fail-open policy reports each hook it skipped as a warning.
  void on_warning(std::string_view slot, std::string_view message) override {
    if (message.find("skipped") == std::string_view::npos) return;
    std::lock_guard lock(mutex_);
    ++skipped_[std::string(slot)];
  }

  json::object to_json() const {
    std::lock_guard lock(mutex_);
    json::object slots;
    for (const auto& [name, stats] : slots_) {
      slots[name] = {{"count", stats.count},
                     {"errors", stats.errors},
                     {"hooks_skipped", lookup(skipped_, name)},
                     {"mean_us", stats.count ? stats.total_us / stats.count : 0},
                     {"max_us", stats.max_us}};
    }
    return {{"http",
             {{"requests", requests_},
              {"aborted", aborted_},
              {"accept_failures", accept_failures_},
              {"turned_away", turned_away_},
              {"latency_ms", latency_json()},
              {"routes", to_object(routes_)},
              {"responses", to_object(statuses_)}}},
            {"slots", std::move(slots)},
            {"tool_calls", to_object(tool_calls_)}};
  }

  // The same in the Prometheus text format (version 0.0.4).
  std::string to_prometheus() const {
    std::lock_guard lock(mutex_);
    std::string out;
    const auto family =
        [&out](std::string_view name, std::string_view type, std::string_view help) {
      out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
      out.append(name).append(" ").append(type).append("\n");
    };
    const auto sample = [&out](std::string_view name, std::string_view labels, auto value) {
      out.append(name);
      if (!labels.empty()) out.append("{").append(labels).append("}");
      out.append(" ").append(number(value)).append("\n");
    };
    const auto by = [](std::string_view label, std::string_view value) {
      return std::string(label) + "=\"" + label_value(value) + "\"";
    };
    family("agent_http_requests_total", "counter", "HTTP requests read, by route.");
    for (const auto& [route, count] : routes_)
      sample("agent_http_requests_total", by("route", route), count);
    family("agent_http_responses_total", "counter", "HTTP responses, by status.");
    for (const auto& [status, count] : statuses_)
      sample("agent_http_responses_total", by("status", status), count);
    family("agent_http_aborted_total", "counter", "Requests left unfinished by their client.");
    sample("agent_http_aborted_total", "", aborted_);
    family("agent_http_accept_failures_total", "counter", "Failed accepts (descriptor limit).");
    sample("agent_http_accept_failures_total", "", accept_failures_);
    family("agent_http_turned_away_total", "counter", "Connections over the cap, answered 503.");
    sample("agent_http_turned_away_total", "", turned_away_);
    family("agent_http_request_duration_seconds", "histogram",
           "From a request's first byte to its answer written, by route.");
    for (const auto& [route, latency] : latencies_) {
      for (std::size_t i = 0; i < latency_buckets.size(); ++i)
        sample("agent_http_request_duration_seconds_bucket",
               by("route", route) + ",le=\"" + std::string(latency_buckets[i].seconds) + "\"",
               latency.at_most[i]);
      sample("agent_http_request_duration_seconds_bucket", by("route", route) + ",le=\"+Inf\"",
             latency.count);
      sample("agent_http_request_duration_seconds_sum", by("route", route),
             static_cast<double>(latency.total_us) / 1e6);
      sample("agent_http_request_duration_seconds_count", by("route", route), latency.count);
    }
    family("agent_slot_dispatches_total", "counter", "Dispatches of each hookset slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_dispatches_total", by("slot", slot), stats.count);
    family("agent_slot_errors_total", "counter", "Dispatches that failed, by slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_errors_total", by("slot", slot), stats.errors);
    family("agent_slot_dispatch_seconds_total", "counter", "Time spent in dispatches, by slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_dispatch_seconds_total", by("slot", slot),
             static_cast<double>(stats.total_us) / 1e6);
    family("agent_slot_hooks_skipped_total", "counter", "Hooks skipped (fail-open), by slot.");
    for (const auto& [slot, count] : skipped_)
      sample("agent_slot_hooks_skipped_total", by("slot", slot), count);
    family("agent_tool_calls_total", "counter", "Tool calls, by tool.");
    for (const auto& [tool, count] : tool_calls_)
      sample("agent_tool_calls_total", by("tool", tool), count);
    return out;
  }

 private:
  struct SlotStats {
    std::uint64_t count = 0;
    std::uint64_t errors = 0;
    std::uint64_t total_us = 0;
    std::uint64_t max_us = 0;
  };
  // Latency buckets (upper bounds), as Prometheus' defaults but for a 1 ms one.
  struct Bucket {
    std::uint64_t us;
    std::string_view ms;
    std::string_view seconds;
  };
  static constexpr std::array<Bucket, 11> latency_buckets = {{{1'000, "1", "0.001"},
                                                              {5'000, "5", "0.005"},
                                                              {10'000, "10", "0.01"},
                                                              {25'000, "25", "0.025"},
                                                              {50'000, "50", "0.05"},
                                                              {100'000, "100", "0.1"},
                                                              {250'000, "250", "0.25"},
                                                              {500'000, "500", "0.5"},
                                                              {1'000'000, "1000", "1"},
                                                              {2'500'000, "2500", "2.5"},
                                                              {5'000'000, "5000", "5"}}};
  // Cumulative, as Prometheus has it: at_most[i] counts the requests within latency_buckets[i].
  struct Latency {
    std::array<std::uint64_t, latency_buckets.size()> at_most{};
    std::uint64_t count = 0;
    std::uint64_t total_us = 0;
  };
  json::object latency_json() const {
    json::object routes;
    for (const auto& [route, latency] : latencies_) {
      json::object buckets;
      for (std::size_t i = 0; i < latency_buckets.size(); ++i)
        buckets[latency_buckets[i].ms] = latency.at_most[i];
      buckets["+Inf"] = latency.count;
      routes[route] = {{"count", latency.count},
                       {"sum_ms", static_cast<double>(latency.total_us) / 1e3},
                       {"buckets", std::move(buckets)}};
    }
    return routes;
  }
  static std::string number(std::uint64_t value) { return std::to_string(value); }
  static std::string number(double value) {
    char text[32];
    const int length = std::snprintf(text, sizeof text, "%.6f", value);
    return std::string(text, static_cast<std::size_t>(length));
  }
  // A label value as the text format escapes it.
  static std::string label_value(std::string_view text) {
    std::string escaped;
    for (const char c : text) {
      if (c == '\\' || c == '"') escaped += '\\';
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      escaped += c;
    }
    return escaped;
  }
  static json::object to_object(const std::map<std::string, std::uint64_t>& counts) {
    json::object object;
    for (const auto& [name, count] : counts) object[name] = count;
    return object;
  }
  static std::uint64_t lookup(const std::map<std::string, std::uint64_t>& counts,
                              const std::string& name) {
    auto found = counts.find(name);
    return found == counts.end() ? 0 : found->second;
  }

  mutable std::mutex mutex_;
  std::uint64_t requests_ = 0;
  std::uint64_t aborted_ = 0;
  std::uint64_t accept_failures_ = 0;
  std::uint64_t turned_away_ = 0;
  std::map<std::string, Latency> latencies_;
  std::map<std::string, std::uint64_t> routes_;
  std::map<std::string, std::uint64_t> statuses_;
  std::map<std::string, std::uint64_t> tool_calls_;
  std::map<std::string, std::uint64_t> skipped_;
  std::map<std::string, SlotStats> slots_;
};

// Around every dispatch of every slot of the set (one interceptor, set-wide): its count,
// latency and failures.
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

// ---------------------------------------------------------------------------------------------
// The hooks.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// The trace, bounded. A hookset::TraceWriter keeps every event until it is written: over a long
// run that grows without end. This observer hands the events to a writer and replaces it with a
// fresh one every max_events / 2 events, dropping the one before: the file then holds the last
// events, at least half the limit (once there were as many) and at most the limit.
// ---------------------------------------------------------------------------------------------

class BoundedTrace : public hookset::Observer {
 public:
  BoundedTrace(std::string path, std::size_t max_events)
      : path_(std::move(path)),
        per_writer_(std::max<std::size_t>(max_events / 2, 1)),
        current_(std::make_unique<Generation>()) {}

  void on_warning(std::string_view slot, std::string_view message) override {
    record([&](hookset::TraceWriter& writer) { writer.on_warning(slot, message); });
  }
  void on_dispatch_begin(std::string_view slot, std::uint64_t dispatch_id) override {
    record([&](hookset::TraceWriter& writer) { writer.on_dispatch_begin(slot, dispatch_id); });
  }
  void on_dispatch_end(std::string_view slot, std::uint64_t dispatch_id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    record([&](hookset::TraceWriter& writer) {
      writer.on_dispatch_end(slot, dispatch_id, hooks_run, error);
    });
  }
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const hookset::HookEvent& event) override {
    record([&](hookset::TraceWriter& writer) { writer.on_hook_begin(event); });
  }
  void on_hook_end(const hookset::HookEvent& event) override {
    record([&](hookset::TraceWriter& writer) { writer.on_hook_end(event); });
  }

  std::size_t event_count() const {
    std::shared_lock lock(mutex_);
    return (previous_ ? previous_->writer.event_count() : 0) + current_->writer.event_count();
  }

  // Writes the events kept, oldest first, as one Chrome trace.
  void write() {
    std::unique_lock lock(mutex_);
    const clock::time_point origin = (previous_ ? previous_ : current_)->origin;
    json::array events;
    for (Generation* generation : {previous_.get(), current_.get()}) {
      if (!generation) continue;
      generation->out.str("");
      generation->writer.flush();
      json::value written = json::parse(generation->out.str());
      // Each writer times its events from its own start: shifted onto the oldest one's. (Its
      // "tid" numbers, too, are its own: the threads in the order that writer saw them.)
      const double shift_us =
          std::chrono::duration<double, std::micro>(generation->origin - origin).count();
      for (json::value& event : written.at("traceEvents").as_array()) {
        json::value& ts = event.as_object()["ts"];
        ts = ts.to_number<double>() + shift_us;
        events.push_back(std::move(event));
      }
    }
    json::object trace{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    std::ofstream file(path_, std::ios::trunc);
    file << json::serialize(trace) << '\n';
  }

 private:
  using clock = std::chrono::steady_clock;
  struct Generation {
    clock::time_point origin = clock::now();  // (the writer's own origin, within microseconds)
    std::ostringstream out;                   // what the writer writes, when asked
    hookset::TraceWriter writer{out};
  };

  template <typename Forward>
  void record(Forward forward) {
    {
      std::shared_lock lock(mutex_);
      forward(current_->writer);
    }
    if (recorded_.fetch_add(1, std::memory_order_relaxed) + 1 >= per_writer_) replace_writer();
  }
  void replace_writer() {
    std::unique_ptr<Generation> dropped;
    {
      std::unique_lock lock(mutex_);
      if (recorded_.load(std::memory_order_relaxed) < per_writer_) return;  // done by another
      dropped = std::move(previous_);
      previous_ = std::move(current_);
      current_ = std::make_unique<Generation>();
      recorded_.store(0, std::memory_order_relaxed);
    }
  }  // `dropped` goes here, outside the lock

  const std::string path_;
  const std::size_t per_writer_;
  mutable std::shared_mutex mutex_;  // shared to record, exclusive to replace the writer
  std::unique_ptr<Generation> previous_;
  std::unique_ptr<Generation> current_;
  std::atomic<std::size_t> recorded_{0};  // by current_
};

// ---------------------------------------------------------------------------------------------
// HTTP.
// ---------------------------------------------------------------------------------------------

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using RequestParser = http::request_parser<http::string_body>;

// How long a connection may take at each stage (command-line options, see main).
struct Timeouts {
  // Waiting for the first byte of the next request on a kept-alive connection.
  std::chrono::milliseconds idle{60s};
  // From a request's first byte to the end of its header section: a client that trickles its
  // headers (slowloris) holds a connection no longer than this.
  std::chrono::milliseconds header{10s};
  // Reading the body, once the header section is in.
  std::chrono::milliseconds body{30s};
};
constexpr std::uint32_t max_header_bytes = 8 * 1024;
constexpr auto write_timeout = 30s;
// How long a connection answered with an error and closed still has its input read and dropped.
constexpr auto drain_timeout = 2s;

// The date as every response carries it (RFC 9110 §6.6.1), in IMF-fixdate form:
// "Sun, 06 Nov 1994 08:49:37 GMT" (the program never calls setlocale: %a and %b are English).
std::string http_date() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[64];
  const std::size_t length = std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S GMT", &utc);
  return std::string(text, length);
}

// `text` with each byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD: a
// request target is any bytes, and a JSON string (an error message echoing it) must be UTF-8.
std::string valid_utf8(std::string_view text) {
  std::string valid;
  valid.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto lead = static_cast<unsigned char>(text[at]);
    std::size_t length = lead < 0x80                    ? 1
                         : lead >= 0xC2 && lead <= 0xDF ? 2
                         : lead >= 0xE0 && lead <= 0xEF ? 3
                         : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                        : 0;
    if (length > 1 && at + length > text.size()) length = 0;
    if (length > 1) {
      // The second byte's range rules out overlong forms, surrogates and code points past
      // U+10FFFF; the others are continuation bytes.
      const unsigned char low = lead == 0xE0 ? 0xA0 : lead == 0xF0 ? 0x90 : 0x80;
      const unsigned char high = lead == 0xED ? 0x9F : lead == 0xF4 ? 0x8F : 0xBF;
      for (std::size_t i = 1; i < length; ++i) {
        const auto byte = static_cast<unsigned char>(text[at + i]);
        if (byte < (i == 1 ? low : 0x80) || byte > (i == 1 ? high : 0xBF)) length = 0;
      }
    }
    if (length == 0) {
      valid += "\xEF\xBF\xBD";
      ++at;
    } else {
      valid.append(text.substr(at, length));
      at += length;
    }
  }
  return valid;
}

Response json_response(http::status status, const json::value& body, unsigned version) {
  Response response{status, version};
  response.set(http::field::server, "hookset-agent-service");
  response.set(http::field::content_type, "application/json");
  response.body() = json::serialize(body) + "\n";
  response.prepare_payload();
  return response;
}
json::value error_body(std::string message) { return {{"error", std::move(message)}}; }

// The routes, and the methods each allows (the Allow header of its 405); HEAD wherever GET is.
struct Route {
  std::string_view path;
  std::string_view allow;
};
constexpr Route routes[] = {{"/tool", "POST"},
                            {"/health", "GET, HEAD"},
                            {"/ready", "GET, HEAD"},
                            {"/metrics", "GET, HEAD"},
                            {"/shutdown", "POST"}};
const Route* find_route(std::string_view path) {
  for (const Route& route : routes)
    if (route.path == path) return &route;
  return nullptr;
}

// Why a request's body cannot be delimited safely (RFC 9112 §6.1, §6.3) or the request is not
// one HTTP/1.1 allows (§3.2: exactly one Host): answered 400 and the connection closed - read
// on, and a body read as "no body" would run as the next request (request smuggling).
std::optional<std::string> framing_error(const RequestParser& parser) {
  const Request& header = parser.get();
  const bool transfer_encoded = header.count(http::field::transfer_encoding) > 0;
  if (transfer_encoded && header.count(http::field::content_length) > 0)
    return "Transfer-Encoding together with Content-Length";
  if (transfer_encoded && header.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request";
  if (transfer_encoded && !parser.chunked())
    return "Transfer-Encoding other than chunked (" +
           valid_utf8(header[http::field::transfer_encoding]) + ")";
  const std::size_t hosts = header.count(http::field::host);
  if (hosts > 1 || (hosts == 0 && header.version() >= 11))
    return "an HTTP/1.1 request needs exactly one Host header";
  return std::nullopt;
}

// One request and its answer, as the access log, the metrics and the answer see it.
struct Exchange {
  std::string id;    // the answer's X-Request-Id
  std::string peer;  // the client's address and port
  std::string method = "-";
  std::string target = "-";
  unsigned version = 11;
  std::string route = "unread";  // the request's label in the metrics
  bool head = false;             // a HEAD request: answered without the body
  Metrics::clock::time_point start = Metrics::clock::now();
};

// A line per answered request: time, request id, client, request line, status, body bytes,
// latency. Bytes of the target outside printable ASCII are written \xHH: a line is one request.
class AccessLog {
 public:
  // "-": standard output.
  explicit AccessLog(const std::string& path) {
    if (path == "-") return;
    file_.open(path, std::ios::trunc);
    out_ = &file_;
  }
  bool good() const { return out_ == &std::cout || file_.good(); }
  void write(const Exchange& exchange, unsigned status, std::size_t body_bytes,
             Metrics::clock::duration took) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char time[32];
    const std::size_t time_length = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%SZ", &utc);
    std::string line(time, time_length);
    line.append(" ").append(exchange.id).append(" ").append(exchange.peer).append(" \"");
    line.append(exchange.method).append(" ");
    for (const char c : exchange.target) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20 || byte >= 0x7f || c == '"' || c == '\\') {
        constexpr std::string_view hex = "0123456789abcdef";
        line.append("\\x").append(1, hex[byte >> 4]).append(1, hex[byte & 0xf]);
      } else {
        line += c;
      }
    }
    char tail[96];
    const int tail_length =
        std::snprintf(tail, sizeof tail, " HTTP/%u.%u\" %u %zu %.3fms\n", exchange.version / 10,
                      exchange.version % 10, status, body_bytes,
                      std::chrono::duration<double, std::milli>(took).count());
    line.append(tail, static_cast<std::size_t>(std::max(tail_length, 0)));
    std::lock_guard lock(mutex_);
    *out_ << line << std::flush;
  }

 private:
  std::ofstream file_;
  std::ostream* out_ = &std::cout;
  std::mutex mutex_;
};

class Server {
  // A connection and whether its session waits for the next request (touched on its strand only).
  struct Connection {
    explicit Connection(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    bool idle = false;
  };

 public:
  Server(net::io_context& io, const ServiceHooks& hooks, Metrics& metrics, AccessLog& access_log,
         Timeouts timeouts, std::size_t max_connections)
      : io_(io),
        acceptor_(net::make_strand(io)),
        accept_backoff_(acceptor_.get_executor()),
        signals_(io, SIGINT, SIGTERM),
        hooks_(hooks),
        metrics_(metrics),
        access_log_(access_log),
        timeouts_(timeouts),
        max_connections_(max_connections) {}

  unsigned short listen(unsigned short port) {
    const tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    signals_.async_wait([this](const boost::system::error_code& error, int) {
      if (!error) stop();
    });
    net::co_spawn(acceptor_.get_executor(), accept_loop(), net::detached);
    return acceptor_.local_endpoint().port();
  }

  // Stops accepting and closes every idle connection; a request begun (its first byte read) is
  // still answered, with "Connection: close", and io_context::run returns once all is done.
  void stop() {
    if (stopping_.exchange(true)) return;
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      accept_backoff_.cancel();
    });
    net::post(io_, [this] {
      boost::system::error_code ignored;
      signals_.cancel(ignored);
    });
    std::lock_guard lock(sessions_mutex_);
    for (const auto& entry : sessions_) {
      std::weak_ptr<Connection> weak = entry.second;
      if (auto connection = weak.lock()) {
        // On the connection's strand: an idle read ends at once; a request in flight is still
        // answered, and its session then sees the stop instead of reading again.
        net::post(connection->stream.get_executor(), [weak] {
          if (auto connection = weak.lock(); connection && connection->idle) {
            boost::system::error_code ignored;
            connection->stream.socket().cancel(ignored);
          }
        });
      }
    }
  }

 private:
  net::awaitable<void> accept_loop() {
    // At the descriptor limit (EMFILE, ENFILE) the connection stays in the backlog and the next
    // accept fails at once: retried straight away, the loop would spin. It waits instead, as Go's
    // net/http does: 5 ms, doubling up to 1 s, back to none after an accept succeeds.
    std::chrono::milliseconds backoff{0};
    for (;;) {
      auto [error, socket] =
          co_await acceptor_.async_accept(net::make_strand(io_), net::as_tuple(net::use_awaitable));
      if (stopping_ || error == net::error::operation_aborted) co_return;
      if (error) {
        metrics_.count_accept_failure();
        if (backoff == 0ms)
          std::cerr << "agent_service: accept failed (" << error.message()
                    << "); retrying with backoff\n";
        backoff = backoff == 0ms ? 5ms : std::min<std::chrono::milliseconds>(backoff * 2, 1s);
        accept_backoff_.expires_after(backoff);
        auto [wait_error] = co_await accept_backoff_.async_wait(net::as_tuple(net::use_awaitable));
        (void)wait_error;  // cancelled by the stop, seen at the top of the loop
        continue;
      }
      backoff = 0ms;
      auto executor = socket.get_executor();
      if (open_connections_ >= max_connections_) {
        net::co_spawn(executor, turn_away(std::move(socket)), net::detached);
        continue;
      }
      ++open_connections_;
      net::co_spawn(executor, session(std::move(socket)), net::detached);
    }
  }

  // A connection over the cap: told so (503, before its request is read) and closed, rather than
  // served beyond what the service was sized for. Not counted in the cap: it ends within the
  // drain's time limit.
  net::awaitable<void> turn_away(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    Exchange exchange = new_exchange(stream);
    exchange.route = "over capacity";
    metrics_.count_turned_away();
    Response response =
        json_response(http::status::service_unavailable,
                      error_body("too many connections (at most " +
                                 std::to_string(max_connections_) + "): try again later"),
                      11);
    response.set(http::field::retry_after, "1");
    if (co_await answer(stream, exchange, std::move(response), false)) co_await drain(stream);
  }

  Exchange new_exchange(beast::tcp_stream& stream) {
    Exchange exchange;
    exchange.id = request_id_prefix_ + std::to_string(++last_request_);
    boost::system::error_code error;
    const tcp::endpoint peer = stream.socket().remote_endpoint(error);
    exchange.peer = error ? "-" : peer.address().to_string() + ":" + std::to_string(peer.port());
    return exchange;
  }
  // The request's label in the metrics (its route, or what was wrong with it).
  void count_request(Exchange& exchange, std::string_view route) {
    exchange.route = route;
    metrics_.count_request(route);
  }

  // One connection: requests in turn (keep-alive) until the client closes, an error, a timeout
  // or the stop.
  net::awaitable<void> session(tcp::socket socket) {
    auto connection = std::make_shared<Connection>(std::move(socket));
    beast::tcp_stream& stream = connection->stream;
    const std::uint64_t id = enlist(connection);
    beast::flat_buffer buffer;
    for (bool keep_alive = true; keep_alive && !stopping_;) {
      // Idle until the next request's first byte, unless it came already (pipelined): the stop
      // closes an idle connection at once, but answers a request begun.
      if (buffer.size() == 0) {
        connection->idle = true;
        stream.expires_after(timeouts_.idle);
        auto [error, bytes] = co_await stream.async_read_some(buffer.prepare(4096),
                                                              net::as_tuple(net::use_awaitable));
        connection->idle = false;
        if (error) break;  // closed by the client, idle too long, or the stop
        buffer.commit(bytes);
      }
      keep_alive = co_await exchange(stream, buffer);
    }
    // Out of the cap before the client sees the connection closed: it may connect again at once.
    discharge(id);
    --open_connections_;
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.socket().close(ignored);
  }

  // Reads a request (its first bytes are in `buffer`) and answers it; whether the connection
  // goes on to the next request.
  net::awaitable<bool> exchange(beast::tcp_stream& stream, beast::flat_buffer& buffer) {
    Exchange exchange = new_exchange(stream);
    RequestParser parser;
    parser.header_limit(max_header_bytes);
    parser.body_limit(max_body_bytes);
    stream.expires_after(timeouts_.header);
    auto [header_error, header_bytes] =
        co_await http::async_read_header(stream, buffer, parser, net::as_tuple(net::use_awaitable));
    (void)header_bytes;
    if (header_error) {
      co_await unreadable(stream, exchange, header_error, 11);
      co_return false;
    }
    const unsigned version = parser.get().version();
    exchange.version = version;
    exchange.method = parser.get().method_string();
    exchange.target = parser.get().target();
    exchange.head = parser.get().method() == http::verb::head;
    if (std::optional<std::string> error = framing_error(parser)) {
      count_request(exchange, "malformed HTTP");
      co_await refuse(stream, exchange, http::status::bad_request, std::move(*error), version);
      co_return false;
    }
    // Too large by its Content-Length: answered at once, not after reading the body.
    if (const auto length = parser.content_length(); length && *length > max_body_bytes) {
      co_await unreadable(stream, exchange, http::error::body_limit, version);
      co_return false;
    }
    if (const std::string_view expect = parser.get()[http::field::expect]; !expect.empty()) {
      if (!beast::iequals(expect, "100-continue")) {
        count_request(exchange, "malformed HTTP");
        co_await refuse(stream, exchange, http::status::expectation_failed,
                        "unsupported expectation: " + valid_utf8(expect), version);
        co_return false;
      }
      // The client waits for this before it sends the body (RFC 9110 §10.1.1).
      if (!parser.is_done() && version >= 11) {
        static constexpr std::string_view go_on = "HTTP/1.1 100 Continue\r\n\r\n";
        stream.expires_after(write_timeout);
        auto [error, bytes] = co_await net::async_write(stream, net::buffer(go_on),
                                                        net::as_tuple(net::use_awaitable));
        (void)bytes;
        if (error) co_return false;
      }
    }
    stream.expires_after(timeouts_.body);
    auto [body_error, body_bytes] =
        co_await http::async_read(stream, buffer, parser, net::as_tuple(net::use_awaitable));
    (void)body_bytes;
    if (body_error) {
      co_await unreadable(stream, exchange, body_error, version);
      co_return false;
    }
    Request request = parser.release();
    const bool client_keeps_alive = request.keep_alive();
    Response response = co_await handle(request, exchange);
    // While the service stops (after this request's POST /shutdown or any other stop), the
    // answer says "Connection: close": the client must not send another request on it.
    const bool keep_alive = client_keeps_alive && !stopping_;
    co_return co_await answer(stream, exchange, std::move(response), keep_alive) && keep_alive;
  }

  // A request that could not be read: answered when the client sent what it must not, only
  // counted when it went away or was too slow halfway through.
  net::awaitable<void> unreadable(beast::tcp_stream& stream, Exchange& exchange,
                                  boost::system::error_code error, unsigned version) {
    if (error == http::error::body_limit) {
      // The headers announced more than we accept, or the chunks went past it.
      count_request(exchange, "too large");
      co_await refuse(stream, exchange, http::status::payload_too_large,
                      "request body larger than " + std::to_string(max_body_bytes) + " bytes",
                      version);
    } else if (error == http::error::header_limit) {
      count_request(exchange, "too large");
      co_await refuse(stream, exchange, http::status::request_header_fields_too_large,
                      "header section larger than " + std::to_string(max_header_bytes) + " bytes",
                      version);
    } else if (error.category() == http::make_error_code(http::error::bad_method).category() &&
               error != http::error::partial_message && error != http::error::end_of_stream) {
      count_request(exchange, "malformed HTTP");
      co_await refuse(stream, exchange, http::status::bad_request,
                      "malformed HTTP request: " + error.message(), 11);
    } else {
      metrics_.count_aborted();  // gone (or timed out) halfway through a request
    }
  }

  // Answers with an error, then closes: what the client still sends is read and dropped for a
  // while, so that it sees the answer, not a reset.
  net::awaitable<void> refuse(beast::tcp_stream& stream, const Exchange& exchange,
                              http::status status, std::string message, unsigned version) {
    Response response = json_response(status, error_body(std::move(message)), version);
    if (co_await answer(stream, exchange, std::move(response), false)) co_await drain(stream);
  }

  net::awaitable<bool> answer(beast::tcp_stream& stream, const Exchange& exchange,
                              Response response, bool keep_alive) {
    response.keep_alive(keep_alive);
    response.set(http::field::date, http_date());
    if (exchange.head) {
      // All a GET would send but the body, its Content-Length included (RFC 9110 §9.3.2).
      response.content_length(response.body().size());
      response.body().clear();
    }
    response.set("X-Request-Id", exchange.id);
    const unsigned status = response.result_int();
    const std::size_t body_bytes = response.body().size();
    // Counted before it is sent: a client that has its answer finds it counted.
    metrics_.count_response(status);
    stream.expires_after(write_timeout);
    auto [error, bytes] =
        co_await http::async_write(stream, response, net::as_tuple(net::use_awaitable));
    (void)bytes;
    const auto took = Metrics::clock::now() - exchange.start;
    metrics_.record_latency(exchange.route, took);
    access_log_.write(exchange, status, body_bytes, took);
    co_return !error;
  }

  static net::awaitable<void> drain(beast::tcp_stream& stream) {
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.expires_after(drain_timeout);
    char sink[16 * 1024];
    for (std::size_t drained = 0; drained < 4 * 1024 * 1024;) {
      auto [error, bytes] =
          co_await stream.async_read_some(net::buffer(sink), net::as_tuple(net::use_awaitable));
      if (error) break;
      drained += bytes;
    }
  }

  net::awaitable<Response> handle(const Request& request, Exchange& exchange) {
    const std::string_view target = request.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const unsigned version = request.version();
    const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
    const bool post = request.method() == http::verb::post;
    if (path == "/tool" && post) {
      count_request(exchange, "POST /tool");
      co_return co_await call_tool(request.body(), version);
    }
    // Liveness: up, and whether it is draining.
    if (path == "/health" && get) {
      count_request(exchange, "GET /health");
      co_return json_response(
          http::status::ok,
          {{"status", stopping_ ? "draining" : "ok"}, {"tools", tool_registry().describe()}},
          version);
    }
    // Readiness: 503 once the service stops, so a load balancer sends no more.
    if (path == "/ready" && get) {
      count_request(exchange, "GET /ready");
      if (stopping_)
        co_return json_response(http::status::service_unavailable, {{"status", "draining"}},
                                version);
      co_return json_response(http::status::ok, {{"status", "ready"}}, version);
    }
    if (path == "/metrics" && get) {
      count_request(exchange, "GET /metrics");
      const std::string_view query = path.size() < target.size() ? target.substr(path.size()) : "";
      const std::string_view accept = request[http::field::accept];
      // Prometheus asks with "Accept: text/plain;version=0.0.4" (or OpenMetrics first).
      if (query.find("format=prometheus") != std::string_view::npos ||
          accept.find("text/plain") != std::string_view::npos ||
          accept.find("application/openmetrics-text") != std::string_view::npos) {
        Response response{http::status::ok, version};
        response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        response.body() = metrics_.to_prometheus();
        response.prepare_payload();
        co_return response;
      }
      co_return json_response(http::status::ok, metrics_.to_json(), version);
    }
    if (path == "/shutdown" && post) {
      count_request(exchange, "POST /shutdown");
      stop();  // before the answer, which then says "Connection: close"
      co_return json_response(http::status::ok, {{"status", "shutting down"}}, version);
    }
    count_request(exchange, "other");
    if (const Route* route = find_route(path)) {
      Response refused = json_response(
          http::status::method_not_allowed,
          error_body(std::string(request.method_string()) + " not allowed for " +
                     std::string(path) + " (allowed: " + std::string(route->allow) + ")"),
          version);
      refused.set(http::field::allow, route->allow);
      co_return refused;
    }
    co_return json_response(http::status::not_found,
                            error_body("no such route: " + valid_utf8(target)), version);
  }
  net::awaitable<Response> call_tool(const std::string& body, unsigned version) {
    boost::system::error_code parse_error;
    json::value parsed = json::parse(body, parse_error);
    if (parse_error)
      co_return json_response(http::status::bad_request,
                              error_body("malformed JSON: " + parse_error.message()), version);
    const json::object* object = parsed.if_object();
    const json::value* tool = object ? object->if_contains("tool") : nullptr;
    const json::value* args = object ? object->if_contains("args") : nullptr;
    if (!tool || !tool->is_string() || (args && !args->is_object()))
      co_return json_response(
          http::status::bad_request,
          error_body(R"(expected {"tool": "<name>", "args": {...}} ("args" optional))"), version);
    ToolCall call{std::string(tool->get_string()), args ? args->get_object() : json::object{}};
    if (!tool_registry().find(call.tool))
      co_return json_response(
          http::status::not_found,
          {{"error", "unknown tool: " + call.tool}, {"tools", tool_registry().names()}}, version);

    // The key the hooks see: the tool's name, alive for both dispatches.
    const std::string name = call.tool;
    const std::string_view key = name;
    json::object answer{{"tool", name}};
    http::status status = http::status::ok;
    std::string verdict = "ok";
    ToolCall checked = call;
    try {
      // 1. May the call be made at all? PermitTool's guards, concurrently, joined by verdict.
      const hookset::Verdicts<> permit = co_await hooks_.call<PermitTool>(call);
      answer["verdicts"] = describe(permit);
      if (permit.decision != hookset::Permission::allow) {
        const auto* by = permit.decided_by();
        status = http::status::forbidden;
        verdict = "refused";
        answer["refused"] = true;
        answer["reason"] = by->value.reason;
        answer["refused_by"] = by->name;
      } else {
        co_await run_watched(call, key, answer, status, verdict, checked);
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
          co_await hooks_.call<AuditCall>(checked, verdict).with_timeout(2s);
      answer["audit"] = json::value_from(notes);
    } catch (const std::exception& error) {
      answer["audit_error"] = error.what();  // the audits failed: the answer still comes
    }
    co_return json_response(status, answer, version);
  }

  static json::array describe(const hookset::Verdicts<>& verdicts) {
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
  net::awaitable<void> run_watched(const ToolCall& call, std::string_view key, json::object& answer,
                                   http::status& status, std::string& verdict, ToolCall& checked) {
    using Checked = hookset::pipeline_result_t<CheckTool>;
    auto work = [&](hookset::Admission& admission) -> hookset::Task<Checked> {
      Checked outcome = co_await hooks_.call<CheckTool>(call, key);
      if (outcome.completed())
        if (const Tool* tool = tool_registry().find(call.tool); tool && tool->commit)
          if (co_await admission.admit()) tool->commit(outcome.output());
      co_return outcome;
    };
    auto watched = hookset::tripwire(hooks_.call<WatchTool>(call)).around(work);
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

  std::uint64_t enlist(const std::shared_ptr<Connection>& connection) {
    std::lock_guard lock(sessions_mutex_);
    sessions_[++last_session_] = connection;
    return last_session_;
  }
  void discharge(std::uint64_t id) {
    std::lock_guard lock(sessions_mutex_);
    sessions_.erase(id);
  }

  net::io_context& io_;
  tcp::acceptor acceptor_;
  net::steady_timer accept_backoff_;  // on the acceptor's strand
  net::signal_set signals_;
  const ServiceHooks& hooks_;
  Metrics& metrics_;
  AccessLog& access_log_;
  const Timeouts timeouts_;
  const std::size_t max_connections_;
  std::atomic<std::size_t> open_connections_{0};
  // Request ids: the start time (hex seconds), so that they differ from one run to the next,
  // and a count.
  const std::string request_id_prefix_ = [] {
    char prefix[24];
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::system_clock::now().time_since_epoch());
    std::snprintf(prefix, sizeof prefix, "%llx-", static_cast<unsigned long long>(seconds.count()));
    return std::string(prefix);
  }();
  std::atomic<std::uint64_t> last_request_{0};
  std::atomic<bool> stopping_{false};
  std::mutex sessions_mutex_;
  std::uint64_t last_session_ = 0;
  std::map<std::uint64_t, std::weak_ptr<Connection>> sessions_;
};

// ---------------------------------------------------------------------------------------------

struct Options {
  unsigned short port = 0;
  std::string port_file;
  std::string trace_file;
  std::size_t trace_events = 20'000;  // the trace keeps the last ones (see BoundedTrace)
  std::string access_log = "-";
  Timeouts timeouts;
  std::size_t max_connections = 1'000;
  std::size_t workspace_bytes = 1024 * 1024;
  std::uint64_t max_fds = 0;  // 0: the descriptor limit as inherited
};

constexpr std::string_view usage =
    "[--port N] [--port-file F] [--trace F] [--trace-events N] [--access-log F]\n"
    "       [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]\n"
    "       [--max-connections N] [--workspace-bytes N] [--max-fds N]";

// A whole decimal number, or nothing.
std::optional<std::uint64_t> to_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 18)
    return std::nullopt;
  return std::stoull(text);
}

std::optional<Options> parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    const std::string value = argv[++i];
    if (arg == "--port-file") {
      options.port_file = value;
      continue;
    }
    if (arg == "--trace") {
      options.trace_file = value;
      continue;
    }
    if (arg == "--access-log") {
      options.access_log = value;
      continue;
    }
    const std::optional<std::uint64_t> number = to_number(value);
    if (!number) return std::nullopt;
    const std::chrono::milliseconds milliseconds{*number};
    if (arg == "--port" && *number <= 65535) {
      options.port = static_cast<unsigned short>(*number);
    } else if (arg == "--idle-timeout-ms" && *number > 0) {
      options.timeouts.idle = milliseconds;
    } else if (arg == "--header-timeout-ms" && *number > 0) {
      options.timeouts.header = milliseconds;
    } else if (arg == "--body-timeout-ms" && *number > 0) {
      options.timeouts.body = milliseconds;
    } else if (arg == "--trace-events" && *number > 0) {
      options.trace_events = *number;
    } else if (arg == "--max-connections" && *number > 0) {
      options.max_connections = *number;
    } else if (arg == "--workspace-bytes") {
      options.workspace_bytes = *number;
    } else if (arg == "--max-fds" && *number > 0) {
      options.max_fds = *number;
    } else {
      return std::nullopt;
    }
  }
  return options;
}

// Lowers the soft descriptor limit (RLIMIT_NOFILE): a way to see the service at its limit.
bool limit_descriptors(std::uint64_t max_fds) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  limit.rlim_cur = std::min<rlim_t>(static_cast<rlim_t>(max_fds), limit.rlim_max);
  return setrlimit(RLIMIT_NOFILE, &limit) == 0;
}

// Written whole (a temporary file renamed), so a reader never sees half a port number.
void write_port_file(const std::string& path, unsigned short port) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << port << '\n';
  }
  std::filesystem::rename(temporary, path);
}

int main(int argc, char** argv) {
  const std::optional<Options> options = parse_options(argc, argv);
  if (!options) {
    std::cerr << "usage: " << argv[0] << ' ' << usage << '\n';
    return 2;
  }
  if (options->max_fds && !limit_descriptors(options->max_fds)) {
    std::cerr << "agent_service: cannot lower the descriptor limit to " << options->max_fds << '\n';
    return 1;
  }
  // The last dispatches, hooks and warnings, as a Chrome trace written at shutdown.
  std::optional<BoundedTrace> trace;
  if (!options->trace_file.empty()) trace.emplace(options->trace_file, options->trace_events);
  hookset::ScopedObserver tracing(trace ? &*trace : nullptr);
  AccessLog access_log(options->access_log);
  if (!access_log.good()) {
    std::cerr << "agent_service: cannot write the access log " << options->access_log << '\n';
    return 1;
  }

  Workspace workspace(options->workspace_bytes);
  discover_tools(workspace);
  Metrics metrics;
  ServiceHooks hooks;
  hooks.set_observer(&metrics);
  add_metrics(hooks, metrics);
  add_policies(hooks, metrics);
  add_guards(hooks);
  add_audits(hooks);

  net::io_context io;
  Server server(io, hooks, metrics, access_log, options->timeouts, options->max_connections);
  try {
    const unsigned short port = server.listen(options->port);
    if (!options->port_file.empty()) write_port_file(options->port_file, port);
    std::cout << "agent_service listening on http://127.0.0.1:" << port << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "agent_service: cannot listen: " << error.what() << '\n';
    return 1;
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();

  std::cout << "agent_service stopped after " << metrics.requests() << " requests" << std::endl;
  if (trace) {
    trace->write();
    std::cout << "trace: the last " << trace->event_count() << " events in " << options->trace_file
              << std::endl;
  }
  return 0;
}
