// The spec's last section: what a dispatch sees when the set changes under it, and how long it
// keeps hooks alive. Meant to run under AddressSanitizer too: every "still alive" claim below
// is also a memory access that ASan would flag if it were false.
#include "hookset_catch.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {

using Log = std::vector<std::string>;

struct Step : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Event : hookset::Slot<void(Log&), hookset::Always> {
  static void default_impl(Log&) {}
};
using Set = hookset::HookSet<Step, Event>;

int run(const Set& set, int x = 0) { return hookset::sync_wait(set.call<Step>(x)); }

}  // namespace

TEST_CASE("a hook that removes itself finishes its run and the dispatch goes on") {
  Set set;
  auto alive = std::make_shared<std::string>("captured");
  hookset::HookId self;
  self = set.add<Step>([&set, &self, alive](int, std::optional<int> last) {
    REQUIRE(set.remove(self));
    // The hook object (and so `alive`) must still exist after its own removal.
    return *last + static_cast<int>(alive->size());
  });
  set.add<Step>([](int, std::optional<int> last) { return *last * 2; });
  alive.reset();
  REQUIRE(run(set, 1) == (1 + 8) * 2);
  REQUIRE(set.count<Step>() == 1);
  REQUIRE(run(set, 1) == 2);
}

TEST_CASE("registrations and removals inside a running hook affect only later dispatches") {
  Set set;
  Log log;
  hookset::HookId later;
  set.add<Event>([&](Log& l) {
    l.push_back("first");
    set.add<Event>([](Log& inner) { inner.push_back("added-during-dispatch"); });
    set.remove(later);
  });
  later = set.add<Event>([](Log& l) { l.push_back("later"); });
  hookset::sync_wait(set.call<Event>(log));
  REQUIRE(log == Log{"first", "later"});

  log.clear();
  hookset::sync_wait(set.call<Event>(log));
  REQUIRE(log == Log{"first", "added-during-dispatch"});
  REQUIRE(set.count<Event>() == 3);  // the first hook added one more during the second dispatch
}

TEST_CASE("a hook may destroy the set it runs in") {
  auto set = std::make_unique<Set>();
  auto alive = std::make_shared<int>(41);
  set->add<Step>([&set, alive](int, std::optional<int> last) {
    set.reset();
    return *last + *alive;
  });
  set->add<Step>([alive](int, std::optional<int> last) { return *last + 1; });
  const Set* raw = set.get();
  alive.reset();
  REQUIRE(hookset::sync_wait(raw->call<Step>(0)) == 42);
  REQUIRE(set == nullptr);
}

TEST_CASE("a suspended dispatch keeps its hooks alive after they are removed") {
  Set set;
  test_support::ManualEvent gate;
  auto alive = std::make_shared<int>(5);
  std::weak_ptr<int> watch = alive;
  const auto id =
      set.add<Step>([&gate, alive](int x, std::optional<int> last) -> hookset::Task<int> {
        co_await gate;
        co_return *last + x + *alive;
      });
  alive.reset();

  test_support::Outcome<int> out;
  test_support::detach(set.call<Step>(10), out);
  REQUIRE_FALSE(out.done);
  REQUIRE(set.remove(id));
  REQUIRE_FALSE(watch.expired());  // the dispatch holds it

  gate.fire();
  REQUIRE(out.done);
  REQUIRE(out.value == 10 + 10 + 5);
  REQUIRE(watch.expired());  // released with the dispatch
  REQUIRE(run(set, 10) == 10);
}

TEST_CASE("a suspended dispatch survives the destruction of its set") {
  auto set = std::make_unique<Set>();
  test_support::ManualEvent gate;
  auto alive = std::make_shared<int>(1);
  std::weak_ptr<int> watch = alive;
  set->add<Step>([&gate, alive](int, std::optional<int> last) -> hookset::Task<int> {
    co_await gate;
    co_return *last + *alive;
  });
  set->add<Step>([alive](int, std::optional<int> last) { return *last * 100 + *alive; });
  alive.reset();

  test_support::Outcome<int> out;
  test_support::detach(set->call<Step>(2), out);
  set.reset();
  REQUIRE_FALSE(watch.expired());
  REQUIRE_FALSE(out.done);

  gate.fire();
  REQUIRE(out.done);
  REQUIRE(out.value == (2 + 1) * 100 + 1);
  REQUIRE(watch.expired());
}

TEST_CASE("a dispatch takes its view of the hooks when it starts, not when it is created") {
  Set set;
  auto pending = set.call<Step>(1);
  set.add<Step>([](int, std::optional<int> last) { return *last + 100; });
  REQUIRE(hookset::sync_wait(std::move(pending)) == 101);
}

TEST_CASE("an exception from a hook propagates, later hooks do not run, the set stays usable") {
  Set set;
  Log log;
  bool fail = true;
  set.add<Event>([](Log& l) { l.push_back("one"); });
  set.add<Event>([&fail](Log& l) {
    l.push_back("two");
    if (fail) throw std::runtime_error("two failed");
  });
  set.add<Event>([](Log& l) { l.push_back("three"); });
  REQUIRE_THROWS_WITH(hookset::sync_wait(set.call<Event>(log)), "two failed");
  REQUIRE(log == Log{"one", "two"});
  REQUIRE(set.count<Event>() == 3);
  fail = false;
  log.clear();
  hookset::sync_wait(set.call<Event>(log));
  REQUIRE(log == Log{"one", "two", "three"});
}

TEST_CASE("an exception after suspension propagates through co_await and releases the hooks") {
  Set set;
  test_support::ManualEvent gate;
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  set.add<Step>([&gate, alive](int, std::optional<int>) -> hookset::Task<int> {
    co_await gate;
    throw std::runtime_error("late failure");
  });
  alive.reset();
  test_support::Outcome<int> out;
  test_support::detach(set.call<Step>(0), out);
  gate.fire();
  REQUIRE(out.done);
  REQUIRE(out.error);
  REQUIRE_THROWS_WITH(std::rethrow_exception(out.error), "late failure");
  REQUIRE_FALSE(watch.expired());  // still registered in the set
  REQUIRE(set.count<Step>() == 1);
}

namespace {
hookset::Task<long> sum_dispatches(const Set& set, int times) {
  long sum = 0;
  for (int i = 0; i < times; ++i) sum += co_await set.call<Step>(1);
  co_return sum;
}
}  // namespace

TEST_CASE("a coroutine awaiting a million synchronous dispatches does not grow the stack") {
  Set set;
  set.add<Step>([](int, std::optional<int> last) { return *last + 1; });
  REQUIRE(hookset::sync_wait(sum_dispatches(set, 1'000'000)) == 2'000'000L);
}

TEST_CASE("a coroutine awaiting a million dispatches of coroutine hooks does not grow the stack") {
  Set set;
  set.add<Step>([](int, std::optional<int> last) -> hookset::Task<int> { co_return *last + 1; });
  set.add<Step>([](int, std::optional<int> last) { return *last + 1; });
  REQUIRE(hookset::sync_wait(sum_dispatches(set, 1'000'000)) == 3'000'000L);
}
