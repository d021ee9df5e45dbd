// Dispatch modes without companions (docs/semantics.md, "Dispatch"): Always, Fallback and
// Singleton, with and without hooks, what `last` each hook sees, void slots, priorities,
// exceptions, and how arguments are bound (reference parameters, move-only values, one binding per
// dispatch).
//
// Every default and hook appends to one log, so each test checks the full sequence of calls as
// well as the result.
#include "hookset_catch.hpp"

#include "test_support.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

using test_support::calls;
using test_support::fresh_log;
using test_support::Log;
using test_support::show;

// ---- slots ------------------------------------------------------------------------------------

struct AlwaysInt : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return x;
  }
};

struct FallbackInt : hookset::Slot<int(int), hookset::Fallback> {
  static int default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return -x;
  }
};

struct SingletonInt : hookset::Slot<int(int), hookset::Singleton> {
  static int default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return -x;
  }
};

struct AlwaysVoid : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int x) { calls.push_back("default(" + std::to_string(x) + ")"); }
};

struct FallbackVoid : hookset::Slot<void(int), hookset::Fallback> {
  static void default_impl(int x) { calls.push_back("default(" + std::to_string(x) + ")"); }
};

struct SingletonVoid : hookset::Slot<void(int), hookset::Singleton> {
  static void default_impl(int x) { calls.push_back("default(" + std::to_string(x) + ")"); }
};

// Throws from the default when the argument is negative.
struct AlwaysThrowingDefault : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    if (x < 0) throw std::runtime_error("default failed");
    return x;
  }
};

// A reference parameter: hooks see (and may change) the caller's object.
struct AppendAlways : hookset::Slot<std::size_t(std::string&), hookset::Always> {
  static std::size_t default_impl(std::string& text) {
    calls.push_back("default(" + text + ")");
    text += "+d";
    return text.size();
  }
};
struct AppendFallback : hookset::Slot<std::size_t(std::string&), hookset::Fallback> {
  static std::size_t default_impl(std::string& text) {
    calls.push_back("default(" + text + ")");
    text += "+d";
    return text.size();
  }
};
struct AppendSingleton : hookset::Slot<void(std::string&), hookset::Singleton> {
  static void default_impl(std::string& text) {
    calls.push_back("default(" + text + ")");
    text += "+d";
  }
};

// A move-only value parameter. Every call records the address of the std::unique_ptr object it
// received, so the test can see that one object reaches everybody.
std::vector<const void*> seen_objects;

struct OwnsInt : hookset::Slot<int(std::unique_ptr<int>), hookset::Always> {
  static int default_impl(const std::unique_ptr<int>& p) {
    calls.push_back("default(" + std::to_string(*p) + ")");
    seen_objects.push_back(&p);
    return *p;
  }
};
struct OwnsIntFallback : hookset::Slot<int(std::unique_ptr<int>), hookset::Fallback> {
  static int default_impl(const std::unique_ptr<int>& p) {
    calls.push_back("default(" + std::to_string(*p) + ")");
    seen_objects.push_back(&p);
    return *p;
  }
};

// A move-only result type: `last` is handed on by move.
struct BoxAlways : hookset::Slot<std::unique_ptr<int>(int), hookset::Always> {
  static std::unique_ptr<int> default_impl(int x) {
    calls.push_back("default(" + std::to_string(x) + ")");
    return std::make_unique<int>(x);
  }
};

// A type that counts how it is constructed, to see how often an argument is bound.
struct Counted {
  static inline int constructions = 0;  // every constructor
  static inline int copies = 0;
  static inline int moves = 0;
  static void reset() { constructions = copies = moves = 0; }

  int value = 0;
  explicit Counted(int v) : value(v) { ++constructions; }
  Counted(const Counted& other) : value(other.value) {
    ++constructions;
    ++copies;
  }
  Counted(Counted&& other) noexcept : value(other.value) {
    ++constructions;
    ++moves;
  }
  Counted& operator=(const Counted&) = delete;
  Counted& operator=(Counted&&) = delete;
  ~Counted() = default;
};

