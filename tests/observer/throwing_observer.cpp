// An observer never changes an outcome: whatever its callbacks throw, a registration, an extend
// or a dispatch ends exactly as it would without it, and the set is what that outcome says.
#include "hookset_catch.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {
struct Label : hookset::Slot<int(), hookset::Singleton> {
  static int default_impl() { return 0; }
};
struct Step : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
// Breaks on outputs of at least `limit`: which instance the set holds shows in the result.
struct AtLeast {
  int limit = 1000;
  hookset::Flow operator()(const int& output) const {
    return output >= limit ? hookset::Flow::Break : hookset::Flow::Continue;
  }
};
struct Gate : hookset::Slot<int(int), hookset::Always, hookset::Chain<AtLeast>> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Label, Step, Gate>;

// Counts its callbacks, then throws from each of them (on_dispatch_begin aside: the engine does
// not yet call it through detail::notify).
struct ThrowingObserver : hookset::Observer {
  int warnings = 0;
  int ends = 0;
  int hook_events = 0;
  void on_warning(std::string_view, std::string_view) override {
    ++warnings;
    throw std::runtime_error("observer: on_warning");
  }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t, std::exception_ptr) override {
    ++ends;
    throw std::runtime_error("observer: on_dispatch_end");
  }
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const hookset::HookEvent&) override {
    ++hook_events;
    throw std::runtime_error("observer: on_hook_begin");
  }
  void on_hook_end(const hookset::HookEvent&) override {
    ++hook_events;
    throw std::runtime_error("observer: on_hook_end");
  }
};

enum class Installed { process_wide, per_set };

// Installs `observer` where `where` says, for the lifetime of this object.
class Watch {
 public:
  Watch(Installed where, hookset::Observer& observer, Set& set)
      : scoped_(where == Installed::process_wide ? &observer : nullptr) {
    if (where == Installed::per_set) set.set_observer(&observer);
  }

 private:
  hookset::ScopedObserver scoped_;
};
}  // namespace

TEST_CASE("replacing a singleton hook succeeds although the observer throws from on_warning") {
  const Installed where = GENERATE(Installed::process_wide, Installed::per_set);
  ThrowingObserver observer;
  Set set;
  const Watch watch(where, observer, set);

  const hookset::HookId first = set.add<Label>([] { return 1; });
  REQUIRE(observer.warnings == 0);
  hookset::HookId second;
  REQUIRE_NOTHROW(second = set.add<Label>([] { return 2; }));
  REQUIRE(observer.warnings == 1);  // the warning was made, and what it threw was dropped
  REQUIRE(set.count<Label>() == 1);
  REQUIRE(hookset::sync_wait(set.call<Label>()) == 2);
  REQUIRE_FALSE(set.remove(first));
  REQUIRE(set.remove(second));
  REQUIRE(hookset::sync_wait(set.call<Label>()) == 0);
}

TEST_CASE(
    "extend replacing a singleton hook and a companion succeeds although the observer throws") {
  const Installed where = GENERATE(Installed::process_wide, Installed::per_set);
  ThrowingObserver observer;
  Set mine;
  Set theirs;
  const Watch watch(where, observer, mine);

  mine.add<Label>([] { return 1; });
  mine.add<Gate>([](int x) { return x + 10; });
  mine.configure<Gate>(AtLeast{1});  // the default's output breaks: no hook runs
  REQUIRE(hookset::sync_wait(mine.call<Gate>(3)) == 3);
  theirs.add<Label>([] { return 2; });
  theirs.configure<Gate>(AtLeast{1000});
  const int warnings_before = observer.warnings;

  REQUIRE_NOTHROW(mine.extend(theirs));
  REQUIRE(observer.warnings == warnings_before + 2);  // the singleton, the companion
  REQUIRE(hookset::sync_wait(mine.call<Label>()) == 2);
  REQUIRE(hookset::sync_wait(mine.call<Gate>(3)) == 13);  // their companion lets the hook run
}

TEST_CASE("a dispatch ends as it would unobserved although the observer throws from every event") {
  const Installed where = GENERATE(Installed::process_wide, Installed::per_set);
  ThrowingObserver observer;
  Set set;
  set.add<Step>([](int, std::optional<int> last) { return *last + 1; });
  set.add<Step>([](int, std::optional<int>) -> int { throw std::runtime_error("hook failed"); },
                {.name = "flaky", .on_failure = hookset::FailOpen});
  set.add<Step>([](int, std::optional<int> last) { return *last * 10; });
  const int unobserved = hookset::sync_wait(set.call<Step>(1));
  REQUIRE(unobserved == 20);

  const Watch watch(where, observer, set);
  REQUIRE(hookset::sync_wait(set.call<Step>(1)) == unobserved);
  REQUIRE(observer.warnings == 1);     // the fail-open skip
  REQUIRE(observer.ends == 1);         // on_dispatch_end
  REQUIRE(observer.hook_events == 6);  // begin and end of each of the three hooks

  set.add<Step>(
      [](int, std::optional<int>) -> int { throw std::logic_error("fails the dispatch"); });
  REQUIRE_THROWS_AS(hookset::sync_wait(set.call<Step>(1)), std::logic_error);
  REQUIRE(observer.ends == 2);
}
