// Registration: order and priorities, removal, ids, copies, ownership forms, nested sets.
#include "hookset_catch.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {

using Log = std::vector<std::string>;

// Always fold over a log: each hook appends its name, so the result shows who ran in what order.
struct Trace : hookset::Slot<std::string(std::string_view), hookset::Always> {
  static std::string default_impl(std::string_view seed) { return std::string(seed); }
};
struct Pick : hookset::Slot<int(), hookset::Singleton> {
  static int default_impl() { return -1; }
};
struct Ping : hookset::Slot<void(Log&), hookset::Always> {
  static void default_impl(Log& log) { log.push_back("default"); }
};
struct Inner : hookset::Slot<int(int), hookset::Fallback> {
  static int default_impl(int x) { return x; }
};

using Set = hookset::HookSet<Trace, Pick, Ping, hookset::HookSet<Inner>>;

auto append(std::string name) {
  return [name](std::string_view, std::optional<std::string> last) { return *last + "," + name; };
}

std::string run(const Set& set, std::string_view seed = "d") {
  return hookset::sync_wait(set.call<Trace>(seed));
}

}  // namespace

TEST_CASE("hooks run in registration order when priorities tie") {
  Set set;
  set.add<Trace>(append("a"));
  set.add<Trace>(append("b"));
  set.add<Trace>(append("c"));
  REQUIRE(run(set) == "d,a,b,c");
  REQUIRE(set.count<Trace>() == 3);
}

TEST_CASE("lower priority runs earlier, ties keep registration order") {
  Set set;
  set.add<Trace>(append("p5"), hookset::Priority{5});
  set.add<Trace>(append("p0-first"));
  set.add<Trace>(append("m3"), hookset::Priority{-3});
  set.add<Trace>(append("p0-second"), hookset::Priority{0});
  set.add<Trace>(append("p5-second"), hookset::Priority{5});
  REQUIRE(run(set) == "d,m3,p0-first,p0-second,p5,p5-second");
}

TEST_CASE("with<S> builds a set in one expression") {
  const Set set = Set{}.with<Trace>(append("a")).with<Trace>(append("b"), hookset::Priority{-1});
  REQUIRE(run(set) == "d,b,a");
}

TEST_CASE("remove unregisters exactly the hook its id names") {
  Set set;
  const hookset::HookId a = set.add<Trace>(append("a"));
  const hookset::HookId b = set.add<Trace>(append("b"));
  set.add<Trace>(append("c"));
  REQUIRE(a != b);
  REQUIRE(set.remove(b));
  REQUIRE(run(set) == "d,a,c");
  REQUIRE_FALSE(set.remove(b));
  REQUIRE_FALSE(set.remove(hookset::HookId{}));
  REQUIRE(set.remove(a));
  REQUIRE(run(set) == "d,c");
  REQUIRE(set.count<Trace>() == 1);
}

TEST_CASE("hook ids are unique across sets and slots") {
  Set one;
  Set two;
  const auto x = one.add<Trace>(append("x"));
  const auto y = two.add<Trace>(append("y"));
  const auto z = one.add<Pick>([] { return 1; });
  REQUIRE(x != y);
  REQUIRE(x != z);
  REQUIRE_FALSE(one.remove(y));  // issued by another set, not held here
  REQUIRE(two.remove(y));
}

TEST_CASE("a copy has its own lists but shares the hook objects") {
  auto calls = std::make_shared<int>(0);
  Set original;
  const auto id = original.add<Trace>([calls](std::string_view, std::optional<std::string> last) {
    ++*calls;
    return *last + ",shared";
  });
  Set copy = original;
  copy.add<Trace>(append("copy-only"));
  REQUIRE(run(original) == "d,shared");
  REQUIRE(run(copy) == "d,shared,copy-only");
  REQUIRE(*calls == 2);
  REQUIRE(calls.use_count() == 2);  // the test's and one stored lambda, shared by both sets

  REQUIRE(copy.remove(id));  // ids travel with copies
  REQUIRE(run(copy) == "d,copy-only");
  REQUIRE(run(original) == "d,shared");
  REQUIRE(original.count<Trace>() == 1);
}

TEST_CASE("copy assignment and move keep the hooks") {
  Set source;
  source.add<Trace>(append("a"));
  Set assigned;
  assigned.add<Trace>(append("old"));
  assigned = source;
  REQUIRE(run(assigned) == "d,a");
  Set moved = std::move(assigned);
  REQUIRE(run(moved) == "d,a");
}

namespace {
// Counts how it is copied and moved, and records the object that was called.
struct CountingHook {
  struct Counts {
    int copies = 0;
    int moves = 0;
    const void* called = nullptr;
  };
  std::shared_ptr<Counts> counts = std::make_shared<Counts>();
  CountingHook() = default;
  CountingHook(const CountingHook& other) : counts(other.counts) { ++counts->copies; }
  CountingHook(CountingHook&& other) noexcept : counts(other.counts) { ++counts->moves; }
  std::string operator()(std::string_view, std::optional<std::string> last) const {
    counts->called = this;
    return *last + ",counted";
  }
};

struct MutableHook {
  int calls = 0;
  std::string operator()(std::string_view, std::optional<std::string> last) {
    ++calls;
    return *last + ",mutable";
  }
};
}  // namespace

