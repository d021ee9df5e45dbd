// <hookset/asio.hpp>: a dispatch as an Asio operation (any completion token, co_await inside an
// asio::awaitable), asio::awaitable defaults and hooks mixed with synchronous and Task hooks,
// cancellation through the handler's cancellation slot, deadlines and hook time limits on the
// io_context's timers, and the structured lifetime: the operation completes only after every
// hook it started has finished.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace net = boost::asio;
using namespace std::chrono_literals;
using hookset::Task;

namespace {

struct Score : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Audit : hookset::Slot<void(std::string), hookset::Always> {
  static void default_impl(const std::string&) {}
};
struct Remote : hookset::Slot<int(int), hookset::Fallback> {
  // An asio::awaitable default: runs on the dispatch's executor.
  static net::awaitable<int> default_impl(int x) {
    net::steady_timer timer(co_await net::this_coro::executor, 1ms);
    co_await timer.async_wait(net::use_awaitable);
    co_return x * 100;
  }
};
using Set = hookset::HookSet<Score, Audit, Remote>;

// An asio::awaitable fold hook that waits `delay` on a timer; counts how many are running.
std::atomic<int> running{0};
net::awaitable<int> sleeping(int x, std::optional<int> last, std::chrono::milliseconds delay) {
  ++running;
  struct leave {
    ~leave() { --running; }
  } on_exit;
  net::steady_timer timer(co_await net::this_coro::executor, delay);
  co_await timer.async_wait(net::use_awaitable);  // throws operation_aborted when cancelled
  co_return x + last.value_or(0);
}

template <class T>
T run_on(net::io_context& io, net::awaitable<T> body) {
  auto future = net::co_spawn(io, std::move(body), net::use_future);
  io.run();
  io.restart();
  return future.get();
}

}  // namespace

TEST_CASE("co_await of a dispatch inside an asio::awaitable, synchronous hooks") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return x + *last; });
  set.add<Score>([](int x, std::optional<int> last) { return x * *last; });
  const int result =
      run_on(io, [&]() -> net::awaitable<int> { co_return co_await set.call<Score>(3); }());
  CHECK(result == 18);  // 3, then 3 + 3, then 3 * 6
}

TEST_CASE("async_call with use_future, a callback and deferred") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return x + *last; });
  auto future = hookset::asio::async_call(io.get_executor(), set.call<Score>(5), net::use_future);
  std::optional<int> from_callback;
  std::thread::id callback_thread;
  hookset::asio::async_call(io.get_executor(), set.call<Score>(7),
                            [&](std::exception_ptr error, int value) {
    CHECK_FALSE(error);
    from_callback = value;
    callback_thread = std::this_thread::get_id();
  });
  CHECK_FALSE(from_callback);  // never inside the initiating function
  auto deferred = hookset::asio::async_call(io.get_executor(), set.call<Score>(1), net::deferred);
  std::optional<int> from_deferred;
  std::move(deferred)([&](std::exception_ptr, int value) { from_deferred = value; });
  io.run();
  CHECK(future.get() == 10);
  CHECK(from_callback == 14);
  CHECK(callback_thread == std::this_thread::get_id());
  CHECK(from_deferred == 2);
}

TEST_CASE(
    "asio::awaitable hooks mixed with synchronous and Task hooks, and an asio::awaitable default") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return sleeping(x, last, 2ms); });
  set.add<Score>([](int x, std::optional<int> last) -> Task<int> { co_return x * 10 + *last; });
  set.add<Score>([](int x, std::optional<int> last) { return *last - x; });
  set.add<Remote>([](int x, std::optional<int> last) { return sleeping(x, last, 1ms); });
  const int score =
      run_on(io, [&]() -> net::awaitable<int> { co_return co_await set.call<Score>(2); }());
  CHECK(score == (2 * 10 + 4) - 2);
  Set fallback_only;
  const int remote = run_on(
      io, [&]() -> net::awaitable<int> { co_return co_await fallback_only.call<Remote>(3); }());
  CHECK(remote == 300);
  CHECK(running == 0);
}

