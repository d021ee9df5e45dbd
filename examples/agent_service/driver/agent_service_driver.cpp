// The test of examples/agent_service: starts the service on a free port, talks HTTP to it
// (Boost.Beast, one connection per request unless said otherwise) and checks every answer -
// allowed, refused and rewritten calls, bad input of every kind (malformed JSON, an unknown tool,
// a body over the limit, malformed HTTP, a client gone halfway through its request), concurrent
// calls, guards that refuse a call or stop it while it runs - then what no client may turn
// against it: names other than its own (Host, absolute-form targets: DNS rebinding), cross-site
// requests (Origin, content types, /shutdown), URLs spelled to slip past a guard, writes around
// the effect boundary, the protocol's corners (framing, versions, header limits) - then that the
// service still answers, that its metrics count every request (nothing lost), and that it stops
// cleanly on POST /shutdown (writing its trace) and on SIGTERM. Its URL reputation guard, a
// plugin, is swapped for another build and back twenty times while six connections call
// continuously: no call may fail. Other instances: at its descriptor limit, with tight limits,
// with guards out of time (503, not 403) and a shutdown token, with a log reader gone (SIGPIPE)
// or stalled, and with a plugin directory of the driver's own (--plugins: a build refused, one
// installed, a plugin removed; a directory it refuses to start with).
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

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
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
  // `options`: more command-line options of the service (an --access-log of their own replaces
  // the default, a file beside the port file); `stdout_fd`: its standard output, when not ours.
  Service(const std::string& program, const std::filesystem::path& port_file,
          const std::string& trace_file, std::vector<std::string> options = {}, int stdout_fd = -1)
      : port_file_(port_file) {
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {program, "--port", "0", "--port-file", port_file.string()};
    if (!trace_file.empty()) {
      args.push_back("--trace");
      args.push_back(trace_file);
    }
    if (std::find(options.begin(), options.end(), "--access-log") == options.end()) {
      args.push_back("--access-log");
      args.push_back((port_file.parent_path() / "access.log").string());
    }
    args.insert(args.end(), options.begin(), options.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    const int spawned =
        posix_spawn(&pid_, program.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (spawned != 0) throw std::runtime_error("cannot start " + program);
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
  unsigned version = 0;  // of the answer: 11 for HTTP/1.1
  json::value body;      // null when the body is not JSON
  std::string text;
  http::fields headers;
  bool valid_json = false;  // the body parsed as JSON (Boost.JSON checks UTF-8 too)
  std::string header(http::field name) const { return std::string(headers[name]); }
};

// Reads an answer; `buffer` keeps what came after it, for the next one on the connection.
// `head`: the answer to a HEAD request, which has no body whatever its Content-Length says.
Reply read_reply(tcp::socket& socket, beast::flat_buffer& buffer, bool head = false) {
  http::response_parser<http::string_body> parser;
  parser.body_limit(16 * 1024 * 1024);
  parser.skip(head);
  http::read(socket, buffer, parser);
  Reply reply;
  reply.status = parser.get().result_int();
  reply.version = parser.get().version();
  reply.text = parser.get().body();
  reply.headers = parser.get().base();
  boost::system::error_code error;
  reply.body = json::parse(reply.text, error);
  reply.valid_json = !error;
  return reply;
}
Reply read_reply(tcp::socket& socket) {
  beast::flat_buffer buffer;
  return read_reply(socket, buffer);
}

// Whether the socket has something to read (or its end) within `patience`.
bool readable_within(tcp::socket& socket, std::chrono::milliseconds patience) {
  pollfd entry{socket.native_handle(), POLLIN, 0};
  return ::poll(&entry, 1, static_cast<int>(patience.count())) == 1;
}
// Whether the service closed the connection (within a few seconds) with nothing more sent on it
// than what `buffer` already held and was read.
bool closed_by_service(tcp::socket& socket, const beast::flat_buffer& buffer) {
  if (buffer.size() != 0 || !readable_within(socket, 5s)) return false;
  char byte = 0;
  boost::system::error_code error;
  socket.read_some(net::buffer(&byte, 1), error);
  return error == net::error::eof || error == net::error::connection_reset;
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
            find(health.body, {"tools"})->get_array().size() == 5,
        "GET /health: 200, status ok, the five tools", show(health));

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
  check(escape.status == 403 && find(escape.body, {"refused"}) &&
            contains(text_at(escape.body, {"reason"}), "outside the workspace") &&
            text_at(escape.body, {"refused_by"}) == "workspace-only" &&
            text_at(escape.body, {"effect", "path"}) == "/etc/passwd",
        "fs_write /workspace/../etc/passwd: 403, refused at the write (outside the workspace)",
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
            number_at(metrics.body, {"slots", "CheckTool", "errors"}) == 2 &&
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
}

// The guards: PermitTool's concurrent verdicts (a deny beats an allow that came first), and
// WatchTool's tripwire around a running tool (a crawl stopped in the middle; nothing saved).
void check_guards(unsigned short port) {
  Client client(port);
  Reply blocked =
      client.tool({{"tool", "http_get"}, {"args", {{"url", "https://evil.example/payload"}}}});
  const json::value* verdicts = find(blocked.body, {"verdicts"});
  check(blocked.status == 403 && text_at(blocked.body, {"refused_by"}) == "url-reputation" &&
            text_at(blocked.body, {"reason"}) == "host on the blocklist" && verdicts &&
            verdicts->is_array() && verdicts->get_array().size() == 3 &&
            text_at(verdicts->get_array()[1], {"guard"}) == "egress-policy" &&
            text_at(verdicts->get_array()[1], {"decision"}) == "allow",
        "http_get of a blocklisted host: 403, the reputation guard's deny beats the egress "
        "policy's allow (which answered first)",
        show(blocked));
  Reply fetched =
      client.tool({{"tool", "http_get"}, {"args", {{"url", "https://docs.example/a"}}}});
  check(fetched.status == 200 && find(fetched.body, {"result", "body"}),
        "http_get of another host: 200, every guard allowed", show(fetched));

  // A small crawl: allowed while it runs; its pages saved once the watching guard allowed.
  Reply small = client.tool({{"tool", "crawl"}, {"args", {{"site", "small"}, {"pages", 5}}}});
  Reply saved = client.tool({{"tool", "fs_read"}, {"args", {{"path", "crawl/small.txt"}}}});
  check(small.status == 200 && number_at(small.body, {"result", "pages"}) == 5 &&
            saved.status == 200 &&
            contains(text_at(saved.body, {"result", "content"}), "simulated page 5 of small"),
        "crawl of 5 pages: 200, its pages saved after the crawl-budget guard allowed",
        show(small) + " / " + show(saved));

  // A big crawl (500 pages, 1 s): the crawl-budget guard objects after 20 ms, in the middle.
  const auto start = std::chrono::steady_clock::now();
  Reply big = client.tool({{"tool", "crawl"}, {"args", {{"site", "big"}, {"pages", 500}}}});
  const auto took = std::chrono::steady_clock::now() - start;
  Reply not_saved = client.tool({{"tool", "fs_read"}, {"args", {{"path", "crawl/big.txt"}}}});
  check(big.status == 403 && find(big.body, {"stopped"}) && *find(big.body, {"stopped"}) == true &&
            text_at(big.body, {"stopped_by"}) == "crawl-budget" &&
            text_at(big.body, {"reason"}) == "crawl budget: at most 10 pages" &&
            !find(big.body, {"result"}),
        "crawl of 500 pages: 403, stopped in the middle by the crawl-budget guard", show(big));
  const auto took_ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
  // (The answer also waits for the call's audits, 50 ms: see AuditCall.)
  check(took_ms < 700, "the stopped crawl answered in " + std::to_string(took_ms) +
                           " ms, not the 1 s its 500 pages take");
  check(not_saved.status == 422, "the stopped crawl saved nothing", show(not_saved));
}

// Runs one group of checks; an exchange that breaks down (the service closed the connection
// early, or answered what is not HTTP) fails the group, not the whole driver.
template <typename Checks>
void guarded(std::string_view what, Checks checks) {
  try {
    checks();
  } catch (const std::exception& error) {
    check(false, what, error.what());
  }
}

bool has_http_date(const Reply& reply) {
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT".
  const std::string date = reply.header(http::field::date);
  return date.size() == 29 && date[3] == ',' && date.ends_with(" GMT");
}

// What a hostile (or careless) client sends: each answered as HTTP says, and nothing more.
void check_protocol(unsigned short port) {
  Client client(port);
  guarded("Transfer-Encoding", [&] {
    // A body the service cannot delimit (RFC 9112 §6.3): 400 and closed - read as "no body",
    // its bytes would run as the next request (request smuggling).
    const std::string smuggled = "GET /smuggled HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    const std::string length = "Content-Length: " + std::to_string(smuggled.size()) + "\r\n";
    for (const std::string& framing :
         {std::string("Transfer-Encoding: gzip\r\n"), "Transfer-Encoding: gzip\r\n" + length,
          length + "Transfer-Encoding: chunked\r\n"}) {
      tcp::socket socket = client.connect();
      net::write(socket, net::buffer("POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\n" + framing +
                                     "\r\n" + smuggled));
      beast::flat_buffer buffer;
      Reply reply = read_reply(socket, buffer);
      std::string shown = framing;
      for (std::size_t at; (at = shown.find("\r\n")) != std::string::npos;)
        shown.replace(at, 2, "; ");
      check(reply.status == 400 && reply.header(http::field::connection) == "close" &&
                closed_by_service(socket, buffer),
            "POST with " + shown + "400, the connection closed, the body not run as a request",
            show(reply));
    }
  });
  guarded("a target that is not UTF-8", [&] {
    Reply reply = client.raw(
        "GET /caf\xc3\xa9/\xff\xfe\xc0\xaf HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: "
        "close\r\n\r\n");
    check(reply.status == 404 && reply.valid_json &&
              contains(text_at(reply.body, {"error"}),
                       "/caf\xc3\xa9/\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
          "a target that is not UTF-8: 404 with valid JSON, each bad byte shown as U+FFFD",
          show(reply));
  });
  guarded("405 and Allow", [&] {
    Reply get_tool = client.send(http::verb::get, "/tool");
    check(get_tool.status == 405 && get_tool.header(http::field::allow) == "POST",
          "GET /tool: 405 with Allow: POST", show(get_tool));
    Reply post_health = client.send(http::verb::post, "/health");
    check(post_health.status == 405 && post_health.header(http::field::allow) == "GET, HEAD",
          "POST /health: 405 with Allow: GET, HEAD", show(post_health));
    check(has_http_date(get_tool) && has_http_date(post_health), "405 answers carry a Date");
  });
  guarded("Expect: 100-continue", [&] {
    const std::string call = R"({"tool": "fs_read", "args": {"path": "README.md"}})";
    tcp::socket socket = client.connect();
    net::write(socket, net::buffer("POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                   "Content-Type: application/json\r\nContent-Length: " +
                                   std::to_string(call.size()) +
                                   "\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"));
    beast::flat_buffer buffer;
    std::optional<Reply> interim;
    if (readable_within(socket, 5s)) interim = read_reply(socket, buffer);
    check(interim && interim->status == 100,
          "Expect: 100-continue: 100 Continue before the body is sent",
          interim ? show(*interim) : "nothing within 5 s");
    if (!interim) return;
    net::write(socket, net::buffer(call));
    Reply answer = read_reply(socket, buffer);
    check(answer.status == 200, "... then the body sent, and the call answered 200", show(answer));

    tcp::socket big = client.connect();
    net::write(big, net::buffer(std::string("POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                            "Content-Length: 1048576\r\nExpect: 100-continue\r\n"
                                            "Connection: close\r\n\r\n")));
    std::optional<Reply> refused;
    if (readable_within(big, 5s)) refused = read_reply(big);
    check(refused && refused->status == 413,
          "Expect: 100-continue with a body over the limit: 413 at once, no 100",
          refused ? show(*refused) : "nothing within 5 s");
  });
  guarded("Host", [&] {
    Reply no_host = client.raw("GET /health HTTP/1.1\r\nConnection: close\r\n\r\n");
    check(no_host.status == 400 && contains(text_at(no_host.body, {"error"}), "Host"),
          "HTTP/1.1 without Host: 400", show(no_host));
    Reply two_hosts =
        client.raw("GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n");
    check(two_hosts.status == 400, "two Host headers: 400", show(two_hosts));
    Reply old = client.raw("GET /health HTTP/1.0\r\n\r\n");
    check(old.status == 200, "HTTP/1.0 without Host: 200 (Host is HTTP/1.1's)", show(old));
    check(has_http_date(no_host) && has_http_date(old), "400 and HTTP/1.0 answers carry a Date");
  });
  guarded("header section too large", [&] {
    Reply reply = client.raw("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " +
                             std::string(16 * 1024, 'a') + "\r\n\r\n");
    check(reply.status == 431 && has_http_date(reply),
          "a 16 KiB header section: 431 Request Header Fields Too Large", show(reply));
  });
  guarded("HEAD /health", [&] {
    tcp::socket socket = client.connect();
    beast::flat_buffer buffer;
    http::write(socket, make_request(http::verb::head, "/health", {}, true));
    Reply head = read_reply(socket, buffer, true);
    // The same connection next: a body sent after the HEAD answer would be read as this answer.
    http::write(socket, make_request(http::verb::get, "/health", {}, false));
    Reply get = read_reply(socket, buffer);
    check(head.status == 200 && head.text.empty() && has_http_date(head) &&
              head.header(http::field::content_length) == std::to_string(get.text.size()) &&
              get.status == 200 && get.valid_json,
          "HEAD /health: 200, GET's Content-Length, no body (the next GET answered right after)",
          show(head) + " / " + show(get));
  });
  guarded("Date", [&] {
    Reply health = client.send(http::verb::get, "/health");
    Reply missing = client.tool({{"tool", "fs_read"}, {"args", {{"path", "nothing.txt"}}}});
    check(has_http_date(health) && has_http_date(missing), "200 and 422 answers carry a Date",
          health.header(http::field::date));
  });
}

// The stop (POST /shutdown here) with a request begun on a kept-alive connection: still
// answered, saying "Connection: close", and the connection then closed.
void check_draining(unsigned short port) {
  Client client(port);
  guarded("the stop with a request begun", [&] {
    const std::string call = R"({"tool": "fs_read", "args": {"path": "README.md"}})";
    tcp::socket busy = client.connect();
    beast::flat_buffer buffer;
    http::write(busy, make_request(http::verb::get, "/health", {}, true));
    Reply first = read_reply(busy, buffer);
    net::write(busy, net::buffer("POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                 "Content-Type: application/json\r\nContent-Length: " +
                                 std::to_string(call.size()) + "\r\n\r\n" + call.substr(0, 10)));
    tcp::socket probe = client.connect();
    beast::flat_buffer probe_buffer;
    http::write(probe, make_request(http::verb::get, "/ready", {}, true));
    Reply ready = read_reply(probe, probe_buffer);
    check(ready.status == 200 && text_at(ready.body, {"status"}) == "ready",
          "GET /ready: 200 ready", show(ready));
    net::write(probe, net::buffer(std::string("GET /ready HTTP/1.1\r\nHost: 127.0.0.1\r\n")));
    // A kept-alive connection, idle when the stop begins: its client may send its next request
    // before it can know.
    tcp::socket kept = client.connect();
    beast::flat_buffer kept_buffer;
    http::write(kept, make_request(http::verb::get, "/health", {}, true));
    Reply kept_first = read_reply(kept, kept_buffer);
    // Time for the service to read them: requests begun, not idle connections.
    std::this_thread::sleep_for(200ms);
    Reply stop = client.send(http::verb::post, "/shutdown");
    check(stop.status == 200 && text_at(stop.body, {"status"}) == "shutting down",
          "POST /shutdown: 200", show(stop));
    http::write(kept, make_request(http::verb::get, "/health", {}, true));
    std::optional<Reply> kept_next;
    if (readable_within(kept, 5s)) {
      try {
        kept_next = read_reply(kept, kept_buffer);
      } catch (const std::exception&) {  // closed unanswered
      }
    }
    check(kept_first.status == 200 && kept_next && kept_next->status == 200 &&
              kept_next->header(http::field::connection) == "close",
          "a request sent on a kept-alive connection right after the stop: answered, with "
          "Connection: close",
          kept_next ? show(*kept_next) : "closed unanswered");
    net::write(busy, net::buffer(call.substr(10)));
    Reply last = read_reply(busy, buffer);
    check(first.status == 200 && last.status == 200 &&
              first.header(http::field::connection) != "close" &&
              last.header(http::field::connection) == "close" && closed_by_service(busy, buffer),
          "a request begun on a kept-alive connection before the stop: answered 200 with "
          "Connection: close, then the connection closed",
          show(last));
    net::write(probe, net::buffer(std::string("\r\n")));
    Reply draining = read_reply(probe, probe_buffer);
    check(draining.status == 503 && text_at(draining.body, {"status"}) == "draining" &&
              draining.header(http::field::connection) == "close",
          "GET /ready during the stop: 503 draining, Connection: close", show(draining));
  });
}

// ----- operations ---------------------------------------------------------------------------

std::string read_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}
// The line of the access log that holds `part`, once the service has written it.
std::string log_line(const std::filesystem::path& log, std::string_view part) {
  for (int attempt = 0; attempt < 200; ++attempt, std::this_thread::sleep_for(10ms)) {
    std::istringstream lines(read_text(log));
    for (std::string line; std::getline(lines, line);)
      if (contains(line, part)) return line;
  }
  return {};
}

// What an operator reads: request ids in answers and in the access log, latency histograms, the
// Prometheus text format.
void check_operations(unsigned short port, std::uint64_t pipeline_calls,
                      const std::filesystem::path& access_log) {
  Client client(port);
  guarded("request ids and the access log", [&] {
    Reply first = client.send(http::verb::get, "/health");
    Reply second = client.send(http::verb::get, "/nowhere");
    const std::string id = std::string(first.headers["X-Request-Id"]);
    check(!id.empty() && id != std::string(second.headers["X-Request-Id"]),
          "every answer has an X-Request-Id of its own", id);
    const std::string line = log_line(access_log, " " + id + " ");
    check(contains(line, "\"GET /health HTTP/1.1\" 200 ") && contains(line, "127.0.0.1:"),
          "the access log has a line for it: request id, client, request line, status",
          line.empty() ? "no line with " + id : line);
  });
  guarded("latency histogram", [&] {
    Reply metrics = client.send(http::verb::get, "/metrics");
    const json::value* buckets =
        find(metrics.body, {"http", "latency_ms", "POST /tool", "buckets"});
    const std::int64_t count =
        number_at(metrics.body, {"http", "latency_ms", "POST /tool", "count"});
    bool cumulative = buckets && buckets->is_object() && !buckets->get_object().empty();
    std::int64_t previous = 0;
    if (cumulative)
      for (const auto& bucket : buckets->get_object()) {
        const std::int64_t at_most = bucket.value().is_uint64()
                                         ? static_cast<std::int64_t>(bucket.value().get_uint64())
                                     : bucket.value().is_int64() ? bucket.value().get_int64()
                                                                 : -1;
        cumulative = cumulative && at_most >= previous;
        previous = at_most;
      }
    const auto calls = static_cast<std::int64_t>(pipeline_calls);
    // Every call that reached the audits waited for the slow one's 50 ms limit.
    check(cumulative && count >= calls && previous == count &&
              number_at(*buckets, {"50"}) <= count - calls,
          "metrics: POST /tool latency histogram (cumulative, the " + std::to_string(calls) +
              " audited calls over 50 ms)",
          show(metrics));
    Reply text = client.send(http::verb::get, "/metrics?format=prometheus");
    check(
        text.status == 200 && text.header(http::field::content_type).starts_with("text/plain") &&
            contains(text.text, "# TYPE agent_http_request_duration_seconds histogram\n") &&
            contains(
                text.text,
                "agent_http_request_duration_seconds_bucket{route=\"POST /tool\",le=\"+Inf\"} ") &&
            contains(text.text, "agent_slot_dispatches_total{slot=\"CheckTool\"} "),
        "GET /metrics?format=prometheus: the Prometheus text format", show(text));
    Reply asked = client.raw(
        "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: "
        "text/plain;version=0.0.4\r\nConnection: close\r\n\r\n");
    check(asked.status == 200 && contains(asked.text, "# TYPE agent_http_requests_total counter"),
          "GET /metrics with Accept: text/plain: the Prometheus text format", show(asked));
  });
}

// ----- what the service answers to, and what its guards judge -------------------------------

// Only its own names: 127.0.0.1, localhost and the names given by --allow-host (here
// agent.test), with its own port if any. A page of attacker.example whose name is re-pointed at
// 127.0.0.1 (DNS rebinding) sends Host: attacker.example: 421.
void check_names(unsigned short port) {
  Client client(port);
  const std::string at = ":" + std::to_string(port);
  const auto get_health = [&](const std::string& host) {
    return client.raw("GET /health HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n");
  };
  guarded("Host: its own names", [&] {
    for (const std::string& host : {"127.0.0.1" + at, std::string("127.0.0.1"), "localhost" + at,
                                    "LocalHost" + at, "agent.test" + at}) {
      Reply reply = get_health(host);
      check(reply.status == 200, "Host: " + host + ": 200, one of its names", show(reply));
    }
    for (const std::string& host :
         {"attacker.example" + at, std::string("127.0.0.1:1"), "localhost.attacker.example" + at}) {
      Reply reply = get_health(host);
      check(reply.status == 421, "Host: " + host + ": 421 Misdirected Request", show(reply));
    }
    const std::string call = R"({"tool": "fs_read", "args": {"path": "README.md"}})";
    Reply rebound = client.raw(
        "POST /tool HTTP/1.1\r\nHost: attacker.example" + at +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(call.size()) +
        "\r\nConnection: close\r\n\r\n" + call);
    check(rebound.status == 421 && !find(rebound.body, {"result"}),
          "POST /tool with Host: attacker.example (DNS rebinding): 421, nothing read",
          show(rebound));
  });
  guarded("Host: invalid", [&] {
    for (const std::string host :
         {"bad host", "a/b", "user@127.0.0.1", "127.0.0.1:99999", "[::1"}) {
      Reply reply = get_health(host);
      check(reply.status == 400, "an invalid Host (" + host + "): 400", show(reply));
    }
  });
  guarded("absolute-form targets", [&] {
    Reply absolute =
        client.raw("GET http://127.0.0.1" + at + "/health HTTP/1.1\r\nHost: 127.0.0.1" + at +
                   "\r\nConnection: close\r\n\r\n");
    check(absolute.status == 200 && text_at(absolute.body, {"status"}) == "ok",
          "GET http://127.0.0.1:PORT/health (absolute form, RFC 9112 3.2.2): 200", show(absolute));
    Reply foreign =
        client.raw("GET http://attacker.example" + at + "/health HTTP/1.1\r\nHost: 127.0.0.1" + at +
                   "\r\nConnection: close\r\n\r\n");
    check(foreign.status == 421,
          "GET http://attacker.example:PORT/health: 421 (the target's authority counts, not Host)",
          show(foreign));
  });
}

// No web page can drive it: what a page may send without asking (text/plain, a form, no type)
// is 415, a state-changing request from a foreign Origin 403, and /shutdown is refused from any
// origin. (--allow-origin http://dashboard.test:3000 is allowed.)
void check_cross_site(unsigned short port) {
  Client client(port);
  const std::string own_origin = "http://127.0.0.1:" + std::to_string(port);
  const auto post =
      [&](std::string_view target, const std::string& headers, std::string_view body) {
    return client.raw("POST " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
                      "Content-Length: " + std::to_string(body.size()) +
                      "\r\nConnection: close\r\n\r\n" + std::string(body));
  };
  const std::string plant =
      R"({"tool": "fs_write", "args": {"path": "planted.txt", "content": "x"}})";
  const std::string read = R"({"tool": "fs_read", "args": {"path": "README.md"}})";
  guarded("cross-site requests", [&] {
    Reply simple =
        post("/tool", "Content-Type: text/plain\r\nOrigin: http://evil.example\r\n", plant);
    check(simple.status == 403 || simple.status == 415,
          "fs_write as text/plain from a foreign Origin: refused", show(simple));
    for (const std::string type : {"text/plain", "application/x-www-form-urlencoded",
                                   "multipart/form-data; boundary=x", "application/jsonx"}) {
      Reply reply = post("/tool", "Content-Type: " + type + "\r\n", plant);
      check(reply.status == 415, "POST /tool as " + type + ": 415", show(reply));
    }
    Reply untyped = post("/tool", "", plant);
    check(untyped.status == 415, "POST /tool without a Content-Type: 415", show(untyped));
    Reply foreign =
        post("/tool", "Content-Type: application/json\r\nOrigin: http://evil.example\r\n", plant);
    check(foreign.status == 403 && contains(text_at(foreign.body, {"error"}), "Origin"),
          "POST /tool from Origin http://evil.example: 403", show(foreign));
    Reply opaque = post("/tool", "Content-Type: application/json\r\nOrigin: null\r\n", plant);
    check(opaque.status == 403, "POST /tool from Origin null: 403", show(opaque));
    Reply planted = client.tool({{"tool", "fs_read"}, {"args", {{"path", "planted.txt"}}}});
    check(planted.status == 422, "none of them wrote the file", show(planted));
    Reply own = post(
        "/tool", "Content-Type: Application/JSON; charset=utf-8\r\nOrigin: " + own_origin + "\r\n",
        read);
    check(own.status == 200, "POST /tool from its own origin, application/json; charset=utf-8: 200",
          show(own));
    Reply dashboard = post(
        "/tool", "Content-Type: application/json\r\nOrigin: http://dashboard.test:3000\r\n", read);
    check(dashboard.status == 200, "POST /tool from an --allow-origin origin: 200",
          show(dashboard));
    Reply stop = post("/shutdown", "Origin: http://evil.example\r\n", "");
    Reply stop_own = post("/shutdown", "Origin: " + own_origin + "\r\n", "");
    check(stop.status == 403 && stop_own.status == 403,
          "POST /shutdown with an Origin (foreign, or even its own): 403",
          show(stop) + " / " + show(stop_own));
    Reply alive = client.send(http::verb::get, "/health");
    check(alive.status == 200 && text_at(alive.body, {"status"}) == "ok", "... and it still serves",
          show(alive));
  });
}

// Every write to the workspace passes one effect boundary (the CheckWrite slot's hooks), whichever
// tool makes it: the crawl's saved pages too.
void check_effects(unsigned short port) {
  Client client(port);
  guarded("the effect boundary", [&] {
    Reply crawl = client.tool(
        {{"tool", "crawl"}, {"args", {{"site", "../../../etc/cron.d/job"}, {"pages", 1}}}});
    check(crawl.status == 403 && text_at(crawl.body, {"refused_by"}) == "workspace-only" &&
              !find(crawl.body, {"result"}),
          "a crawl saving to ../../../etc/cron.d/job: 403, refused by the write validator",
          show(crawl));
    Reply nul = client.tool(
        {{"tool", "fs_write"}, {"args", {{"path", std::string("a\0b.txt", 7)}, {"content", "x"}}}});
    check(nul.status == 403 && text_at(nul.body, {"refused_by"}) == "portable-names",
          "fs_write to a path with a NUL byte: 403", show(nul));
    Reply long_name = client.tool(
        {{"tool", "fs_write"}, {"args", {{"path", std::string(256, 'n')}, {"content", "x"}}}});
    check(long_name.status == 403 && text_at(long_name.body, {"refused_by"}) == "portable-names",
          "fs_write to a 256-byte name: 403", show(long_name));
    Reply longest = client.tool(
        {{"tool", "fs_write"}, {"args", {{"path", std::string(255, 'n')}, {"content", "x"}}}});
    check(longest.status == 200, "fs_write to a 255-byte name: 200", show(longest));
  });
}

// The URL guards see the URL as it will be fetched: parsed, its host canonical (case, percent-
// encoding, IDNA dots and full-width forms), not the text typed.
void check_urls(unsigned short port) {
  Client client(port);
  const auto get = [&](const std::string& url) {
    return client.tool({{"tool", "http_get"}, {"args", {{"url", url}}}});
  };
  guarded("the URL guards", [&] {
    for (const std::string url :
         {"https://EVIL.EXAMPLE/x", "https://Evil.Example/x", "https://evil%2Eexample/x",
          "https://evil\xef\xbc\x8e"
          "example/x",
          "https://evil.example./x",
          "https://\xef\xbd\x85\xef\xbd\x96\xef\xbd\x89\xef\xbd\x8c.example/x",
          "https://sub.evil.example/x", "https://evil.example:443/x"}) {
      Reply reply = get(url);
      check(reply.status == 403 && text_at(reply.body, {"refused_by"}) == "url-reputation",
            "http_get " + url + ": 403, the blocklisted host however written", show(reply));
    }
    Reply other = get("https://notevil.example/x");
    check(other.status == 200, "http_get https://notevil.example/x: 200 (a host, not a substring)",
          show(other));
    Reply canonical = get("https://Docs.EXAMPLE:443/a/./b/../c");
    check(canonical.status == 200 &&
              text_at(canonical.body, {"result", "url"}) == "https://docs.example/a/c" &&
              text_at(canonical.body, {"args", "url"}) == "https://docs.example/a/c",
          "http_get https://Docs.EXAMPLE:443/a/./b/../c: the tool fetches what the guards judged, "
          "https://docs.example/a/c",
          show(canonical));
    for (const std::string url :
         {"https://127.0.0.1/", "https://2130706433/", "https://0x7f.1/", "https://localhost/",
          "https://[::1]/", "https://10.0.0.8/", "https://169.254.169.254/"}) {
      Reply reply = get(url);
      check(reply.status == 403 && text_at(reply.body, {"refused_by"}) == "egress-policy",
            "http_get " + url + ": 403, the service's own host and private networks", show(reply));
    }
    for (const std::string url : {"https://exa mple.com/", "https://user@docs.example/",
                                  "https://docs.example\\@evil.example/", "docs.example/a",
                                  "https://evil%00.example/", "https://[v1.x]/"}) {
      Reply reply = get(url);
      check(reply.status == 422 && contains(text_at(reply.body, {"error"}), "url"),
            "http_get " + url + ": 422, not a URL the guards can judge", show(reply));
    }
  });
}

// The small things of HTTP/1.1 (RFC 9110, RFC 9112).
void check_protocol_details(unsigned short port) {
  Client client(port);
  guarded("Transfer-Encoding: gzip, chunked", [&] {
    tcp::socket socket = client.connect();
    net::write(
        socket,
        net::buffer(std::string(
            "POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
            "application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n")));
    beast::flat_buffer buffer;
    Reply reply = read_reply(socket, buffer);
    check(reply.status == 501 && reply.header(http::field::connection) == "close" &&
              closed_by_service(socket, buffer),
          "Transfer-Encoding: gzip, chunked (a coding it does not know, RFC 9112 6.1): 501, closed",
          show(reply));
  });
  guarded("many small headers", [&] {
    std::string headers;
    for (int i = 0; headers.size() < 11 * 1024; ++i)
      headers += "X-Small-" + std::to_string(i) + ": " + std::string(24, 'v') + "\r\n";
    Reply reply = client.raw("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n");
    check(reply.status == 431,
          "11 KiB of small headers: 431 (the limit is 8 KiB, all of it counted)", show(reply));
  });
  guarded("HTTP/1.2", [&] {
    Reply reply =
        client.raw("GET /health HTTP/1.2\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    check(reply.status == 200 && reply.version == 11,
          "a GET in HTTP/1.2: 200 in HTTP/1.1 (RFC 9110 2.5: served as 1.1)", show(reply));
    Reply old = client.raw("GET /health HTTP/1.0\r\n\r\n");
    check(old.status == 200 && old.version == 11 && old.header(http::field::connection) == "close",
          "a GET in HTTP/1.0: answered in HTTP/1.1 (RFC 9110 6.2), Connection: close", show(old));
    Reply two = client.raw("GET /health HTTP/2.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    check(two.status == 505 && two.version == 11, "a GET in HTTP/2.0 over HTTP/1: 505", show(two));
  });
  guarded("a leading empty line", [&] {
    Reply reply =
        client.raw("\r\nGET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    check(reply.status == 200, "an empty line before the request line (RFC 9112 2.2): ignored, 200",
          show(reply));
  });
}

// Overload is not refusal: a guard that could not decide (here every guard has 2 ms, less than
// the crawl-budget and reputation services take) is 503 with Retry-After, naming the guard. And
// --shutdown-token-file: POST /shutdown needs the token written there.
void check_overload(const std::string& program, const std::filesystem::path& work) {
  const std::filesystem::path token_file = work / "shutdown.token";
  std::filesystem::remove(token_file);
  Service service(program, work / "port", "",
                  {"--guard-timeout-ms", "2", "--shutdown-token-file", token_file.string()});
  const std::optional<unsigned short> port = service.wait_for_port();
  check(port.has_value(), "a service whose guards have 2 ms starts");
  if (!port) return;
  Client client(*port);
  guarded("a guard that could not decide", [&] {
    // (The guards of PermitTool that do not judge a crawl answer at once, but under a slow build
    // - ASan, TSan - even that can take 2 ms: then one of them is the guard named.)
    Reply crawl = client.tool({{"tool", "crawl"}, {"args", {{"site", "late"}, {"pages", 5}}}});
    const std::string late = text_at(crawl.body, {"failed_guard"});
    check(crawl.status == 503 && !crawl.header(http::field::retry_after).empty() &&
              contains(text_at(crawl.body, {"error"}), "time limit") &&
              (late == "crawl-budget" ? text_at(crawl.body, {"stopped_by"}) == "crawl-budget"
                                      : late == "egress-policy" || late == "url-reputation"),
          "a crawl whose watching guard (crawl-budget, 20 ms) ran out of time: 503 with "
          "Retry-After, naming the guard",
          show(crawl));
    Reply fetch =
        client.tool({{"tool", "http_get"}, {"args", {{"url", "https://docs.example/a"}}}});
    const std::string guard = text_at(fetch.body, {"failed_guard"});
    check(fetch.status == 503 && !fetch.header(http::field::retry_after).empty() &&
              (guard == "url-reputation" || guard == "egress-policy") &&
              !find(fetch.body, {"refused"}),
          "http_get whose guards ran out of time: 503 with Retry-After, naming the guard",
          show(fetch));
  });
  guarded("the shutdown token", [&] {
    std::string token = read_text(token_file);
    while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
    check(token.size() >= 32, "--shutdown-token-file: a token written", token);
    const auto stop = [&](const std::string& headers) {
      return client.raw("POST /shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
                        "Content-Length: 0\r\nConnection: close\r\n\r\n");
    };
    Reply none = stop("");
    Reply wrong = stop("Authorization: Bearer " + std::string(token.size(), '0') + "\r\n");
    Reply foreign = stop("Authorization: Bearer " + token + "\r\nOrigin: http://evil.example\r\n");
    check(none.status == 401 && !none.header(http::field::www_authenticate).empty() &&
              wrong.status == 401 && foreign.status == 403,
          "POST /shutdown without the token or with a wrong one: 401; with it from an Origin: 403",
          show(none) + " / " + show(wrong) + " / " + show(foreign));
    Reply right = stop("Authorization: Bearer " + token + "\r\n");
    check(right.status == 200, "POST /shutdown with the token: 200", show(right));
  });
  check(service.wait_for_exit(10s) == 0, "the service with a shutdown token stops cleanly");
}

// Its standard output (the access log, "-") read by a pipe: a reader that goes away must not kill
// it (SIGPIPE), one that stops reading must not stall it. Lines it cannot write are dropped and
// counted.
void check_log_output(const std::string& program, const std::filesystem::path& work) {
  for (const bool reader_gone : {true, false}) {
    const std::string what = reader_gone ? "its log's reader gone" : "its log's reader stalled";
    int pipe_ends[2];
    if (::pipe2(pipe_ends, O_CLOEXEC) != 0) {
      check(false, what, "no pipe");
      return;
    }
    std::optional<Service> service;
    service.emplace(program, work / "port", "", std::vector<std::string>{"--access-log", "-"},
                    pipe_ends[1]);
    ::close(pipe_ends[1]);
    if (reader_gone) ::close(pipe_ends[0]);
    const std::optional<unsigned short> port = service->wait_for_port();
    check(port.has_value(), "a service logging to a pipe starts (" + what + ")");
    if (port) {
      Client client(*port);
      guarded(what, [&] {
        // About 90 bytes of log each: 1,500 are more than a pipe holds (64 KiB).
        const int requests = reader_gone ? 50 : 1500;
        tcp::socket socket = client.connect();
        beast::flat_buffer buffer;
        int answered = 0;
        for (int i = 0; i < requests; ++i) {
          http::write(socket, make_request(http::verb::get, "/health", {}, true));
          if (buffer.size() == 0 && !readable_within(socket, 5s)) break;
          if (read_reply(socket, buffer).status == 200) ++answered;
        }
        check(answered == requests, what + ": " + std::to_string(answered) + " of " +
                                        std::to_string(requests) + " requests answered");
        Reply metrics = client.send(http::verb::get, "/metrics");
        check(number_at(metrics.body, {"access_log", "dropped"}) > 0,
              what + ": the lines it could not write dropped, and counted in /metrics",
              show(metrics));
        client.send(http::verb::post, "/shutdown");
      });
      check(service->wait_for_exit(10s) == 0, what + ": it stops cleanly");
    }
    service.reset();
    if (!reader_gone) ::close(pipe_ends[0]);
  }
}

// How long until the service closes this connection, when within `patience`.
std::optional<std::chrono::milliseconds> time_until_closed(tcp::socket& socket,
                                                           std::chrono::milliseconds patience) {
  const auto start = std::chrono::steady_clock::now();
  if (!readable_within(socket, patience)) return std::nullopt;
  char byte = 0;
  boost::system::error_code error;
  socket.read_some(net::buffer(&byte, 1), error);
  if (!error) return std::nullopt;  // it sent something instead
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

// A service with tight limits: its timeouts (idle, header, body), its connection cap, its
// workspace quota and its bounded trace.
void check_limits(const std::string& program, const std::filesystem::path& work) {
  const std::filesystem::path trace = work / "limited.trace.json";
  std::filesystem::remove(trace);
  Service service(
      program, work / "port", trace.string(),
      {"--idle-timeout-ms", "2000", "--header-timeout-ms", "300", "--body-timeout-ms", "300",
       "--max-connections", "2", "--workspace-bytes", "4096", "--trace-events", "200"});
  const std::optional<unsigned short> port = service.wait_for_port();
  check(port.has_value(), "a service with tight limits starts");
  if (!port) return;
  Client client(*port);
  guarded("timeouts", [&] {
    tcp::socket idle = client.connect();
    const auto idle_for = time_until_closed(idle, 6s);
    check(idle_for && *idle_for >= 1500ms && *idle_for <= 5s,
          "a connection with no request: closed after the idle timeout (2 s)",
          idle_for ? std::to_string(idle_for->count()) + " ms" : "not closed within 6 s");
    tcp::socket slow_header = client.connect();
    net::write(slow_header,
               net::buffer(std::string("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")));
    const auto header_for = time_until_closed(slow_header, 6s);
    check(header_for && *header_for < 1500ms,
          "a header section left unfinished: closed after the header timeout (0.3 s)",
          header_for ? std::to_string(header_for->count()) + " ms" : "not closed within 6 s");
    tcp::socket slow_body = client.connect();
    net::write(slow_body, net::buffer(std::string("POST /tool HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                                  "Content-Length: 100\r\n\r\n{\"tool\"")));
    const auto body_for = time_until_closed(slow_body, 6s);
    check(body_for && *body_for < 1500ms,
          "a body left unfinished: closed after the body timeout (0.3 s)",
          body_for ? std::to_string(body_for->count()) + " ms" : "not closed within 6 s");
  });
  guarded("the connection cap", [&] {
    std::vector<tcp::socket> kept;
    for (int i = 0; i < 2; ++i) {
      kept.push_back(client.connect());
      http::write(kept.back(), make_request(http::verb::get, "/health", {}, true));
      read_reply(kept.back());
    }
    Reply over = client.send(http::verb::get, "/health");
    check(over.status == 503 && over.header(http::field::connection) == "close" &&
              !over.header(http::field::retry_after).empty(),
          "a third connection over a cap of 2: 503 with Retry-After, closed", show(over));
    kept.clear();
    Reply again;
    for (int attempt = 0; attempt < 100 && again.status != 200; ++attempt) {
      std::this_thread::sleep_for(20ms);
      again = client.send(http::verb::get, "/health");
    }
    check(again.status == 200, "once those two closed: served again", show(again));
  });
  guarded("the workspace quota", [&] {
    const std::string content(3000, 'x');
    Reply first =
        client.tool({{"tool", "fs_write"}, {"args", {{"path", "a.txt"}, {"content", content}}}});
    Reply over =
        client.tool({{"tool", "fs_write"}, {"args", {{"path", "b.txt"}, {"content", content}}}});
    Reply replaced = client.tool(
        {{"tool", "fs_write"}, {"args", {{"path", "a.txt"}, {"content", content + "yy"}}}});
    Reply missing = client.tool({{"tool", "fs_read"}, {"args", {{"path", "b.txt"}}}});
    check(first.status == 200, "a 3000-byte file in a 4096-byte workspace: written", show(first));
    check(over.status == 507 &&
              contains(text_at(over.body, {"error"}), "workspace quota exceeded") &&
              contains(text_at(over.body, {"error"}), "4096"),
          "a second one: 507, workspace quota exceeded (and the quota said)", show(over));
    check(replaced.status == 200 && missing.status == 422,
          "replacing the first still fits (its old bytes freed); the refused one was not written",
          show(replaced) + " / " + show(missing));
  });
  guarded("the bounded trace", [&] {
    for (int i = 0; i < 20; ++i) client.tool({{"tool", "fs_read"}, {"args", {{"path", "a.txt"}}}});
    client.send(http::verb::post, "/shutdown");
  });
  check(service.wait_for_exit(10s) == 0, "the service with tight limits stops cleanly");
  boost::system::error_code error;
  json::value written = json::parse(read_text(trace), error);
  const json::value* events = error ? nullptr : find(written, {"traceEvents"});
  bool recent = false;
  bool oldest = false;
  if (events && events->is_array())
    for (const json::value& event : events->get_array()) {
      recent = recent ||
               (text_at(event, {"cat"}) == "dispatch" && text_at(event, {"name"}) == "CheckTool");
      oldest = oldest || text_at(event, {"name"}) == "fs-write-workspace-only";
    }
  const std::size_t kept = events && events->is_array() ? events->get_array().size() : 0;
  check(kept >= 100 && kept <= 200 && recent && !oldest,
        "--trace-events 200: the trace keeps the last 100 to 200 events (" + std::to_string(kept) +
            "), the first calls' dropped");
}

// At the descriptor limit accept fails (EMFILE) while connections wait in the backlog: the
// service must back off rather than spin, serve the connections it has, and recover after.
void check_descriptor_limit(const std::string& program, const std::filesystem::path& work) {
#if defined(__SANITIZE_ADDRESS__)
  // The sanitizer build (ASan+UBSan, built as this driver is): UBSan's vptr check probes memory
  // through a pipe, which at the descriptor limit cannot be opened, and then reports every
  // virtual call as an error (no suppression applies). The other builds run this check.
  std::cout << "skip the descriptor limit (UBSan's vptr check needs descriptors)" << std::endl;
  (void)program;
  (void)work;
  return;
#endif
  Service service(program, work / "port", "", {"--max-fds", "48"});
  const std::optional<unsigned short> port = service.wait_for_port();
  check(port.has_value(), "a service limited to 48 descriptors starts");
  if (!port) return;
  Client client(*port);
  guarded("at the descriptor limit", [&] {
    std::vector<tcp::socket> held;
    for (int i = 0; i < 100; ++i) held.push_back(client.connect());
    std::this_thread::sleep_for(1500ms);  // the first accepted, accept failing for the others
    beast::flat_buffer buffer;
    http::write(held.front(), make_request(http::verb::get, "/health", {}, true));
    Reply during = read_reply(held.front(), buffer);
    check(during.status == 200, "at the descriptor limit: a connection accepted before, served",
          show(during));
    held.clear();  // their descriptors free again in the service
    Reply metrics = client.send(http::verb::get, "/metrics");
    const std::int64_t failures = number_at(metrics.body, {"http", "accept_failures"});
    check(metrics.status == 200 && failures >= 1 && failures <= 30,
          "accept failed " + std::to_string(failures) +
              " times in 1.5 s (backing off, not spinning), and the service answers again",
          show(metrics));
    client.send(http::verb::post, "/shutdown");
  });
  check(service.wait_for_exit(10s) == 0, "the service limited to 48 descriptors stops cleanly");
}

// ----- the guard plugins --------------------------------------------------------------------

// The URL reputation guard's refusal, as each build of its plugin words it.
constexpr std::string_view v1_refusal = "host on the blocklist";
constexpr std::string_view v2_refusal = "host on the blocklist (reputation list v2)";

// The build of `name` an answer listing the plugins ("plugins": [...]) says is in service.
std::string build_in_service(const json::value& answer, std::string_view name) {
  const json::value* plugins = find(answer, {"plugins"});
  if (plugins && plugins->is_array())
    for (const json::value& plugin : plugins->get_array())
      if (text_at(plugin, {"name"}) == name) return text_at(plugin, {"build"});
  return {};
}

// What the calls made while the guard plugin was swapped saw.
struct UnderLoad {
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> by_v1{0};  // refusals worded by v1
  std::atomic<std::uint64_t> by_v2{0};
  std::atomic<std::uint64_t> allowed{0};  // calls to another host: 200
  std::atomic<std::uint64_t> failed{0};   // anything else: a 5xx, a connection error, ...
  std::mutex mutex;
  std::string first_failure;
  void fail(std::string what) {
    ++failed;
    std::lock_guard lock(mutex);
    if (first_failure.empty()) first_failure = std::move(what);
  }
};

// Calls on one kept-alive connection until `stop`: a blocklisted host (refused by whichever
// build of the URL reputation guard is in service) and another host (allowed), in turn. Every
// answer must be one of those.
void call_continuously(unsigned short port, const std::atomic<bool>& stop, UnderLoad& seen) {
  net::io_context io;
  std::optional<tcp::socket> socket;
  beast::flat_buffer buffer;
  for (std::uint64_t i = 0; !stop; ++i) {
    const bool blocked = i % 2 == 0;
    const json::value call = {
        {"tool", "http_get"},
        {"args", {{"url", blocked ? "https://evil.example/x" : "https://docs.example/a"}}}};
    try {
      if (!socket) {
        socket.emplace(io);
        socket->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
        buffer.clear();
      }
      http::write(*socket, make_request(http::verb::post, "/tool", serialize(call), true));
      ++seen.requests;
      Reply reply = read_reply(*socket, buffer);
      const std::string reason = text_at(reply.body, {"reason"});
      if (blocked && reply.status == 403 &&
          text_at(reply.body, {"refused_by"}) == "url-reputation" &&
          (reason == v1_refusal || reason == v2_refusal))
        ++(reason == v1_refusal ? seen.by_v1 : seen.by_v2);
      else if (!blocked && reply.status == 200 && find(reply.body, {"result", "body"}))
        ++seen.allowed;
      else seen.fail(show(reply));
      if (!reply.headers[http::field::connection].empty() &&
          beast::iequals(reply.headers[http::field::connection], "close"))
        socket.reset();
    } catch (const std::exception& error) {
      seen.fail(std::string("connection: ") + error.what());
      socket.reset();
    }
  }
}

// The URL reputation guard, a plugin: v1 in service at start-up; swapped for v2 and back, again
// and again, while six connections call continuously - no call fails, each is judged by the
// old build or the new one; the old libraries are closed once their calls end.
void check_plugin_reload(unsigned short port) {
  Client client(port);
  Reply metrics = client.send(http::verb::get, "/metrics");
  Reply text = client.send(http::verb::get, "/metrics?format=prometheus");
  check(build_in_service(metrics.body.at("plugins"), "url_reputation") == "v1" &&
            contains(text.text, "agent_plugin_info{name=\"url_reputation\",build=\"v1\"} 1\n"),
        "GET /metrics: the plugin url_reputation in service, build v1 (JSON, Prometheus)",
        show(metrics) + " / " + show(text));
  Reply listed = client.send(http::verb::get, "/admin/reload");
  check(listed.status == 405 && listed.header(http::field::allow) == "POST",
        "GET /admin/reload: 405, POST only", show(listed));
  Reply unknown = client.send(http::verb::post, "/admin/plugins/nothing/reload");
  Reply no_build = client.send(http::verb::post, "/admin/plugins/url_reputation/reload?build=v9");
  Reply outside =
      client.send(http::verb::post, "/admin/plugins/url_reputation/reload?build=../../x");
  check(unknown.status == 404 && no_build.status == 404 && outside.status == 400 &&
            contains(text_at(no_build.body, {"error"}), "no build v9 of url_reputation") &&
            build_in_service(no_build.body, "url_reputation") == "v1",
        "reload of no plugin, of no such build: 404; a build named with a path: 400",
        show(unknown) + " / " + show(no_build) + " / " + show(outside));

  constexpr int connections = 6;
  constexpr int swaps = 20;
  UnderLoad seen;
  std::atomic<bool> stop{false};
  std::vector<std::thread> callers;
  for (int i = 0; i < connections; ++i)
    callers.emplace_back([&] { call_continuously(port, stop, seen); });
  int reloaded = 0;
  std::string refused;
  const auto start = std::chrono::steady_clock::now();
  for (int swap = 0; swap < swaps; ++swap) {
    std::this_thread::sleep_for(40ms);
    const std::string build = swap % 2 == 0 ? "v2" : "v1";
    Reply reply =
        client.send(http::verb::post, "/admin/plugins/url_reputation/reload?build=" + build);
    if (reply.status == 200 && build_in_service(reply.body, "url_reputation") == build) ++reloaded;
    else if (refused.empty()) refused = show(reply);
  }
  std::this_thread::sleep_for(40ms);
  stop = true;
  for (std::thread& caller : callers) caller.join();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  std::cout << "     plugin reloads under load: " << seen.requests << " calls on " << connections
            << " connections in " << took.count() << " ms, " << reloaded << " reloads; "
            << seen.by_v1 << " refused by v1, " << seen.by_v2 << " by v2, " << seen.allowed
            << " allowed, " << seen.failed << " failed" << std::endl;
  check(reloaded == swaps,
        "POST /admin/plugins/url_reputation/reload?build=v2 and v1, " + std::to_string(swaps) +
            " times under load: each 200, the build in service",
        refused);
  check(seen.failed == 0 && seen.requests > 0,
        "calls during the reloads: none failed (each refused by v1 or v2, or allowed)",
        seen.first_failure);
  check(seen.by_v1 > 0 && seen.by_v2 > 0, "calls during the reloads: judged by both builds");

  // The old builds: closed once the calls that ran them ended, and unmapped - or, a build loaded
  // again before its last load was closed, its library in service for the new load.
  json::value old;
  for (int attempt = 0; attempt < 200; ++attempt, std::this_thread::sleep_for(10ms)) {
    old = client.send(http::verb::get, "/metrics").body;
    if (number_at(old, {"plugins", "old_builds", "open"}) == 0) break;
  }
  check(number_at(old, {"plugins", "old_builds", "open"}) == 0 &&
            number_at(old, {"plugins", "old_builds", "closed"}) == swaps &&
            number_at(old, {"plugins", "old_builds", "still_mapped"}) == 0 &&
            number_at(old, {"plugins", "reloads"}) == swaps &&
            build_in_service(old.at("plugins"), "url_reputation") == "v1",
        "after the reloads: every old build closed (unmapped, or in service again), v1 in service",
        serialize(old.at("plugins")));
}

// --plugins DIR: a directory of the driver's own (a copy of the build's), where a build that is
// no plugin is refused (the one in service stays), a new build installed over the plugin's file
// is taken by POST /admin/reload, and a plugin whose file is gone is unloaded. A directory with
// a library the host refuses stops the start.
void check_plugin_directory(const std::string& program, const std::filesystem::path& work) {
  namespace fs = std::filesystem;
  const fs::path plugins = work / "plugins";
  fs::remove_all(plugins);
  fs::copy(AGENT_SERVICE_PLUGINS, plugins,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  std::ofstream(plugins / "builds" / "url_reputation-broken.so") << "not a library\n";
  const fs::path token_file = work / "admin.token";
  Service service(program, work / "port", "",
                  {"--plugins", plugins.string(), "--shutdown-token-file", token_file.string()});
  const std::optional<unsigned short> port = service.wait_for_port();
  check(port.has_value(), "a service with --plugins DIR starts");
  if (!port) return;
  Client client(*port);
  std::string token = read_text(token_file);
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  const auto admin = [&](const std::string& target, const std::string& headers = {}) {
    return client.raw("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers +
                      "Authorization: Bearer " + token +
                      "\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  };
  const auto refusal = [&] {
    return text_at(
        client.tool({{"tool", "http_get"}, {"args", {{"url", "https://evil.example/x"}}}}).body,
        {"reason"});
  };
  guarded("plugins: whom the admin routes answer", [&] {
    Reply no_token = client.send(http::verb::post, "/admin/reload");
    Reply foreign = admin("/admin/reload", "Origin: http://evil.example\r\n");
    check(no_token.status == 401 && foreign.status == 403,
          "POST /admin/reload without the token: 401; with it from an Origin: 403",
          show(no_token) + " / " + show(foreign));
  });
  guarded("plugins: a build refused", [&] {
    Reply broken = admin("/admin/plugins/url_reputation/reload?build=broken");
    check(broken.status == 422 &&
              contains(text_at(broken.body, {"error"}), "url_reputation-broken.so") &&
              text_at(broken.body, {"refused", "build"}) == "broken" &&
              build_in_service(broken.body, "url_reputation") == "v1" && refusal() == v1_refusal,
          "a build that is no plugin: 422 with the host's PluginError, v1 still in service",
          show(broken));
  });
  guarded("plugins: a new build installed", [&] {
    fs::remove(plugins / "url_reputation.so");
    fs::create_symlink("builds/url_reputation-v2.so", plugins / "url_reputation.so");
    Reply reload = admin("/admin/reload");
    check(reload.status == 200 && build_in_service(reload.body, "url_reputation") == "v2" &&
              refusal() == v2_refusal,
          "POST /admin/reload after v2 was installed as url_reputation.so: 200, v2 judges",
          show(reload));
  });
  guarded("plugins: a plugin removed", [&] {
    fs::remove(plugins / "url_reputation.so");
    Reply reload = admin("/admin/reload");
    const json::value* unloaded = find(reload.body, {"unloaded"});
    Reply call = client.tool({{"tool", "http_get"}, {"args", {{"url", "https://evil.example/x"}}}});
    check(reload.status == 200 && unloaded && unloaded->is_array() &&
              unloaded->get_array().size() == 1 &&
              build_in_service(reload.body, "url_reputation").empty() && call.status == 200,
          "POST /admin/reload after url_reputation.so was removed: unloaded, its guard gone",
          show(reload) + " / " + show(call));
    fs::create_symlink("builds/url_reputation-v1.so", plugins / "url_reputation.so");
    Reply again = admin("/admin/reload");
    const json::value* loaded = find(again.body, {"loaded"});
    check(again.status == 200 && loaded && loaded->is_array() && loaded->get_array().size() == 1 &&
              refusal() == v1_refusal,
          "and put back: loaded again by POST /admin/reload", show(again));
    admin("/shutdown");
  });
  check(service.wait_for_exit(10s) == 0, "the service with --plugins DIR stops cleanly");

  // A plugin the host refuses, in the directory: no start (a guard missing is no way to serve).
  std::ofstream(plugins / "zz_broken.so") << "not a library\n";
  Service refused(program, work / "port", "", {"--plugins", plugins.string()});
  check(!refused.wait_for_port() && refused.wait_for_exit(10s) == 1,
        "a plugin directory with a library that is no plugin: the service exits 1");
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
      Service service(
          program, work / "port", trace.string(),
          {"--allow-host", "agent.test", "--allow-origin", "http://dashboard.test:3000"});
      const std::optional<unsigned short> port = service.wait_for_port();
      check(port.has_value(), "the service starts and writes its port");
      if (!port) return 1;
      std::uint64_t pipeline_calls = 0;
      net::io_context io;
      tcp::socket idle(io);
      check_service(*port, pipeline_calls, idle);
      check_protocol(*port);
      check_operations(*port, pipeline_calls, work / "access.log");
      guarded("guards", [&] { check_guards(*port); });
      guarded("plugin reloads under load", [&] { check_plugin_reload(*port); });
      check_names(*port);
      check_cross_site(*port);
      check_effects(*port);
      check_urls(*port);
      check_protocol_details(*port);
      check_draining(*port);
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
    check_descriptor_limit(program, work);
    check_limits(program, work);
    check_overload(program, work);
    check_log_output(program, work);
    check_plugin_directory(program, work);
  } catch (const std::exception& error) {
    check(false, "the exchange with the service", error.what());
  }
  std::cout << (failures ? std::to_string(failures) + " checks failed" : "all checks passed")
            << std::endl;
  return failures ? 1 : 0;
}
