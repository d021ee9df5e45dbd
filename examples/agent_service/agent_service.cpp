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
// slot): a deny beats an allow whichever answers first. They judge the call as it will run: a
// tool's URL is parsed and its host made canonical before any hook sees it (addresses.hpp), so
// the URL reputation guard refuses a blocklisted host however it is written, and the egress
// guard this machine and private networks. A guard that fails or runs late denies (FailClosed),
// and says so: the answer is then 503, try again, not a refusal. Then CheckTool, a pipeline slot
// keyed by the tool's name: an audit hook for every key, a hook for the keys matching "fs_*"
// normalising the path (a rewrite the answer shows), per-tool gates on exact keys (shell
// refused, http_get for https only); when every hook passes, the slot's default runs the tool.
// While it runs, WatchTool's guards watch it (a tripwire): the first that objects stops the tool
// at once - a crawl of more than 10 pages is stopped in the middle by the crawl-budget guard -
// and what the tool's result would change (a crawl's saved pages) is changed only once every
// guard has allowed. Every change to the workspace, whichever tool makes it, goes through one
// effect boundary: the CheckWrite slot, whose validators see the write after every rewrite (the
// path inside the workspace, names a file system takes). Then the AuditCall slot runs its audit
// hooks concurrently, as asio::awaitable coroutines on the io_context: each with its own time
// limit, and one of them (an export to a remote log that never answers) cut off after 50 ms and
// skipped (FailOpen), so the answer still comes.
// One set-wide interceptor measures every dispatch of every slot for GET /metrics; with
// --trace, hookset::TraceWriters record the last dispatches, hooks and warnings. The tools are
// simulated: fs_* and crawl work on an in-memory workspace, http_get and shell never leave the
// process.
//
// Usage: example_agent_service [--port N] [--port-file F] [--trace F] [--trace-events N]
//          [--access-log F] [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]
//          [--max-connections N] [--workspace-bytes N] [--max-fds N] [--guard-timeout-ms N]
//   --port 0 (the default) binds a free port; --port-file receives the bound port once the
//   service listens; --trace writes a Chrome trace of the last dispatches and hooks at shutdown
//   (the last --trace-events, 20,000 by default, at least half as many); --access-log: a line
//   per request (with its X-Request-Id) to F, standard output by default ("-").
//   Timeouts: a connection idle between requests 60 s, a request's header section 10 s from its
//   first byte, its body 30 s; each guard 500 ms (--guard-timeout-ms). --max-connections (1,000):
//   beyond them a new connection is answered 503 and closed. --workspace-bytes (1 MiB): the fs_*
//   workspace's quota (paths and contents), a write beyond it 507. --max-fds lowers the descriptor
//   limit (to try the service at it: accept then backs off, 5 ms doubling to 1 s).
//
// The program in its parts: tools.hpp (the simulated tools and their workspace), policy.hpp (the
// slots, the hooks registered on them, and a tool call's way through them), http_server.hpp
// (HTTP), metrics.hpp and bounded_trace.hpp (what an operator reads); this file starts them.
#include "bounded_trace.hpp"
#include "http_server.hpp"
#include "metrics.hpp"
#include "policy.hpp"
#include "tools.hpp"

#include <hookset/hookset.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
// Boost.JSON and Boost.URL header-only: their implementations, compiled into this program once.
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

struct Options {
  unsigned short port = 0;
  std::string port_file;
  std::string trace_file;
  std::size_t trace_events = 20'000;  // the trace keeps the last ones (see BoundedTrace)
  std::string access_log = "-";
  Timeouts timeouts;
  std::chrono::milliseconds guard_timeout{500};
  std::size_t max_connections = 1'000;
  std::size_t workspace_bytes = 1024 * 1024;
  std::uint64_t max_fds = 0;  // 0: the descriptor limit as inherited
};

constexpr std::string_view usage =
    "[--port N] [--port-file F] [--trace F] [--trace-events N] [--access-log F]\n"
    "       [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]\n"
    "       [--max-connections N] [--workspace-bytes N] [--max-fds N] [--guard-timeout-ms N]";

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
    } else if (arg == "--guard-timeout-ms" && *number > 0) {
      options.guard_timeout = milliseconds;
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

  Metrics metrics;
  ServiceHooks hooks;
  hooks.set_observer(&metrics);
  add_metrics(hooks, metrics);
  add_policies(hooks, metrics);
  add_guards(hooks, options->guard_timeout);
  add_audits(hooks);
  // The workspace: the tools read it, and write it only through the effect boundary.
  Workspace workspace(options->workspace_bytes);
  HookNames write_policy;
  add_write_policy(hooks, write_policy);
  discover_tools(workspace, write_boundary(hooks, write_policy, workspace));

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
