#pragma once
// The agent service's HTTP/1.1 server (Boost.Beast on Asio): connections, their limits and
// timeouts, the routes, the access log. POST /tool hands the call to the policy (policy.hpp).
#include "metrics.hpp"
#include "policy.hpp"

#include <boost/asio/io_context.hpp>

#include <chrono>
#include <cstddef>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>

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

struct Exchange;

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
             Metrics::clock::duration took);

 private:
  std::ofstream file_;
  std::ostream* out_ = &std::cout;
  std::mutex mutex_;
};

class Server {
 public:
  Server(net::io_context& io, const ServiceHooks& hooks, Metrics& metrics, AccessLog& access_log,
         Timeouts timeouts, std::size_t max_connections);
  ~Server();
  // Listens on 127.0.0.1:port (0: a free port) and starts accepting; the port bound.
  unsigned short listen(unsigned short port);
  // Stops accepting and closes every idle connection; a request begun (its first byte read) is
  // still answered, with "Connection: close", and io_context::run returns once all is done.
  void stop();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};