TEST_CASE("the handler's cancellation slot cancels the running asio::awaitable hook") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return sleeping(x, last, 10s); });
  net::cancellation_signal signal;
  std::exception_ptr error;
  bool done = false;
  int running_at_completion = -1;
  hookset::asio::async_call(
      io.get_executor(), set.call<Score>(1),
      net::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e, int) {
        error = e;
        done = true;
        running_at_completion = running;
      }));
  net::steady_timer later(io, 20ms);
  later.async_wait([&](auto) { signal.emit(net::cancellation_type::terminal); });
  const auto start = std::chrono::steady_clock::now();
  io.run();
  CHECK(done);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(running_at_completion == 0);  // the hook had finished before the operation completed
  CHECK_THROWS_AS(std::rethrow_exception(error), hookset::DispatchCancelled);
}

TEST_CASE("a dispatch deadline on the io_context's timers cuts off an asio::awaitable hook") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return sleeping(x, last, 10s); },
                 hookset::HookOptions{.name = "slow"});
  std::exception_ptr error;
  const auto start = std::chrono::steady_clock::now();
  hookset::asio::async_call(io.get_executor(), set.call<Score>(1).with_timeout(20ms),
                            [&](std::exception_ptr e, int) { error = e; });
  io.run();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(elapsed >= 20ms);
  CHECK(elapsed < 5s);
  CHECK(running == 0);
  try {
    std::rethrow_exception(error);
  } catch (const hookset::DispatchTimeout& timeout) {
    CHECK(timeout.hook_name == "slow");
    CHECK_FALSE(timeout.per_hook);
  }
}

TEST_CASE("a hook's time limit on the io_context's timers - FailOpen skips it") {
  net::io_context io;
  Set set;
  set.add<Score>([](int x, std::optional<int> last) { return sleeping(x, last, 10s); },
                 {.name = "plugin", .timeout = 10ms, .on_failure = hookset::FailOpen});
  set.add<Score>([](int x, std::optional<int> last) { return x * 100 + *last; });
  const int result =
      run_on(io, [&]() -> net::awaitable<int> { co_return co_await set.call<Score>(1); }());
  CHECK(result == 101);
  CHECK(running == 0);
}

TEST_CASE("a client that stops waiting: the dispatch is cancelled and its arguments stay valid") {
  using namespace net::experimental::awaitable_operators;
  net::io_context io;
  hookset::HookSet<Audit> set;
  auto seen = std::make_shared<std::string>();
  set.add<Audit>([seen](const std::string& text) -> net::awaitable<void> {
    net::steady_timer timer(co_await net::this_coro::executor, 10s);
    try {
      co_await timer.async_wait(net::use_awaitable);
    } catch (...) {
      *seen = text;  // reads the argument after cancellation: it must still be alive (ASan)
      throw;
    }
  });
  const bool timed_out = run_on(io, [&]() -> net::awaitable<bool> {
    net::steady_timer patience(co_await net::this_coro::executor, 10ms);
    auto winner = co_await (
        hookset::asio::async_call(set.call<Audit>(std::string(100, 'x')), net::use_awaitable) ||
        patience.async_wait(net::use_awaitable));
    co_return winner.index() == 1;
  }());
  CHECK(timed_out);
  CHECK(*seen == std::string(100, 'x'));
}

TEST_CASE("the set destroyed while its dispatch waits in an asio::awaitable hook") {
  net::io_context io;
  auto set = std::make_unique<Set>();
  set->add<Score>([](int x, std::optional<int> last) { return sleeping(x, last, 5ms); });
  std::optional<int> result;
  hookset::asio::async_call(io.get_executor(), set->call<Score>(2),
                            [&](std::exception_ptr, int value) { result = value; });
  set.reset();  // the dispatch started at once: it keeps its hooks
  io.run();
  CHECK(result == 4);
}

