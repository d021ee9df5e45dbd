// An agent's tool service over HTTP/JSON (Boost.Beast, Boost.JSON), every tool call going
// through hookset:
//
//   POST /tool      {"tool": "fs_read", "args": {"path": "notes.txt"}}  -> the tool's result,
//                   a refusal with its reason (403), or an error (400, 404, 413, 422)
//   GET  /health    the service and its tools
//   GET  /metrics   requests by route and status, and every slot's dispatch count and latency
//   POST /shutdown  stops the service (as SIGINT and SIGTERM do)
//
// A call is first checked by CheckTool, a pipeline slot keyed by the tool's name: an audit hook
// for every key, a hook for the keys matching "fs_*" normalising the path (a rewrite the answer
// shows), and per-tool gates on exact keys (shell refused, fs_write refused outside the
// workspace, http_get for https only); when every hook passes, the slot's default runs the
// tool. Then the AuditCall slot runs its audit hooks concurrently, as asio::awaitable coroutines
// on the io_context: each with its own time limit, and one of them (an export to a remote log
// that never answers) cut off after 50 ms and skipped (FailOpen), so the answer still comes.
// One set-wide interceptor measures every dispatch of every slot for GET /metrics; with
// --trace, a hookset::TraceWriter records every dispatch, hook and warning. The tools are
// simulated: fs_* work on an in-memory workspace, http_get and shell never leave the process.
//
// Usage: example_agent_service [--port N] [--port-file F] [--trace F]
//   --port 0 (the default) binds a free port; --port-file receives the bound port once the
//   service listens; --trace writes a Chrome trace of every dispatch and hook at shutdown.
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

// The workspace the fs_* tools see: files in memory, shared by every connection.
class Workspace {
 public:
  Workspace() { files_["/workspace/README.md"] = "Notes for the agent: keep answers short.\n"; }
  std::optional<std::string> read(const std::string& path) const {
    std::lock_guard lock(mutex_);
    auto found = files_.find(path);
    if (found == files_.end()) return std::nullopt;
    return found->second;
  }
  void write(const std::string& path, std::string content) {
    std::lock_guard lock(mutex_);
    files_[path] = std::move(content);
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> files_;
};

std::string string_arg(const json::object& args, std::string_view name) {
  const json::value* value = args.if_contains(name);
  if (!value || !value->is_string())
    throw ToolError("argument \"" + std::string(name) + "\" must be a string");
  return std::string(value->get_string());
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
struct CheckTool : hookset::Slot<json::value(ToolCall call, std::string_view tool),
                                 hookset::Pipeline, hookset::Keyed> {
  static json::value default_impl(const ToolCall& call, std::string_view tool) {
    const Tool* found = tool_registry().find(tool);
    if (!found) throw ToolError("unknown tool: " + std::string(tool));
    return found->run(call.args);
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

using ServiceHooks = hookset::HookSet<CheckTool, AuditCall>;

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
              {"routes", to_object(routes_)},
              {"responses", to_object(statuses_)}}},
            {"slots", std::move(slots)},
            {"tool_calls", to_object(tool_calls_)}};
  }

 private:
  struct SlotStats {
    std::uint64_t count = 0;
    std::uint64_t errors = 0;
    std::uint64_t total_us = 0;
    std::uint64_t max_us = 0;
  };
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
  // Per-tool gates (fs_write's path is a normalised string by then: the fs_* hook ran first).
  hooks.add<CheckTool>(hookset::key("shell"),
                       [](const ToolCall&, std::string_view) -> hookset::decision_t<CheckTool> {
                         return hookset::reject("shell is disabled by policy");
                       },
                       {.name = "shell-disabled"});
  hooks.add<CheckTool>(
      hookset::key("fs_write"),
      [](const ToolCall& call, std::string_view) -> hookset::decision_t<CheckTool> {
        const std::string_view path = call.args.at("path").get_string();
        if (inside_workspace(path)) return hookset::pass();
        return hookset::reject("fs_write outside the workspace (" + std::string(workspace_root) +
                               "): " + std::string(path));
      },
      {.name = "fs-write-workspace-only"});
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
    std::size_t length = lead < 0x80                  ? 1
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

class Server {
  // A connection and whether its session waits for the next request (touched on its strand only).
  struct Connection {
    explicit Connection(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    bool idle = false;
  };
  // One request as the answer and the metrics see it.
  struct Exchange {
    bool head = false;  // a HEAD request: answered without the body
  };