struct CountedAlways : hookset::Slot<int(Counted), hookset::Always> {
  static int default_impl(const Counted& c) {
    calls.push_back("default(" + std::to_string(c.value) + ")");
    seen_objects.push_back(&c);
    return c.value;
  }
};
struct CountedSingleton : hookset::Slot<int(Counted), hookset::Singleton> {
  static int default_impl(const Counted& c) { return c.value; }
};
struct CountedFallbackVoid : hookset::Slot<void(Counted), hookset::Fallback> {
  static void default_impl(const Counted&) { calls.push_back("default"); }
};

using Set = hookset::HookSet<AlwaysInt, FallbackInt, SingletonInt, AlwaysVoid, FallbackVoid,
                             SingletonVoid, AlwaysThrowingDefault, AppendAlways, AppendFallback,
                             AppendSingleton, OwnsInt, OwnsIntFallback, BoxAlways, CountedAlways,
                             CountedSingleton, CountedFallbackVoid>;

// ---- hooks ------------------------------------------------------------------------------------

// Hooks for an int(int) slot: test_support::fold_hook ("name(x, last=...)", returns last*10 + tag)
// and test_support::plain_hook ("name(x)", returns a fixed output).
using test_support::fold_hook;
using test_support::plain_hook;

auto void_hook(std::string name) {
  return [name](int x) { calls.push_back(name + "(" + std::to_string(x) + ")"); };
}

// A fold hook that throws when called.
auto throwing_fold_hook(std::string name) {
  return [name](int x, std::optional<int> last) -> int {
    calls.push_back(name + "(" + std::to_string(x) + ", last=" + show(last) + ")");
    throw std::runtime_error(name + " failed");
  };
}

struct WarningRecorder : hookset::Observer {
  std::vector<std::pair<std::string, std::string>> warnings;
  void on_warning(std::string_view slot, std::string_view message) override {
    warnings.emplace_back(std::string(slot), std::string(message));
  }
};

using test_support::ScopedObserver;

}  // namespace

using hookset::Priority;
using hookset::sync_wait;

// ================================================================================================
// Always
// ================================================================================================

TEST_CASE("Always without hooks returns the default's output") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<AlwaysInt>(7)) == 7);
  REQUIRE(log == Log{"default(7)"});
}

TEST_CASE(
    "Always with one hook: the hook gets last = the default's output, and its output is the "
    "result") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysInt>(fold_hook("h1", 1));
  REQUIRE(sync_wait(set.call<AlwaysInt>(4)) == 41);
  REQUIRE(log == Log{"default(4)", "h1(4, last=4)"});
}

TEST_CASE("Always with hooks folds: default first, each hook gets the previous output as last") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysInt>(fold_hook("h1", 1));
  set.add<AlwaysInt>(fold_hook("h2", 2));
  set.add<AlwaysInt>(fold_hook("h3", 3));
  REQUIRE(sync_wait(set.call<AlwaysInt>(5)) == 5123);
  REQUIRE(log == Log{"default(5)", "h1(5, last=5)", "h2(5, last=51)", "h3(5, last=512)"});
}

TEST_CASE(
    "Always: a hook may ignore last and replace the result, later hooks see the replacement") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysInt>([](int x, std::optional<int> last) {
    calls.push_back("reset(" + std::to_string(x) + ", last=" + show(last) + ")");
    return 100;
  });
  set.add<AlwaysInt>(fold_hook("h2", 2));
  REQUIRE(sync_wait(set.call<AlwaysInt>(9)) == 1002);
  REQUIRE(log == Log{"default(9)", "reset(9, last=9)", "h2(9, last=100)"});
}

