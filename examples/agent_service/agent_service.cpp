// An agent's tool service over HTTP/JSON (Boost.Beast, Boost.JSON), every tool call going
// through hookset:
//
//   POST /tool      {"tool": "fs_read", "args": {"path": "notes.txt"}}  -> the tool's result,
//                   a refusal with its reason and the hook that decided (403), a guard that
//                   could not decide (503 with Retry-After), or an error (400, 404, 413, 415,
//                   422, 507)
//   GET  /health    the service ("ok", or "draining" once it stops) and its tools
//   GET  /ready     200 "ready", or 503 "draining" once it stops
//   GET  /metrics   requests by route and status, their latency histograms, every slot's
//                   dispatch count and latency, access log lines dropped; Prometheus' text
//                   format with ?format=prometheus or Accept: text/plain
//   POST /shutdown  stops the service (as SIGINT and SIGTERM do): idle connections are closed,
//                   requests begun are answered with "Connection: close"
//   POST /admin/reload                    reloads the guard plugins (guard_plugins.hpp), each
//   POST /admin/plugins/<name>/reload     from its file, or one of them, to the build ?build=v2
//                   names: JSON saying what is loaded, each plugin's path, and why a build was
//                   refused (422: the one in service stays)
// (HEAD wherever GET is.) It answers only to its own names (Host: 127.0.0.1, localhost, or one
// given by --allow-host; else 421), no web page can make it change anything (a POST from a
// foreign Origin: 403; /tool takes application/json only: 415; /shutdown and /admin/... refused
// from any Origin, and with --shutdown-token-file they need the token written there: 401).
//
// A call is first judged by PermitTool's guards, concurrently, their verdicts joined (a verdict
// slot): a deny beats an allow whichever answers first. They judge the call as it will run: a
// tool's URL is parsed and its host made canonical before any hook sees it (addresses.hpp), so
// the URL reputation guard refuses a blocklisted host however it is written, and the egress
// guard this machine and private networks. The URL reputation guard is a plugin, a shared
// library loaded at start-up from the --plugins directory into a hookset::PluginHost that holds
// the program's own hooks too; it can be replaced by another build while calls run. A guard that
// fails or runs late denies (FailClosed), and says so: the answer is then 503, try again, not a
// refusal. Then CheckTool, a pipeline slot keyed by the tool's name: an audit hook for every key, a
// hook for the keys matching "fs_*" normalising the path (a rewrite the answer shows), per-tool
// gates on exact keys (shell refused, http_get for https only); when every hook passes, the slot's
// default runs the tool. While it runs, WatchTool's guards watch it (a tripwire): the first that
// objects stops the tool at once - a crawl of more than 10 pages is stopped in the middle by the
// crawl-budget guard - and what the tool's result would change (a crawl's saved pages) is changed
// only once every guard has allowed. Every change to the workspace, whichever tool makes it, goes
// through one effect boundary: the CheckWrite slot, whose validators see the write after every
// rewrite (the path inside the workspace, names a file system takes). Then the AuditCall slot runs
// its audit hooks concurrently, as asio::awaitable coroutines on the io_context: each with its own
// time limit, and one of them (an export to a remote log that never answers) cut off after 50 ms
// and skipped (FailOpen), so the answer still comes. One set-wide interceptor measures every
// dispatch of every slot for GET /metrics; with --trace, hookset::TraceWriters record the last
// dispatches, hooks and warnings. The tools are simulated: fs_* and crawl work on an in-memory
// workspace, http_get and shell never leave the process.
//
// Usage: example_agent_service [--port N] [--port-file F] [--trace F] [--trace-events N]
//          [--access-log F] [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]
//          [--max-connections N] [--workspace-bytes N] [--max-fds N] [--guard-timeout-ms N]
//          [--allow-host NAME]... [--allow-origin ORIGIN]... [--shutdown-token-file F]
//          [--plugins DIR]
//   --port 0 (the default) binds a free port; --port-file receives the bound port once the
//   service listens; --trace writes a Chrome trace of the last dispatches and hooks at shutdown
//   (the last --trace-events, 20,000 by default, at least half as many); --access-log: a line
//   per request (with its X-Request-Id) to F, standard output by default ("-"); a reader too
//   slow loses lines (counted), it never holds the service up.
//   Timeouts: a connection idle between requests 60 s, a request's header section 10 s from its
//   first byte, its body 30 s; each guard 500 ms (--guard-timeout-ms). --max-connections
//   (1,000): beyond them a new connection is answered 503 and closed. --workspace-bytes (1 MiB):
//   the fs_* workspace's quota (paths and contents), a write beyond it 507. --max-fds lowers the
//   descriptor limit (to try the service at it: accept then backs off, 5 ms doubling to 1 s).
//   --allow-host: another name it answers to (a reverse proxy's, say); --allow-origin: a web
//   origin whose pages may call POST /tool ("http://dashboard.example:3000");
//   --shutdown-token-file: a fresh token is written to F (mode 0600) for POST /shutdown (and
//   /admin/...). --plugins: the guard plugins' directory, every *.so of it loaded at start-up (a
//   plugin refused stops the start: exit 1); by default the build's (AGENT_SERVICE_PLUGINS).
//
// The program in its parts: slots.hpp and policy.hpp (the slots, the hooks registered on them,
// and a tool call's way through them: the hooks part), guard_plugins.hpp and plugins/ (the
// guards that are plugins), tools.hpp (the simulated tools and their
// workspace), addresses.hpp (URLs and hosts, canonical), http_server.hpp (HTTP, whom it answers),
// line_writer.hpp, metrics.hpp and bounded_trace.hpp (what an operator reads); this file starts
// them.
#include "bounded_trace.hpp"
#include "guard_plugins.hpp"
#include "http_server.hpp"
#include "line_writer.hpp"
#include "metrics.hpp"
#include "policy.hpp"
#include "tools.hpp"

