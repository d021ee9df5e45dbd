#include "http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <boost/url/parse.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = net::ip::tcp;

constexpr std::size_t max_body_bytes = 64 * 1024;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;
using RequestParser = http::request_parser<http::string_body>;
constexpr std::uint32_t max_header_bytes = 8 * 1024;
constexpr auto write_timeout = 30s;
// How long a connection answered with an error and closed still has its input read and dropped.
constexpr auto drain_timeout = 2s;
// How long an idle kept-alive connection still waits for a request once the stop begins: its
// client may have sent one before it could know.
constexpr auto stop_grace = 500ms;

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

// The routes, and the methods each allows (the Allow header of its 405); HEAD wherever GET is.
struct Route {
  std::string_view path;
  std::string_view allow;
};
constexpr Route routes[] = {{"/tool", "POST"},
                            {"/health", "GET, HEAD"},
                            {"/ready", "GET, HEAD"},
                            {"/metrics", "GET, HEAD"},
                            {"/shutdown", "POST"},
                            {"/admin/reload", "POST"},
                            {"/admin/plugins/<name>/reload", "POST"}};
// The plugin a path /admin/plugins/<name>/reload names, if it has that form.
std::optional<std::string_view> plugin_to_reload(std::string_view path) {
  constexpr std::string_view prefix = "/admin/plugins/", suffix = "/reload";
  if (path.size() <= prefix.size() + suffix.size() || !path.starts_with(prefix) ||
      !path.ends_with(suffix))
    return std::nullopt;
  const std::string_view name =
      path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  if (name.find('/') != std::string_view::npos) return std::nullopt;
  return name;
}
const Route* find_route(std::string_view path) {
  if (plugin_to_reload(path)) path = "/admin/plugins/<name>/reload";
  for (const Route& route : routes)
    if (route.path == path) return &route;
  return nullptr;
}
// The value of `name` in a query ("build=v2&x=1"), as written; empty when absent.
std::string_view query_value(std::string_view query, std::string_view name) {
  for (std::size_t start = 0; start < query.size();) {
    const std::size_t end = std::min(query.find('&', start), query.size());
    const std::string_view pair = query.substr(start, end - start);
    if (pair.size() > name.size() && pair.starts_with(name) && pair[name.size()] == '=')
      return pair.substr(name.size() + 1);
    start = end + 1;
  }
  return {};
}

// A request refused before it is read on: its status and why. The connection is then closed.
struct Refusal {
  http::status status;
  std::string message;
};

// The transfer codings of a request, in order, from all its Transfer-Encoding lines, lower case,
// without parameters.
std::vector<std::string> transfer_codings(const Request& header) {
  std::vector<std::string> codings;
  const auto [first, last] = header.equal_range(http::field::transfer_encoding);
  for (auto field = first; field != last; ++field) {
    const std::string_view list = field->value();
    for (std::size_t start = 0; start <= list.size();) {
      const std::size_t end = std::min(list.find(',', start), list.size());
      std::string_view coding = list.substr(start, end - start);
      coding = coding.substr(0, coding.find(';'));
      while (!coding.empty() && (coding.front() == ' ' || coding.front() == '\t'))
        coding.remove_prefix(1);
      while (!coding.empty() && (coding.back() == ' ' || coding.back() == '\t'))
        coding.remove_suffix(1);
      std::string lower(coding);
      for (char& c : lower) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
      if (!lower.empty()) codings.push_back(std::move(lower));
      start = end + 1;
    }
  }
  return codings;
}

// Why a request's body cannot be delimited safely (RFC 9112 §6.1, §6.3) or the request is not
// one HTTP/1.1 allows (§3.2: exactly one Host; §5.3: a field that is one value, once): 400 -
// read on, and a body read as "no body" would run as the next request (request smuggling). A
// body in a coding the service does not know (gzip, then chunked) is delimited, but not
// understood: 501 (§6.1).
std::optional<Refusal> framing_error(const Request& header) {
  const std::vector<std::string> codings = transfer_codings(header);
  const auto bad = [](std::string message) {
    return Refusal{http::status::bad_request, std::move(message)};
  };
  if (header.count(http::field::transfer_encoding) > 0) {
    if (header.count(http::field::content_length) > 0)
      return bad("Transfer-Encoding together with Content-Length");
    if (header.version() < 11) return bad("Transfer-Encoding in an HTTP/1.0 request");
    if (codings.empty() || codings.back() != "chunked")
      return bad("Transfer-Encoding whose last coding is not chunked (" +
                 valid_utf8(header[http::field::transfer_encoding]) + ")");
    for (std::size_t i = 0; i + 1 < codings.size(); ++i) {
      if (codings[i] == "chunked") return bad("Transfer-Encoding chunked more than once");
      return Refusal{http::status::not_implemented,
                     "Transfer-Encoding " + valid_utf8(codings[i]) + " is not supported"};
    }
  }
  const std::size_t hosts = header.count(http::field::host);
  if (hosts > 1 || (hosts == 0 && header.version() >= 11))
    return bad("an HTTP/1.1 request needs exactly one Host header");
  if (header.count(http::field::content_type) > 1) return bad("more than one Content-Type");
  if (header.count(http::field::content_length) > 1) return bad("more than one Content-Length");
  return std::nullopt;
}