TEST_CASE("Always: a move-only result type is handed from hook to hook as last") {
  Log& log = fresh_log();
  Set set;
  set.add<BoxAlways>([](int x, std::optional<std::unique_ptr<int>> last) {
    calls.push_back("h1(" + std::to_string(x) + ", last=" + std::to_string(**last) + ")");
    *last.value() += 1;
    return std::move(*last);
  });
  set.add<BoxAlways>([](int x, std::optional<std::unique_ptr<int>> last) {
    calls.push_back("h2(" + std::to_string(x) + ", last=" + std::to_string(**last) + ")");
    return std::make_unique<int>(**last * 2);
  });
  const std::unique_ptr<int> result = sync_wait(set.call<BoxAlways>(3));
  REQUIRE(result != nullptr);
  REQUIRE(*result == 8);
  REQUIRE(log == Log{"default(3)", "h1(3, last=3)", "h2(3, last=4)"});
}

// ================================================================================================
// Fallback
// ================================================================================================

TEST_CASE("Fallback without hooks returns the default's output") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<FallbackInt>(7)) == -7);
  REQUIRE(log == Log{"default(7)"});
}

TEST_CASE("Fallback with one hook: the default never runs, the hook gets last = nullopt") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackInt>(fold_hook("h1", 1));
  REQUIRE(sync_wait(set.call<FallbackInt>(4)) == 1);
  REQUIRE(log == Log{"h1(4, last=nullopt)"});
}

TEST_CASE(
    "Fallback with hooks: first hook gets nullopt, each next one the previous output, no default") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackInt>(fold_hook("h1", 1));
  set.add<FallbackInt>(fold_hook("h2", 2));
  set.add<FallbackInt>(fold_hook("h3", 3));
  REQUIRE(sync_wait(set.call<FallbackInt>(5)) == 123);
  REQUIRE(log == Log{"h1(5, last=nullopt)", "h2(5, last=1)", "h3(5, last=12)"});
}

TEST_CASE("Fallback: removing the only hook brings the default back") {
  Log& log = fresh_log();
  Set set;
  const hookset::HookId id = set.add<FallbackInt>(fold_hook("h1", 1));
  REQUIRE(sync_wait(set.call<FallbackInt>(2)) == 1);
  REQUIRE(set.remove(id));
  REQUIRE(set.count<FallbackInt>() == 0);
  REQUIRE(sync_wait(set.call<FallbackInt>(3)) == -3);
  REQUIRE(log == Log{"h1(2, last=nullopt)", "default(3)"});
}

// ================================================================================================
// Singleton
// ================================================================================================

TEST_CASE("Singleton without hooks returns the default's output") {
  Log& log = fresh_log();
  const Set set;
  REQUIRE(sync_wait(set.call<SingletonInt>(6)) == -6);
  REQUIRE(log == Log{"default(6)"});
}

TEST_CASE("Singleton with a hook: the hook replaces the default and takes no last") {
  Log& log = fresh_log();
  Set set;
  set.add<SingletonInt>(plain_hook("only", 42));
  REQUIRE(set.count<SingletonInt>() == 1);
  REQUIRE(sync_wait(set.call<SingletonInt>(6)) == 42);
  REQUIRE(log == Log{"only(6)"});
}

TEST_CASE(
    "Singleton: registering a second hook replaces the first, count stays 1, a warning names the "
    "slot") {
  Log& log = fresh_log();
  WarningRecorder recorder;
  ScopedObserver scoped(&recorder);
  Set set;
  set.add<SingletonInt>(plain_hook("first", 1));
  REQUIRE(recorder.warnings.empty());  // nothing replaced yet
  set.add<SingletonInt>(plain_hook("second", 2));
  REQUIRE(set.count<SingletonInt>() == 1);
  REQUIRE(recorder.warnings.size() == 1);
  REQUIRE(recorder.warnings[0].first == "SingletonInt");
  REQUIRE(sync_wait(set.call<SingletonInt>(3)) == 2);
  REQUIRE(log == Log{"second(3)"});

  set.add<SingletonInt>(plain_hook("third", 3));
  REQUIRE(set.count<SingletonInt>() == 1);
  REQUIRE(recorder.warnings.size() == 2);
  REQUIRE(sync_wait(set.call<SingletonInt>(4)) == 3);
  REQUIRE(log == Log{"second(3)", "third(4)"});
}

