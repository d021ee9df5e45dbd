// The smallest real use of hookset, built by every consumer test (tests/consumers/): the
// installed package found with find_package, the source tree added with add_subdirectory, the
// headers found through pkg-config, and a plain `-I include` compile. Exit status 0 only when
// the dispatch results are right.
#include <hookset/hookset.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

namespace {

struct Greeting : hookset::Slot<std::string(std::string_view name), hookset::Always> {
  static std::string default_impl(std::string_view name) { return "hello " + std::string(name); }
};
struct PickModel : hookset::Slot<std::optional<std::string>(std::string_view task),
                                 hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return "small"; }
};
using Hooks = hookset::HookSet<Greeting, PickModel>;

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
  return failures == 0 ? 0 : 1;
}
