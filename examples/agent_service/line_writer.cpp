#include "line_writer.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

using namespace std::chrono_literals;

LineWriter::LineWriter(int fd, std::size_t capacity)
    : fd_(fd), capacity_(capacity), thread_([this] { run(); }) {}

LineWriter::~LineWriter() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
    give_up_at_ = std::chrono::steady_clock::now() + 1s;
  }
  wake_.notify_one();
  thread_.join();
}

void LineWriter::write(std::string_view line) {
  if (broken_.load(std::memory_order_relaxed)) {
    count_dropped(line);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    if (pending_.size() + line.size() <= capacity_) {
      const bool was_empty = pending_.empty();
      pending_.append(line);
      if (!was_empty) return;  // the writer has been woken already
    } else {
      count_dropped(line);
      return;
    }
  }
  wake_.notify_one();
}

void LineWriter::count_dropped(std::string_view bytes) {
  dropped_.fetch_add(static_cast<std::uint64_t>(std::count(bytes.begin(), bytes.end(), '\n')),
                     std::memory_order_relaxed);
}

void LineWriter::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return !pending_.empty() || closing_; });
    if (pending_.empty()) return;  // closing, and all written
    std::string batch;
    batch.swap(pending_);
    lock.unlock();
    count_dropped(write_out(batch));
    lock.lock();
  }
}

std::string_view LineWriter::write_out(std::string_view bytes) {
  while (!bytes.empty() && !broken_.load(std::memory_order_relaxed)) {
    {
      std::lock_guard lock(mutex_);
      if (std::chrono::steady_clock::now() >= give_up_at_) return bytes;
    }
    // Never blocked in write(): at most PIPE_BUF bytes, once poll() says that much fits (a pipe
    // with room for one page takes them whole). Woken every 100 ms to see the time.
    pollfd entry{fd_, POLLOUT, 0};
    const int ready = ::poll(&entry, 1, 100);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t written =
        ::write(fd_, bytes.data(), std::min<std::size_t>(bytes.size(), PIPE_BUF));
    if (written < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      break;  // EPIPE (the reader is gone), or the descriptor fails
    }
    bytes.remove_prefix(static_cast<std::size_t>(written));
  }
  if (!bytes.empty()) broken_.store(true, std::memory_order_relaxed);
  return bytes;
}
