// What a dispatch run as an Asio operation allocates: in steady state - the frame pools,
// hookset's and Asio's, warmed up - at most one heap allocation per dispatch, whether it is
// co_awaited inside an asio::awaitable or run through hookset::asio::async_call; none for a
// dispatch that completes at once (nobody watching, no options, synchronous hooks).
//
// This file replaces the global operator new/delete (for the whole test program, through
// tests/replaced_new.hpp) with versions that count what the current thread allocates.
#include "hookset_catch.hpp"

#include <cstddef>
#include <cstdlib>
#include <new>
#include <optional>
#include <string_view>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

// Clang links its sanitizer runtimes statically, and they define operator new too: under them the
// replacement is left out (and the counts read 0).
#if defined(__clang__) && defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define HOOKSET_TEST_REPLACES_NEW 0
#endif
#endif
#ifndef HOOKSET_TEST_REPLACES_NEW
#define HOOKSET_TEST_REPLACES_NEW 1
#endif

namespace {
// Counted per thread: the io_context runs on the test's thread, other threads do not disturb it.
thread_local constinit std::size_t heap_allocations = 0;
}  // namespace

#if HOOKSET_TEST_REPLACES_NEW
#include "replaced_new.hpp"

void* test_allocation::allocate(std::size_t size) noexcept {
  ++heap_allocations;
  return std::malloc(size);
}
void test_allocation::release(void* block) noexcept { std::free(block); }
#endif

namespace {

namespace net = boost::asio;

struct Fold : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) noexcept { return static_cast<int>(s.size()); }
};
// A chain whose companion judges synchronously: the lean chain loop.
struct Gate : hookset::Slot<std::optional<int>(std::string_view), hookset::Always,
                            hookset::Chain<hookset::ShortCircuit>> {
  static std::optional<int> default_impl(std::string_view s) noexcept {
    return static_cast<int>(s.size());
  }
};
using Set = hookset::HookSet<Fold, Gate>;

enum class way { co_await_dispatch, async_call };

constexpr int dispatches = 100;

// The allocations of `dispatches` dispatches after a warm-up; `result`: the last one's.
template <class S, way Way, class Result>
net::awaitable<std::size_t> allocations_of_dispatches(const Set& set, Result& result) {
  const std::string_view input = "four";
  auto dispatch_once = [&]() -> net::awaitable<Result> {
    if constexpr (Way == way::co_await_dispatch) co_return co_await set.call<S>(input);
    else co_return co_await hookset::asio::async_call(set.call<S>(input), net::use_awaitable);
  };
  for (int i = 0; i < 8; ++i) result = co_await dispatch_once();  // fills the frame pools
  const std::size_t before = heap_allocations;
  for (int i = 0; i < dispatches; ++i) result = co_await dispatch_once();
  co_return heap_allocations - before;
}

template <way Way, class S = Fold, class Result>
std::size_t measure(const Set& set, Result& result) {
  net::io_context io;
  auto future = net::co_spawn(io, allocations_of_dispatches<S, Way>(set, result), net::use_future);
  io.run();
  return future.get();
}

}  // namespace

TEST_CASE("a dispatch co_awaited inside an asio::awaitable allocates at most once") {
  Set set;
  int result = 0;
  // Nothing to suspend or cancel: run inside the initiating call, the handler posted - nothing
  // allocated beyond Asio's own recycled operation.
  SECTION("no hook") {
    CHECK(measure<way::co_await_dispatch>(set, result) == 0);
    CHECK(result == 4);
  }
  SECTION("synchronous hooks") {
    set.add<Fold>([](std::string_view s, std::optional<int> last) {
      return *last + static_cast<int>(s.size());
    });
    set.add<Fold>([](std::string_view, std::optional<int> last) { return *last * 2; });
    CHECK(measure<way::co_await_dispatch>(set, result) == 0);
    CHECK(result == 16);
  }
  // A hook that may suspend: the operation's coroutine (a pooled frame) and its context.
  SECTION("a coroutine hook") {
    set.add<Fold>([](std::string_view, std::optional<int> last) -> hookset::Task<int> {
      co_return *last + 1;
    });
    CHECK(measure<way::co_await_dispatch>(set, result) <= dispatches);
    CHECK(result == 5);
  }
}

TEST_CASE(
    "a chain dispatch co_awaited inside an asio::awaitable allocates nothing when it "
    "cannot suspend") {
  Set set;
  std::optional<int> result;
  SECTION("no hook") {
    CHECK(measure<way::co_await_dispatch, Gate>(set, result) == 0);
    CHECK(result == 4);
  }
  SECTION("synchronous hooks, the chain breaking on the second") {
    set.add<Gate>(
        [](std::string_view s) -> std::optional<int> { return static_cast<int>(s.size()) + 1; });
    set.add<Gate>([](std::string_view) -> std::optional<int> { return std::nullopt; });
    set.add<Gate>([](std::string_view) -> std::optional<int> { return 99; });  // never runs
    CHECK(measure<way::co_await_dispatch, Gate>(set, result) == 0);
    CHECK(result == std::nullopt);
  }
  SECTION("a coroutine hook: the operation's general path") {
    set.add<Gate>([](std::string_view) -> hookset::Task<std::optional<int>> { co_return 7; });
    CHECK(measure<way::co_await_dispatch, Gate>(set, result) <= dispatches);
    CHECK(result == 7);
  }
}

TEST_CASE("a dispatch run through async_call with use_awaitable allocates at most once") {
  Set set;
  set.add<Fold>([](std::string_view, std::optional<int> last) { return *last + 1; });
  int result = 0;
  CHECK(measure<way::async_call>(set, result) <= dispatches);
  CHECK(result == 5);
}