#include <hookset/hookset.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/json.hpp>
// Boost.JSON and Boost.URL header-only: their implementations, compiled into this program once.
#include <boost/json/src.hpp>
#include <boost/url/src.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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
  Trust trust;
  std::string shutdown_token_file;
  std::string plugins = AGENT_SERVICE_PLUGINS;
};

constexpr std::string_view usage =
    "[--port N] [--port-file F] [--trace F] [--trace-events N] [--access-log F]\n"
    "       [--idle-timeout-ms N] [--header-timeout-ms N] [--body-timeout-ms N]\n"
    "       [--max-connections N] [--workspace-bytes N] [--max-fds N] [--guard-timeout-ms N]\n"
    "       [--allow-host NAME]... [--allow-origin ORIGIN]... [--shutdown-token-file F]\n"
    "       [--plugins DIR]";

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
    if (arg == "--shutdown-token-file") {
      options.shutdown_token_file = value;
      continue;
    }
    if (arg == "--plugins") {
      options.plugins = value;
      continue;
    }
    std::string why;
    if (arg == "--allow-host") {
      std::optional<Authority> host = parse_authority(value, why);
      if (!host || host->port) return std::nullopt;  // a name, without a port
      options.trust.hosts.push_back(host->host);
      continue;
    }
    if (arg == "--allow-origin") {
      std::optional<Origin> origin = parse_origin(value, why);
      if (!origin) return std::nullopt;
      options.trust.origins.push_back(*origin);
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

// Written whole (a temporary file renamed), so that a reader never sees half of it; readable by
// its owner only when `secret`.
bool write_whole(const std::string& path, const std::string& text, bool secret = false) {
  const std::string temporary = path + ".tmp";
  const int fd =
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, secret ? 0600 : 0644);
  if (fd < 0) return false;
  bool written = (!secret || ::fchmod(fd, 0600) == 0) &&
                 ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  written = ::close(fd) == 0 && written;
  std::error_code error;
  if (written) std::filesystem::rename(temporary, path, error);
  return written && !error;
}

// 128 random bits, in hex.
std::string fresh_token() {
  std::random_device random;
  std::string token;
  for (int i = 0; i < 4; ++i) {
    char part[9];
    std::snprintf(part, sizeof part, "%08x", static_cast<unsigned>(random()));
    token += part;
  }
  return token;
}

