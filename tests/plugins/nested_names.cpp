// Named nested sets (hookset::Nested<Name, Set>): one set type nested twice in a plugin host,
// each copy reached by its name; whole-set operations visit both copies; a host constructed from
// its nested sets.
#include "hookset_catch.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/mp11/list.hpp>

#include <hookset/fingerprint.hpp>
#include <hookset/hookset.hpp>

namespace {
using Log = std::vector<std::string>;

struct RunTool : hookset::Slot<std::string(std::string_view tool), hookset::Always> {
  static std::string default_impl(std::string_view tool) { return std::string(tool); }
};
struct Describe : hookset::Slot<void(Log&), hookset::Always> {
  static void default_impl(Log&) {}
};
using Tools = hookset::HookSet<RunTool, Describe>;

struct Remember : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Memory = hookset::HookSet<Remember>;

struct Audit : hookset::Slot<void(Log&), hookset::Always> {
  static void default_impl(Log&) {}
};

struct PrimaryTools;  // names only: never defined
struct BackupTools;
using Host = hookset::HookSet<hookset::Nested<PrimaryTools, Tools>,
                              hookset::Nested<BackupTools, Tools>, Memory, Audit>;
using Pair =
    hookset::HookSet<hookset::Nested<PrimaryTools, Tools>, hookset::Nested<BackupTools, Tools>>;

auto tag(std::string name) {
  return [name](std::string_view, std::optional<std::string> last) { return *last + "," + name; };
}
auto note(std::string name) {
  return [name](Log& log) { log.push_back(name); };
}
template <class S, class Set, class... Args>
auto run(const Set& set, Args&&... args) {
  return hookset::sync_wait(set.template call<S>(std::forward<Args>(args)...));
}

// Implements RunTool (in both copies), Remember and Audit; not Describe.
struct Plugin {
  std::string operator()(RunTool, std::string_view, std::optional<std::string> last) const {
    return *last + ",plugin";
  }
  int operator()(Remember, int, std::optional<int> last) const { return *last + 100; }
  void operator()(Audit, Log& log) const { log.push_back("plugin audit"); }
};
}  // namespace

TEST_CASE("two named nested sets of one type dispatch independently") {
  Host host;
  host.nested<PrimaryTools>().add<RunTool>(tag("primary"));
  host.nested<BackupTools>().add<RunTool>(tag("backup-1"));
  host.nested<BackupTools>().add<RunTool>(tag("backup-2"));
  CHECK(run<RunTool>(host.nested<PrimaryTools>(), "grep") == "grep,primary");
  CHECK(run<RunTool>(host.nested<BackupTools>(), "grep") == "grep,backup-1,backup-2");
  CHECK(host.nested<PrimaryTools>().count<RunTool>() == 1);
  CHECK(host.nested<BackupTools>().count<RunTool>() == 2);
  CHECK(host.nested<BackupTools>().count<Describe>() == 0);
  // The slot is the host's (listed twice), though only reachable by name.
  STATIC_REQUIRE(Host::contains<RunTool>);
  STATIC_REQUIRE(
      std::is_same_v<Host::slots,
                     boost::mp11::mp_list<RunTool, Describe, RunTool, Describe, Remember, Audit>>);
}

TEST_CASE("slots only one member has stay callable through the outer set") {
  Host host;
  host.add<Remember>([](int, std::optional<int> last) { return *last * 2; });
  host.add<Audit>(note("audit"));
  CHECK(run<Remember>(host, 21) == 42);
  CHECK(host.count<Remember>() == 1);
  CHECK(host.nested<Memory>().count<Remember>() == 1);  // stored in the nested Memory
  Log log;
  run<Audit>(host, log);
  CHECK(log == Log{"audit"});
}

TEST_CASE("nested<Name>() is the named member itself, nested<Set>() an unnamed or single one") {
  Host host;
  STATIC_REQUIRE(std::is_same_v<decltype(host.nested<PrimaryTools>()), Tools&>);
  STATIC_REQUIRE(std::is_same_v<decltype(std::as_const(host).nested<BackupTools>()), const Tools&>);
  STATIC_REQUIRE(std::is_same_v<decltype(host.nested<Memory>()), Memory&>);
  Tools& primary = host.nested<PrimaryTools>();
  Tools& backup = host.nested<BackupTools>();
  CHECK(&primary != &backup);
  CHECK(&primary == &host.nested<PrimaryTools>());
  CHECK(&backup == &std::as_const(host).nested<BackupTools>());

  // A standalone Tools merged into one copy only.
  Tools standalone;
  standalone.add<RunTool>(tag("standalone"));
  primary.extend(standalone);
  CHECK(run<RunTool>(host.nested<PrimaryTools>(), "x") == "x,standalone");
  CHECK(run<RunTool>(host.nested<BackupTools>(), "x") == "x");

  // A set type nested once, under a name: its type finds it too.
  hookset::HookSet<hookset::Nested<PrimaryTools, Tools>, Audit> single;
  single.nested<Tools>().add<RunTool>(tag("single"));
  CHECK(&single.nested<Tools>() == &single.nested<PrimaryTools>());
  CHECK(run<RunTool>(single, "y") == "y,single");  // one member has it: callable directly
}

