#pragma once
// Lines to a file descriptor (standard output, the access log file) from a thread of its own, so
// that the event loop never waits for whoever reads them. Lines wait in a bounded buffer; a line
// that does not fit is dropped, and so is everything once the reader has gone (EPIPE: the
// program ignores SIGPIPE), each counted (GET /metrics shows them). The writer thread never
// blocks either: it writes at most PIPE_BUF bytes at a time, when poll() says they fit.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

class LineWriter {
 public:
  // Writes to `fd` (not closed here), holding at most `capacity` bytes not yet written.
  explicit LineWriter(int fd, std::size_t capacity = 64 * 1024);
  LineWriter(const LineWriter&) = delete;
  LineWriter& operator=(const LineWriter&) = delete;
  // Writes what it still holds for at most a second, then drops the rest.
  ~LineWriter();

  // One line, ending in '\n'. Never waits for the reader.
  void write(std::string_view line);
  std::uint64_t dropped_lines() const noexcept { return dropped_.load(std::memory_order_relaxed); }

 private:
  void run();
  // Writes `bytes` whole, unless the reader is gone or `give_up_at` passes: what was not written.
  std::string_view write_out(std::string_view bytes);
  void count_dropped(std::string_view bytes);

  const int fd_;
  const std::size_t capacity_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string pending_;   // under mutex_
  bool closing_ = false;  // under mutex_
  std::chrono::steady_clock::time_point give_up_at_ = std::chrono::steady_clock::time_point::max();
  std::atomic<bool> broken_{false};  // the reader is gone: every line from now on is dropped
  std::atomic<std::uint64_t> dropped_{0};
  std::thread thread_;  // last: started once the rest is
};
