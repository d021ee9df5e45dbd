// A dispatch inside an asio::awaitable (<hookset/asio.hpp>): `asio_await`, an Always fold
// (int(std::string_view), synchronous hooks that take `last`) at N = 0 and 8 hooks, awaited from
// a coroutine on a one-thread io_context:
//   hookset     co_await set.call<S>(s): the dispatch as an Asio operation
//   async_call  co_await hookset::asio::async_call(set.call<S>(s), asio::use_awaitable)
//   sync_post   sync_wait(set.call<S>(s)), then co_await asio::post(asio::use_awaitable): what
//               the awaited dispatch must not exceed (the dispatch, and the one post an Asio
//               operation that completes at once owes its caller)
//   sync        sync_wait(set.call<S>(s)) alone, inside the same coroutine: the dispatch's floor
//   post        co_await asio::post(asio::use_awaitable) alone
// Each benchmark runs its whole timed loop inside one co_spawned coroutine on one io_context
// (io_context startup and co_spawn are paid once per run, not per dispatch).
#include "support/alloc_counter.hpp"
#include "support/asio_run.hpp"
#include "support/common.hpp"

#include <exception>
#include <string>
#include <utility>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

namespace net = boost::asio;

struct AsioFold : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) noexcept { return default_value(s); }
};
using AsioSet = hookset::HookSet<AsioFold>;

enum class way { await_dispatch, async_call, sync_then_post, sync_only, post_only };

// The timed loop, one coroutine for the whole run. A warm-up dispatch first fills the frame
// pools (hookset's and Asio's), for every way alike; the last result is checked after the loop.
template <way Way>
net::awaitable<void> timed_loop(benchmark::State& state, const AsioSet& set, int expected) {
  int result = co_await set.call<AsioFold>(opaque_input());
  alloc_meter meter;
  for (auto _ : state) {
    const std::string_view s = opaque_input();
    if constexpr (Way == way::await_dispatch) {
      result = co_await set.call<AsioFold>(s);
    } else if constexpr (Way == way::async_call) {
      result = co_await hookset::asio::async_call(set.call<AsioFold>(s), net::use_awaitable);
    } else if constexpr (Way == way::sync_then_post) {
      result = hookset::sync_wait(set.call<AsioFold>(s));
      co_await net::post(net::use_awaitable);
    } else if constexpr (Way == way::sync_only) {
      result = hookset::sync_wait(set.call<AsioFold>(s));
    } else {
      co_await net::post(net::use_awaitable);
    }
    benchmark::DoNotOptimize(result);
  }
  meter.report(state);
  state.SetItemsProcessed(state.iterations());
  if (result != expected)
    state.SkipWithError("wrong result: this implementation does not do the scenario's work");
}

template <way Way>
void asio_await(benchmark::State& state, std::int64_t n) {
  AsioSet set;
  for (std::int64_t i = 0; i < n; ++i) set.add<AsioFold>(fold_hook);
  run_on_io_context(state, timed_loop<Way>(state, set, expected_fold(n)));
}

const bool registered = [] {
  const std::pair<const char*, void (*)(benchmark::State&, std::int64_t)> implementations[] = {
      {"hookset", asio_await<way::await_dispatch>},   {"async_call", asio_await<way::async_call>},
      {"sync_post", asio_await<way::sync_then_post>}, {"sync", asio_await<way::sync_only>},
      {"post", asio_await<way::post_only>},
  };
  for (const auto& [impl, fn] : implementations) {
    for (std::int64_t n : {0, 8}) {
      const std::string name = std::string("asio_await/") + impl + "/" + std::to_string(n);
      benchmark::RegisterBenchmark(name.c_str(),
                                   [fn = fn, n](benchmark::State& state) { fn(state, n); });
    }
  }
  return true;
}();

}  // namespace
}  // namespace hookset_bench
