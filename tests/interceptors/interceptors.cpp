// Interceptors (HookSet::intercept<S>, intercept_all): code around a whole dispatch. Each test
// checks what ran, in which order, with which arguments, and what the dispatch returned.
#include "hookset_catch.hpp"
#include "replaced_new.hpp"
#include "test_support.hpp"

#include <cstdlib>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

// Heap allocations of the calling thread, counted (replaced_new.hpp): an unobserved dispatch's
// interceptor layer must make none (a synchronous chain: not even a coroutine frame, which a
// fresh thread's empty frame pool would take from the heap).
namespace {
thread_local constinit long heap_allocations = 0;
}  // namespace
void* test_allocation::allocate(std::size_t size) noexcept {
  ++heap_allocations;
  return std::malloc(size);
}
void test_allocation::release(void* block) noexcept { std::free(block); }

using hookset::Next;
using hookset::Task;
using test_support::fold_hook;
using test_support::fresh_log;
using test_support::Log;
using test_support::note;

namespace {

struct Fold : hookset::Slot<int(int x), hookset::Always> {
  static int default_impl(int x) {
    note("default(" + std::to_string(x) + ")");
    return x;
  }
};

struct Pick : hookset::Slot<std::string(std::string name), hookset::Singleton> {
  static std::string default_impl(const std::string& name) { return "default " + name; }
};

struct Notify : hookset::Slot<void(std::string event), hookset::Always> {
  static void default_impl(const std::string& event) { note("default " + event); }
};

struct Choose : hookset::Slot<std::optional<std::string>(std::string task), hookset::Fallback,
                              hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(const std::string&) { return "small"; }
};

// Logs nothing (its default neither): for the tests that count allocations.
struct Quiet : hookset::Slot<int(int x), hookset::Always> {
  static int default_impl(int x) { return x + 1; }
};
using QuietSet = hookset::HookSet<Quiet>;

using Inner = hookset::HookSet<Notify>;
using Set = hookset::HookSet<Fold, Pick, Choose, Inner>;

// A synchronous interceptor that logs around next().
auto logging_interceptor(std::string name) {
  return [name](Next<Fold> next, int x) {
    note(name + " before(" + std::to_string(x) + ")");
    const int result = hookset::sync_wait(next(x));
    note(name + " after(" + std::to_string(result) + ")");
    return result;
  };
}

}  // namespace

TEST_CASE(
    "a synchronous interceptor runs around the dispatch, with replaced arguments and a "
    "changed result") {
  Log& log = fresh_log();
  Set set;
  set.add<Fold>(fold_hook("h", 1));
  set.intercept<Fold>([](Next<Fold> next, int x) {
    note("before(" + std::to_string(x) + ")");
    const int result = hookset::sync_wait(next(x + 1));  // the rest sees x + 1
    note("after(" + std::to_string(result) + ")");
    return result * 2;
  });
  CHECK(hookset::sync_wait(set.call<Fold>(5)) == (6 * 10 + 1) * 2);
  CHECK(log == Log{"before(5)", "default(6)", "h(6, last=6)", "after(61)"});
}

TEST_CASE("a coroutine interceptor awaits next() across a suspending hook") {
  Log& log = fresh_log();
  test_support::ManualEvent event;
  Set set;
  set.add<Pick>([&](const std::string& name) -> Task<std::string> {
    note("hook waits");
    co_await event;
    co_return "picked " + name;
  });
  set.intercept<Pick>([](Next<Pick> next, const std::string& name) -> Task<std::string> {
    note("interceptor before");
    std::string picked = co_await next(name);
    note("interceptor after");
    co_return "[" + picked + "]";
  });
  test_support::Outcome<std::string> out;
  test_support::detach(set.call<Pick>(std::string("x")), out);
  CHECK_FALSE(out.done);
  CHECK(log == Log{"interceptor before", "hook waits"});
  event.fire();
  REQUIRE(out.done);
  CHECK_FALSE(out.error);
  CHECK(*out.value == "[picked x]");
  CHECK(log == Log{"interceptor before", "hook waits", "interceptor after"});
}

