// Interceptors where they meet keyed slots and per-set observers: every key's dispatch runs the
// slot's interceptors (whatever registered first, and whichever way the key finds its hooks),
// and the hooks of an intercepted dispatch report their warnings to the set's observer.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Next;
using test_support::fresh_log;
using test_support::Log;
using test_support::note;

namespace {

struct Route : hookset::Slot<void(std::string_view key), hookset::Always, hookset::Keyed> {
  static void default_impl(std::string_view key) { note("default " + std::string(key)); }
};
struct Plain : hookset::Slot<void(int x), hookset::Always> {
  static void default_impl(int) {}
};
using Set = hookset::HookSet<Route, Plain>;

auto noting(std::string what) {
  return [what](std::string_view key) { note(what + " " + std::string(key)); };
}
// Around every slot of the set: notes the slot it wraps.
auto around_all() {
  return [](auto next, auto&&... args) {
    note("around " + std::string(next.slot_name()));
    return hookset::sync_wait(next(args...));
  };
}

struct WarningLog : hookset::Observer {
  std::vector<std::string> warnings;
  int dispatches = 0;
  void on_warning(std::string_view slot, std::string_view message) override {
    warnings.push_back(std::string(slot) + ": " + std::string(message));
  }
  void on_dispatch_begin(std::string_view, std::uint64_t) override { ++dispatches; }
};

}  // namespace

TEST_CASE("a keyed slot's interceptors run for every key: exact, matched, any-key, none") {
  Log& log = fresh_log();
  Set set;
  set.add<Route>(hookset::key("fs_read"), noting("exact"));
  set.add<Route>(hookset::glob("fs_*"), noting("glob"));
  set.intercept_all(around_all());  // registered after some hooks, before others
  set.add<Route>(hookset::key("shell"), noting("exact"));

  hookset::sync_wait(set.call<Route>("fs_read"));   // exact registration
  hookset::sync_wait(set.call<Route>("fs_write"));  // matched by the glob only (filtered list)
  hookset::sync_wait(set.call<Route>("shell"));     // registered after the interceptor
  hookset::sync_wait(set.call<Route>("http_get"));  // no hook selects it
  CHECK(log == Log{"around Route", "default fs_read", "exact fs_read", "glob fs_read",
                   "around Route", "default fs_write", "glob fs_write", "around Route",
                   "default shell", "exact shell", "around Route", "default http_get"});
}

TEST_CASE("an interceptor that passes another key to next() runs that key's hooks") {
  Log& log = fresh_log();
  Set set;
  set.add<Route>(hookset::key("fs_read"), noting("exact"));
  set.add<Route>(hookset::prefix("fs_"), noting("prefix"));
  set.add<Route>(hookset::key("read"), noting("alias"));  // the alias's own hook: not run
  // Canonicalises an alias: "read" is "fs_read", "write" is "fs_write".
  set.intercept<Route>([](Next<Route> next, std::string_view key) {
    if (key == "read") return hookset::sync_wait(next("fs_read"));
    if (key == "write") return hookset::sync_wait(next("fs_write"));
    return hookset::sync_wait(next(key));
  });
  hookset::sync_wait(set.call<Route>("read"));   // an exact key's list
  hookset::sync_wait(set.call<Route>("write"));  // a list filtered for the key
  hookset::sync_wait(set.call<Route>("shell"));  // unchanged key, no hook
  CHECK(log == Log{"default fs_read", "exact fs_read", "prefix fs_read", "default fs_write",
                   "prefix fs_write", "default shell"});
}

TEST_CASE(
    "a keyed slot without matchers: the any-key list runs the interceptors too, and removing "
    "the interceptor stops it for every key") {
  Log& log = fresh_log();
  Set set;
  set.add<Route>(noting("any"));
  set.add<Route>(hookset::key("a"), noting("exact"));
  const hookset::HookId id = set.intercept<Route>([](Next<Route> next, std::string_view key) {
    note("around " + std::string(key));
    hookset::sync_wait(next(key));
  });
  hookset::sync_wait(set.call<Route>("a"));
  hookset::sync_wait(set.call<Route>("b"));  // no exact registration, no matcher: any-key list
  CHECK(log == Log{"around a", "default a", "any a", "exact a", "around b", "default b", "any b"});

  log.clear();
  REQUIRE(set.remove(id));
  hookset::sync_wait(set.call<Route>("a"));
  hookset::sync_wait(set.call<Route>("b"));
  CHECK(log == Log{"default a", "any a", "exact a", "default b", "any b"});
}

TEST_CASE(
    "the hooks of an intercepted dispatch report a fail-open skip to the set's observer, "
    "and the dispatch is reported once") {
  fresh_log();
  Set set;
  WarningLog observer;
  set.set_observer(&observer);
  set.add<Plain>([](int) { throw std::runtime_error("unreachable service"); },
                 {.name = "flaky", .on_failure = hookset::FailOpen});
  set.intercept_all(around_all());

  hookset::sync_wait(set.call<Plain>(1));
  REQUIRE(observer.warnings.size() == 1);
  CHECK(observer.warnings[0].find("Plain: hook 'flaky' failed and was skipped (fail-open)") == 0);
  CHECK(observer.dispatches == 1);
}
