// Keyed slots over a set's life: keys added and removed at run time, remove by HookId, clear,
// keys()/has_hooks(), copies, extend, nested, frozen and shared sets, the strong guarantee, an
// edit made by a hook during a dispatch, non-string keys, 1000 keys, string keys of every length.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

using test_support::Log;
using test_support::note;

namespace {

struct Check : hookset::Slot<int(int x, const std::string& tool), hookset::Always,
                             hookset::Aggregate<struct Sum>, hookset::Keyed> {
  static int default_impl(int, const std::string&) { return 0; }
};
struct Sum {
  int operator()(std::vector<int> outputs) const {
    int sum = 0;
    for (int o : outputs) sum += o;
    return sum;
  }
};
struct Other : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int) {}
};
using Set = hookset::HookSet<Check, Other>;

// Its key declared std::string by value: a dispatch owns its copy.
struct Owned : hookset::Slot<int(std::string tool), hookset::Singleton, hookset::Keyed> {
  static int default_impl(const std::string&) { return 0; }
};

auto giving(int output) {
  return [output](int, const std::string&) { return output; };
}
int run(const Set& set, const std::string& tool) {
  return hookset::sync_wait(set.call<Check>(0, tool));
}

enum class Event { open, close, read };
struct Shift {
  int by = 0;
  int operator()(int result) const { return result + by; }
};
struct OnEvent
    : hookset::Slot<int(Event event), hookset::Fallback, hookset::Finalize<Shift>, hookset::Keyed> {
  static int default_impl(Event) { return -1; }
};

}  // namespace

template <>
struct std::hash<Event> {
  std::size_t operator()(Event e) const noexcept { return static_cast<std::size_t>(e); }
};

TEST_CASE("keyed: keys added and removed at run time, by HookId and by clear") {
  Set set;
  CHECK(set.keys<Check>().empty());
  CHECK_FALSE(set.has_hooks<Check>("a"));
  CHECK(run(set, "a") == 0);

  const auto a = set.add<Check>(hookset::key("a"), giving(1));
  const auto b = set.add<Check>(hookset::key("b"), giving(10));
  const auto any = set.add<Check>(giving(100));
  CHECK(set.keys<Check>() == std::vector<std::string>{"a", "b"});
  CHECK(run(set, "a") == 101);
  CHECK(run(set, "b") == 110);
  CHECK(run(set, "c") == 100);
  CHECK(set.count<Check>() == 3);
  CHECK(set.holds(a));

  CHECK(set.remove(a));
  CHECK_FALSE(set.remove(a));
  CHECK_FALSE(set.holds(a));
  CHECK(set.keys<Check>() == std::vector<std::string>{"b"});
  CHECK(run(set, "a") == 100);
  CHECK(set.remove(any));
  CHECK(run(set, "a") == 0);
  CHECK_FALSE(set.has_hooks<Check>("a"));
  CHECK(set.has_hooks<Check>("b"));

  set.add<Check>(hookset::key("z"), giving(1000));
  set.add<Check>(hookset::key("c"), giving(3));
  CHECK(set.keys<Check>() == std::vector<std::string>{"b", "c", "z"});
  CHECK(run(set, "z") == 1000);
  set.clear<Check>();
  CHECK(set.keys<Check>().empty());
  CHECK(set.count<Check>() == 0);
  CHECK(run(set, "b") == 0);
  CHECK_FALSE(set.holds(b));
  set.add<Check>(hookset::key("b"), giving(7));
  set.clear();
  CHECK(run(set, "b") == 0);
}