TEST_CASE("an interceptor that does not call next() answers alone: no hook, no default runs") {
  Log& log = fresh_log();
  Set set;
  set.add<Fold>(fold_hook("h", 1));
  set.intercept<Fold>([](Next<Fold>, int x) { return -x; });
  test_support::RecordingObserver observer;
  set.set_observer(&observer);
  CHECK(hookset::sync_wait(set.call<Fold>(4)) == -4);
  CHECK(log.empty());
  REQUIRE(observer.events.size() == 2);
  CHECK(observer.events[1].kind == "end");
  CHECK(observer.events[1].hooks_run == 0);
}

TEST_CASE("interceptors run in priority, named and registration order, the first outermost") {
  Log& log = fresh_log();
  Set set;
  hookset::HookOptions named_a;
  named_a.name = "a";
  set.intercept<Fold>(logging_interceptor("a"), named_a);
  set.intercept<Fold>(logging_interceptor("b"), hookset::Priority{-1});  // runs first
  const hookset::HookId removed = set.intercept<Fold>(logging_interceptor("removed"));
  set.intercept<Fold>(logging_interceptor("c"));
  hookset::HookOptions before_a;
  before_a.name = "d";
  before_a.before = {"a"};
  set.intercept<Fold>(logging_interceptor("d"), before_a);
  CHECK(set.remove(removed));

  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 1);
  // b (priority -1); then, as for hooks, the earliest registration whose named predecessors
  // are placed: a waits for d (which asks to run before it), so c, d, a.
  CHECK(log == Log{"b before(1)", "c before(1)", "d before(1)", "a before(1)", "default(1)",
                   "a after(1)", "d after(1)", "c after(1)", "b after(1)"});
}

TEST_CASE("next() may be called once: a second call fails with std::logic_error") {
  fresh_log();
  Set set;
  bool second_failed = false;
  set.intercept<Fold>([&](Next<Fold> next, int x) -> Task<int> {
    const int first = co_await next(x);
    try {
      co_await next(x);
    } catch (const std::logic_error& e) {
      second_failed = std::string(e.what()).find("more than once") != std::string::npos;
    }
    co_return first;
  });
  CHECK(hookset::sync_wait(set.call<Fold>(3)) == 3);
  CHECK(second_failed);
}

TEST_CASE("an interceptor's before/after name interceptors: a name only a hook has throws") {
  fresh_log();
  Set set;
  set.add<Fold>(fold_hook("audit", 1), {.name = "audit"});
  CHECK_THROWS_AS(set.intercept<Fold>(logging_interceptor("x"), {.after = {"audit"}}),
                  hookset::OrderingError);
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 11);  // the set unchanged: no interceptor
  CHECK(test_support::logged() == Log{"default(1)", "audit(1, last=1)"});
  set.intercept<Fold>(logging_interceptor("y"), {.name = "audit-wrapper"});
  CHECK_NOTHROW(set.intercept<Fold>(logging_interceptor("z"), {.after = {"audit-wrapper"}}));
}

TEST_CASE("next() is counted when called: two Tasks made, only the second awaited - it fails") {
  fresh_log();
  Set set;
  std::string second_error;
  set.intercept<Fold>([&](Next<Fold> next, int x) -> Task<int> {
    Task<int> first = next(x);  // never awaited: the rest of the dispatch does not run for it
    Task<int> second = next(x + 1);
    try {
      co_return co_await std::move(second);
    } catch (const std::logic_error& e) {
      second_error = e.what();
    }
    co_return -1;
  });
  CHECK(hookset::sync_wait(set.call<Fold>(3)) == -1);
  CHECK(second_error.find("more than once") != std::string::npos);
  CHECK(test_support::logged().empty());  // no hook, no default ran
}

TEST_CASE("an interceptor catches what the hooks throw, and may translate it") {
  fresh_log();
  Set set;
  set.add<Fold>([](int, std::optional<int>) -> int { throw std::runtime_error("hook broke"); });
  const auto id = set.intercept<Fold>([](Next<Fold> next, int x) -> Task<int> {
    try {
      co_return co_await next(x);
    } catch (const std::runtime_error&) {
      co_return -1;  // a fallback answer
    }
  });
  CHECK(hookset::sync_wait(set.call<Fold>(3)) == -1);

  set.remove(id);
  set.intercept<Fold>([](Next<Fold> next, int x) -> int {
    try {
      return hookset::sync_wait(next(x));
    } catch (const std::runtime_error& e) {
      throw std::domain_error(std::string("translated: ") + e.what());
    }
  });
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<Fold>(3)), "translated: hook broke");
}

