#pragma once
// Runs a benchmark's timed loop as an asio::awaitable on a one-thread io_context (Asio may then
// skip its locking), and turns an exception escaping the loop into the benchmark's error.
#include <exception>
#include <utility>

#include <benchmark/benchmark.h>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

namespace hookset_bench {

inline void run_on_io_context(benchmark::State& state, boost::asio::awaitable<void> loop) {
  boost::asio::io_context io(1);
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(loop), [&error](std::exception_ptr e) { error = e; });
  io.run();
  if (!error) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  } catch (...) {
    state.SkipWithError("the timed loop threw");
  }
}

}  // namespace hookset_bench