TEST_CASE("keyed: copies are independent, extend merges keys in the slot's order, nested sets") {
  Set set;
  set.add<Check>(hookset::key("a"), giving(1));
  Set copy = set;
  copy.add<Check>(hookset::key("a"), giving(10));
  copy.add<Check>(hookset::key("b"), giving(20));
  CHECK(run(set, "a") == 1);
  CHECK(run(copy, "a") == 11);
  CHECK(set.keys<Check>() == std::vector<std::string>{"a"});

  Set other;
  const auto p = other.add<Check>(hookset::prefix("b"), giving(300));
  other.add<Check>(hookset::key("c"), giving(5));
  set.extend(other);
  CHECK(set.keys<Check>() == std::vector<std::string>{"a", "c"});
  CHECK(run(set, "b") == 300);
  CHECK(run(set, "bb") == 300);
  CHECK(run(set, "c") == 5);
  CHECK(set.remove(p));  // the id travels with the registration
  CHECK(run(set, "bb") == 0);

  // A set extended into an empty one: the keyed lists come along.
  Set empty;
  empty.extend(copy);
  CHECK(run(empty, "b") == 20);

  using Outer = hookset::HookSet<Set, OnEvent>;
  Outer outer;
  outer.add<Check>(hookset::key("n"), giving(42));
  outer.nested<Set>().add<Check>(hookset::key("m"), giving(43));
  CHECK(hookset::sync_wait(outer.call<Check>(0, std::string("n"))) == 42);
  CHECK(hookset::sync_wait(outer.call<Check>(0, std::string("m"))) == 43);
  CHECK(outer.keys<Check>() == std::vector<std::string>{"m", "n"});
}

TEST_CASE("keyed: frozen and shared sets dispatch keyed slots, filtered keys included") {
  Set set;
  set.add<Check>(hookset::key("a"), giving(1));
  set.add<Check>(hookset::glob("x*"), giving(2));
  const auto frozen = set.freeze();
  set.add<Check>(hookset::key("a"), giving(1000));  // the frozen copy does not see it
  CHECK(hookset::sync_wait(frozen.call<Check>(0, std::string("a"))) == 1);
  CHECK(hookset::sync_wait(frozen.call<Check>(0, std::string("xy"))) == 2);
  CHECK(frozen.keys<Check>() == std::vector<std::string>{"a"});
  CHECK(frozen.has_hooks<Check>("xz"));
  CHECK_FALSE(frozen.has_hooks<Check>("b"));

  hookset::SharedHookSet<Check, Other> shared(std::move(set));
  CHECK(hookset::sync_wait(shared.call<Check>(0, std::string("a"))) == 1001);
  // A dispatch made on one version and started after the next is published: it runs on the
  // version it was made on (which it keeps). Its key is bound by reference: it must outlive it.
  const std::string xy = "xy";
  auto pending = shared.call<Check>(0, xy);
  shared.update([](auto& next) { next.template add<Check>(hookset::glob("x?"), giving(20)); });
  CHECK(hookset::sync_wait(std::move(pending)) == 2);
  CHECK(hookset::sync_wait(shared.call<Check>(0, std::string("xy"))) == 22);
}