// Where the end of the header section is in `data` (just past its empty line), or npos.
std::size_t header_section_end(std::string_view data) {
  for (std::size_t at = data.find('\n'); at != std::string_view::npos;
       at = data.find('\n', at + 1)) {
    if (at + 1 < data.size() && data[at + 1] == '\n') return at + 2;
    if (at + 2 < data.size() && data[at + 1] == '\r' && data[at + 2] == '\n') return at + 3;
  }
  return std::string_view::npos;
}

// The request line's HTTP version, in place: a minor version above 1 is read as HTTP/1.1 (RFC
// 9110 §2.5); a major version other than 1 is refused (505). Other forms are left to the parser.
std::optional<Refusal> settle_version(char* line, std::size_t length) {
  std::string_view text(line, length);
  if (text.ends_with('\r')) text.remove_suffix(1);
  const std::size_t space = text.rfind(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view version = text.substr(space + 1);
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (version.size() != 8 || !version.starts_with("HTTP/") || !digit(version[5]) ||
      version[6] != '.' || !digit(version[7]))
    return std::nullopt;
  if (version[5] != '1')
    return Refusal{http::status::http_version_not_supported,
                   "HTTP/" + std::string(version.substr(5)) + " is not supported: HTTP/1.1 is"};
  if (version[7] > '1') line[space + 1 + 7] = '1';
  return std::nullopt;
}

// The request's target as the routes see it. An absolute-form target (RFC 9112 §3.2.2) names the
// service in its authority: that is the one checked, not the Host header.
struct Target {
  std::string path;
  std::string query;                     // without the '?'
  std::optional<std::string> authority;  // absolute form: its authority
  bool absolute_without_port = false;    // (then the port is the scheme's: 80)
};
std::optional<Target> parse_target(std::string_view target) {
  if (!target.starts_with('/')) {
    auto url = boost::urls::parse_absolute_uri(target);
    if (url && url->has_authority() && (url->scheme_id() == boost::urls::scheme::http)) {
      Target absolute{std::string(url->encoded_path()), std::string(url->encoded_query()),
                      std::string(url->encoded_authority()),
                      !url->has_port() || url->port().empty()};
      if (absolute.path.empty()) absolute.path = "/";
      return absolute;
    }
    if (url) return std::nullopt;  // an absolute URI not for an HTTP server
  }
  const std::size_t query = target.find('?');
  return Target{
      std::string(target.substr(0, query)),
      query == std::string_view::npos ? std::string() : std::string(target.substr(query + 1)),
      std::nullopt};
}

// "application/json", whatever the case, with parameters or not (a charset, if any, UTF-8).
bool json_media_type(std::string_view type) {
  const auto lower = [](std::string_view text) {
    std::string out;
    for (const char c : text)
      if (c != ' ' && c != '\t') out += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
  };
  const std::string normal = lower(type);
  const std::string essence = normal.substr(0, normal.find(';'));
  if (essence != "application/json") return false;
  const std::size_t charset = normal.find(";charset=");
  if (charset == std::string::npos) return true;
  std::string value = normal.substr(charset + 9);
  value = value.substr(0, value.find(';'));
  if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
    value = value.substr(1, value.size() - 2);
  return value == "utf-8";
}

// Compares without stopping at the first difference: how long it takes says nothing of the token.
bool same_token(std::string_view given, std::string_view expected) {
  unsigned char difference = given.size() == expected.size() ? 0 : 1;
  for (std::size_t i = 0; i < expected.size(); ++i)
    difference |= static_cast<unsigned char>(expected[i] ^ (i < given.size() ? given[i] : 0));
  return difference == 0;
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
  Target where;                  // the target, parsed
  Metrics::clock::time_point start = Metrics::clock::now();
};

void AccessLog::write(const Exchange& exchange, unsigned status, std::size_t body_bytes,
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
  out_.write(line);
}

class Server::Impl {
  // A connection and whether its session waits for the next request (touched on its strand only).
  struct Connection {
    explicit Connection(tcp::socket socket) : stream(std::move(socket)) {}
    beast::tcp_stream stream;
    bool idle = false;
    std::optional<net::steady_timer> grace;  // the stop's, for an idle connection
  };

 public:
  Impl(net::io_context& io, const ServiceHost& hooks, GuardPlugins& plugins, Metrics& metrics,
       AccessLog& access_log, Timeouts timeouts, std::size_t max_connections, Trust trust)
      : io_(io),
        acceptor_(net::make_strand(io)),
        accept_backoff_(acceptor_.get_executor()),
        signals_(io, SIGINT, SIGTERM),
        hooks_(hooks),
        plugins_(plugins),
        metrics_(metrics),
        access_log_(access_log),
        timeouts_(timeouts),
        max_connections_(max_connections),
        trust_(std::move(trust)) {}

  unsigned short listen(unsigned short port) {
    const tcp::endpoint endpoint(net::ip::make_address("127.0.0.1"), port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(net::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    // Its own names, and so its own origins.
    trust_.hosts.push_back(Host{HostKind::ipv4, "127.0.0.1"});
    trust_.hosts.push_back(Host{HostKind::name, "localhost"});
    for (const Host& host : trust_.hosts) trust_.origins.push_back(Origin{"http", host, port_});
    signals_.async_wait([this](const boost::system::error_code& error, int) {
      if (!error) stop();
    });
    net::co_spawn(acceptor_.get_executor(), accept_loop(), net::detached);
    return acceptor_.local_endpoint().port();
  }

  // Stops accepting and closes every idle connection once the stop's grace has passed; a request
  // begun (its first byte read) is still answered, with "Connection: close", and io_context::run
  // returns once all is done.
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
        // On the connection's strand: an idle read ends after the grace, unless a request comes
        // (answered, "Connection: close"); a request in flight is still answered, and its
        // session then waits no longer than the grace for another.
        net::post(connection->stream.get_executor(), [weak] {
          auto connection = weak.lock();
          if (!connection || !connection->idle) return;
          connection->grace.emplace(connection->stream.get_executor(), stop_grace);
          connection->grace->async_wait([weak](const boost::system::error_code&) {
            if (auto connection = weak.lock(); connection && connection->idle) {
              boost::system::error_code ignored;
              connection->stream.socket().cancel(ignored);
            }
          });
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
    for (bool keep_alive = true; keep_alive;) {
      // Idle until the next request's first byte, unless it came already (pipelined). Once the
      // stop has begun, for its grace only: a request its client sent before it could know (its
      // last answer said keep-alive) is still answered, with "Connection: close".
      if (buffer.size() == 0) {
        connection->idle = true;
        stream.expires_after(stopping_ ? std::chrono::milliseconds(stop_grace) : timeouts_.idle);
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
    stream.expires_after(timeouts_.header);
    if (const boost::system::error_code error = co_await read_header_section(stream, buffer)) {
      const std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
      if (error == http::error::header_limit && data.find('\n') > max_header_bytes) {
        count_request(exchange, "too large");  // the request line alone: its target (§3)
        co_await refuse(stream, exchange, http::status::uri_too_long,
                        "request line longer than " + std::to_string(max_header_bytes) + " bytes",
                        11);
        co_return false;
      }
      co_await unreadable(stream, exchange, error, 11);
      co_return false;
    }
    if (std::optional<Refusal> refusal = settle_version(
            static_cast<char*>(buffer.data().data()),
            std::string_view(static_cast<const char*>(buffer.data().data()), buffer.size())
                .find('\n'))) {
      count_request(exchange, "malformed HTTP");
      co_await refuse(stream, exchange, refusal->status, std::move(refusal->message), 11);
      co_return false;
    }
    RequestParser parser;
    parser.header_limit(max_header_bytes + 4);  // (counted already, whole: read_header_section)
    parser.body_limit(max_body_bytes);
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
    std::optional<Refusal> refusal = framing_error(parser.get());
    if (!refusal) refusal = misdirected(parser.get(), exchange);
    if (refusal) {
      count_request(exchange, refusal->status == http::status::misdirected_request
                                  ? "misdirected"
                                  : "malformed HTTP");
      co_await refuse(stream, exchange, refusal->status, std::move(refusal->message), version);
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

  // Reads until `buffer` holds a whole header section. Empty lines before the request line are
  // dropped (RFC 9112 §2.2), and every byte from the request line to the empty line counts
  // against max_header_bytes (Beast's own limit counts what one parsing step sees, not the
  // whole: 11 KiB of small fields passed an 8 KiB limit).
  net::awaitable<boost::system::error_code> read_header_section(beast::tcp_stream& stream,
                                                                beast::flat_buffer& buffer) {
    for (;;) {
      std::string_view data(static_cast<const char*>(buffer.data().data()), buffer.size());
      std::size_t blank = 0;
      while (blank < data.size() && (data[blank] == '\n' || data.substr(blank).starts_with("\r\n")))
        blank += data[blank] == '\n' ? 1 : 2;
      buffer.consume(blank);
      data.remove_prefix(blank);
      const std::size_t end = header_section_end(data);
      if (end != std::string_view::npos)
        co_return end > max_header_bytes ? http::error::header_limit : boost::system::error_code{};
      if (data.size() > max_header_bytes) co_return http::error::header_limit;
      auto [error, bytes] =
          co_await stream.async_read_some(buffer.prepare(4096), net::as_tuple(net::use_awaitable));
      if (error) co_return data.empty() ? error : http::error::partial_message;
      buffer.commit(bytes);
    }
  }

  // Whether the request is for this service: the authority it names - an absolute-form target's,
  // else its Host (RFC 9112 §3.2.2) - must be one of the service's names, with its port if any.
  // Invalid: 400 (§3.2); another's: 421 (RFC 9110 §15.5.20).
  std::optional<Refusal> misdirected(const Request& header, Exchange& exchange) const {
    std::optional<Target> target = parse_target(header.target());
    if (!target)
      return Refusal{http::status::bad_request, "a request target this server cannot serve"};
    exchange.where = *target;
    std::string_view named = header[http::field::host];
    if (target->authority) named = *target->authority;
    else if (header.count(http::field::host) == 0) return std::nullopt;  // HTTP/1.0: no Host
    std::string why;
    std::optional<Authority> authority = parse_authority(named, why);
    if (!authority)
      return Refusal{http::status::bad_request, "invalid Host " + valid_utf8(named) + ": " + why};
    if (target->absolute_without_port) authority->port = 80;
    const bool ours =
        std::find(trust_.hosts.begin(), trust_.hosts.end(), authority->host) != trust_.hosts.end();
    if (ours && (!authority->port || *authority->port == port_)) return std::nullopt;
    return Refusal{http::status::misdirected_request,
                   "this service answers to 127.0.0.1, localhost and the names it was given, on "
                   "port " +
                       std::to_string(port_) + "; not to " + valid_utf8(named)};
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
    // In the highest version it speaks, whatever the request's (RFC 9110 §6.2); an HTTP/1.0
    // client keeps its connection only when told so.
    response.version(11);
    response.keep_alive(keep_alive);
    if (keep_alive && exchange.version < 11) response.set(http::field::connection, "keep-alive");
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

  // Why a state-changing request may not be made from where it comes (its Origin), if so.
  std::optional<std::string> foreign_origin(const Request& request) const {
    if (request.count(http::field::origin) == 0) return std::nullopt;  // not from a web page
    const std::string_view text = request[http::field::origin];
    std::string why;
    const std::optional<Origin> origin = parse_origin(text, why);
    if (request.count(http::field::origin) == 1 && origin &&
        std::find(trust_.origins.begin(), trust_.origins.end(), *origin) != trust_.origins.end())
      return std::nullopt;
    return "Origin " + valid_utf8(text) + " may not make requests that change anything here";
  }

  // Why a request only the machine's operator may make (POST /shutdown, POST /admin/...) is
  // refused, if it is: no web page may make it, whatever its origin; a token, if the service has
  // one.
  std::optional<Response> operator_only(const Request& request, std::string_view route) const {
    const unsigned version = request.version();
    if (request.count(http::field::origin) > 0)
      return json_response(http::status::forbidden,
                           error_body(std::string(route) + " is refused from any Origin"), version);
    const std::string_view credentials = request[http::field::authorization];
    const bool bearer =
        credentials.size() > 7 && beast::iequals(credentials.substr(0, 7), "Bearer ");
    if (!trust_.shutdown_token.empty() &&
        !(bearer && same_token(credentials.substr(7), trust_.shutdown_token))) {
      Response refused = json_response(
          http::status::unauthorized,
          error_body(std::string(route) + " needs Authorization: Bearer <the shutdown token>"),
          version);
      refused.set(http::field::www_authenticate, "Bearer realm=\"agent_service\"");
      return refused;
    }
    return std::nullopt;
  }

  net::awaitable<Response> handle(const Request& request, Exchange& exchange) {
    const std::string_view target = request.target();
    const std::string_view path = exchange.where.path;
    const unsigned version = request.version();
    const bool get = request.method() == http::verb::get || request.method() == http::verb::head;
    const bool post = request.method() == http::verb::post;
    if (path == "/tool" && post) {
      count_request(exchange, "POST /tool");
      if (std::optional<std::string> refused = foreign_origin(request))
        co_return json_response(http::status::forbidden, error_body(std::move(*refused)), version);
      // What a web page may send anywhere without asking first (text/plain, forms) is refused.
      if (!json_media_type(request[http::field::content_type])) {
        Response refused = json_response(
            http::status::unsupported_media_type,
            error_body("POST /tool takes a JSON body: Content-Type: application/json"), version);
        refused.set(http::field::accept, "application/json");
        co_return refused;
      }
      ToolAnswer answer = co_await call_tool(hooks_, request.body());
      Response response = json_response(answer.status, answer.body, version);
      if (answer.retry_after)
        response.set(http::field::retry_after, std::to_string(answer.retry_after->count()));
      co_return response;
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
      const std::string_view query = exchange.where.query;
      const std::string_view accept = request[http::field::accept];
      // Prometheus asks with "Accept: text/plain;version=0.0.4" (or OpenMetrics first).
      if (query.find("format=prometheus") != std::string_view::npos ||
          accept.find("text/plain") != std::string_view::npos ||
          accept.find("application/openmetrics-text") != std::string_view::npos) {
        Response response{http::status::ok, version};
        response.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        response.body() = metrics_.to_prometheus() + plugins_.to_prometheus();
        response.prepare_payload();
        co_return response;
      }
      json::object body = metrics_.to_json();
      body["plugins"] = plugins_.describe();
      co_return json_response(http::status::ok, body, version);
    }
    if (path == "/shutdown" && post) {
      count_request(exchange, "POST /shutdown");
      if (std::optional<Response> refused = operator_only(request, "POST /shutdown"))
        co_return std::move(*refused);
      stop();  // before the answer, which then says "Connection: close"
      co_return json_response(http::status::ok, {{"status", "shutting down"}}, version);
    }
    // The guard plugins reloaded: all of them, or one (to the build ?build= names).
    const std::optional<std::string_view> plugin = plugin_to_reload(path);
    if ((path == "/admin/reload" || plugin) && post) {
      const std::string route = plugin ? "POST /admin/plugins/<name>/reload" : "POST /admin/reload";
      count_request(exchange, route);
      if (std::optional<Response> refused = operator_only(request, route))
        co_return std::move(*refused);
      GuardPlugins::Answer answer =
          plugin ? plugins_.reload(*plugin, query_value(exchange.where.query, "build"))
                 : plugins_.reload_all();
      co_return json_response(answer.status, answer.body, version);
    }
    count_request(exchange, "other");
    // A method it does not know at all (RFC 9110 §9.1: 501); one it knows, not here: 405.
    if (request.method() == http::verb::unknown)
      co_return json_response(
          http::status::not_implemented,
          error_body("method " + valid_utf8(request.method_string()) + " not implemented"),
          version);
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
  const ServiceHost& hooks_;
  GuardPlugins& plugins_;
  Metrics& metrics_;
  AccessLog& access_log_;
  const Timeouts timeouts_;
  const std::size_t max_connections_;
  Trust trust_;              // complete (its own names and origins) once listening
  unsigned short port_ = 0;  // the port bound
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

Server::Server(net::io_context& io, const ServiceHost& hooks, GuardPlugins& plugins,
               Metrics& metrics, AccessLog& access_log, Timeouts timeouts,
               std::size_t max_connections, Trust trust)
    : impl_(std::make_unique<Impl>(io, hooks, plugins, metrics, access_log, timeouts,
                                   max_connections, std::move(trust))) {}
Server::~Server() = default;
unsigned short Server::listen(unsigned short port) { return impl_->listen(port); }
void Server::stop() { impl_->stop(); }
