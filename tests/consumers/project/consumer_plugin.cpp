// The consumer's plugin: one Greeting hook, registered from a shared library built with the
// installed package's hookset_add_plugin.
#include <optional>
#include <string>
#include <string_view>

#include <hookset/plugin.hpp>

#include "consumer_hooks.hpp"

HOOKSET_PLUGIN(consumer::Hooks, registrar) {
  registrar.add<consumer::Greeting>(
      [](std::string_view, std::optional<std::string> last) { return *last + " (plugin)"; });
}