TEST_CASE("an rvalue hook is moved in, never copied") {
  CountingHook hook;
  auto counts = hook.counts;
  Set set;
  set.add<Trace>(std::move(hook));
  REQUIRE(counts->copies == 0);
  REQUIRE(counts->moves == 1);
  REQUIRE(run(set) == "d,counted");
  REQUIRE(counts->copies == 0);
}

TEST_CASE("an lvalue hook is copied, the set calls its own copy") {
  CountingHook hook;
  Set set;
  set.add<Trace>(hook);
  REQUIRE(hook.counts->copies == 1);
  REQUIRE(run(set) == "d,counted");
  REQUIRE(hook.counts->called != nullptr);
  REQUIRE(hook.counts->called != &hook);
}

TEST_CASE("std::ref borrows the caller's object, called as it is") {
  MutableHook hook;
  Set set;
  set.add<Trace>(std::ref(hook));
  REQUIRE(run(set) == "d,mutable");
  REQUIRE(run(set) == "d,mutable");
  REQUIRE(hook.calls == 2);
}

TEST_CASE("a std::shared_ptr hook is shared and kept alive by the set") {
  auto hook = std::make_shared<MutableHook>();
  std::weak_ptr<MutableHook> watch = hook;
  {
    Set set;
    set.add<Trace>(hook);
    REQUIRE(hook.use_count() == 2);
    hook.reset();
    REQUIRE_FALSE(watch.expired());
    REQUIRE(run(set) == "d,mutable");
    REQUIRE(watch.lock()->calls == 1);
  }
  REQUIRE(watch.expired());
}

TEST_CASE("a null function pointer or shared_ptr is rejected at registration") {
  Set set;
  std::string (*null_function)(std::string_view, std::optional<std::string>) = nullptr;
  REQUIRE_THROWS_AS(set.add<Trace>(null_function), std::invalid_argument);
  REQUIRE_THROWS_AS(set.add<Trace>(std::shared_ptr<MutableHook>()), std::invalid_argument);
  REQUIRE(set.count<Trace>() == 0);
  REQUIRE(run(set) == "d");
}

namespace {
std::string free_function_hook(std::string_view, std::optional<std::string> last) {
  return *last + ",free";
}
}  // namespace

TEST_CASE("functions and function pointers are hooks") {
  Set set;
  set.add<Trace>(free_function_hook);
  set.add<Trace>(&free_function_hook);
  REQUIRE(run(set) == "d,free,free");
}

TEST_CASE("destroying the set releases owned hooks") {
  auto capture = std::make_shared<int>(0);
  std::weak_ptr<int> watch = capture;
  {
    Set set;
    set.add<Trace>([capture](std::string_view, std::optional<std::string> last) { return *last; });
    capture.reset();
    REQUIRE_FALSE(watch.expired());
  }
  REQUIRE(watch.expired());
}

TEST_CASE("singleton: a new hook replaces the old one with a warning naming the slot") {
  test_support::RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set set;
  REQUIRE(hookset::sync_wait(set.call<Pick>()) == -1);
  auto warnings = [&] {
    std::vector<test_support::RecordingObserver::Event> found;
    for (const auto& event : observer.events)
      if (event.kind == "warning") found.push_back(event);
    return found;
  };
  const auto first = set.add<Pick>([] { return 1; });
  REQUIRE(warnings().empty());
  set.add<Pick>([] { return 2; });
  REQUIRE(set.count<Pick>() == 1);
  REQUIRE(hookset::sync_wait(set.call<Pick>()) == 2);
  REQUIRE_FALSE(set.remove(first));
  REQUIRE(warnings().size() == 1);
  REQUIRE(warnings()[0].slot == "Pick");
  REQUIRE_THAT(warnings()[0].message, Catch::Matchers::ContainsSubstring("singleton"));
}

TEST_CASE(
    "slots of a nested set are registered, counted, called and removed through the outer set") {
  Set set;
  REQUIRE(hookset::sync_wait(set.call<Inner>(7)) == 7);
  const auto id =
      set.add<Inner>([](int x, std::optional<int> last) { return (last ? *last : 0) + x * 10; });
  set.add<Inner>([](int x, std::optional<int> last) { return (last ? *last : 0) + x; });
  REQUIRE(set.count<Inner>() == 2);
  REQUIRE(hookset::sync_wait(set.call<Inner>(2)) == 22);
  REQUIRE(set.remove(id));
  REQUIRE(hookset::sync_wait(set.call<Inner>(2)) == 2);
  STATIC_REQUIRE(Set::contains<Inner>);
  STATIC_REQUIRE(Set::contains<Trace>);
}

TEST_CASE("void slots take hooks without last and return nothing") {
  Set set;
  set.add<Ping>([](Log& log) { log.push_back("hook"); });
  Log log;
  hookset::sync_wait(set.call<Ping>(log));
  REQUIRE(log == Log{"default", "hook"});
}

TEST_CASE("a singleton registration that names another to order against throws OrderingError") {
  Set set;
  set.add<Pick>([] { return 1; }, {.name = "first"});
  CHECK_THROWS_AS(set.add<Pick>([] { return 2; }, {.name = "second", .after = {"first"}}),
                  hookset::OrderingError);
  CHECK_THROWS_AS(set.add<Pick>([] { return 3; }, {.before = {"nobody"}}), hookset::OrderingError);
  CHECK(set.count<Pick>() == 1);  // unchanged: the first still answers
  CHECK(hookset::sync_wait(set.call<Pick>()) == 1);
}
