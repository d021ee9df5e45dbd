// hookset::PluginHost (<hookset/plugin.hpp>) over real shared libraries, built from
// tests/plugins/libraries/loader_plugin.cpp: load, refuse, unload (with a hook suspended inside
// the plugin), reload, and what the host says when a library stays mapped.
#include "hookset_catch.hpp"

#include <dlfcn.h>

#include <chrono>
#include <coroutine>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "plugins/libraries/loader_slots.hpp"
#include "test_support.hpp"

using loader_test::CheckTool;
using loader_test::Configure;
using loader_test::Hooks;
using loader_test::Notify;
using loader_test::Slow;
using Host = hookset::PluginHost<Hooks>;

namespace {

std::mutex parked_mutex;
std::vector<void*> parked_coroutines;

// Resumes the coroutines the plugins parked, in order; how many.
std::size_t resume_parked() {
  std::vector<void*> parked;
  {
    std::lock_guard lock(parked_mutex);
    parked.swap(parked_coroutines);
  }
  for (void* address : parked) std::coroutine_handle<>::from_address(address).resume();
  return parked.size();
}

// Whether the library at `path` is mapped in this process.
bool mapped(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle) dlclose(handle);
  return handle != nullptr;
}

int configure(const Host& host) { return hookset::sync_wait(host.call<Configure>("k", 1)); }

std::string refusal(Host& host, const char* path) {
  try {
    host.load(path);
  } catch (const hookset::PluginError& error) {
    CHECK(error.path() == path);
    return error.reason();
  }
  FAIL("the plugin was loaded");
  return {};
}

}  // namespace

namespace {
std::mutex observed_mutex;
std::vector<std::string> observed_slots;
}  // namespace

extern "C" __attribute__((visibility("default"))) void loader_test_observed(const char* slot,
                                                                            std::size_t length) {
  std::lock_guard lock(observed_mutex);
  observed_slots.emplace_back(slot, length);
}

namespace {
std::vector<std::pair<std::string, int>> setup_calls;
}  // namespace

extern "C" __attribute__((visibility("default"))) void loader_test_setup(const char* key,
                                                                         std::size_t length,
                                                                         int value) {
  setup_calls.emplace_back(std::string(key, length), value);
}

extern "C" __attribute__((visibility("default"))) void loader_test_park(void* coroutine_address) {
  std::lock_guard lock(parked_mutex);
  parked_coroutines.push_back(coroutine_address);
}

TEST_CASE("plugins: a loaded plugin's hooks, guard and keyed hook run, and unloading closes it") {
  Host host;
  CHECK(configure(host) == 0);
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
  CHECK(plugin.path() == HOOKSET_TEST_LOADER_V1);
  CHECK(mapped(HOOKSET_TEST_LOADER_V1));
  CHECK(configure(host) == 8);
  CHECK(host.current()->count<Configure>() == 8);
  auto verdicts = hookset::sync_wait(host.call<CheckTool>("rm"));
  CHECK(verdicts.decision == hookset::Permission::deny);
  CHECK(hookset::sync_wait(host.call<CheckTool>("ls")).decision == hookset::Permission::allow);
  CHECK(hookset::sync_wait(host.call<Notify>(1, "fs")) == 11);
  CHECK(hookset::sync_wait(host.call<Notify>(1, "net")) == 0);
  CHECK(host.plugins().size() == 1);

  hookset::Unloaded unloaded = host.unload(plugin);
  CHECK(configure(host) == 0);  // at once
  // (Closed by the closer thread, a grace period after the last list holding its hooks went.)
  REQUIRE(unloaded.wait_for(std::chrono::seconds(10)));
  CHECK_FALSE(unloaded.resident());
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_V1));
  CHECK(configure(host) == 0);
  CHECK(hookset::sync_wait(host.call<CheckTool>("rm")).decision == hookset::Permission::allow);
  CHECK(hookset::sync_wait(host.call<Notify>(1, "fs")) == 0);
  CHECK(host.plugins().empty());
  CHECK(host.unload(plugin).ready());  // (twice: nothing more to do)
}

TEST_CASE("plugins: a plugin built against another signature is refused, naming the slot") {
  Host host;
  const auto version = host.version();
  const std::string why = refusal(host, HOOKSET_TEST_LOADER_OTHER_SIGNATURE);
  CHECK(why.find("built against another set") != std::string::npos);
  CHECK(why.find("slot 'Configure' is declared differently") != std::string::npos);
  CHECK(host.version() == version);
  CHECK(configure(host) == 0);
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_OTHER_SIGNATURE));
}

TEST_CASE("plugins: a plugin of another hookset binary interface version is refused") {
  Host host;
  const std::string why = refusal(host, HOOKSET_TEST_LOADER_OTHER_ABI);
  CHECK(why == "built against hookset's binary interface version " +
                   std::to_string(hookset::abi_version + 1) + ", this program against version " +
                   std::to_string(hookset::abi_version));
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_OTHER_ABI));
}

