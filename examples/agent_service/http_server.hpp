#pragma once
// The agent service's HTTP/1.1 server (Boost.Beast on Asio): connections, their limits and
// timeouts, whom it answers (its own names, no foreign web page), the routes, the access log.
// POST /tool hands the call to the policy (policy.hpp); POST /admin/... reloads the guard plugins
// (guard_plugins.hpp).
#include "addresses.hpp"
#include "guard_plugins.hpp"
#include "line_writer.hpp"
#include "metrics.hpp"
#include "policy.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace net = boost::asio;
using namespace std::chrono_literals;

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

// Whom the service answers. It listens on 127.0.0.1 and trusts the processes of this machine
// that reach it there (POST /shutdown and /admin/... too, unless it has a token), but no web
// page: a browser runs any site's scripts on this machine too. So a request must name the
// service as its host - 127.0.0.1, localhost or one of `hosts` (else 421: a page whose name was
// re-pointed at 127.0.0.1, DNS rebinding, names its own) - and a state-changing request (a POST)
// from a page, which browsers mark with Origin, must come from the service's own origin or one
// of `origins` (else 403). A page may send text/plain or form bodies to any site without asking
// first: POST /tool takes application/json only (415). POST /shutdown and POST /admin/... are
// refused with any Origin.
struct Trust {
  std::vector<Host> hosts;
  std::vector<Origin> origins;
  // When not empty: POST /shutdown and POST /admin/... need "Authorization: Bearer <token>" (401).
  std::string shutdown_token;
};

struct Exchange;

// A line per answered request: time, request id, client, request line, status, body bytes,
// latency. Bytes of the target outside printable ASCII are written \xHH: a line is one request.
// Written by `out`, which never keeps the event loop waiting.
class AccessLog {
 public:
  explicit AccessLog(LineWriter& out) : out_(out) {}
  void write(const Exchange& exchange, unsigned status, std::size_t body_bytes,
             Metrics::clock::duration took);

 private:
  LineWriter& out_;
};

class Server {
 public:
  Server(net::io_context& io, const ServiceHost& hooks, GuardPlugins& plugins, Metrics& metrics,
         AccessLog& access_log, Timeouts timeouts, std::size_t max_connections, Trust trust);
  ~Server();
  // Listens on 127.0.0.1:port (0: a free port) and starts accepting; the port bound.
  unsigned short listen(unsigned short port);
  // Stops accepting and closes every idle connection (after a moment: a request already on its
  // way is answered); a request begun is still answered, with "Connection: close", and
  // io_context::run returns once all is done.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};