TEST_CASE("intercept_all wraps every slot of the set, nested sets included, told which one") {
  Log& log = fresh_log();
  Set set;
  set.add<Fold>(fold_hook("h", 1));
  const hookset::HookId id = set.intercept_all(
      [](auto next, const auto&... args) -> Task<typename decltype(next)::output> {
        note(std::string("around ") + std::string(next.slot_name()));
        co_return co_await next(args...);
      });
  CHECK(hookset::sync_wait(set.call<Fold>(2)) == 21);
  hookset::sync_wait(set.call<Notify>(std::string("e")));
  CHECK(hookset::sync_wait(set.call<Pick>(std::string("p"))) == "default p");
  CHECK(*hookset::sync_wait(set.call<Choose>(std::string("t"))) == "small");
  CHECK(log == Log{"around Fold", "default(2)", "h(2, last=2)", "around Notify", "default e",
                   "around Pick", "around Choose"});
  CHECK(set.holds(id));
  CHECK(set.remove(id));  // from every slot at once
  CHECK_FALSE(set.holds(id));
  log.clear();
  hookset::sync_wait(set.call<Notify>(std::string("f")));
  CHECK(hookset::sync_wait(set.call<Fold>(2)) == 21);
  CHECK(log == Log{"default f", "default(2)", "h(2, last=2)"});
}

TEST_CASE("interceptors with a chain slot: the chain's rules hold inside next()") {
  fresh_log();
  Set set;
  set.add<Choose>([](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  set.add<Choose>([](const std::string& t) -> std::optional<std::string> {
    return t == "big" ? std::optional<std::string>("large") : std::nullopt;
  });
  set.intercept<Choose>([](Next<Choose> next, const std::string& task) {
    auto chosen = hookset::sync_wait(next(task == "huge" ? std::string("big") : task));
    return chosen ? std::optional<std::string>("model:" + *chosen) : chosen;
  });
  CHECK(*hookset::sync_wait(set.call<Choose>(std::string("huge"))) == "model:large");
  CHECK(*hookset::sync_wait(set.call<Choose>(std::string("tiny"))) == "model:small");
}

TEST_CASE(
    "registration: an interceptor takes no time limit nor failure policy - extend merges "
    "interceptors, clear removes them") {
  Log& log = fresh_log();
  Set set;
  hookset::HookOptions limited;
  limited.timeout = std::chrono::milliseconds(5);
  CHECK_THROWS_AS(set.intercept<Fold>(logging_interceptor("x"), limited), std::invalid_argument);
  hookset::HookOptions failing;
  failing.on_failure = hookset::FailOpen;
  CHECK_THROWS_AS(
      set.intercept_all([](auto next, const auto&... args) { return next(args...); }, failing),
      std::invalid_argument);
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 1);
  CHECK(log == Log{"default(1)"});  // nothing was registered

  Set other;
  other.intercept<Fold>(logging_interceptor("theirs"));
  set.intercept<Fold>(logging_interceptor("mine"));
  set.extend(other);
  log.clear();
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 1);
  CHECK(log == Log{"mine before(1)", "theirs before(1)", "default(1)", "theirs after(1)",
                   "mine after(1)"});
  set.clear<Fold>();
  log.clear();
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 1);
  CHECK(log == Log{"default(1)"});
}

TEST_CASE("a generic interceptor may return next(args...) itself: a pass-through awaitable") {
  Log& log = fresh_log();
  Set set;
  set.add<Fold>(fold_hook("h", 3));
  int calls = 0;
  set.intercept_all([&calls](auto next, const auto&... args) {
    ++calls;
    return next(args...);
  });
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 13);
  hookset::sync_wait(set.call<Notify>(std::string("n")));
  CHECK(calls == 2);
  CHECK(log == Log{"default(1)", "h(1, last=1)", "default n"});
}