TEST_CASE(
    "keyed: a dispatch runs the hooks registered when it starts, unaffected by its own hooks' "
    "edits") {
  Set set;
  std::vector<hookset::HookId> added;
  set.add<Check>(hookset::key("a"), [&](int, const std::string&) {
    // Edits the slot mid-dispatch: the running dispatch keeps the hooks it started with.
    added.push_back(set.add<Check>(hookset::key("a"), giving(1000)));
    set.add<Check>(hookset::key("b"), giving(5));
    set.clear<Other>();
    return 1;
  });
  set.add<Check>(hookset::key("a"), giving(10));
  set.add<Check>(hookset::prefix("a"), giving(100));
  CHECK(run(set, "a") == 111);
  CHECK(run(set, "a") == 1000 + 111);  // the hook registered during the first dispatch, now run
  CHECK(added.size() == 2);
  CHECK(run(set, "b") == 10);  // each dispatch of "a" registered one

  // A dispatch made, then an edit, then the dispatch starts: as any dispatch, it runs the hooks
  // registered when it starts (its key is looked up then).
  Set later;
  later.add<Check>(hookset::key("k"), giving(1));
  later.add<Check>(hookset::glob("j*"), giving(2));
  const std::string k = "k";
  const std::string jj = "jj";
  auto exact = later.call<Check>(0, k);
  auto filtered = later.call<Check>(0, jj);
  later.clear<Check>();
  later.add<Check>(hookset::key("k"), giving(50));
  CHECK(hookset::sync_wait(std::move(exact)) == 50);
  CHECK(hookset::sync_wait(std::move(filtered)) == 0);  // the glob registration is gone
  CHECK(run(later, "k") == 50);

  // The same from a slot without any registration yet (with and without a configured
  // companion): a registration for another key made before the dispatch starts stays out of it.
  using Finalized = hookset::HookSet<OnEvent>;
  for (bool configured : {false, true}) {
    CAPTURE(configured);
    Finalized events;
    if (configured) events.configure<OnEvent>(Shift{100});
    auto open = events.call<OnEvent>(Event::open);
    events.add<OnEvent>(hookset::key(Event::close), [](Event, std::optional<int>) { return 7; });
    CHECK(hookset::sync_wait(std::move(open)) == (configured ? 99 : -1));
    CHECK(hookset::sync_wait(events.call<OnEvent>(Event::close)) == (configured ? 107 : 7));
  }
}

TEST_CASE("keyed: edits keep the strong guarantee") {
  Set set;
  set.add<Check>(hookset::key("a"), giving(1));
  set.add<Check>(hookset::key("b"), giving(2));
  hookset::HookOptions unknown;
  unknown.after = {"nobody"};
  CHECK_THROWS_AS(set.add<Check>(hookset::key("c"), giving(3), unknown), hookset::OrderingError);
  CHECK(set.keys<Check>() == std::vector<std::string>{"a", "b"});
  CHECK(set.count<Check>() == 2);
  // A predicate is asked about every exact key at registration: when it throws, nothing changes.
  CHECK_THROWS_AS(set.add<Check>(hookset::matching([](const std::string& k) -> bool {
                                   if (k == "b") throw std::runtime_error("no");
                                   return false;
                                 }),
                                 giving(4)),
                  std::runtime_error);
  CHECK(set.count<Check>() == 2);
  CHECK(run(set, "a") == 1);
  CHECK(run(set, "b") == 2);
}

TEST_CASE("keyed: non-string keys, add_hooks and predicates") {
  hookset::HookSet<OnEvent> set;
  static_assert(std::is_same_v<hookset::key_type_t<OnEvent>, Event>);
  set.add<OnEvent>(hookset::key(Event::open), [](Event, std::optional<int>) { return 1; });
  set.add<OnEvent>(hookset::matching([](Event e) { return e != Event::open; }),
                   [](Event e, std::optional<int> last) {
    return (last ? *last * 10 : 0) + static_cast<int>(e);
  });
  CHECK(hookset::sync_wait(set.call<OnEvent>(Event::open)) == 1);
  CHECK(hookset::sync_wait(set.call<OnEvent>(Event::close)) == 1);
  CHECK(hookset::sync_wait(set.call<OnEvent>(Event::read)) == 2);
  CHECK(set.keys<OnEvent>() == std::vector<Event>{Event::open});
  CHECK(set.has_hooks<OnEvent>(Event::read));

  // add_hooks registers for every key.
  struct Handler {
    int operator()(OnEvent, Event, std::optional<int> last) const {
      return last ? *last + 100 : 100;
    }
  };
  hookset::HookSet<OnEvent> handled;
  handled.add<OnEvent>(hookset::key(Event::read), [](Event, std::optional<int>) { return 5; });
  handled.add_hooks(Handler{});
  CHECK(hookset::sync_wait(handled.call<OnEvent>(Event::read)) == 105);
  CHECK(hookset::sync_wait(handled.call<OnEvent>(Event::close)) == 100);
}