 public:
  Server(net::io_context& io, const ServiceHooks& hooks, Metrics& metrics, Timeouts timeouts)
      : io_(io),
        acceptor_(net::make_strand(io)),
        accept_backoff_(acceptor_.get_executor()),
        signals_(io, SIGINT, SIGTERM),
        hooks_(hooks),
        metrics_(metrics),
        timeouts_(timeouts) {}

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
      net::co_spawn(executor, session(std::move(socket)), net::detached);
    }
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
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream.socket().close(ignored);
    discharge(id);
  }

  // Reads a request (its first bytes are in `buffer`) and answers it; whether the connection
  // goes on to the next request.
  net::awaitable<bool> exchange(beast::tcp_stream& stream, beast::flat_buffer& buffer) {
    Exchange exchange;
    RequestParser parser;
    parser.header_limit(max_header_bytes);
    parser.body_limit(max_body_bytes);
    stream.expires_after(timeouts_.header);
    auto [header_error, header_bytes] = co_await http::async_read_header(
        stream, buffer, parser, net::as_tuple(net::use_awaitable));
    (void)header_bytes;
    if (header_error) {
      co_await unreadable(stream, exchange, header_error, 11);
      co_return false;
    }
    const unsigned version = parser.get().version();
    exchange.head = parser.get().method() == http::verb::head;
    if (std::optional<std::string> error = framing_error(parser)) {
      metrics_.count_request("malformed HTTP");
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
        metrics_.count_request("malformed HTTP");
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
    Response response = co_await handle(request);
    // While the service stops (after this request's POST /shutdown or any other stop), the
    // answer says "Connection: close": the client must not send another request on it.
    const bool keep_alive = client_keeps_alive && !stopping_;
    co_return co_await answer(stream, exchange, std::move(response), keep_alive) && keep_alive;
  }

  // A request that could not be read: answered when the client sent what it must not, only
  // counted when it went away or was too slow halfway through.
  net::awaitable<void> unreadable(beast::tcp_stream& stream, const Exchange& exchange,
                                  boost::system::error_code error, unsigned version) {
    if (error == http::error::body_limit) {
      // The headers announced more than we accept, or the chunks went past it.
      metrics_.count_request("too large");
      co_await refuse(stream, exchange, http::status::payload_too_large,
                      "request body larger than " + std::to_string(max_body_bytes) + " bytes",
                      version);
    } else if (error == http::error::header_limit) {
      metrics_.count_request("too large");
      co_await refuse(stream, exchange, http::status::request_header_fields_too_large,
                      "header section larger than " + std::to_string(max_header_bytes) + " bytes",
                      version);
    } else if (error.category() == http::make_error_code(http::error::bad_method).category() &&
               error != http::error::partial_message && error != http::error::end_of_stream) {
      metrics_.count_request("malformed HTTP");
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
    // Counted before it is sent: a client that has its answer finds it counted.
    metrics_.count_response(response.result_int());
    stream.expires_after(write_timeout);
    auto [error, bytes] =
        co_await http::async_write(stream, response, net::as_tuple(net::use_awaitable));
    (void)bytes;
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

  net::awaitable<Response> handle(const Request& request) {
    const std::string_view target = request.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const unsigned version = request.version();
    const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
    const bool post = request.method() == http::verb::post;
    if (path == "/tool" && post) {
      metrics_.count_request("POST /tool");
      co_return co_await call_tool(request.body(), version);
    }
    if (path == "/health" && get) {
      metrics_.count_request("GET /health");
      co_return json_response(http::status::ok,
                              {{"status", "ok"}, {"tools", tool_registry().describe()}}, version);
    }
    if (path == "/metrics" && get) {
      metrics_.count_request("GET /metrics");
      co_return json_response(http::status::ok, metrics_.to_json(), version);
    }
    if (path == "/shutdown" && post) {
      metrics_.count_request("POST /shutdown");
      stop();  // before the answer, which then says "Connection: close"
      co_return json_response(http::status::ok, {{"status", "shutting down"}}, version);
    }
    metrics_.count_request("other");
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
      auto outcome = co_await hooks_.call<CheckTool>(call, key);
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
  const Timeouts timeouts_;
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
  Timeouts timeouts;
  std::uint64_t max_fds = 0;  // 0: the descriptor limit as inherited
};

constexpr std::string_view usage =
    "[--port N] [--port-file F] [--trace F] [--idle-timeout-ms N] [--header-timeout-ms N]\n"
    "       [--body-timeout-ms N] [--max-fds N]";

// A whole decimal number, or nothing.
std::optional<std::uint64_t> to_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 18)
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
    std::cerr << "agent_service: cannot lower the descriptor limit to " << options->max_fds
              << '\n';
    return 1;
  }
  // Every dispatch, hook and warning, as a Chrome trace written at shutdown.
  std::optional<hookset::TraceWriter> trace;
  if (!options->trace_file.empty()) trace.emplace(options->trace_file);
  hookset::ScopedObserver tracing(trace ? &*trace : nullptr);

  Workspace workspace;
  discover_tools(workspace);
  Metrics metrics;
  ServiceHooks hooks;
  hooks.set_observer(&metrics);
  add_metrics(hooks, metrics);
  add_policies(hooks, metrics);
  add_audits(hooks);

  net::io_context io;
  Server server(io, hooks, metrics, options->timeouts);
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
    trace->flush();
    std::cout << "trace: " << trace->event_count() << " events in " << options->trace_file
              << std::endl;
  }
  return 0;
}