TEST_CASE(
    "thousands of random cancellations on a two-thread io_context: no hook runs after completion") {
  // Three kinds of dispatch, so the outcome of each is known whatever the machine's speed (a
  // sanitizer build starts the 3000 dispatches slower than their timers run out):
  //   i % 3 == 0: the hook waits an hour and the dispatch is cancelled: only cancellation ends it;
  //   i % 3 == 1: the hook waits 0-20 ms and the dispatch is cancelled meanwhile: either outcome;
  //   i % 3 == 2: the hook waits 0-20 ms, nobody cancels: it must succeed.
  net::io_context io;
  Set set;
  std::atomic<int> active{0};
  std::atomic<bool> late_hook{false};
  set.add<Score>([&](int x, std::optional<int> last) -> net::awaitable<int> {
    ++active;
    struct leave {
      std::atomic<int>& count;
      ~leave() { --count; }
    } on_exit{active};
    auto wait = x % 3 == 0 ? std::chrono::milliseconds(std::chrono::hours(1))
                           : std::chrono::milliseconds(x % 7 == 0 ? 0 : 1 + x % 20);
    net::steady_timer timer(co_await net::this_coro::executor, wait);
    co_await timer.async_wait(net::use_awaitable);
    co_return x + *last;
  });
  set.add<Score>([](int x, std::optional<int> last) { return x + *last; });
  constexpr int dispatches = 3000;
  std::atomic<int> completed{0}, cancelled_forced{0}, cancelled_raced{0}, uncancelled_failed{0};
  std::vector<std::unique_ptr<net::cancellation_signal>> signals;
  for (int i = 0; i < dispatches; ++i)
    signals.push_back(std::make_unique<net::cancellation_signal>());
  auto strand = net::make_strand(io);
  for (int i = 0; i < dispatches; ++i) {
    net::post(strand, [&, i] {
      hookset::asio::async_call(
          io.get_executor(), set.call<Score>(i),
          net::bind_cancellation_slot(signals[i]->slot(),
                                      net::bind_executor(strand, [&, i](std::exception_ptr e, int) {
                                        if (active.load() < 0) late_hook = true;
                                        if (e && i % 3 == 0) ++cancelled_forced;
                                        if (e && i % 3 == 1) ++cancelled_raced;
                                        if (e && i % 3 == 2) ++uncancelled_failed;
                                        ++completed;
                                      })));
      if (i % 3 != 2)
        net::post(strand, [&, i] { signals[i]->emit(net::cancellation_type::terminal); });
    });
  }
  std::thread second([&] { io.run(); });
  io.run();
  second.join();
  INFO("cancelled while racing their timers: " << cancelled_raced.load() << " of "
                                               << dispatches / 3);
  CHECK(completed == dispatches);
  CHECK(cancelled_forced == dispatches / 3);
  CHECK(uncancelled_failed == 0);
  CHECK(active == 0);
  CHECK_FALSE(late_hook);
}

namespace {
// Its argument is a shared_ptr: whether the dispatch still holds it is observable.
struct Keep : hookset::Slot<void(std::shared_ptr<int>), hookset::Always> {
  static void default_impl(const std::shared_ptr<int>&) {}
};
}  // namespace

TEST_CASE("async_call holds work on the io_context while a hook waits on something outside Asio") {
  net::io_context io;
  Set set;
  test_support::CrossThreadEvent outside;
  set.add<Score>([&](int x, std::optional<int> last) -> Task<int> {
    co_await outside;  // resumed on another thread: Asio knows nothing of it
    co_return x + *last;
  });
  std::optional<int> result;
  hookset::asio::async_call(io.get_executor(), set.call<Score>(4),
                            [&](std::exception_ptr, int value) { result = value; });
  std::thread other([&] { outside.fire_when_waited_on(); });
  io.run();  // returns only after the handler ran
  other.join();
  CHECK(result == 8);
}

