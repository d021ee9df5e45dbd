// The plugins tests/plugins/ loads with hookset::PluginHost, one build per
// HOOKSET_TEST_LOADER_PLUGIN:
//   1 "v1": 8 Configure hooks adding 1 each, a guard denying "rm", a keyed Notify hook for "fs",
//     a Setup hook reporting its calls
//   2 "v2": a new build of it: 8 Configure hooks adding 100 each, a guard denying "mv"
//   3 "throws": registers a hook, then its entry point throws
//   4 "coroutine": a coroutine hook on Slow that suspends until the test resumes it
//   5 "interceptor": an interceptor of Configure adding 1000 to the result
//   6 "other_abi": an entry point of another hookset binary interface version
//   7 "observer": an observer of the program's set, and one Configure hook adding 1
//   (the "other_signature", "hidden" and "unique" builds are v1 built otherwise: CMake)
#include <coroutine>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "loader_slots.hpp"

#if !defined(HOOKSET_TEST_LOADER_PLUGIN)
#error "HOOKSET_TEST_LOADER_PLUGIN: which plugin to build"
#endif

using loader_test::Hooks;

namespace {

// Adds `amount` to what the hooks before it made.
struct adder {
  int amount;
  int operator()(std::string_view, int, std::optional<int> last) const {
    return last.value_or(0) + amount;
  }
};

[[maybe_unused]] void register_configure(hookset::Registrar<Hooks>& registrar, int amount) {
  for (int i = 0; i != 8; ++i) registrar.add<loader_test::Configure>(adder{amount});
}

[[maybe_unused]] hookset::Verdict<> deny(std::string_view tool, std::string_view denied) {
  if (tool == denied) return {hookset::Permission::deny, "denied by plugin"};
  return {};
}

// Suspends until the test program resumes the coroutine.
struct [[maybe_unused]] parked {
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> coroutine) const {
    loader_test_park(coroutine.address());
  }
  void await_resume() const noexcept {}
};

// Tells the test program of each dispatch it observes.
struct [[maybe_unused]] reporting_observer : hookset::Observer {
  void on_dispatch_begin(std::string_view slot, std::uint64_t) override {
    loader_test_observed(slot.data(), slot.size());
  }
};

}  // namespace

#if HOOKSET_TEST_LOADER_PLUGIN == 6

extern "C" __attribute__((visibility("default"))) const hookset::PluginEntry*
hookset_plugin_entry() {
  static constexpr hookset::PluginEntry entry{hookset::abi_version + 1, nullptr, nullptr, nullptr,
                                              nullptr};  // (read no further)
  return &entry;
}

#else

HOOKSET_PLUGIN(Hooks, registrar) {
#if HOOKSET_TEST_LOADER_PLUGIN == 1
  register_configure(registrar, 1);
  registrar.add<loader_test::Setup>(
      [](std::string_view key, int value) { loader_test_setup(key.data(), key.size(), value); });
  registrar.add<loader_test::CheckTool>([](std::string_view tool) { return deny(tool, "rm"); });
  registrar.add<loader_test::Notify>(hookset::key("fs"),
                                     [](int value, std::string_view, std::optional<int> last) {
    return last.value_or(0) + value + 10;
  });
#elif HOOKSET_TEST_LOADER_PLUGIN == 2
  register_configure(registrar, 100);
  registrar.add<loader_test::CheckTool>([](std::string_view tool) { return deny(tool, "mv"); });
#elif HOOKSET_TEST_LOADER_PLUGIN == 3
  register_configure(registrar, 1);
  throw std::runtime_error("this plugin refuses to register");
#elif HOOKSET_TEST_LOADER_PLUGIN == 4
  registrar.add<loader_test::Slow>([](int value, std::optional<int>) -> hookset::Task<int> {
    co_await parked{};
    co_return value + 1;
  });
#elif HOOKSET_TEST_LOADER_PLUGIN == 7
  registrar.observe(std::make_shared<reporting_observer>());
  registrar.add<loader_test::Configure>(adder{1}, {.name = "observed"});
#elif HOOKSET_TEST_LOADER_PLUGIN == 5
  registrar.intercept<loader_test::Configure>(
      [](hookset::Next<loader_test::Configure> next, std::string_view key,
         int value) -> hookset::Task<int> { co_return co_await next(key, value) + 1000; });
#endif
}

#endif
