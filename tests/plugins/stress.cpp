// Four threads dispatch continuously while another loads, reloads and unloads a plugin, over and
// over: no dispatch sees part of a plugin or two builds at once, and none calls into a library
// that is gone (the sanitizer builds run it too). Each build's Configure hooks add their own
// amount (8 hooks: 8 for one build, 800 for the other), so a dispatch's result says which hooks
// it ran. HOOKSET_PLUGIN_STRESS_CYCLES sets the cycles (10,000 at full size; CI runs fewer).
#include "hookset_catch.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "plugins/libraries/loader_slots.hpp"

using loader_test::Configure;
using loader_test::Hooks;
using Host = hookset::PluginHost<Hooks>;

extern "C" __attribute__((visibility("default"))) void loader_test_park(void*) {}
extern "C" __attribute__((visibility("default"))) void loader_test_observed(const char*,
                                                                            std::size_t) {}
extern "C" __attribute__((visibility("default"))) void loader_test_setup(const char*, std::size_t,
                                                                         int) {}

namespace {

int cycles() {
  if (const char* set = std::getenv("HOOKSET_PLUGIN_STRESS_CYCLES")) return std::atoi(set);
  return 200;
}

}  // namespace

TEST_CASE("plugins: 4 threads dispatch while plugins load, reload and unload") {
  Host host;
  std::atomic<bool> stop{false};
  std::atomic<long> dispatches{0}, with_v1{0}, with_v2{0}, torn{0};
  std::vector<std::thread> dispatchers;
  for (int t = 0; t != 4; ++t)
    dispatchers.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        const int result = hookset::sync_wait(host.call<Configure>("k", 1));
        dispatches.fetch_add(1, std::memory_order_relaxed);
        if (result == 8) with_v1.fetch_add(1, std::memory_order_relaxed);
        else if (result == 800) with_v2.fetch_add(1, std::memory_order_relaxed);
        else if (result != 0) torn.fetch_add(1, std::memory_order_relaxed);
      }
    });

  // (Stopped and joined however the loop below ends: a failure is reported, not a terminate.)
  struct joined {
    std::atomic<bool>& stop;
    std::vector<std::thread>& threads;
    ~joined() {
      stop = true;
      for (std::thread& thread : threads) thread.join();
    }
  };
  const int total = cycles();
  std::vector<hookset::Unloaded> closing;
  {
    joined join{stop, dispatchers};
    for (int cycle = 0; cycle != total; ++cycle) {
      hookset::Plugin plugin = host.load(HOOKSET_TEST_LOADER_V1);
      closing.push_back(host.reload(plugin, HOOKSET_TEST_LOADER_V2));
      closing.push_back(host.unload(plugin));
    }
  }

  for (const hookset::Unloaded& unloaded : closing)
    REQUIRE(unloaded.wait_for(std::chrono::seconds(30)));
  INFO("cycles " << total << ", dispatches " << dispatches << " (" << with_v1 << " saw v1, "
                 << with_v2 << " v2)");
  CHECK(torn == 0);
  CHECK(dispatches > 0);
  CHECK(host.plugins().empty());
  CHECK(hookset::sync_wait(host.call<Configure>("k", 1)) == 0);
}
