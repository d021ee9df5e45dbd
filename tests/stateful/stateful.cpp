// Stateful<T> (docs/semantics.md, "Stateful hooks"): mutable state behind a FIFO async mutex;
// independent dispatches take turns; a re-entry - direct, through an async nested dispatch, through
// another slot, through sync_wait - is reported as ReentrancyError (or handed to on_reentrancy)
// instead of waiting for itself forever; a stateful hook may dispatch other slots freely.
#include "hookset_catch.hpp"

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {

using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;

struct NextId : hookset::Slot<int(std::string_view who), hookset::Always> {
  static int default_impl(std::string_view) { return 0; }
};
struct Notify : hookset::Slot<void(std::string_view what), hookset::Always> {
  static void default_impl(std::string_view) {}
};
struct Pick : hookset::Slot<std::string(int n), hookset::Singleton> {
  static std::string default_impl(int) { return "default"; }
};
struct Lookup : hookset::Slot<int(int key), hookset::Always> {
  static int default_impl(int key) { return key; }
};

using Set = hookset::HookSet<NextId, Notify, Pick, Lookup>;

// A counter: the classic piece of state a hook keeps.
struct Counter {
  int next = 0;
  std::vector<std::string> seen;
  int operator()(std::string_view who, std::optional<int>) {
    seen.emplace_back(who);
    return ++next;
  }
};

TEST_CASE("a Stateful hook keeps its state across dispatches, and copies share it") {
  Set set;
  hookset::Stateful counter{Counter{}};
  set.add<NextId>(counter);
  CHECK(hookset::sync_wait(set.call<NextId>("a")) == 1);
  CHECK(hookset::sync_wait(set.call<NextId>("b")) == 2);

  Set copy = set;  // shares the registered hook object, hence the state
  CHECK(hookset::sync_wait(copy.call<NextId>("c")) == 3);
  CHECK(hookset::sync_wait(set.call<NextId>("d")) == 4);

  // The Stateful kept by the test is the same state, read under the same lock.
  const auto seen = hookset::sync_wait(counter.with_lock([](Counter& c) { return c.seen; }));
  CHECK(seen == std::vector<std::string>{"a", "b", "c", "d"});
}

TEST_CASE("Stateful hooks fit every slot shape: fold, void, singleton") {
  Set set;
  int notified = 0;
  struct Recorder {
    int* count;
    void operator()(std::string_view) { ++*count; }
  };
  struct Namer {
    int calls = 0;
    std::string operator()(int n) {
      return "call " + std::to_string(++calls) + " for " + std::to_string(n);
    }
  };
  set.add<Notify>(hookset::Stateful{Recorder{&notified}});
  set.add<Pick>(hookset::Stateful{Namer{}});
  hookset::sync_wait(set.call<Notify>("x"));
  hookset::sync_wait(set.call<Notify>("y"));
  CHECK(notified == 2);
  CHECK(hookset::sync_wait(set.call<Pick>(7)) == "call 1 for 7");
  CHECK(hookset::sync_wait(set.call<Pick>(8)) == "call 2 for 8");
}

TEST_CASE("a Stateful multi-slot object: one state and one lock for all its slots") {
  struct Bundle {
    int calls = 0;
    int operator()(NextId, std::string_view, std::optional<int> last) {
      ++calls;
      return last.value_or(0) + 100;
    }
    void operator()(Notify, std::string_view) { ++calls; }
  };
  Set set;
  hookset::Stateful bundle{Bundle{}};
  CHECK(set.add_hooks(bundle).size() == 2);
  CHECK(hookset::sync_wait(set.call<NextId>("a")) == 100);
  hookset::sync_wait(set.call<Notify>("b"));
  CHECK(hookset::sync_wait(bundle.with_lock([](Bundle& b) { return b.calls; })) == 2);
}

// A hook whose first call waits for an event, so that the test controls when it lets go.
struct Gate {
  ManualEvent* open;
  std::vector<std::string>* order;
  hookset::Task<int> operator()(std::string_view who, std::optional<int> last) {
    order->push_back(std::string(who) + " enters");
    if (!open->is_set()) co_await *open;
    order->push_back(std::string(who) + " leaves");
    co_return last.value_or(0) + 1;
  }
};

TEST_CASE("independent dispatches reaching a busy Stateful take turns in FIFO order") {
  Set set;
  ManualEvent open;
  std::vector<std::string> order;
  set.add<NextId>(hookset::Stateful{Gate{&open, &order}});

  Outcome<int> a, b, c;
  detach(set.call<NextId>("a"), a);
  REQUIRE(open.has_waiter());  // a holds the lock, suspended inside the hook
  detach(set.call<NextId>("b"), b);
  detach(set.call<NextId>("c"), c);
  CHECK_FALSE(b.done);  // waiting for their turn: no error, no hook call yet
  CHECK_FALSE(c.done);
  CHECK(order == std::vector<std::string>{"a enters"});

  open.fire();  // a finishes and hands the lock to b, then b to c
  REQUIRE(a.done);
  REQUIRE(b.done);
  REQUIRE(c.done);
  CHECK_FALSE(a.error);
  CHECK_FALSE(b.error);
  CHECK_FALSE(c.error);
  CHECK(*a.value == 1);
  CHECK(*b.value == 1);
  CHECK(*c.value == 1);
  CHECK(order == std::vector<std::string>{"a enters", "a leaves", "b enters", "b leaves",
                                          "c enters", "c leaves"});
}

TEST_CASE("a long queue behind a busy Stateful drains without deep recursion") {
  Set set;
  ManualEvent open;
  std::vector<std::string> order;
  set.add<NextId>(hookset::Stateful{Gate{&open, &order}});
  Outcome<int> first;
  detach(set.call<NextId>("first"), first);
  REQUIRE(open.has_waiter());

  constexpr int waiting = 20000;
  std::vector<Outcome<int>> outcomes(waiting);
  for (auto& outcome : outcomes) detach(set.call<NextId>("w"), outcome);
  open.fire();
  REQUIRE(first.done);
  int finished = 0;
  for (auto& outcome : outcomes) finished += outcome.done && !outcome.error && *outcome.value == 1;
  CHECK(finished == waiting);
  CHECK(order.size() == 2 * (waiting + 1));
}

// ---- re-entry -------------------------------------------------------------------------------

// Awaits a dispatch of `slot` from inside the hook: reaches itself when `slot` is its own.
struct Recurser {
  Set* set;
  int depth = 0;
  hookset::Task<int> operator()(std::string_view who, std::optional<int> last) {
    ++depth;
    if (who == "outer") co_return co_await set->call<NextId>("inner");
    co_return last.value_or(0) + 1;
  }
};

TEST_CASE(
    "re-entry through an awaited nested dispatch throws ReentrancyError naming slot and hook") {
  Set set;
  hookset::Stateful recurser{Recurser{&set}};
  set.add<NextId>(recurser);
  try {
    hookset::sync_wait(set.call<NextId>("outer"));
    FAIL("expected a ReentrancyError");
  } catch (const hookset::ReentrancyError& error) {
    CHECK(error.slot == "NextId");
    CHECK(error.hook_type.find("Recurser") != std::string::npos);
    const std::string what = error.what();
    CHECK(what.find("NextId") != std::string::npos);
    CHECK(what.find("Recurser") != std::string::npos);
  }
  // The outer call let go of the lock when the error passed through it: the hook works again.
  CHECK(hookset::sync_wait(set.call<NextId>("again")) == 1);
  CHECK(hookset::sync_wait(recurser.with_lock([](Recurser& r) { return r.depth; })) == 2);
}

TEST_CASE("ReentrancyError is a std::logic_error") {
  const hookset::ReentrancyError error("S", "H");
  const std::logic_error& base = error;
  CHECK(std::string(base.what()).find("S") != std::string::npos);
  CHECK(error.slot == "S");
  CHECK(error.hook_type == "H");
}

TEST_CASE("re-entry through another slot's plain coroutine hook is detected too") {
  Set set;
  struct Outer {
    Set* set;
    hookset::Task<int> operator()(std::string_view, std::optional<int>) {
      co_return co_await set->call<Lookup>(5);  // Lookup's hook comes back to NextId
    }
  };
  set.add<NextId>(hookset::Stateful{Outer{&set}});
  set.add<Lookup>([&set](int key, std::optional<int>) -> hookset::Task<int> {
    co_return key + co_await set.call<NextId>("via lookup");
  });
  CHECK_THROWS_AS(hookset::sync_wait(set.call<NextId>("start")), hookset::ReentrancyError);
  // Starting from Lookup closes the same cycle, at the Stateful hook again.
  CHECK_THROWS_AS(hookset::sync_wait(set.call<Lookup>(1)), hookset::ReentrancyError);
}

TEST_CASE("re-entry through sync_wait in the hook's synchronous body is detected, not a deadlock") {
  Set set;
  struct Blocking {
    Set* set;
    int operator()(std::string_view who, std::optional<int>) {
      if (who == "outer") return hookset::sync_wait(set->call<NextId>("inner"));
      return 1;
    }
  };
  set.add<NextId>(hookset::Stateful{Blocking{&set}});
  CHECK_THROWS_AS(hookset::sync_wait(set.call<NextId>("outer")), hookset::ReentrancyError);
  CHECK(hookset::sync_wait(set.call<NextId>("plain")) == 1);
}

TEST_CASE("re-entry through sync_wait in a synchronous hook of a nested dispatch is detected") {
  Set set;
  struct Outer {
    Set* set;
    hookset::Task<int> operator()(std::string_view, std::optional<int>) {
      co_return co_await set->call<Lookup>(1);  // Lookup's hooks run inside this await
    }
  };
  set.add<NextId>(hookset::Stateful{Outer{&set}});
  set.add<Lookup>([&set](int key, std::optional<int>) {  // synchronous, blocks on NextId
    return key + hookset::sync_wait(set.call<NextId>("inner"));
  });
  CHECK_THROWS_AS(hookset::sync_wait(set.call<NextId>("outer")), hookset::ReentrancyError);
}

TEST_CASE("on_reentrancy, when T has one, turns a re-entry into the hook's output") {
  struct Forgiving {
    Set* set;
    std::vector<std::string> reports;
    hookset::Task<int> operator()(std::string_view who, std::optional<int>) {
      if (who == "outer") co_return 1000 + co_await set->call<NextId>("inner");
      co_return 1;
    }
    int on_reentrancy(hookset::ReentrancyError error) {
      reports.push_back(error.slot);
      return 7;
    }
  };
  Set set;
  hookset::Stateful forgiving{Forgiving{&set, {}}};
  set.add<NextId>(forgiving);
  CHECK(hookset::sync_wait(set.call<NextId>("outer")) == 1007);
  CHECK(hookset::sync_wait(forgiving.with_lock([](Forgiving& f) { return f.reports; })) ==
        std::vector<std::string>{"NextId"});
}

TEST_CASE("a Stateful hook may dispatch other slots, stateful hooks included") {
  Set set;
  set.add<Lookup>(hookset::Stateful{[calls = 0](int key, std::optional<int> last) mutable {
    return last.value_or(0) + key * 10 + (++calls);
  }});
  struct Caller {
    Set* set;
    hookset::Task<int> operator()(std::string_view, std::optional<int>) {
      const int first = co_await set->call<Lookup>(1);
      const int second = co_await set->call<Lookup>(2);
      co_return first + second;
    }
  };
  set.add<NextId>(hookset::Stateful{Caller{&set}});
  // Lookup(k) folds the default k through the hook: k + 10k + (calls so far).
  CHECK(hookset::sync_wait(set.call<NextId>("x")) == (1 + 10 + 1) + (2 + 20 + 2));
  CHECK(hookset::sync_wait(set.call<NextId>("x")) == (1 + 10 + 3) + (2 + 20 + 4));
}

TEST_CASE("two different Stateful hooks do not mistake each other for re-entry") {
  Set set;
  set.add<Lookup>(hookset::Stateful{[](int key, std::optional<int>) { return key; }});
  struct Caller {
    Set* set;
    int operator()(std::string_view, std::optional<int>) {  // synchronous, blocks on Lookup
      return hookset::sync_wait(set->call<Lookup>(3));
    }
  };
  set.add<NextId>(hookset::Stateful{Caller{&set}});
  CHECK(hookset::sync_wait(set.call<NextId>("x")) == 3);
}

TEST_CASE("an exception from the state's call propagates and releases the lock") {
  struct Flaky {
    int calls = 0;
    int operator()(std::string_view who, std::optional<int>) {
      ++calls;
      if (who == "bad") throw std::runtime_error("flaky");
      return calls;
    }
  };
  Set set;
  set.add<NextId>(hookset::Stateful{Flaky{}});
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<NextId>("bad")), "flaky");
  CHECK(hookset::sync_wait(set.call<NextId>("good")) == 2);
}

TEST_CASE("a Stateful called directly is a Task, and a re-entry then names no slot") {
  struct Direct {
    int n = 0;
    int operator()(int add) { return n += add; }
  };
  hookset::Stateful direct{Direct{}};
  CHECK(hookset::sync_wait(direct(2)) == 2);
  CHECK(hookset::sync_wait(direct(3)) == 5);

  struct SelfCaller {
    std::shared_ptr<hookset::Stateful<SelfCaller>> self;
    hookset::Task<int> operator()(int depth) {
      if (depth == 0) co_return co_await (*self)(1);
      co_return 0;
    }
  };
  auto self = std::make_shared<hookset::Stateful<SelfCaller>>(SelfCaller{});
  hookset::sync_wait(self->with_lock([&](SelfCaller& s) { s.self = self; }));
  try {
    hookset::sync_wait((*self)(0));
    FAIL("expected a ReentrancyError");
  } catch (const hookset::ReentrancyError& error) {
    CHECK(error.slot == "(called directly)");
  }
  hookset::sync_wait(self->with_lock([](SelfCaller& s) { s.self.reset(); }));  // break the cycle
}

}  // namespace