// ---- the interceptor layer of an unobserved dispatch ------------------------------------------
// A dispatch nobody observes and given no options runs its interceptors as plain calls: a
// synchronous chain around plain hooks makes no coroutine frame and no allocation, a coroutine
// interceptor only its own (recycled) frame. The rules are the same as when observed.

TEST_CASE("an unobserved synchronous interceptor chain allocates nothing, not even a frame") {
  QuietSet set;
  set.add<Quiet>([](int x, std::optional<int> last) { return *last + x; });
  set.add<Quiet>([](int x, std::optional<int> last) { return *last * x; });
  set.intercept<Quiet>([](Next<Quiet> next, int x) { return hookset::sync_wait(next(x)) + 1; });
  set.intercept<Quiet>([](Next<Quiet> next, int x) { return hookset::sync_wait(next(x + 1)); });
  long allocations = -1;
  int result = 0;
  // A fresh thread: its frame pool is empty, so a coroutine frame would come from the heap.
  std::thread([&] {
    heap_allocations = 0;
    result = hookset::sync_wait(set.call<Quiet>(2));
    allocations = heap_allocations;
  }).join();
  CHECK(result == (4 + 3) * 3 + 1);  // next(3): the default's 4, the hooks' (4 + 3) * 3; + 1
  CHECK(allocations == 0);
}

TEST_CASE("an unobserved coroutine interceptor allocates nothing once its frame is recycled") {
  QuietSet set;
  set.add<Quiet>([](int x, std::optional<int> last) { return *last + x; });
  set.intercept<Quiet>(
      [](Next<Quiet> next, int x) -> Task<int> { co_return co_await next(x) * 2; });
  CHECK(hookset::sync_wait(set.call<Quiet>(1)) == 6);  // warms this thread's frame pool
  heap_allocations = 0;
  int total = 0;
  for (int i = 0; i < 10; ++i) total += hookset::sync_wait(set.call<Quiet>(i));
  CHECK(heap_allocations == 0);
  CHECK(total == 4 * 45 + 20);  // each (i + 1 + i) * 2
}

TEST_CASE("an unobserved interceptor's rest runs over the snapshot the dispatch started with") {
  Log& log = fresh_log();
  Set set;
  set.add<Fold>(fold_hook("h", 1));
  set.intercept<Fold>([&set](Next<Fold> next, int x) {
    set.add<Fold>(fold_hook("late", 100));  // registered during the dispatch: not in it
    return hookset::sync_wait(next(x));
  });
  CHECK(hookset::sync_wait(set.call<Fold>(1)) == 11);
  CHECK(log == Log{"default(1)", "h(1, last=1)"});
  CHECK(set.count<Fold>() == 2);
}

TEST_CASE(
    "an unobserved synchronous interceptor around a suspending hook and a fail-open one: the "
    "rest's bookkeeping holds") {
  fresh_log();
  Set set;
  test_support::CrossThreadEvent resumed;
  set.add<Fold>([&resumed](int, std::optional<int> last) -> Task<int> {
    co_await resumed;  // resumed on another thread, while the interceptor waits in sync_wait
    co_return *last + 1;
  });
  set.add<Fold>([](int, std::optional<int>) -> int { throw std::runtime_error("broken"); },
                {.name = "flaky", .on_failure = hookset::FailOpen});
  set.intercept<Fold>([](Next<Fold> next, int x) {
    note("before");
    const int result = hookset::sync_wait(next(x));
    note("after");
    return result;
  });
  std::thread firing([&resumed] { resumed.fire_when_waited_on(); });
  CHECK(hookset::sync_wait(set.call<Fold>(5)) == 6);  // the fail-open hook is skipped
  firing.join();
  CHECK(test_support::logged() == Log{"before", "default(5)", "after"});
}

TEST_CASE("what next() returns converts to a Task, counted when made, in an unobserved dispatch") {
  Set set;
  set.add<Fold>([](int x, std::optional<int> last) { return *last + x; });
  set.intercept<Fold>([](Next<Fold> next, int x) -> Task<int> {
    Task<int> first = next(x);
    const int result = co_await std::move(first);
    CHECK_THROWS_AS(hookset::sync_wait(next(x)), std::logic_error);  // a second next()
    co_return result;
  });
  CHECK(hookset::sync_wait(set.call<Fold>(4)) == 8);
}