TEST_CASE("add_hooks registers in both copies, in the order of the set's slots") {
  Host host;
  const std::vector<hookset::HookId> ids = host.add_hooks(Plugin{});
  // RunTool in PrimaryTools, RunTool in BackupTools, Remember, Audit: one registration each.
  REQUIRE(ids.size() == 4);
  CHECK(ids[0] != ids[1]);
  CHECK(host.nested<PrimaryTools>().count<RunTool>() == 1);
  CHECK(host.nested<BackupTools>().count<RunTool>() == 1);
  CHECK(host.nested<PrimaryTools>().count<Describe>() == 0);
  CHECK(host.count<Remember>() == 1);
  CHECK(host.count<Audit>() == 1);
  CHECK(run<RunTool>(host.nested<PrimaryTools>(), "t") == "t,plugin");
  CHECK(run<RunTool>(host.nested<BackupTools>(), "t") == "t,plugin");
  CHECK(run<Remember>(host, 1) == 101);
  CHECK(host.nested<PrimaryTools>().holds(ids[0]));
  CHECK_FALSE(host.nested<PrimaryTools>().holds(ids[1]));
  CHECK(host.nested<BackupTools>().holds(ids[1]));

  // Removing the primary copy's registration leaves the backup's.
  CHECK(host.remove(ids[0]));
  CHECK(host.nested<PrimaryTools>().count<RunTool>() == 0);
  CHECK(host.nested<BackupTools>().count<RunTool>() == 1);
}

TEST_CASE("remove, holds and clear reach every nested member") {
  Host host;
  const auto in_primary = host.nested<PrimaryTools>().add<Describe>(note("p"));
  const auto in_backup = host.nested<BackupTools>().add<Describe>(note("b"));
  host.add<Audit>(note("audit"));
  CHECK(host.holds(in_primary));
  CHECK(host.holds(in_backup));
  CHECK(host.remove(in_backup));
  CHECK_FALSE(host.holds(in_backup));
  CHECK_FALSE(host.remove(in_backup));
  CHECK(host.holds(in_primary));
  Log log;
  run<Describe>(host.nested<PrimaryTools>(), log);
  run<Describe>(host.nested<BackupTools>(), log);
  CHECK(log == Log{"p"});

  host.nested<BackupTools>().add<RunTool>(tag("b"));
  host.nested<PrimaryTools>().add<RunTool>(tag("p"));
  host.clear();
  CHECK(host.nested<PrimaryTools>().count<RunTool>() == 0);
  CHECK(host.nested<PrimaryTools>().count<Describe>() == 0);
  CHECK(host.nested<BackupTools>().count<RunTool>() == 0);
  CHECK(host.count<Audit>() == 0);
  CHECK_FALSE(host.holds(in_primary));
}

TEST_CASE("extend merges each named member into the member of the same name") {
  Host mine;
  mine.nested<PrimaryTools>().add<RunTool>(tag("mine-primary"));
  Host theirs;
  theirs.nested<PrimaryTools>().add<RunTool>(tag("their-primary"));
  theirs.nested<BackupTools>().add<RunTool>(tag("their-backup"));
  theirs.add<Remember>([](int, std::optional<int> last) { return *last + 1; });
  mine.extend(theirs);
  CHECK(run<RunTool>(mine.nested<PrimaryTools>(), "e") == "e,mine-primary,their-primary");
  CHECK(run<RunTool>(mine.nested<BackupTools>(), "e") == "e,their-backup");
  CHECK(run<Remember>(mine, 1) == 2);
  // The source is unchanged.
  CHECK(run<RunTool>(theirs.nested<PrimaryTools>(), "e") == "e,their-primary");
}

TEST_CASE("a set constructed from its nested sets holds copies of them") {
  Tools primary;
  const auto id = primary.add<RunTool>(tag("p"));
  Tools backup;
  backup.add<RunTool>(tag("b"));

  Pair pair{primary, backup};
  CHECK(run<RunTool>(pair.nested<PrimaryTools>(), "c") == "c,p");
  CHECK(run<RunTool>(pair.nested<BackupTools>(), "c") == "c,b");
  // A copy: the registration (and its id) is shared, the lists are not.
  CHECK(pair.holds(id));
  CHECK(primary.remove(id));
  CHECK(pair.nested<PrimaryTools>().count<RunTool>() == 1);  // still there
  primary.add<RunTool>(tag("later"));
  CHECK(run<RunTool>(pair.nested<PrimaryTools>(), "c") == "c,p");  // not seen either
  CHECK(pair.remove(id));
  CHECK(pair.nested<PrimaryTools>().count<RunTool>() == 0);
  CHECK(primary.count<RunTool>() == 1);  // the later one, untouched by the pair

  // From rvalues: moved in. Own slots start empty.
  Tools moved;
  moved.add<RunTool>(tag("m"));
  hookset::HookSet<hookset::Nested<PrimaryTools, Tools>, hookset::Nested<BackupTools, Tools>, Audit>
      with_audit{std::move(moved), Tools{}};
  CHECK(run<RunTool>(with_audit.nested<PrimaryTools>(), "r") == "r,m");
  CHECK(with_audit.nested<BackupTools>().count<RunTool>() == 0);
  CHECK(with_audit.count<Audit>() == 0);

  // Only the nested sets, all of them, in order; and explicitly.
  STATIC_REQUIRE(std::is_constructible_v<Pair, const Tools&, Tools&&>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Pair, Tools>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Pair, Tools, Memory>);
  STATIC_REQUIRE_FALSE(std::is_constructible_v<Host, Tools, Tools>);
  STATIC_REQUIRE(std::is_constructible_v<Host, Tools, Tools, Memory>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<Memory, hookset::HookSet<Memory, Audit>>);
}

