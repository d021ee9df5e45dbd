// The smallest real use of hookset, built by every consumer test (tests/consumers/): the
// installed package found with find_package, the source tree added with add_subdirectory, the
// headers found through pkg-config, and a plain `-I include` compile - with CMake, also a plugin
// built with hookset_add_plugin and loaded. Exit status 0 only when the dispatch results are
// right.
#include <hookset/hookset.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "consumer_hooks.hpp"
#if defined(CONSUMER_PLUGIN)
#include <hookset/plugin.hpp>
#endif

namespace {

using consumer::Greeting;
using consumer::Hooks;
using consumer::PickModel;

int failures = 0;
void expect(const std::string& actual, const std::string& expected) {
  if (actual == expected) {
    std::printf("ok: %s\n", actual.c_str());
  } else {
    std::printf("WRONG: \"%s\", expected \"%s\"\n", actual.c_str(), expected.c_str());
    ++failures;
  }
}

}  // namespace

int main() {
  Hooks hooks;
  hooks.add<Greeting>(
      [](std::string_view, std::optional<std::string> last) { return *last + "!"; });
  hooks.add<PickModel>([](std::string_view task) -> hookset::Task<std::optional<std::string>> {
    if (task == "long") co_return "large";
    co_return std::nullopt;
  });

  expect(hookset::sync_wait(hooks.call<Greeting>("consumer")), "hello consumer!");
  expect(hookset::sync_wait(hooks.call<PickModel>("long")).value_or("none"), "large");
  expect(hookset::sync_wait(hooks.call<PickModel>("short")).value_or("none"), "small");
#if defined(CONSUMER_PLUGIN)
  {
    // The plugin's hook, merged after the program's own (built with hookset_add_plugin).
    hookset::PluginHost<Hooks> host(hooks);
    hookset::Plugin plugin = host.load(CONSUMER_PLUGIN);
    expect(hookset::sync_wait(host.call<Greeting>("consumer")), "hello consumer! (plugin)");
    host.unload(plugin).wait();
    expect(hookset::sync_wait(host.call<Greeting>("consumer")), "hello consumer!");
  }
#endif
  return failures == 0 ? 0 : 1;
}
