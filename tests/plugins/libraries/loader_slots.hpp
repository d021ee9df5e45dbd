// The set a test program (tests/plugins/loader.cpp, stress.cpp) and the plugins it loads
// (loader_plugin.cpp) both declare, as a host and its plugins share a header.
// HOOKSET_TEST_LOADER_DECLARES_LONG, set by one plugin, declares Configure with a long.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <hookset/guard.hpp>
#include <hookset/hookset.hpp>
#include <hookset/keyed.hpp>
#include <hookset/plugin.hpp>

namespace loader_test {

#if defined(HOOKSET_TEST_LOADER_DECLARES_LONG)
struct Configure : hookset::Slot<int(std::string_view key, long value), hookset::Always> {
  static int default_impl(std::string_view, long) { return 0; }
};
#else
// Each plugin build adds its own amount per hook: a dispatch's result tells which hooks ran.
struct Configure : hookset::Slot<int(std::string_view key, int value), hookset::Always> {
  static int default_impl(std::string_view, int) { return 0; }
};
#endif

// A guard: the plugins deny tools.
struct CheckTool
    : hookset::VerdictSlot<hookset::Verdict<>(std::string_view tool), hookset::Always> {
  static hookset::Verdict<> default_impl(std::string_view) { return {}; }
};

// Keyed by the tool's name.
struct Notify
    : hookset::Slot<int(int value, std::string_view tool), hookset::Always, hookset::Keyed> {
  static int default_impl(int, std::string_view) { return 0; }
};

// Where a plugin's coroutine hook suspends.
struct Slow : hookset::Slot<int(int value), hookset::Always> {
  static int default_impl(int) { return 0; }
};

// Keeps its last 4 calls: a plugin loaded later receives them (Historic).
struct Setup
    : hookset::Slot<void(std::string_view key, int value), hookset::Always, hookset::Historic<4>> {
  static void default_impl(std::string_view, int) {}
};

using Hooks = hookset::HookSet<Configure, CheckTool, Notify, Slow, Setup>;

}  // namespace loader_test

// Defined by the test program (exported to its plugins): a plugin's coroutine hook hands it the
// coroutine it suspends, to resume when the test says.
extern "C" void loader_test_park(void* coroutine_address);
// Defined by the test program: a plugin's observer reports each dispatch it is told of.
extern "C" void loader_test_observed(const char* slot, std::size_t length);
// Defined by the test program: a plugin's Setup hook reports each call it receives.
extern "C" void loader_test_setup(const char* key, std::size_t length, int value);