int main(int argc, char** argv) {
  std::optional<Options> options = parse_options(argc, argv);
  if (!options) {
    std::cerr << "usage: " << argv[0] << ' ' << usage << '\n';
    return 2;
  }
  // A reader of standard output (or of the access log) that goes away must not end the service:
  // writing to it then fails with EPIPE instead (see LineWriter).
  std::signal(SIGPIPE, SIG_IGN);
  if (options->max_fds && !limit_descriptors(options->max_fds)) {
    std::cerr << "agent_service: cannot lower the descriptor limit to " << options->max_fds << '\n';
    return 1;
  }
  // What goes to standard output never holds up the service: a writer thread, a bounded buffer.
  LineWriter out(STDOUT_FILENO);
  int log_fd = -1;
  if (options->access_log != "-") {
    log_fd = ::open(options->access_log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      std::cerr << "agent_service: cannot write the access log " << options->access_log << '\n';
      return 1;
    }
  }
  std::optional<LineWriter> log_file;
  if (log_fd >= 0) log_file.emplace(log_fd);
  AccessLog access_log(log_file ? *log_file : out);
  if (!options->shutdown_token_file.empty()) {
    options->trust.shutdown_token = fresh_token();
    if (!write_whole(options->shutdown_token_file, options->trust.shutdown_token + "\n", true)) {
      std::cerr << "agent_service: cannot write " << options->shutdown_token_file << '\n';
      return 1;
    }
  }
  // The last dispatches, hooks and warnings, as a Chrome trace written at shutdown.
  std::optional<BoundedTrace> trace;
  if (!options->trace_file.empty()) trace.emplace(options->trace_file, options->trace_events);
  hookset::ScopedObserver tracing(trace ? &*trace : nullptr);

  Metrics metrics;
  metrics.watch_access_log(log_file ? &*log_file : &out);
  // The hooks: the program's own, and its guard plugins' (each dispatch sees one version of
  // them all: ServiceHost).
  ServiceHost hooks;
  HookNames write_policy;
  hooks.update([&](ServiceHooks& own) {
    own.set_observer(&metrics);
    add_metrics(own, metrics);
    add_policies(own, metrics);
    add_guards(own, options->guard_timeout);
    add_audits(own);
    add_write_policy(own, write_policy);
  });
  set_guard_time_limit(options->guard_timeout);
  GuardPlugins plugins(hooks, options->plugins);
  try {
    plugins.load_all();
  } catch (const std::exception& error) {  // (PluginError, or the directory unreadable)
    std::cerr << "agent_service: cannot load the plugins of " << options->plugins << ": "
              << error.what() << '\n';
    return 1;
  }
  const json::object loaded = plugins.describe();
  for (const json::value& plugin : loaded.at("plugins").as_array())
    out.write("plugin " + json::value_to<std::string>(plugin.at("name")) + " (" +
              json::value_to<std::string>(plugin.at("build")) +
              "): " + json::value_to<std::string>(plugin.at("path")) + "\n");
  // The workspace: the tools read it, and write it only through the effect boundary.
  Workspace workspace(options->workspace_bytes);
  discover_tools(workspace, write_boundary(hooks, write_policy, workspace));

  net::io_context io;
  Server server(io, hooks, plugins, metrics, access_log, options->timeouts,
                options->max_connections, options->trust);
  try {
    const unsigned short port = server.listen(options->port);
    if (!options->port_file.empty() &&
        !write_whole(options->port_file, std::to_string(port) + "\n"))
      throw std::runtime_error("cannot write " + options->port_file);
    out.write("agent_service listening on http://127.0.0.1:" + std::to_string(port) + "\n");
  } catch (const std::exception& error) {
    std::cerr << "agent_service: cannot listen: " << error.what() << '\n';
    return 1;
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();

  out.write("agent_service stopped after " + std::to_string(metrics.requests()) + " requests\n");
  if (trace) {
    trace->write();
    out.write("trace: the last " + std::to_string(trace->event_count()) + " events in " +
              options->trace_file + "\n");
  }
  return 0;
}