TEST_CASE(
    "Singleton: the replaced hook's id no longer removes anything, removing the current one "
    "restores the default") {
  Log& log = fresh_log();
  Set set;
  const hookset::HookId first = set.add<SingletonInt>(plain_hook("first", 1));
  const hookset::HookId second = set.add<SingletonInt>(plain_hook("second", 2));
  REQUIRE_FALSE(set.remove(first));
  REQUIRE(set.count<SingletonInt>() == 1);
  REQUIRE(sync_wait(set.call<SingletonInt>(1)) == 2);
  REQUIRE(set.remove(second));
  REQUIRE(set.count<SingletonInt>() == 0);
  REQUIRE(sync_wait(set.call<SingletonInt>(5)) == -5);
  REQUIRE(log == Log{"second(1)", "default(5)"});
}

// ================================================================================================
// void slots
// ================================================================================================

TEST_CASE("Always void without hooks runs the default") {
  Log& log = fresh_log();
  const Set set;
  sync_wait(set.call<AlwaysVoid>(1));
  REQUIRE(log == Log{"default(1)"});
}

TEST_CASE("Always void runs the default, then every hook in order") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysVoid>(void_hook("h1"));
  set.add<AlwaysVoid>(void_hook("h2"));
  set.add<AlwaysVoid>(void_hook("h3"));
  sync_wait(set.call<AlwaysVoid>(2));
  REQUIRE(log == Log{"default(2)", "h1(2)", "h2(2)", "h3(2)"});
}

TEST_CASE("Fallback void without hooks runs the default") {
  Log& log = fresh_log();
  const Set set;
  sync_wait(set.call<FallbackVoid>(3));
  REQUIRE(log == Log{"default(3)"});
}

TEST_CASE("Fallback void with hooks runs every hook and never the default") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackVoid>(void_hook("h1"));
  set.add<FallbackVoid>(void_hook("h2"));
  sync_wait(set.call<FallbackVoid>(4));
  REQUIRE(log == Log{"h1(4)", "h2(4)"});
}

TEST_CASE("Singleton void: the default without a hook, only the newest hook with one") {
  Log& log = fresh_log();
  Set set;
  sync_wait(set.call<SingletonVoid>(1));
  set.add<SingletonVoid>(void_hook("first"));
  sync_wait(set.call<SingletonVoid>(2));
  set.add<SingletonVoid>(void_hook("second"));
  sync_wait(set.call<SingletonVoid>(3));
  REQUIRE(set.count<SingletonVoid>() == 1);
  REQUIRE(log == Log{"default(1)", "first(2)", "second(3)"});
}

// ================================================================================================
// Priorities
// ================================================================================================

TEST_CASE("Always: lower priority runs earlier, ties keep registration order, negatives go first") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysInt>(fold_hook("p5a", 1), Priority{5});
  set.add<AlwaysInt>(fold_hook("p0a", 2));  // default priority is 0
  set.add<AlwaysInt>(fold_hook("m7", 3), Priority{-7});
  set.add<AlwaysInt>(fold_hook("p0b", 4), Priority{0});
  set.add<AlwaysInt>(fold_hook("m1", 5), Priority{-1});
  set.add<AlwaysInt>(fold_hook("p5b", 6), Priority{5});
  set.add<AlwaysInt>(fold_hook("m7b", 7), Priority{-7});
  REQUIRE(sync_wait(set.call<AlwaysInt>(0)) == 3752416);
  REQUIRE(log == Log{"default(0)", "m7(0, last=0)", "m7b(0, last=3)", "m1(0, last=37)",
                     "p0a(0, last=375)", "p0b(0, last=3752)", "p5a(0, last=37524)",
                     "p5b(0, last=375241)"});
}

TEST_CASE("Fallback: the earliest hook by priority is the one that gets last = nullopt") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackInt>(fold_hook("late", 1), Priority{10});
  set.add<FallbackInt>(fold_hook("early", 2), Priority{-10});
  REQUIRE(sync_wait(set.call<FallbackInt>(1)) == 21);
  REQUIRE(log == Log{"early(1, last=nullopt)", "late(1, last=2)"});
}

