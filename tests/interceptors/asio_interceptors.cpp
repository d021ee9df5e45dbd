// Interceptors in an Asio program: a dispatch co_awaited inside an asio::awaitable runs its
// (hookset::Task) interceptors around asio::awaitable hooks on the io_context, and a deadline
// on the io_context's timers reaches the interceptor through next().
#include "hookset_catch.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace net = boost::asio;
using namespace std::chrono_literals;
using hookset::Next;
using hookset::Task;

namespace {

struct Score : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Score>;

net::awaitable<int> after(std::chrono::milliseconds delay, int value) {
  net::steady_timer timer(co_await net::this_coro::executor, delay);
  co_await timer.async_wait(net::use_awaitable);
  co_return value;
}

}  // namespace

TEST_CASE("a coroutine interceptor around asio::awaitable hooks, co_awaited in an "
          "asio::awaitable") {
  Set set;
  std::vector<std::string> seen;
  set.add<Score>([](int, std::optional<int> last) { return after(2ms, *last + 1); });
  set.intercept_all([&seen](auto next, int x) -> Task<int> {
    seen.push_back("before " + std::string(next.slot_name()));
    const int result = co_await next(x * 10);
    seen.push_back("after " + std::to_string(result));
    co_return result;
  });
  net::io_context io;
  std::optional<int> answer;
  net::co_spawn(
      io, [&]() -> net::awaitable<void> { answer = co_await set.call<Score>(4); }, net::detached);
  io.run();
  REQUIRE(answer);
  CHECK(*answer == 41);
  CHECK(seen == std::vector<std::string>{"before Score", "after 41"});
}

TEST_CASE("a deadline on the io_context's timers ends the hooks inside next() - the interceptor "
          "answers instead") {
  Set set;
  set.add<Score>([](int, std::optional<int>) { return after(10s, 0); });
  set.intercept<Score>([](Next<Score> next, int x) -> Task<int> {
    try {
      co_return co_await next(x);
    } catch (const hookset::DispatchTimeout&) {
      co_return -1;
    }
  });
  net::io_context io;
  std::optional<int> answer;
  const auto start = std::chrono::steady_clock::now();
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        answer = co_await set.call<Score>(1).with_timeout(20ms);
      },
      net::detached);
  io.run();
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  REQUIRE(answer);
  CHECK(*answer == -1);
}
