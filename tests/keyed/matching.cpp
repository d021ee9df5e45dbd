// Keyed slots: which registrations a key's dispatch runs (exact keys, prefixes, globs,
// predicates, every key), and in which order.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

using test_support::Log;
using test_support::note;

// A void Always slot: every selected hook runs, after the default.
struct Notify : hookset::Slot<void(int value, std::string_view tool), hookset::Always,
                              hookset::Keyed> {
  static void default_impl(int value, std::string_view tool) {
    note("default " + std::string(tool) + " " + std::to_string(value));
  }
};
using Set = hookset::HookSet<Notify>;

auto noting(std::string tag) {
  return [tag](int, std::string_view tool) { note(tag + ":" + std::string(tool)); };
}

Log run(const Set& set, std::string_view tool) {
  auto& log = test_support::fresh_log();
  hookset::sync_wait(set.call<Notify>(1, tool));
  return log;
}

}  // namespace

static_assert(std::is_same_v<hookset::key_type_t<Notify>, std::string>);

TEST_CASE("keyed: an exact key runs its own hooks, the any-key hooks, and no other key's") {
  Set set;
  set.add<Notify>(hookset::key("fs_read"), noting("read"));
  set.add<Notify>(hookset::key("fs_write"), noting("write"));
  set.add<Notify>(noting("all"));
  set.add<Notify>(hookset::any_key, noting("any"));

  CHECK(run(set, "fs_read") == Log{"default fs_read 1", "read:fs_read", "all:fs_read", "any:fs_read"});
  CHECK(run(set, "fs_write") ==
        Log{"default fs_write 1", "write:fs_write", "all:fs_write", "any:fs_write"});
  // A key nobody registered exactly: the any-key hooks only.
  CHECK(run(set, "net_get") == Log{"default net_get 1", "all:net_get", "any:net_get"});
  // The key is looked up by value, whatever string type carries it.
  const std::string owned = "fs_read";
  auto& log = test_support::fresh_log();
  hookset::sync_wait(set.call<Notify>(2, owned.c_str()));
  CHECK(log == Log{"default fs_read 2", "read:fs_read", "all:fs_read", "any:fs_read"});
  CHECK(set.count<Notify>() == 4);
}

TEST_CASE("keyed: prefix, glob and predicate matchers select their keys") {
  Set set;
  set.add<Notify>(hookset::prefix("fs_"), noting("prefix"));
  set.add<Notify>(hookset::glob("*_wr?te"), noting("glob"));
  set.add<Notify>(hookset::matching([](const std::string& key) { return key.size() == 6; }),
                  noting("six"));
  set.add<Notify>(hookset::key("fs_read"), noting("exact"));

  // With an exact registration (precomputed list) and without (filtered at dispatch).
  CHECK(run(set, "fs_read") == Log{"default fs_read 1", "prefix:fs_read", "exact:fs_read"});
  CHECK(run(set, "fs_write") == Log{"default fs_write 1", "prefix:fs_write", "glob:fs_write"});
  CHECK(run(set, "db_wrote") == Log{"default db_wrote 1", "glob:db_wrote"});
  CHECK(run(set, "net_up") == Log{"default net_up 1", "six:net_up"});
  CHECK(run(set, "other") == Log{"default other 1"});
  CHECK(run(set, "fs_") == Log{"default fs_ 1", "prefix:fs_"});

  CHECK(set.has_hooks<Notify>("fs_read"));
  CHECK(set.has_hooks<Notify>(std::string("db_write")));
  CHECK(set.has_hooks<Notify>(std::string_view("abcdef")));
  CHECK_FALSE(set.has_hooks<Notify>("other"));
  CHECK(set.keys<Notify>() == std::vector<std::string>{"fs_read"});
}

TEST_CASE("keyed: glob wildcards") {
  Set set;
  set.add<Notify>(hookset::glob("a*b?c*"), noting("g"));
  CHECK(set.has_hooks<Notify>("abxc"));
  CHECK(set.has_hooks<Notify>("a123b4c567"));
  CHECK(set.has_hooks<Notify>("ab_b_c"));
  CHECK_FALSE(set.has_hooks<Notify>("abc"));
  CHECK_FALSE(set.has_hooks<Notify>("xabxc"));
  Set exact;
  exact.add<Notify>(hookset::glob("fs_??"), noting("g"));
  CHECK(exact.has_hooks<Notify>("fs_ab"));
  CHECK_FALSE(exact.has_hooks<Notify>("fs_abc"));
  CHECK_FALSE(exact.has_hooks<Notify>("fs_a"));
}

TEST_CASE("keyed: the slot's order holds across exact, matcher and any-key registrations") {
  Set set;
  set.add<Notify>(hookset::key("k"), noting("exact0"));
  set.add<Notify>(hookset::prefix("k"), noting("prefix-5"), hookset::Priority{-5});
  set.add<Notify>(noting("any0"));
  set.add<Notify>(hookset::key("k"), noting("exact10"), hookset::Priority{10});
  set.add<Notify>(hookset::glob("?"), noting("glob0"));
  hookset::HookOptions named_any;
  named_any.name = "named-any";
  named_any.priority = hookset::Priority{-10};
  set.add<Notify>(noting("named-any"), named_any);
  // Named order moves a registration as little as possible: "named-exact" runs before
  // "named-any", which therefore comes after it, not first.
  hookset::HookOptions first;
  first.name = "first";
  first.before = {"named-any"};
  set.add<Notify>(hookset::key("k"), noting("named-exact"), first);

  CHECK(run(set, "k") == Log{"default k 1", "prefix-5:k", "exact0:k", "any0:k", "glob0:k",
                             "named-exact:k", "named-any:k", "exact10:k"});
  // Another key sees the same order among the registrations that select it.
  CHECK(run(set, "x") == Log{"default x 1", "any0:x", "glob0:x", "named-any:x"});
}

TEST_CASE("keyed: the hana spelling registers and dispatches the same way") {
  Set set;
  set.add(hookset::slot_c<Notify>, hookset::key("a"), noting("a"));
  set.add(hookset::slot_c<Notify>, hookset::key("a"), noting("a-first"), hookset::Priority{-1});
  set.add(hookset::slot_c<Notify>, noting("all"));
  auto& log = test_support::fresh_log();
  hookset::sync_wait(set.call(hookset::slot_c<Notify>, 3, "a"));
  CHECK(log == Log{"default a 3", "a-first:a", "a:a", "all:a"});
}