TEST_CASE("void slot: hooks run by priority, the Always default still runs first") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysVoid>(void_hook("p1"), Priority{1});
  set.add<AlwaysVoid>(void_hook("m1"), Priority{-1});
  set.add<AlwaysVoid>(void_hook("p0"));
  sync_wait(set.call<AlwaysVoid>(8));
  REQUIRE(log == Log{"default(8)", "m1(8)", "p0(8)", "p1(8)"});
}

TEST_CASE("extreme priorities order correctly") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysVoid>(void_hook("max"), Priority{std::numeric_limits<int>::max()});
  set.add<AlwaysVoid>(void_hook("min"), Priority{std::numeric_limits<int>::min()});
  set.add<AlwaysVoid>(void_hook("zero"));
  sync_wait(set.call<AlwaysVoid>(0));
  REQUIRE(log == Log{"default(0)", "min(0)", "zero(0)", "max(0)"});
}

// ================================================================================================
// Exceptions
// ================================================================================================

TEST_CASE(
    "an exception from the default propagates out of sync_wait, no hook runs, the set stays "
    "usable") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysThrowingDefault>(fold_hook("h1", 1));
  REQUIRE_THROWS_WITH(sync_wait(set.call<AlwaysThrowingDefault>(-1)), "default failed");
  REQUIRE(log == Log{"default(-1)"});
  REQUIRE(set.count<AlwaysThrowingDefault>() == 1);

  // The next dispatch is complete and correct.
  REQUIRE(sync_wait(set.call<AlwaysThrowingDefault>(2)) == 21);
  REQUIRE(log == Log{"default(-1)", "default(2)", "h1(2, last=2)"});
}

TEST_CASE(
    "Always: an exception from hook k propagates, later hooks do not run, the set stays usable") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysInt>(fold_hook("h1", 1));
  const hookset::HookId bad = set.add<AlwaysInt>(throwing_fold_hook("h2"));
  set.add<AlwaysInt>(fold_hook("h3", 3));
  REQUIRE_THROWS_WITH(sync_wait(set.call<AlwaysInt>(1)), "h2 failed");
  REQUIRE(log == Log{"default(1)", "h1(1, last=1)", "h2(1, last=11)"});
  REQUIRE(set.count<AlwaysInt>() == 3);

  // Unchanged: the same failure again, in full.
  fresh_log();
  REQUIRE_THROWS_WITH(sync_wait(set.call<AlwaysInt>(2)), "h2 failed");
  REQUIRE(log == Log{"default(2)", "h1(2, last=2)", "h2(2, last=21)"});

  // Without the throwing hook, everything runs.
  fresh_log();
  REQUIRE(set.remove(bad));
  REQUIRE(sync_wait(set.call<AlwaysInt>(3)) == 313);
  REQUIRE(log == Log{"default(3)", "h1(3, last=3)", "h3(3, last=31)"});
}

TEST_CASE(
    "Fallback: an exception from the first hook propagates, the rest do not run, the default never "
    "runs") {
  Log& log = fresh_log();
  Set set;
  set.add<FallbackInt>(throwing_fold_hook("h1"));
  set.add<FallbackInt>(fold_hook("h2", 2));
  REQUIRE_THROWS_AS(sync_wait(set.call<FallbackInt>(1)), std::runtime_error);
  REQUIRE(log == Log{"h1(1, last=nullopt)"});
  REQUIRE(set.count<FallbackInt>() == 2);
}

TEST_CASE("Singleton: an exception from the hook propagates and the default does not run instead") {
  Log& log = fresh_log();
  Set set;
  set.add<SingletonInt>([](int x) -> int {
    calls.push_back("only(" + std::to_string(x) + ")");
    throw std::invalid_argument("singleton failed");
  });
  REQUIRE_THROWS_AS(sync_wait(set.call<SingletonInt>(1)), std::invalid_argument);
  REQUIRE(log == Log{"only(1)"});
}

