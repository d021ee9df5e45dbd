// The test of examples/agent_service: starts the service on a free port, talks HTTP to it
// (Boost.Beast, one connection per request unless said otherwise) and checks every answer -
// allowed, refused and rewritten calls, bad input of every kind (malformed JSON, an unknown tool,
// a body over the limit, malformed HTTP, a client gone halfway through its request), concurrent
// calls - then that the service still answers, that its metrics count every request (nothing
// lost), and that it stops cleanly on POST /shutdown (writing its trace) and on SIGTERM.
//
// Usage: example_agent_service_driver <path of example_agent_service> <work directory>
// Exits 0 when every check passed; prints each check and what it saw.
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
// Boost.JSON header-only: its implementation, compiled into this program once.
#include <boost/json/src.hpp>

#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

extern char** environ;

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

int failures = 0;

void check(bool ok, std::string_view what, std::string_view seen = {}) {
  std::cout << (ok ? "ok   " : "FAIL ") << what;
  if (!ok && !seen.empty()) std::cout << "\n     saw: " << seen;
  std::cout << std::endl;
  if (!ok) ++failures;
}

// ----- the service as a child process --------------------------------------------------------

class Service {
 public:
  Service(const std::string& program, const std::filesystem::path& port_file,
          const std::string& trace_file)
      : port_file_(port_file) {
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {program, "--port", "0", "--port-file", port_file.string()};
    if (!trace_file.empty()) {
      args.push_back("--trace");
      args.push_back(trace_file);
    }
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, program.c_str(), nullptr, nullptr, argv.data(), environ) != 0)
      throw std::runtime_error("cannot start " + program);
  }
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;
  // A service still running when the driver gives up is killed, never left behind.
  ~Service() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  // The port, once the service has written it (it listens by then); nothing if it died first.
  std::optional<unsigned short> wait_for_port() {
    for (auto until = std::chrono::steady_clock::now() + 30s;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(10ms)) {
      std::ifstream file(port_file_);
      unsigned port = 0;
      if (file >> port && port > 0 && port < 65536) return static_cast<unsigned short>(port);
      if (exited()) return std::nullopt;
    }
    return std::nullopt;
  }
  void signal(int number) { ::kill(pid_, number); }
  // The exit status, if it exits within `patience`; -1 for a crash.
  std::optional<int> wait_for_exit(std::chrono::seconds patience) {
    for (auto until = std::chrono::steady_clock::now() + patience;
         std::chrono::steady_clock::now() < until; std::this_thread::sleep_for(10ms))
      if (exited()) return status_;
    return std::nullopt;
  }

 private:
  bool exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    pid_ = 0;
    status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }

  std::filesystem::path port_file_;
  pid_t pid_ = 0;
  int status_ = -1;
};

// ----- HTTP ----------------------------------------------------------------------------------

struct Reply {
  unsigned status = 0;
  json::value body;  // null when the body is not JSON
  std::string text;
};

Reply read_reply(tcp::socket& socket) {
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(16 * 1024 * 1024);
  http::read(socket, buffer, parser);
  Reply reply;
  reply.status = parser.get().result_int();
  reply.text = parser.get().body();
  boost::system::error_code ignored;
  reply.body = json::parse(reply.text, ignored);
  return reply;
}

http::request<http::string_body> make_request(http::verb verb, std::string_view target,
                                              std::string body, bool keep_alive) {
  http::request<http::string_body> request{verb, target, 11};
  request.set(http::field::host, "127.0.0.1");
  if (!body.empty()) request.set(http::field::content_type, "application/json");
  request.body() = std::move(body);
  request.prepare_payload();
  request.keep_alive(keep_alive);
  return request;
}

class Client {
 public:
  explicit Client(unsigned short port) : port_(port) {}