TEST_CASE("plugins: an entry point that throws leaves the set unchanged, all or nothing") {
  Host host;
  hookset::Plugin good = host.load(HOOKSET_TEST_LOADER_V1);
  const auto version = host.version();
  const std::string why = refusal(host, HOOKSET_TEST_LOADER_THROWS);
  CHECK(why == "its entry point threw: this plugin refuses to register");
  CHECK(host.version() == version);
  CHECK(configure(host) == 8);  // (not 9: the hook it registered before throwing is gone)
  CHECK(host.plugins().size() == 1);
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_THROWS));
}

TEST_CASE("plugins: a library that is not a plugin, or no library, is refused") {
  Host host;
  CHECK(refusal(host, HOOKSET_TEST_NOT_A_PLUGIN).find("exports no hookset_plugin_entry") !=
        std::string::npos);
  const std::string missing = refusal(host, "/nonexistent/plugin.so");
  CHECK(missing.find("/nonexistent/plugin.so") != std::string::npos);
}

TEST_CASE("plugins: a plugin that does not share the program's hookset objects is refused") {
  // Built with hidden visibility: its hook ids and thread-locals would be its own.
  Host host;
  CHECK(refusal(host, HOOKSET_TEST_LOADER_HIDDEN)
            .find("does not share the program's hookset objects (hook ids") != std::string::npos);
  CHECK(configure(host) == 0);
}

TEST_CASE("plugins: unload while a coroutine hook is suspended inside the plugin") {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_COROUTINE);
  test_support::Outcome<int> outcome;
  test_support::detach(host.call<Slow>(41), outcome);
  REQUIRE_FALSE(outcome.done);  // suspended in the plugin's hook

  hookset::Unloaded unloaded = host.unload(plugin);
  CHECK(hookset::sync_wait(host.call<Slow>(1)) == 0);  // new dispatches: no hook
  CHECK_FALSE(unloaded.ready());                       // the running one holds the library
  CHECK(mapped(HOOKSET_TEST_LOADER_COROUTINE));

  CHECK(resume_parked() == 1);  // the hook goes on, in the plugin's code, and completes
  REQUIRE(outcome.done);
  CHECK(outcome.value == 42);
  unloaded.wait();
  CHECK_FALSE(unloaded.resident());
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_COROUTINE));
}

TEST_CASE("plugins: an unload can be awaited: the waiter resumes when the library is closed") {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_COROUTINE);
  test_support::Outcome<int> running;
  test_support::detach(host.call<Slow>(1), running);
  hookset::Unloaded unloaded = host.unload(plugin);
  test_support::Outcome<bool> closed;
  test_support::detach(unloaded, closed);
  CHECK_FALSE(closed.done);
  resume_parked();
  CHECK(running.value == 2);
  unloaded.wait();  // (returns once the awaiting coroutine has been resumed, on the closer)
  REQUIRE(closed.done);
  CHECK(closed.value == true);  // unmapped
}

TEST_CASE("plugins: reload swaps the registrations at once and closes the old build") {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
  CHECK(configure(host) == 8);
  hookset::Unloaded old = host.reload(plugin, HOOKSET_TEST_LOADER_V2);
  CHECK(configure(host) == 800);
  old.wait();
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_V1));
  CHECK(mapped(HOOKSET_TEST_LOADER_V2));
  CHECK(hookset::sync_wait(host.call<CheckTool>("mv")).decision == hookset::Permission::deny);
  CHECK(hookset::sync_wait(host.call<CheckTool>("rm")).decision == hookset::Permission::allow);
  CHECK(hookset::sync_wait(host.call<Notify>(1, "fs")) == 0);  // v2 has no keyed hook
  REQUIRE(host.plugins().size() == 1);
  host.unload(plugin).wait();
  CHECK(configure(host) == 0);
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_V2));
}

TEST_CASE("plugins: a new build that fails to load keeps the old one") {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
  CHECK_THROWS_AS(host.reload(plugin, HOOKSET_TEST_LOADER_THROWS), hookset::PluginError);
  CHECK_THROWS_AS(host.reload(plugin, HOOKSET_TEST_LOADER_OTHER_SIGNATURE), hookset::PluginError);
  CHECK(configure(host) == 8);
  CHECK(mapped(HOOKSET_TEST_LOADER_V1));
  host.unload(plugin).wait();
}

TEST_CASE("plugins: reload of a new build written over the same path") {
  namespace fs = std::filesystem;
  const fs::path directory = fs::temp_directory_path() / "hookset-test-reload";
  fs::create_directories(directory);
  const fs::path path = directory / "policy.so";
  fs::copy_file(HOOKSET_TEST_LOADER_V1, path, fs::copy_options::overwrite_existing);
  {
    Host host;
    hookset::Plugin plugin = host.load(path);
    CHECK(configure(host) == 8);
    // A new build replaces the file (as an install does: a new file, renamed over the old).
    fs::copy_file(HOOKSET_TEST_LOADER_V2, directory / "policy.so.new",
                  fs::copy_options::overwrite_existing);
    fs::rename(directory / "policy.so.new", path);
    hookset::Unloaded old = host.reload(plugin);
    CHECK(configure(host) == 800);
    old.wait();
    CHECK_FALSE(mapped(path.string()));  // (the new build was opened through a copy)
    host.unload(plugin).wait();
    CHECK(configure(host) == 0);
  }
  fs::remove_all(directory);
}