TEST_CASE("void slot: an exception from a hook stops the remaining hooks") {
  Log& log = fresh_log();
  Set set;
  set.add<AlwaysVoid>(void_hook("h1"));
  set.add<AlwaysVoid>([](int x) {
    calls.push_back("h2(" + std::to_string(x) + ")");
    throw std::runtime_error("h2 failed");
  });
  set.add<AlwaysVoid>(void_hook("h3"));
  REQUIRE_THROWS_WITH(sync_wait(set.call<AlwaysVoid>(5)), "h2 failed");
  REQUIRE(log == Log{"default(5)", "h1(5)", "h2(5)"});
}

// ================================================================================================
// Arguments
// ================================================================================================

TEST_CASE("a reference parameter binds the caller's object: default and hooks see and change it") {
  Log& log = fresh_log();
  Set set;
  set.add<AppendAlways>([](std::string& text, std::optional<std::size_t> last) {
    calls.push_back("h1(" + text + ", last=" + std::to_string(*last) + ")");
    text += "+h1";
    return text.size();
  });
  set.add<AppendAlways>([](std::string& text, std::optional<std::size_t> last) {
    calls.push_back("h2(" + text + ", last=" + std::to_string(*last) + ")");
    text += "+h2";
    return *last + 100;
  });
  std::string text = "x";
  const std::size_t result = sync_wait(set.call<AppendAlways>(text));
  REQUIRE(text == "x+d+h1+h2");
  REQUIRE(result == 106);  // h1 returned len("x+d+h1") = 6, h2 added 100
  REQUIRE(log == Log{"default(x)", "h1(x+d, last=3)", "h2(x+d+h1, last=6)"});
}

TEST_CASE(
    "a reference parameter in Fallback and Singleton slots reaches the hooks as the caller's "
    "object") {
  Log& log = fresh_log();
  Set set;
  const std::string* seen = nullptr;
  set.add<AppendFallback>([&seen](std::string& text, std::optional<std::size_t> last) {
    calls.push_back("fb(" + text + ", last=" + show(last) + ")");
    seen = &text;
    text += "+fb";
    return text.size();
  });
  set.add<AppendSingleton>([](std::string& text) {
    calls.push_back("single(" + text + ")");
    text += "+s";
  });
  std::string text = "y";
  REQUIRE(sync_wait(set.call<AppendFallback>(text)) == 4);
  REQUIRE(seen == &text);
  sync_wait(set.call<AppendSingleton>(text));
  REQUIRE(text == "y+fb+s");
  REQUIRE(log == Log{"fb(y, last=nullopt)", "single(y+fb)"});
}

TEST_CASE("a move-only value parameter: one object reaches the default and every hook") {
  Log& log = fresh_log();
  seen_objects.clear();
  Set set;
  std::vector<const int*> pointees;
  set.add<OwnsInt>([&pointees](const std::unique_ptr<int>& p, std::optional<int> last) {
    calls.push_back("h1(" + std::to_string(*p) + ", last=" + show(last) + ")");
    seen_objects.push_back(&p);
    pointees.push_back(p.get());
    return *last + 1;
  });
  set.add<OwnsInt>([&pointees](const std::unique_ptr<int>& p, std::optional<int> last) {
    calls.push_back("h2(" + std::to_string(*p) + ", last=" + show(last) + ")");
    seen_objects.push_back(&p);
    pointees.push_back(p.get());
    return *last * 2;
  });

  auto owned = std::make_unique<int>(20);
  const int* const original = owned.get();
  REQUIRE(sync_wait(set.call<OwnsInt>(std::move(owned))) == 42);
  REQUIRE(owned == nullptr);  // moved into the dispatch
  REQUIRE(log == Log{"default(20)", "h1(20, last=20)", "h2(20, last=21)"});
  REQUIRE(seen_objects.size() == 3);
  REQUIRE(seen_objects[0] == seen_objects[1]);
  REQUIRE(seen_objects[1] == seen_objects[2]);
  REQUIRE(pointees == std::vector<const int*>{original, original});
}