  Reply send(http::verb verb, std::string_view target, std::string body = {}) {
    tcp::socket socket = connect();
    http::write(socket, make_request(verb, target, std::move(body), false));
    ++requests_;
    return read_reply(socket);
  }
  Reply tool(const json::value& call) { return send(http::verb::post, "/tool", serialize(call)); }
  // Bytes as they are, not necessarily HTTP; the answer read as HTTP.
  Reply raw(std::string_view bytes) {
    tcp::socket socket = connect();
    net::write(socket, net::buffer(bytes));
    ++requests_;
    return read_reply(socket);
  }
  // Sends the start of a request and hangs up: no answer expected, no request counted.
  void abandon(std::string_view bytes) {
    tcp::socket socket = connect();
    net::write(socket, net::buffer(bytes));
    socket.close();
  }
  tcp::socket connect() {
    tcp::socket socket(io_);
    socket.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
    return socket;
  }
  void count_requests(std::uint64_t n) { requests_ += n; }
  std::uint64_t requests() const { return requests_; }

 private:
  net::io_context io_;
  unsigned short port_;
  std::atomic<std::uint64_t> requests_{0};
};

// ----- reading answers -----------------------------------------------------------------------

const json::value* find(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* at = &root;
  for (std::string_view key : path) {
    const json::object* object = at->if_object();
    if (!object) return nullptr;
    at = object->if_contains(key);
    if (!at) return nullptr;
  }
  return at;
}
std::string text_at(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* at = find(root, path);
  return at && at->is_string() ? std::string(at->get_string()) : std::string();
}
std::int64_t number_at(const json::value& root, std::initializer_list<std::string_view> path) {
  const json::value* at = find(root, path);
  if (!at) return 0;
  if (at->is_int64()) return at->get_int64();
  if (at->is_uint64()) return static_cast<std::int64_t>(at->get_uint64());
  return -1;
}
bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}
std::string show(const Reply& reply) { return std::to_string(reply.status) + " " + reply.text; }

// ----- the checks ----------------------------------------------------------------------------