TEST_CASE("keyed: 1000 keys, each with its own hook, beside matchers") {
  Set set;
  std::vector<hookset::HookId> ids;
  for (int i = 0; i < 1000; ++i)
    ids.push_back(set.add<Check>(hookset::key("tool" + std::to_string(i)), giving(i)));
  set.add<Check>(hookset::glob("tool*7"), giving(100000));
  CHECK(set.keys<Check>().size() == 1000);
  CHECK(set.count<Check>() == 1001);
  for (int i = 0; i < 1000; ++i) {
    const int expected = i + (i % 10 == 7 ? 100000 : 0);
    CHECK(run(set, "tool" + std::to_string(i)) == expected);
  }
  CHECK(run(set, "tool10007") == 100000);
  CHECK(run(set, "tool1000") == 0);
  for (int i = 0; i < 1000; i += 2) CHECK(set.remove(ids[static_cast<std::size_t>(i)]));
  CHECK(set.keys<Check>().size() == 500);
  CHECK(run(set, "tool4") == 0);
  CHECK(run(set, "tool5") == 5);
  CHECK(run(set, "tool17") == 100017);
}

// The string-key table hashes and compares keys a word at a time, the last word overlapping the
// one before it, keys under 8 bytes as overlapping halves or single bytes: every length from 0 to
// 40, and keys of one length that differ in one byte only - first, middle or last - each find
// their own hook and no other's.
TEST_CASE("keyed: string keys of every length, differing in one byte anywhere, are told apart") {
  Set set;
  std::vector<std::string> keys;
  for (std::size_t length = 0; length <= 40; ++length) {
    const std::string base(length, 'k');
    keys.push_back(base);
    for (std::size_t at = 0; at < length; ++at) {
      std::string changed = base;
      changed[at] = 'x';
      keys.push_back(changed);
    }
  }
  for (std::size_t i = 0; i < keys.size(); ++i)
    set.add<Check>(hookset::key(keys[i]), giving(static_cast<int>(i) + 1));
  CHECK(set.keys<Check>().size() == keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    INFO("key '" << keys[i] << "'");
    CHECK(run(set, keys[i]) == static_cast<int>(i) + 1);
  }
  // Near misses: one byte more or less, a byte changed to one no key has.
  CHECK(run(set, std::string(41, 'k')) == 0);
  CHECK(run(set, std::string(5, 'k') + "y") == 0);
  CHECK(run(set, "y" + std::string(12, 'k')) == 0);
  CHECK(run(set, std::string(8, 'k') + "y" + std::string(8, 'k')) == 0);

  // The comparison on its own (above, distinct hashes would hide a comparison that skips bytes):
  // equal keys are the same, and a change of any one byte, or of the length, is seen.
  using hookset::detail::string_key;
  for (const std::string& a : keys) {
    INFO("key '" << a << "'");
    CHECK(string_key::same(a, std::string(a)));
    CHECK(string_key::hash{}(a) == string_key::hash{}(std::string(a)));
    for (std::size_t at = 0; at < a.size(); ++at) {
      std::string changed = a;
      changed[at] = 'z';
      CHECK_FALSE(string_key::same(a, changed));
    }
    CHECK_FALSE(string_key::same(a, a + "k"));
  }
}

TEST_CASE("keyed: a key declared std::string by value is the dispatch's own - awaited later") {
  hookset::HookSet<Owned> set;
  set.add<Owned>(hookset::key("fs_read"),
                 [](const std::string& tool) { return static_cast<int>(tool.size()); });
  auto later = set.call<Owned>(std::string("fs_") + "read");  // the temporary is gone after this
  const std::string reuse(7, 'x');  // (takes the freed memory, if anything still read it: ASan)
  CHECK(hookset::sync_wait(std::move(later)) == 7);
  CHECK(reuse.size() == 7);
}
