// Ordering by name: a registration may ask to run before or after others of the same slot, by
// name, on top of priorities. Resolved when registering; an unknown name or a cycle throws
// OrderingError and leaves the set unchanged; ties keep registration order; extend re-resolves.
#include "hookset_catch.hpp"

#include <optional>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

struct Trace : hookset::Slot<std::string(int), hookset::Always> {
  static std::string default_impl(int) { return ""; }
};
using Set = hookset::HookSet<Trace>;

auto tag(std::string t) {
  return [t](int, std::optional<std::string> last) { return *last + t; };
}
std::string run(const Set& set) { return hookset::sync_wait(set.call<Trace>(0)); }

}  // namespace

// The rule: a stable topological sort - each step runs the earliest registration (by priority,
// then registration order) whose before/after constraints allow it.
TEST_CASE(
    "before and after constrain the order - otherwise priority and registration order decide") {
  Set set;
  set.add<Trace>(tag("a"), {.name = "a"});
  set.add<Trace>(tag("b"), {.name = "b"});
  set.add<Trace>(tag("c"), {.name = "c", .before = {"a"}});
  CHECK(run(set) == "bca");  // a waits for c; b, unconstrained, is the earliest allowed
  set.add<Trace>(tag("d"), {.name = "d", .priority = hookset::Priority{-5}, .after = {"b"}});
  CHECK(run(set) == "bdca");  // its priority alone would put it first
  set.add<Trace>(tag("e"), {.name = "e", .priority = hookset::Priority{-5}});
  CHECK(run(set) == "ebdca");
}

TEST_CASE("ties keep registration order") {
  Set set;
  for (std::string t : {"1", "2", "3"}) set.add<Trace>(tag(t), {.name = "same"});
  set.add<Trace>(tag("x"), {.name = "x", .before = {"same"}});  // before all three of that name
  CHECK(run(set) == "x123");
}

TEST_CASE("an unknown name throws OrderingError and leaves the set unchanged") {
  Set set;
  set.add<Trace>(tag("a"), {.name = "a"});
  try {
    set.add<Trace>(tag("b"), {.name = "b", .after = {"missing"}});
    FAIL("no OrderingError");
  } catch (const hookset::OrderingError& error) {
    CHECK(error.slot == "Trace");
    CHECK(std::string(error.what()).find("missing") != std::string::npos);
  }
  CHECK(set.count<Trace>() == 1);
  CHECK(run(set) == "a");
}

TEST_CASE("a cycle throws OrderingError naming its members and leaves the set unchanged") {
  Set set;
  set.add<Trace>(tag("a"), {.name = "a", .after = {}});
  set.add<Trace>(tag("b"), {.name = "b", .after = {"a"}});
  CHECK_THROWS_AS(set.add<Trace>(tag("c"), {.name = "c", .before = {"a"}, .after = {"b"}}),
                  hookset::OrderingError);
  try {
    set.add<Trace>(tag("c"), {.name = "c", .before = {"a"}, .after = {"b"}});
  } catch (const hookset::OrderingError& error) {
    CHECK(std::string(error.what()).find("cycle") != std::string::npos);
  }
  CHECK(set.count<Trace>() == 2);
  CHECK(run(set) == "ab");
}

TEST_CASE("extend re-resolves the named order over the merged hooks") {
  Set base, plugin;
  base.add<Trace>(tag("core"), {.name = "core"});
  plugin.add<Trace>(tag("helper"), {.name = "helper"});
  plugin.add<Trace>(tag("pre"), {.name = "pre", .before = {"helper"}});
  base.extend(plugin);
  CHECK(run(base) == "coreprehelper");
  // Constraints of one set meeting names of the other: base says "b after a", the plugin "a
  // after b" - a cycle once merged: extend throws and leaves `base` as it was.
  Set left, right;
  left.add<Trace>(tag("a"), {.name = "a"});
  left.add<Trace>(tag("b"), {.name = "b", .after = {"a"}});
  right.add<Trace>(tag("B"), {.name = "b"});
  right.add<Trace>(tag("A"), {.name = "a", .after = {"b"}});
  CHECK_THROWS_AS(left.extend(right), hookset::OrderingError);
  CHECK(run(left) == "ab");
}

TEST_CASE("removing a constrained registration arranges the rest again") {
  Set set;
  set.add<Trace>(tag("a"), {.name = "a"});
  const auto b = set.add<Trace>(tag("b"), {.name = "b", .before = {"a"}});
  set.add<Trace>(tag("c"), {.name = "c", .priority = hookset::Priority{-1}});
  CHECK(run(set) == "cba");
  set.remove(b);
  CHECK(run(set) == "ca");
}

TEST_CASE("a registration that names no other joins the named order") {
  // Registered with a Priority alone, it is placed by working the named order out again: put
  // straight into the arranged list by priority, "c" would land after "b".
  Set set;
  set.add<Trace>(tag("a"), {.name = "a", .priority = hookset::Priority{5}});
  set.add<Trace>(tag("b"), {.name = "b", .after = {"a"}});
  CHECK(run(set) == "ab");
  set.add<Trace>(tag("c"), hookset::Priority{3});
  CHECK(run(set) == "cab");
  set.add<Trace>(tag("d"));
  CHECK(run(set) == "dcab");
}