TEST_CASE("a move-only value parameter works in a Fallback slot, with and without hooks") {
  Log& log = fresh_log();
  seen_objects.clear();
  Set set;
  REQUIRE(sync_wait(set.call<OwnsIntFallback>(std::make_unique<int>(3))) == 3);
  set.add<OwnsIntFallback>([](const std::unique_ptr<int>& p, std::optional<int> last) {
    calls.push_back("h1(" + std::to_string(*p) + ", last=" + show(last) + ")");
    seen_objects.push_back(&p);
    return *p * 10;
  });
  set.add<OwnsIntFallback>([](const std::unique_ptr<int>& p, std::optional<int> last) {
    calls.push_back("h2(" + std::to_string(*p) + ", last=" + show(last) + ")");
    seen_objects.push_back(&p);
    return *last + 1;
  });
  REQUIRE(sync_wait(set.call<OwnsIntFallback>(std::make_unique<int>(4))) == 41);
  REQUIRE(log == Log{"default(3)", "h1(4, last=nullopt)", "h2(4, last=40)"});
  REQUIRE(seen_objects.size() == 3);
  REQUIRE(seen_objects[1] == seen_objects[2]);
}

TEST_CASE("an lvalue argument is copied exactly once into the dispatch, however many hooks run") {
  Log& log = fresh_log();
  seen_objects.clear();
  Set set;
  for (int i = 1; i <= 4; ++i) {
    set.add<CountedAlways>([i](const Counted& c, std::optional<int> last) {
      calls.push_back("h" + std::to_string(i) + "(" + std::to_string(c.value) + ")");
      seen_objects.push_back(&c);
      return *last + i;
    });
  }
  const Counted argument(5);
  Counted::reset();
  REQUIRE(sync_wait(set.call<CountedAlways>(argument)) == 15);
  REQUIRE(Counted::copies == 1);
  REQUIRE(Counted::moves == 0);
  REQUIRE(Counted::constructions == 1);
  REQUIRE(log == Log{"default(5)", "h1(5)", "h2(5)", "h3(5)", "h4(5)"});
  REQUIRE(seen_objects.size() == 5);
  for (const void* object : seen_objects) REQUIRE(object == seen_objects.front());
  REQUIRE(seen_objects.front() != &argument);  // a value parameter is the dispatch's own copy
}

TEST_CASE("an rvalue argument is moved exactly once into the dispatch and never copied") {
  fresh_log();
  Set set;
  set.add<CountedAlways>([](const Counted& c, std::optional<int> last) { return *last + c.value; });
  set.add<CountedAlways>([](const Counted& c, std::optional<int> last) { return *last + c.value; });
  Counted argument(2);
  Counted::reset();
  REQUIRE(sync_wait(set.call<CountedAlways>(std::move(argument))) == 6);
  REQUIRE(Counted::copies == 0);
  REQUIRE(Counted::moves == 1);
  REQUIRE(Counted::constructions == 1);
}

TEST_CASE("an argument convertible to a value parameter is constructed once in place") {
  fresh_log();
  struct Convertible {
    operator Counted() const { return Counted(9); }  // NOLINT: implicit on purpose
  };
  Set set;
  set.add<CountedSingleton>([](const Counted& c) { return c.value * 2; });
  Counted::reset();
  REQUIRE(sync_wait(set.call<CountedSingleton>(Convertible{})) == 18);
  REQUIRE(Counted::copies == 0);
  REQUIRE(Counted::constructions <= 2);  // the conversion, at most one move into place
  REQUIRE(Counted::constructions == 1 + Counted::moves);
}

TEST_CASE(
    "a hook may take a copyable value parameter by value: only that hook's own copy is made") {
  Log& log = fresh_log();
  Set set;
  set.add<CountedFallbackVoid>(
      [](Counted c) { calls.push_back("by-value(" + std::to_string(c.value) + ")"); });
  set.add<CountedFallbackVoid>(
      [](const Counted& c) { calls.push_back("by-ref(" + std::to_string(c.value) + ")"); });
  Counted argument(1);
  Counted::reset();
  sync_wait(set.call<CountedFallbackVoid>(argument));
  REQUIRE(Counted::copies == 2);  // one binding + one for the by-value hook
  REQUIRE(Counted::moves == 0);
  REQUIRE(log == Log{"by-value(1)", "by-ref(1)"});
}