TEST_CASE("plugins: the host's own registrations and several plugins merge in order") {
  Host host;
  host.update([](Hooks& set) {
    set.add<Configure>(
        [](std::string_view, int, std::optional<int> last) { return last.value_or(0) * 2; });
  });
  hookset::Plugin v1 = host.load(HOOKSET_TEST_LOADER_V1);
  hookset::Plugin interceptor = host.load(HOOKSET_TEST_LOADER_INTERCEPTOR);
  CHECK(configure(host) == 1008);  // 0 * 2, + 8, intercepted + 1000
  host.unload(v1).wait();
  CHECK(configure(host) == 1000);
  host.update([](Hooks& set) { set.clear<Configure>(); });
  CHECK(configure(host) == 1000);  // (the interceptor is the plugin's)
  host.unload(interceptor).wait();
  CHECK(configure(host) == 0);
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_INTERCEPTOR));
}

TEST_CASE("plugins: when the library stays mapped after closing, the host says so") {
  // Built without -fno-gnu-unique: with GCC its inline variables are STB_GNU_UNIQUE, and the
  // dynamic linker never unmaps such a library. (Clang makes no unique symbols.)
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_UNIQUE);
  CHECK(configure(host) == 8);
  hookset::Unloaded unloaded = host.unload(plugin);
  unloaded.wait();
  CHECK(configure(host) == 0);
  CHECK(unloaded.resident() == mapped(HOOKSET_TEST_LOADER_UNIQUE));
  CHECK(unloaded.resident() == HOOKSET_TEST_UNIQUE_STAYS);
}

TEST_CASE("plugins: a dispatch started before an unload runs the plugin's hooks to its end") {
  Host host;
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
  std::shared_ptr<const Host::frozen_type> version = host.current();
  hookset::Unloaded unloaded = host.unload(plugin);
  CHECK_FALSE(unloaded.ready());  // the version held here still lists the hooks
  CHECK(hookset::sync_wait(version->call<Configure>("k", 1)) == 8);
  CHECK(configure(host) == 0);
  version.reset();
  unloaded.wait();
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_V1));
}

TEST_CASE("plugins: a plugin's observer is told of dispatches beside the program's own") {
  Host host;
  test_support::RecordingObserver own;
  host.update([&](Hooks& set) { set.set_observer(&own); });
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_OBSERVER);
  observed_slots.clear();
  CHECK(configure(host) == 1);
  CHECK(observed_slots == std::vector<std::string>{"Configure"});
  const auto begins = [&] {
    std::size_t n = 0;
    for (const auto& event : own.events) n += event.kind == "begin";
    return n;
  };
  CHECK(begins() == 1);  // the program's own observer still is

  hookset::Unloaded unloaded = host.unload(plugin);
  CHECK(configure(host) == 0);
  CHECK(observed_slots.size() == 1);  // no longer told
  CHECK(begins() == 2);
  unloaded.wait();
  CHECK_FALSE(unloaded.resident());
  CHECK_FALSE(mapped(HOOKSET_TEST_LOADER_OBSERVER));
}

TEST_CASE("plugins: a handle names a plugin of the host that loaded it") {
  Host first, second;
  hookset::Plugin plugin = first.load(HOOKSET_TEST_LOADER_V1);
  CHECK_THROWS_AS(second.unload(plugin), std::invalid_argument);
  CHECK_THROWS_AS(second.reload(plugin, HOOKSET_TEST_LOADER_V2), std::invalid_argument);
  CHECK(configure(first) == 8);
  CHECK(configure(second) == 0);
  CHECK(second.unload(hookset::Plugin()).ready());  // an empty handle: nothing to unload
  first.unload(plugin).wait();
}

TEST_CASE("plugins: a plugin loaded late receives the calls a historic slot kept") {
  using loader_test::Setup;
  using calls = std::vector<std::pair<std::string, int>>;
  Host host;
  hookset::sync_wait(host.call<Setup>("mode", 1));
  hookset::sync_wait(host.call<Setup>("limit", 2));
  setup_calls.clear();
  hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
  CHECK(setup_calls == calls{{"mode", 1}, {"limit", 2}});  // replayed, oldest first
  hookset::sync_wait(host.call<Setup>("mode", 3));
  CHECK(setup_calls == calls{{"mode", 1}, {"limit", 2}, {"mode", 3}});  // then live

  setup_calls.clear();
  hookset::Unloaded old = host.reload(plugin, HOOKSET_TEST_LOADER_V1);  // the same build again
  CHECK(setup_calls == calls{{"mode", 1}, {"limit", 2}, {"mode", 3}});  // new hooks: replayed
  old.wait();
  CHECK(old.in_service());  // the library stays, for the load that replaced it: not resident
  CHECK_FALSE(old.resident());
  CHECK(mapped(HOOKSET_TEST_LOADER_V1));
  host.unload(plugin).wait();
  CHECK(host.current()->history<Setup>().size() == 3);  // the program's history stays
}