TEST_CASE("a set constructed from one set twice: both copies share its ids") {
  Tools tools;
  const auto id = tools.add<RunTool>(tag("t"));
  Pair pair{tools, tools};
  CHECK(pair.nested<PrimaryTools>().holds(id));
  CHECK(pair.nested<BackupTools>().holds(id));
  CHECK(pair.nested<PrimaryTools>().remove(id));  // through a name: that copy only
  CHECK(pair.nested<BackupTools>().holds(id));
  Pair again{tools, tools};
  CHECK(again.remove(id));  // through the outer set: every copy that holds it
  CHECK_FALSE(again.holds(id));
  CHECK(tools.holds(id));
}

TEST_CASE("intercept_all wraps the slots of both copies, one registration") {
  Log log;
  Host host;
  host.nested<BackupTools>().add<RunTool>(tag("b"));
  const hookset::HookId id = host.intercept_all([&log](auto next, auto&&... args) {
    log.push_back(std::string("around ") + std::string(next.slot_name()));
    return next(args...);
  });
  CHECK(run<RunTool>(host.nested<PrimaryTools>(), "i") == "i");
  CHECK(run<RunTool>(host.nested<BackupTools>(), "i") == "i,b");
  CHECK(run<Remember>(host, 3) == 3);
  CHECK(log == Log{"around RunTool", "around RunTool", "around Remember"});
  CHECK(host.nested<PrimaryTools>().holds(id));
  CHECK(host.nested<BackupTools>().holds(id));
  CHECK(host.remove(id));  // from every slot of both copies at once
  CHECK_FALSE(host.holds(id));
  log.clear();
  run<RunTool>(host.nested<BackupTools>(), "i");
  CHECK(log.empty());
}

TEST_CASE("the manifest of a set with a set nested twice lists its slots twice") {
  const hookset::SetManifest& pair = hookset::set_manifest<Pair>;
  REQUIRE(pair.slot_count == 4);
  CHECK(pair.slots[0].name_view() == "RunTool");
  CHECK(pair.slots[2].name_view() == "RunTool");
  const hookset::SetManifest& once = hookset::set_manifest<Tools>;
  CHECK(pair.fingerprint != once.fingerprint);
  // The same names in both: told apart by their number, not read past the shorter list.
  CHECK_THAT(hookset::manifest_mismatch(pair, once), Catch::Matchers::ContainsSubstring("slots"));
  CHECK_THAT(hookset::manifest_mismatch(once, pair), Catch::Matchers::ContainsSubstring("slots"));
  CHECK(hookset::manifest_mismatch(pair, hookset::set_manifest<Pair>).empty());
}

TEST_CASE("a frozen or shared host dispatches each copy through nested<Name>()") {
  Host host;
  host.nested<PrimaryTools>().add<RunTool>(tag("p"));
  host.nested<BackupTools>().add<RunTool>(tag("b"));
  const hookset::FrozenHookSet<hookset::Nested<PrimaryTools, Tools>,
                               hookset::Nested<BackupTools, Tools>, Memory, Audit>
      frozen = host.freeze();
  STATIC_REQUIRE(std::is_same_v<decltype(frozen.nested<PrimaryTools>()), const Tools&>);
  CHECK(run<RunTool>(frozen.nested<PrimaryTools>(), "f") == "f,p");
  CHECK(run<RunTool>(frozen.nested<BackupTools>(), "f") == "f,b");

  hookset::SharedHookSet<hookset::Nested<PrimaryTools, Tools>, hookset::Nested<BackupTools, Tools>,
                         Memory, Audit>
      shared(host);
  shared.update([](auto& set) { set.template nested<BackupTools>().clear(); });
  const auto version = shared.load();  // kept while its nested sets are dispatched
  CHECK(run<RunTool>(version->nested<PrimaryTools>(), "s") == "s,p");
  CHECK(run<RunTool>(version->nested<BackupTools>(), "s") == "s");
}