// `idle` is left connected, a kept-alive connection waiting for its next request.
void check_service(unsigned short port, std::uint64_t& pipeline_calls, tcp::socket& idle) {
  Client client(port);

  idle.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::write(idle, make_request(http::verb::get, "/health", {}, true));
  client.count_requests(1);
  Reply first = read_reply(idle);
  check(first.status == 200, "a kept-alive connection: answered, then left idle", show(first));

  Reply health = client.send(http::verb::get, "/health");
  check(health.status == 200 && text_at(health.body, {"status"}) == "ok" &&
            find(health.body, {"tools"}) && find(health.body, {"tools"})->is_array() &&
            find(health.body, {"tools"})->get_array().size() == 4,
        "GET /health: 200, status ok, the four tools", show(health));

  // Allowed, and rewritten: the relative path normalised before the tool sees it.
  Reply read = client.tool({{"tool", "fs_read"}, {"args", {{"path", "./README.md"}}}});
  ++pipeline_calls;
  check(read.status == 200 && text_at(read.body, {"args", "path"}) == "/workspace/README.md" &&
            find(read.body, {"rewritten"}) && *find(read.body, {"rewritten"}) == true &&
            contains(text_at(read.body, {"result", "content"}), "Notes for the agent"),
        "fs_read ./README.md: 200, path rewritten to /workspace/README.md, content", show(read));
  const json::value* notes = find(read.body, {"audit"});
  check(notes && notes->is_array() && notes->get_array().size() == 1 &&
            contains(notes->get_array()[0].as_string(), "compliance-log: recorded fs_read (ok)"),
        "fs_read: audited (compliance-log noted; the slow siem-export cut off and skipped)",
        show(read));

  Reply write =
      client.tool({{"tool", "fs_write"},
                   {"args", {{"path", "/workspace/drafts/../out.txt"}, {"content", "hi"}}}});
  ++pipeline_calls;
  check(write.status == 200 && text_at(write.body, {"args", "path"}) == "/workspace/out.txt" &&
            number_at(write.body, {"result", "bytes"}) == 2,
        "fs_write /workspace/drafts/../out.txt: 200, written to /workspace/out.txt", show(write));
  Reply read_back = client.tool({{"tool", "fs_read"}, {"args", {{"path", "/workspace/out.txt"}}}});
  ++pipeline_calls;
  check(read_back.status == 200 && text_at(read_back.body, {"result", "content"}) == "hi" &&
            find(read_back.body, {"rewritten"}) && *find(read_back.body, {"rewritten"}) == false,
        "fs_read /workspace/out.txt: 200, what fs_write wrote, not rewritten", show(read_back));

  // Refused, each by its own gate.
  Reply escape = client.tool(
      {{"tool", "fs_write"}, {"args", {{"path", "/workspace/../etc/passwd"}, {"content", "x"}}}});
  ++pipeline_calls;
  check(
      escape.status == 403 && find(escape.body, {"refused"}) &&
          contains(text_at(escape.body, {"reason"}), "outside the workspace") &&
          text_at(escape.body, {"args", "path"}) == "/etc/passwd",
      "fs_write /workspace/../etc/passwd: 403, refused (outside the workspace, after the rewrite)",
      show(escape));
  Reply shell = client.tool({{"tool", "shell"}, {"args", {{"command", "rm -rf /"}}}});
  ++pipeline_calls;
  check(shell.status == 403 && contains(text_at(shell.body, {"reason"}), "shell is disabled"),
        "shell: 403, refused by policy", show(shell));
  Reply plain_http = client.tool({{"tool", "http_get"}, {"args", {{"url", "http://example.com"}}}});
  ++pipeline_calls;
  check(plain_http.status == 403 && contains(text_at(plain_http.body, {"reason"}), "https"),
        "http_get http://: 403, https only", show(plain_http));
  Reply fetch = client.tool({{"tool", "http_get"}, {"args", {{"url", "https://example.com"}}}});
  ++pipeline_calls;
  check(fetch.status == 200 && number_at(fetch.body, {"result", "status"}) == 200,
        "http_get https://: 200, the simulated page", show(fetch));
  Reply secret =
      client.tool({{"tool", "fs_write"}, {"args", {{"path", "key.txt"}, {"content", "sk-123"}}}});
  ++pipeline_calls;
  const json::value* secret_notes = find(secret.body, {"audit"});
  check(secret.status == 200 && secret_notes && secret_notes->is_array() &&
            secret_notes->get_array().size() == 2 &&
            contains(secret_notes->get_array()[0].as_string(), "secrets-scan"),
        "fs_write of a secret: 200, and the secrets-scan audit noted it (notes in hook order)",
        show(secret));

  // A tool that fails: 422, with the tool's own message.
  Reply missing = client.tool({{"tool", "fs_read"}, {"args", {{"path", "nothing.txt"}}}});
  ++pipeline_calls;
  check(missing.status == 422 && contains(text_at(missing.body, {"error"}), "no such file"),
        "fs_read of a missing file: 422, no such file", show(missing));
  Reply no_path = client.tool({{"tool", "fs_read"}, {"args", json::object{}}});
  ++pipeline_calls;
  check(no_path.status == 403 && contains(text_at(no_path.body, {"reason"}), "path"),
        "fs_read without a path: 403, refused by the fs_* hook", show(no_path));

  // Bad input: each gets its answer, the service goes on.
  Reply malformed = client.send(http::verb::post, "/tool", R"({"tool": "fs_read", "args": )");
  check(malformed.status == 400 && contains(text_at(malformed.body, {"error"}), "malformed JSON"),
        "malformed JSON: 400 with a JSON error", show(malformed));
  Reply wrong_shape = client.send(http::verb::post, "/tool", R"({"tool": 5})");
  check(wrong_shape.status == 400 && !text_at(wrong_shape.body, {"error"}).empty(),
        "a call without a tool name: 400 with a JSON error", show(wrong_shape));
  Reply unknown = client.tool({{"tool", "rm"}, {"args", json::object{}}});
  check(unknown.status == 404 && contains(text_at(unknown.body, {"error"}), "unknown tool: rm"),
        "unknown tool: 404", show(unknown));
  Reply no_route = client.send(http::verb::get, "/nowhere");
  check(no_route.status == 404, "an unknown route: 404", show(no_route));
  Reply wrong_method = client.send(http::verb::get, "/tool");
  check(wrong_method.status == 405, "GET /tool: 405", show(wrong_method));
  Reply oversized =
      client.tool({{"tool", "fs_write"},
                   {"args", {{"path", "big.txt"}, {"content", std::string(100 * 1024, 'x')}}}});
  check(oversized.status == 413 && contains(text_at(oversized.body, {"error"}), "65536"),
        "a 100 KiB body: 413 (the limit is 64 KiB)", show(oversized));
  Reply garbage = client.raw("HELLO WORLD\r\n\r\n");
  check(garbage.status == 400 && contains(text_at(garbage.body, {"error"}), "malformed HTTP"),
        "malformed HTTP: 400 with a JSON error", show(garbage));
  client.abandon(
      "POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 200\r\n\r\n{\"tool\": \"fs_read\", \"ar");
  // The service notices the hang-up on its own time: wait for it in the metrics.
  bool aborted_counted = false;
  for (int attempt = 0; attempt < 200 && !aborted_counted; ++attempt) {
    Reply metrics = client.send(http::verb::get, "/metrics");
    aborted_counted = number_at(metrics.body, {"http", "aborted"}) == 1;
    if (!aborted_counted) std::this_thread::sleep_for(10ms);
  }
  check(aborted_counted, "a client gone halfway through its request: counted as aborted");

  // Two requests on one connection (keep-alive), then concurrent calls on connections of their own.
  {
    tcp::socket socket = client.connect();
    http::write(socket, make_request(http::verb::get, "/health", {}, true));
    Reply first = read_reply(socket);
    http::write(socket,
                make_request(http::verb::post, "/tool",
                             R"({"tool": "fs_read", "args": {"path": "README.md"}})", false));
    Reply second = read_reply(socket);
    client.count_requests(2);
    ++pipeline_calls;
    check(first.status == 200 && second.status == 200,
          "two requests on one kept-alive connection: both answered", show(second));
  }
  constexpr int parallel = 8;
  std::vector<Reply> replies(parallel);
  std::vector<std::thread> threads;
  for (int i = 0; i < parallel; ++i)
    threads.emplace_back([&, i] {
      Client own(port);
      replies[i] = own.tool({{"tool", "fs_read"}, {"args", {{"path", "README.md"}}}});
    });
  for (std::thread& thread : threads) thread.join();
  client.count_requests(parallel);
  pipeline_calls += parallel;
  bool all_served = true;
  for (const Reply& reply : replies) all_served = all_served && reply.status == 200;
  check(all_served, "8 concurrent calls: all answered 200");

  // Still serving, after all that.
  Reply after = client.tool({{"tool", "fs_read"}, {"args", {{"path", "out.txt"}}}});
  ++pipeline_calls;
  check(after.status == 200 && text_at(after.body, {"result", "content"}) == "hi",
        "after the bad input: calls still served", show(after));

  // Nothing lost: every request counted, every answer counted (but the one being written).
  Reply metrics = client.send(http::verb::get, "/metrics");
  const std::int64_t requests = number_at(metrics.body, {"http", "requests"});
  std::int64_t responses = 0;
  if (const json::value* statuses = find(metrics.body, {"http", "responses"});
      statuses && statuses->is_object())
    for (const auto& entry : statuses->get_object())
      responses += entry.value().is_int64() ? entry.value().get_int64() : 0;
  const auto sent = static_cast<std::int64_t>(client.requests());
  check(metrics.status == 200 && requests == sent,
        "metrics: every request counted (" + std::to_string(sent) + ")", show(metrics));
  check(responses == sent - 1, "metrics: every answer counted (all but this one)", show(metrics));
  check(number_at(metrics.body, {"http", "responses", "413"}) == 1 &&
            number_at(metrics.body, {"http", "responses", "400"}) == 3 &&
            number_at(metrics.body, {"http", "responses", "403"}) == 4 &&
            number_at(metrics.body, {"http", "responses", "422"}) == 1 &&
            number_at(metrics.body, {"http", "aborted"}) == 1,
        "metrics: answers by status (413, 400, 403, 422) and the aborted request", show(metrics));
  const auto calls = static_cast<std::int64_t>(pipeline_calls);
  check(number_at(metrics.body, {"slots", "CheckTool", "count"}) == calls &&
            number_at(metrics.body, {"slots", "CheckTool", "errors"}) == 1 &&
            number_at(metrics.body, {"slots", "AuditCall", "count"}) == calls &&
            number_at(metrics.body, {"slots", "AuditCall", "hooks_skipped"}) == calls,
        "metrics: one CheckTool and one AuditCall dispatch per call (" + std::to_string(calls) +
            "), the slow audit skipped in each",
        show(metrics));
  check(number_at(metrics.body, {"slots", "AuditCall", "mean_us"}) >= 50'000,
        "metrics: AuditCall latency includes the slow audit's 50 ms limit", show(metrics));
  check(number_at(metrics.body, {"tool_calls", "fs_read"}) == 6 + parallel &&
            number_at(metrics.body, {"tool_calls", "fs_write"}) == 3 &&
            number_at(metrics.body, {"tool_calls", "shell"}) == 1 &&
            number_at(metrics.body, {"tool_calls", "http_get"}) == 2,
        "metrics: the every-call audit hook saw each call, by tool", show(metrics));

  Reply stop = client.send(http::verb::post, "/shutdown");
  check(stop.status == 200 && text_at(stop.body, {"status"}) == "shutting down",
        "POST /shutdown: 200", show(stop));
}

