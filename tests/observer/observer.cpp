// The process-wide observer: warnings and dispatch tracing.
#include "hookset_catch.hpp"

#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {
struct Step : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Label : hookset::Slot<int(), hookset::Singleton> {
  static constexpr std::string_view name = "custom.label";
  static int default_impl() { return 0; }
};
using Set = hookset::HookSet<Step, Label>;
using test_support::RecordingObserver;
}  // namespace

TEST_CASE("set_observer returns the previous observer, nullptr uninstalls") {
  RecordingObserver first;
  RecordingObserver second;
  hookset::Observer* before = hookset::set_observer(&first);
  REQUIRE(hookset::set_observer(&second) == &first);
  REQUIRE(hookset::set_observer(nullptr) == &second);
  REQUIRE(hookset::set_observer(before) == nullptr);
}

TEST_CASE("each dispatch reports begin and end with one id, the hooks run and no error") {
  RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set set;
  set.add<Step>([](int, std::optional<int> last) { return *last + 1; });
  set.add<Step>([](int, std::optional<int> last) { return *last + 1; });
  REQUIRE(hookset::sync_wait(set.call<Step>(1)) == 3);
  REQUIRE(hookset::sync_wait(set.call<Label>()) == 0);

  REQUIRE(observer.events.size() == 4);
  REQUIRE(observer.events[0].kind == "begin");
  REQUIRE(observer.events[0].slot == "Step");
  REQUIRE(observer.events[1].kind == "end");
  REQUIRE(observer.events[1].id == observer.events[0].id);
  REQUIRE(observer.events[1].hooks_run == 2);
  REQUIRE_FALSE(observer.events[1].failed);
  REQUIRE(observer.events[2].slot == "custom.label");
  REQUIRE(observer.events[3].hooks_run == 0);
  REQUIRE(observer.events[2].id != observer.events[0].id);
}

TEST_CASE("a failing dispatch reports its error and counts the hook that threw") {
  RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set set;
  set.add<Step>([](int, std::optional<int> last) { return *last; });
  set.add<Step>([](int, std::optional<int>) -> int { throw std::runtime_error("boom"); });
  set.add<Step>([](int, std::optional<int> last) { return *last; });
  REQUIRE_THROWS(hookset::sync_wait(set.call<Step>(1)));
  REQUIRE(observer.events.size() == 2);
  REQUIRE(observer.events[1].kind == "end");
  REQUIRE(observer.events[1].failed);
  REQUIRE(observer.events[1].hooks_run == 2);
}

TEST_CASE("a suspended dispatch reports its end when it completes") {
  RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set set;
  test_support::ManualEvent gate;
  set.add<Step>([&gate](int, std::optional<int> last) -> hookset::Task<int> {
    co_await gate;
    co_return *last + 1;
  });
  test_support::Outcome<int> out;
  test_support::detach(set.call<Step>(1), out);
  REQUIRE(observer.events.size() == 1);
  REQUIRE(observer.events[0].kind == "begin");
  gate.fire();
  REQUIRE(out.value == 2);
  REQUIRE(observer.events.size() == 2);
  REQUIRE(observer.events[1].kind == "end");
  REQUIRE(observer.events[1].hooks_run == 1);
}

TEST_CASE("the end goes only to the observer that saw the begin, while it is installed") {
  RecordingObserver first;
  RecordingObserver second;
  test_support::ScopedObserver installed(&first);
  Set set;
  test_support::ManualEvent gate;
  set.add<Step>([&gate](int, std::optional<int> last) -> hookset::Task<int> {
    co_await gate;
    co_return *last;
  });
  test_support::Outcome<int> out;
  test_support::detach(set.call<Step>(1), out);
  hookset::set_observer(&second);
  gate.fire();
  REQUIRE(out.done);
  REQUIRE(first.events.size() == 1);  // begin only
  REQUIRE(second.events.empty());     // never saw the begin
}

TEST_CASE("no observer installed: dispatches report nothing") {
  RecordingObserver observer;
  { test_support::ScopedObserver installed(&observer); }
  Set set;
  REQUIRE(hookset::sync_wait(set.call<Step>(1)) == 1);
  REQUIRE(observer.events.empty());
}

TEST_CASE("ClogObserver writes warnings to std::clog") {
  hookset::ClogObserver clog_observer;
  test_support::ScopedObserver installed(&clog_observer);
  std::ostringstream captured;
  auto* previous = std::clog.rdbuf(captured.rdbuf());
  Set set;
  set.add<Label>([] { return 1; });
  set.add<Label>([] { return 2; });
  std::clog.rdbuf(previous);
  REQUIRE_THAT(captured.str(), Catch::Matchers::ContainsSubstring("custom.label"));
  REQUIRE_THAT(captured.str(), Catch::Matchers::ContainsSubstring("singleton hook replaced"));
}

TEST_CASE("hookset::ScopedObserver installs for one scope and restores the previous observer") {
  hookset::Observer outer, inner;
  const hookset::ScopedObserver keep_outer(&outer);
  try {
    const hookset::ScopedObserver keep_inner(&inner);
    REQUIRE(hookset::detail::current_observer() == &inner);
    throw std::runtime_error("leaving the scope early");
  } catch (const std::runtime_error&) {
  }
  REQUIRE(hookset::detail::current_observer() == &outer);
}
