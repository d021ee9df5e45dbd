// The slots a test program and the libraries it loads (tests/plugins/) both declare, as a host
// and its plugins share a header. HOOKSET_TEST_PLUGIN_VARIANT, set by a library built to differ,
// changes one declaration: 1 the signature of Configure, 2 the order of the set's slots, 3 the
// definition of Settings (a member added, the name kept: what a plugin built against an older
// header looks like).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <hookset/fingerprint.hpp>
#include <hookset/hookset.hpp>

#if !defined(HOOKSET_TEST_PLUGIN_VARIANT)
#define HOOKSET_TEST_PLUGIN_VARIANT 0
#endif

namespace plugin_test {

#if HOOKSET_TEST_PLUGIN_VARIANT == 1
struct Configure : hookset::Slot<int(std::string_view key, long value), hookset::Always> {
  static int default_impl(std::string_view, long) { return 0; }
};
#else
struct Configure : hookset::Slot<int(std::string_view key, int value), hookset::Always> {
  static int default_impl(std::string_view, int) { return 0; }
};
#endif

struct Admit : hookset::Slot<std::optional<std::string>(std::string_view prompt), hookset::Always,
                             hookset::Chain<hookset::ShortCircuit>> {
  static std::optional<std::string> default_impl(std::string_view) { return std::nullopt; }
};

struct Settings {
  std::string key;
#if HOOKSET_TEST_PLUGIN_VARIANT == 3
  std::string value;
#else
  int value = 0;
#endif
};
struct Apply : hookset::Slot<void(const Settings& settings), hookset::Always> {
  static void default_impl(const Settings&) {}
};

namespace audit {
struct Record : hookset::Slot<void(std::string_view line), hookset::Always> {
  static void default_impl(std::string_view) {}
};
using Hooks = hookset::HookSet<Record>;
}  // namespace audit

#if HOOKSET_TEST_PLUGIN_VARIANT == 2
using HostHooks = hookset::HookSet<Admit, Configure, Apply, audit::Hooks>;
#else
using HostHooks = hookset::HookSet<Configure, Admit, Apply, audit::Hooks>;
#endif

}  // namespace plugin_test

// What each test library exports: its view of HostHooks.
extern "C" {
using plugin_test_manifest_fn = const hookset::SetManifest* (*)();
}