void check_trace(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  boost::system::error_code error;
  json::value trace = json::parse(text.str(), error);
  const json::value* events = error ? nullptr : find(trace, {"traceEvents"});
  bool check_tool = false;
  bool skipped_audit = false;
  if (events && events->is_array())
    for (const json::value& event : events->get_array()) {
      if (text_at(event, {"cat"}) == "dispatch" && text_at(event, {"name"}) == "CheckTool")
        check_tool = true;
      if (text_at(event, {"name"}) == "siem-export" &&
          text_at(event, {"args", "outcome"}) == "skipped")
        skipped_audit = true;
    }
  check(check_tool && skipped_audit,
        "trace written at shutdown: CheckTool dispatches, siem-export hooks skipped",
        path.string());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " <example_agent_service> <work directory>\n";
    return 2;
  }
  const std::string program = argv[1];
  const std::filesystem::path work = argv[2];
  std::filesystem::create_directories(work);
  const std::filesystem::path trace = work / "agent_service.trace.json";
  std::filesystem::remove(trace);
  // A hung exchange must not hang the test: give up (killing the service) after two minutes.
  std::thread([] {
    std::this_thread::sleep_for(120s);
    std::cout << "FAIL the checks took more than two minutes" << std::endl;
    std::_Exit(1);
  }).detach();

  try {
    {
      Service service(program, work / "port", trace.string());
      const std::optional<unsigned short> port = service.wait_for_port();
      check(port.has_value(), "the service starts and writes its port");
      if (!port) return 1;
      std::uint64_t pipeline_calls = 0;
      net::io_context io;
      tcp::socket idle(io);
      check_service(*port, pipeline_calls, idle);
      // (Well before the idle connection's own 30 s timeout: the stop closes it.)
      const std::optional<int> status = service.wait_for_exit(10s);
      check(status == 0,
            "the service exits with 0 after POST /shutdown, closing the idle connection");
      char byte = 0;
      boost::system::error_code closed;
      idle.read_some(net::buffer(&byte, 1), closed);
      check(closed == net::error::eof, "the idle connection was closed by the service",
            closed.message());
      check_trace(trace);
    }
    {
      Service service(program, work / "port", "");
      const std::optional<unsigned short> port = service.wait_for_port();
      check(port.has_value(), "a second service starts");
      if (!port) return 1;
      Client client(*port);
      check(client.send(http::verb::get, "/health").status == 200, "it answers GET /health");
      service.signal(SIGTERM);
      check(service.wait_for_exit(30s) == 0, "SIGTERM stops it cleanly (exit 0)");
    }
  } catch (const std::exception& error) {
    check(false, "the exchange with the service", error.what());
  }
  std::cout << (failures ? std::to_string(failures) + " checks failed" : "all checks passed")
            << std::endl;
  return failures ? 1 : 0;
}