TEST_CASE("async_call releases the dispatch and its arguments before the handler runs") {
  net::io_context io;
  hookset::HookSet<Keep> set;
  set.add<Keep>([](std::shared_ptr<int>) -> net::awaitable<void> {
    net::steady_timer timer(co_await net::this_coro::executor, 1ms);
    co_await timer.async_wait(net::use_awaitable);  // completes later, on the io_context
  });
  auto argument = std::make_shared<int>(1);
  const std::weak_ptr<int> watch = argument;
  std::optional<bool> released_before_handler;
  hookset::asio::async_call(io.get_executor(), set.call<Keep>(std::move(argument)),
                            [&](std::exception_ptr error) {
    CHECK_FALSE(error);
    released_before_handler = watch.expired();
  });
  io.run();
  CHECK(released_before_handler == true);

  // Completed at once (no hook suspends): the handler is posted, and the state is gone by then.
  hookset::HookSet<Keep> plain;
  auto second = std::make_shared<int>(2);
  const std::weak_ptr<int> watch_second = second;
  std::optional<bool> released_inline;
  hookset::asio::async_call(io.get_executor(), plain.call<Keep>(std::move(second)),
                            [&](std::exception_ptr) { released_inline = watch_second.expired(); });
  io.restart();
  io.run();
  CHECK(released_inline == true);
}

TEST_CASE(
    "a dispatch that completes at once: posted, its state gone first, a hook's error rethrown") {
  // Nobody watching, no options, synchronous hooks: the operation runs the dispatch inside the
  // initiating call, without a frame or a context of its own - with the same rules.
  struct Hold : hookset::Slot<int(std::shared_ptr<int>), hookset::Always> {
    static int default_impl(const std::shared_ptr<int>& p) { return *p; }
  };
  net::io_context io;
  hookset::HookSet<Hold> set;
  set.add<Hold>([](const std::shared_ptr<int>& p, std::optional<int> last) { return *p + *last; });
  auto argument = std::make_shared<int>(20);
  const std::weak_ptr<int> watch = argument;
  std::optional<int> value;
  std::optional<bool> released_before_handler;
  hookset::asio::async_call(io.get_executor(), set.call<Hold>(std::move(argument)),
                            [&](std::exception_ptr error, int result) {
    CHECK_FALSE(error);
    value = result;
    released_before_handler = watch.expired();
  });
  CHECK_FALSE(value);  // never inside the initiating function
  io.run();
  CHECK(value == 40);
  CHECK(released_before_handler == true);

  set.add<Hold>([](const std::shared_ptr<int>&, std::optional<int>) -> int {
    throw std::runtime_error("a synchronous hook failed");
  });
  io.restart();
  std::string caught;
  const int after = run_on(io, [&]() -> net::awaitable<int> {
    try {
      co_return co_await set.call<Hold>(std::make_shared<int>(1));
    } catch (const std::runtime_error& error) {
      caught = error.what();
    }
    co_return -1;
  }());
  CHECK(after == -1);
  CHECK(caught == "a synchronous hook failed");
}

TEST_CASE(
    "a dispatch that finishes on another thread: the io_context is destroyed right after run()") {
  // The thread the dispatch finishes on posts the handler and must be done with the io_context
  // before run() can return (TSan checks this in the gcc-tsan stage).
  Set set;
  test_support::CrossThreadEvent outside;
  set.add<Score>([&](int x, std::optional<int> last) -> Task<int> {
    co_await outside;
    co_return x + *last;
  });
  for (int round = 0; round < 200; ++round) {
    std::optional<int> result;
    std::thread other;
    {
      net::io_context io;
      hookset::asio::async_call(io.get_executor(), set.call<Score>(round),
                                [&](std::exception_ptr, int value) { result = value; });
      other = std::thread([&] { outside.fire_when_waited_on(); });
      io.run();
    }  // ~io_context while `other` may still be unwinding its post
    other.join();
    REQUIRE(result == 2 * round);
  }
}
