// hookset's own stop_token / stop_source / stop_callback (coro/own_stop_token.hpp), what
// hookset::stop_token & co. are where the standard library has no <stop_token>. Tested on every
// toolchain, also where hookset::stop_token is std::stop_token.
#include "hookset_catch.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/coro/own_stop_token.hpp>
#include <hookset/coro/stop_token.hpp>

namespace own = hookset::detail::own_stop;

namespace {
struct Count {
  int* calls;
  void operator()() const noexcept { ++*calls; }
};
}  // namespace

TEST_CASE("hookset::stop_token is std::stop_token where the standard library has one") {
#if defined(__cpp_lib_jthread) && !defined(HOOKSET_FORCE_OWN_STOP_TOKEN)
  STATIC_REQUIRE(std::is_same_v<hookset::stop_token, std::stop_token>);
  STATIC_REQUIRE(std::is_same_v<hookset::stop_source, std::stop_source>);
  STATIC_REQUIRE(std::is_same_v<hookset::stop_callback<Count>, std::stop_callback<Count>>);
#else
  STATIC_REQUIRE(std::is_same_v<hookset::stop_token, own::stop_token>);
  STATIC_REQUIRE(std::is_same_v<hookset::stop_source, own::stop_source>);
  STATIC_REQUIRE(std::is_same_v<hookset::stop_callback<Count>, own::stop_callback<Count>>);
#endif
}

TEST_CASE("own stop: a default token has no state, a source's tokens share its state") {
  const own::stop_token none;
  REQUIRE_FALSE(none.stop_possible());
  REQUIRE_FALSE(none.stop_requested());

  own::stop_source source;
  const own::stop_token token = source.get_token();
  own::stop_source copy = source;
  REQUIRE(source.stop_possible());
  REQUIRE(token.stop_possible());
  REQUIRE(copy == source);
  REQUIRE(token == copy.get_token());
  REQUIRE_FALSE(token == none);
  REQUIRE_FALSE(token.stop_requested());

  REQUIRE(copy.request_stop());  // true once: the call that requested it
  REQUIRE_FALSE(source.request_stop());
  REQUIRE_FALSE(copy.request_stop());
  REQUIRE(source.stop_requested());
  REQUIRE(token.stop_requested());
  REQUIRE(token.stop_possible());
}

TEST_CASE("own stop: nostopstate, moves and swaps") {
  own::stop_source empty(own::nostopstate);
  REQUIRE_FALSE(empty.stop_possible());
  REQUIRE_FALSE(empty.request_stop());
  REQUIRE_FALSE(empty.get_token().stop_possible());

  own::stop_source source;
  own::stop_token token = source.get_token();
  own::stop_source moved = std::move(source);
  REQUIRE(moved.stop_possible());
  swap(moved, empty);
  REQUIRE(empty.stop_possible());
  REQUIRE_FALSE(moved.stop_possible());
  own::stop_token other = std::move(token);
  REQUIRE(other.stop_possible());
  REQUIRE(empty.request_stop());
  REQUIRE(other.stop_requested());
}

TEST_CASE("own stop: a token's stop is no longer possible once every source is gone unstopped") {
  own::stop_token unstopped;
  own::stop_token stopped;
  {
    own::stop_source first;
    own::stop_source second = first;
    unstopped = first.get_token();
    own::stop_source third;
    stopped = third.get_token();
    third.request_stop();
  }
  REQUIRE_FALSE(unstopped.stop_possible());
  REQUIRE_FALSE(unstopped.stop_requested());
  REQUIRE(stopped.stop_possible());
  REQUIRE(stopped.stop_requested());
  int calls = 0;
  { const own::stop_callback never(unstopped, Count{&calls}); }
  REQUIRE(calls == 0);
}

