// extend / with_extended: merging another set of the same type.
#include "hookset_catch.hpp"

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

namespace {
struct Trace : hookset::Slot<std::string(), hookset::Always> {
  static std::string default_impl() { return "d"; }
};
struct Pick : hookset::Slot<int(), hookset::Singleton> {
  static int default_impl() { return 0; }
};
struct Suffix {
  std::string suffix = "!";
  std::string operator()(std::string s) const { return s + suffix; }
};
struct Shout : hookset::Slot<std::string(), hookset::Always, hookset::Finalize<Suffix>> {
  static std::string default_impl() { return "d"; }
};
struct Nested : hookset::Slot<std::string(), hookset::Always> {
  static std::string default_impl() { return "n"; }
};
using Set = hookset::HookSet<Trace, Pick, Shout, hookset::HookSet<Nested>>;

auto append(std::string name) {
  return [name](std::optional<std::string> last) { return *last + "," + name; };
}
template <class S>
auto run(const Set& set) {
  return hookset::sync_wait(set.call<S>());
}

std::vector<std::string> warnings_of(const test_support::RecordingObserver& observer) {
  std::vector<std::string> found;
  for (const auto& e : observer.events)
    if (e.kind == "warning") found.push_back(e.slot + ": " + e.message);
  return found;
}
}  // namespace

TEST_CASE("extend merges by priority, after this set's hooks of equal priority, keeping order") {
  Set a;
  a.add<Trace>(append("a0"));
  a.add<Trace>(append("a5"), hookset::Priority{5});
  Set b;
  b.add<Trace>(append("b0-1"));
  b.add<Trace>(append("b-1"), hookset::Priority{-1});
  b.add<Trace>(append("b0-2"));
  b.add<Trace>(append("b9"), hookset::Priority{9});
  a.extend(b);
  REQUIRE(run<Trace>(a) == "d,b-1,a0,b0-1,b0-2,a5,b9");
  REQUIRE(run<Trace>(b) == "d,b-1,b0-1,b0-2,b9");  // the source is unchanged
}

TEST_CASE("extended hooks keep their ids") {
  Set a;
  Set b;
  const auto id = b.add<Trace>(append("b"));
  a.extend(b);
  REQUIRE(a.remove(id));
  REQUIRE(run<Trace>(a) == "d");
  REQUIRE(run<Trace>(b) == "d,b");
}

TEST_CASE("a singleton hook in the other set replaces this one's, with a warning") {
  test_support::RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set a;
  a.add<Pick>([] { return 1; });
  Set b;
  b.add<Pick>([] { return 2; });
  Set empty;
  a.extend(empty);
  REQUIRE(run<Pick>(a) == 1);
  REQUIRE(warnings_of(observer).empty());
  a.extend(b);
  REQUIRE(run<Pick>(a) == 2);
  REQUIRE(a.count<Pick>() == 1);
  REQUIRE(warnings_of(observer) ==
          std::vector<std::string>{"Pick: singleton hook replaced by extend"});
}

TEST_CASE("a configured companion in the other set replaces this one's, with a warning") {
  test_support::RecordingObserver observer;
  test_support::ScopedObserver installed(&observer);
  Set a;
  a.configure<Shout>(Suffix{"?"});
  REQUIRE(run<Shout>(a) == "d?");
  Set b;
  a.extend(b);  // nothing configured in b: a keeps its own
  REQUIRE(run<Shout>(a) == "d?");
  REQUIRE(warnings_of(observer).empty());
  b.configure<Shout>(Suffix{"!!"});
  a.extend(b);
  REQUIRE(run<Shout>(a) == "d!!");
  REQUIRE(warnings_of(observer) ==
          std::vector<std::string>{"Shout: configured companion replaced by extend"});
}

TEST_CASE("nested sets are extended recursively") {
  Set a;
  a.add<Nested>(append("a"));
  Set b;
  b.add<Nested>(append("b"));
  a.extend(b);
  REQUIRE(run<Nested>(a) == "n,a,b");
}

TEST_CASE("a set extended with itself doubles its hooks") {
  Set a;
  a.add<Trace>(append("x"));
  a.add<Trace>(append("y"), hookset::Priority{1});
  a.extend(a);
  REQUIRE(run<Trace>(a) == "d,x,x,y,y");
}

TEST_CASE("with_extended composes in one expression") {
  Set tenant;
  tenant.add<Trace>(append("tenant"));
  const Set app = Set{}.with<Trace>(append("base")).with_extended(tenant);
  REQUIRE(run<Trace>(app) == "d,base,tenant");
}

TEST_CASE("nested<N>() is the nested set itself: changes through it are seen by the outer set") {
  using Inner = hookset::HookSet<Nested>;
  Set app;
  Inner& inner = app.nested<Inner>();
  inner.add<Nested>(append("via-inner"));
  REQUIRE(run<Nested>(app) == "n,via-inner");

  // A standalone Inner (a subsystem's own set) merged into the application's part.
  Inner standalone;
  standalone.add<Nested>(append("standalone"));
  app.nested<Inner>().extend(standalone);
  REQUIRE(run<Nested>(app) == "n,via-inner,standalone");
  REQUIRE(std::as_const(app).nested<Inner>().count<Nested>() == 2);
  STATIC_REQUIRE(std::is_same_v<decltype(std::as_const(app).nested<Inner>()), const Inner&>);
}
