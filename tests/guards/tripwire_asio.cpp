// Tripwires on Boost.Asio (<hookset/asio.hpp>): guards and work as asio::awaitable coroutines on
// an io_context, the tripwire run inside an asio::awaitable through hookset::asio::async_run. A
// guard's deny stops the work's pending timer (operation_aborted) long before it would expire;
// an Asio cancellation of the operation reaches both guards and work.
#include "hookset_catch.hpp"

#include <chrono>
#include <exception>
#include <string>
#include <thread>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
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
using hookset::Guarded;
using hookset::Permission;
using hookset::Verdict;
using clock_type = std::chrono::steady_clock;

namespace {

struct Watch : hookset::VerdictSlot<Verdict<>(int), hookset::Always, hookset::Concurrent> {
  static Verdict<> default_impl(int) { return {}; }
};
using Set = hookset::HookSet<Watch>;

net::awaitable<void> wait_for(clock_type::duration d) {
  net::steady_timer timer(co_await net::this_coro::executor, d);
  co_await timer.async_wait(net::use_awaitable);
}

struct WorkLog {
  bool started = false;
  bool aborted = false;
  bool finished = false;
};
net::awaitable<int> slow_work(WorkLog& log, clock_type::duration d) {
  log.started = true;
  try {
    co_await wait_for(d);
  } catch (const boost::system::system_error&) {
    log.aborted = true;
    throw;
  }
  log.finished = true;
  co_return 42;
}

}  // namespace

TEST_CASE("asio: a guard's deny stops the work's pending operation in the middle of the call") {
  net::io_context io;
  Set set;
  set.add<Watch>(
      [](int) -> net::awaitable<Verdict<>> {
        co_await wait_for(1ms);
        co_return Verdict<>{Permission::allow, "quick check"};
      },
      {.name = "quick"});
  set.add<Watch>(
      [](int) -> net::awaitable<Verdict<>> {
        co_await wait_for(20ms);
        co_return Verdict<>{Permission::deny, "budget exceeded"};
      },
      {.name = "budget"});
  WorkLog log;
  Guarded<int> outcome;
  std::exception_ptr error;
  const auto start = clock_type::now();
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        outcome = co_await hookset::asio::async_run(
            hookset::tripwire(set.call<Watch>(1)).around(slow_work(log, 10s)), net::use_awaitable);
      },
      [&](std::exception_ptr e) { error = e; });
  io.run();
  const auto took = clock_type::now() - start;
  REQUIRE_FALSE(error);
  REQUIRE(outcome.tripped());
  CHECK(outcome.trip->name == "budget");  // the deny beats the quick allow before it
  CHECK(outcome.trip->value.reason == "budget exceeded");
  CHECK(log.started);
  CHECK(log.aborted);
  CHECK_FALSE(log.finished);
  CHECK(took < 5s);  // stopped at the trip, not after the work's 10 s
}

TEST_CASE("asio: passing guards return the work's result") {
  net::io_context io;
  Set set;
  set.add<Watch>([](int) -> net::awaitable<Verdict<>> {
    co_await wait_for(2ms);
    co_return Verdict<>{};
  });
  WorkLog log;
  Guarded<int> outcome;
  net::co_spawn(
      io,
      [&]() -> net::awaitable<void> {
        outcome = co_await hookset::asio::async_run(
            hookset::tripwire(set.call<Watch>(1)).around(slow_work(log, 1ms)), net::use_awaitable);
      },
      net::detached);
  io.run();
  CHECK_FALSE(outcome.tripped());
  CHECK(outcome.value == 42);
  CHECK(outcome.verdicts.contributions.size() == 2);
}

TEST_CASE("asio: cancelling the operation stops the guards and the work") {
  net::io_context io;
  Set set;
  bool guard_aborted = false;
  set.add<Watch>([&guard_aborted](int) -> net::awaitable<Verdict<>> {
    try {
      co_await wait_for(10s);
    } catch (const boost::system::system_error&) {
      guard_aborted = true;
      throw;
    }
    co_return Verdict<>{};
  });
  WorkLog log;
  net::cancellation_signal cancel;
  std::exception_ptr error;
  bool completed = false;
  hookset::asio::async_run(
      io.get_executor(), hookset::tripwire(set.call<Watch>(1)).around(slow_work(log, 10s)),
      net::bind_cancellation_slot(cancel.slot(), [&](std::exception_ptr e, const Guarded<int>&) {
        error = e;
        completed = true;
      }));
  net::steady_timer later(io, 5ms);
  later.async_wait(
      [&](boost::system::error_code) { cancel.emit(net::cancellation_type::terminal); });
  const auto start = clock_type::now();
  io.run();
  REQUIRE(completed);
  CHECK(clock_type::now() - start < 5s);
  CHECK(guard_aborted);
  CHECK(log.aborted);
  REQUIRE(error);
  CHECK_THROWS_AS(std::rethrow_exception(error), hookset::DispatchCancelled);
}

TEST_CASE("asio: asio::awaitable work is admitted through async_admit") {
  for (const bool deny : {false, true}) {
    net::io_context io;
    Set set;
    set.add<Watch>([deny](int) -> net::awaitable<Verdict<>> {
      co_await wait_for(5ms);
      if (deny) co_return Verdict<>{Permission::deny, "no"};
      co_return Verdict<>{};
    });
    bool committed = false, answered = false;
    auto work = [&](hookset::Admission& admission) -> net::awaitable<int> {
      // Waits for the guards: admitted only once every one has settled, and none tripped.
      const bool admitted = co_await hookset::asio::async_admit(admission, net::use_awaitable);
      answered = true;
      if (admitted) committed = true;
      co_return 7;
    };
    Guarded<int> outcome;
    std::exception_ptr error;
    net::co_spawn(
        io,
        [&]() -> net::awaitable<void> {
          outcome = co_await hookset::asio::async_run(
              hookset::tripwire(set.call<Watch>(1)).around(work), net::use_awaitable);
        },
        [&](std::exception_ptr e) { error = e; });
    io.run();
    INFO("deny: " << deny);
    REQUIRE_FALSE(error);
    CHECK(outcome.tripped() == deny);
    CHECK(committed == !deny);
    if (!deny) {
      CHECK(answered);
      CHECK(outcome.value == 7);
    }
  }
}