TEST_CASE(
    "own stop: callbacks run once on request_stop, at once when already stopped, never "
    "once deregistered") {
  own::stop_source source;
  int first = 0;
  int second = 0;
  int removed = 0;
  int late = 0;
  own::stop_callback a(source.get_token(), Count{&first});
  std::optional<own::stop_callback<Count>> b;
  b.emplace(source.get_token(), Count{&second});
  { const own::stop_callback gone(source.get_token(), Count{&removed}); }
  REQUIRE(first + second + removed == 0);
  REQUIRE(source.request_stop());
  REQUIRE(first == 1);
  REQUIRE(second == 1);
  REQUIRE(removed == 0);
  REQUIRE_FALSE(source.request_stop());
  REQUIRE(first == 1);

  const own::stop_callback after(source.get_token(), Count{&late});  // runs in its constructor
  REQUIRE(late == 1);
  STATIC_REQUIRE(std::is_same_v<decltype(after)::callback_type, Count>);
}

TEST_CASE("own stop: a callback may destroy its own stop_callback, and register another") {
  own::stop_source source;
  std::optional<own::stop_callback<std::function<void()>>> self;
  std::optional<own::stop_callback<Count>> registered_inside;
  int inner = 0;
  int after_self = 0;
  bool ran = false;
  self.emplace(source.get_token(), [&] {
    ran = true;
    // The captures die with the callback: what is used afterwards is taken first.
    auto& inside = registered_inside;
    const own::stop_token token = source.get_token();
    int* const count = &inner;
    self.reset();  // must neither deadlock nor touch the destroyed callback afterwards
    inside.emplace(token, Count{count});  // stopped: runs at once
  });
  const own::stop_callback next(source.get_token(), Count{&after_self});
  REQUIRE(source.request_stop());
  REQUIRE(ran);
  REQUIRE_FALSE(self.has_value());
  REQUIRE(inner == 1);
  REQUIRE(after_self == 1);
}

TEST_CASE("own stop: a callback may destroy its stop_callback and the source requesting the stop") {
  // Nothing else holds the state: the stop must keep it alive itself (ASan checks the rest).
  auto source = std::make_unique<own::stop_source>();
  std::optional<own::stop_callback<std::function<void()>>> self;
  bool ran = false;
  self.emplace(source->get_token(), [&] {
    ran = true;
    auto& owner = source;  // (the captures die with the callback)
    self.reset();
    owner.reset();
  });
  own::stop_source* const requesting = source.get();
  REQUIRE(requesting->request_stop());
  REQUIRE(ran);
  REQUIRE_FALSE(source);
}

TEST_CASE("own stop: destroying a stop_callback waits while its callback runs on another thread") {
  own::stop_source source;
  std::atomic<bool> entered{false};
  std::atomic<bool> finished{false};
  std::optional<own::stop_callback<std::function<void()>>> callback;
  callback.emplace(source.get_token(), [&] {
    entered = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished = true;
  });
  std::thread requester([&] { source.request_stop(); });
  while (!entered) std::this_thread::yield();
  callback.reset();  // the callback is running on `requester`: waits for it
  REQUIRE(finished);
  requester.join();
}

TEST_CASE("own stop: registrations, deregistrations and a stop racing on threads") {
  // A callback runs at most once, and never after its stop_callback has been destroyed.
  for (int round = 0; round < 200; ++round) {
    own::stop_source source;
    std::atomic<int> ran_twice{0};
    std::atomic<int> ran_after_destruction{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t)
      pool.emplace_back([&] {
        while (!go) std::this_thread::yield();
        for (int i = 0; i < 20; ++i) {
          auto runs = std::make_shared<std::atomic<int>>(0);
          auto destroyed = std::make_shared<std::atomic<bool>>(false);
          {
            const own::stop_callback callback(source.get_token(), [&, runs, destroyed]() noexcept {
              if (++*runs > 1) ++ran_twice;
              if (*destroyed) ++ran_after_destruction;
            });
          }
          *destroyed = true;
        }
      });
    std::atomic<bool> requested{false};
    std::thread requester([&] {
      while (!go) std::this_thread::yield();
      requested = source.request_stop();
    });
    go = true;
    requester.join();
    for (std::thread& thread : pool) thread.join();
    REQUIRE(requested);
    REQUIRE(ran_twice == 0);
    REQUIRE(ran_after_destruction == 0);
  }
}
