// A slot's identity across a library boundary (<hookset/fingerprint.hpp>): slot_shape,
// slot_fingerprint, set_manifest and manifest_mismatch - within this program, and against
// shared libraries built from the same declarations (plugin_slots.hpp), loaded with dlopen:
// one declared alike, one whose Configure takes a long, one whose set lists its slots in
// another order, one whose Settings has another member.
#include "hookset_catch.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "plugins/libraries/plugin_slots.hpp"

namespace {

using plugin_test::Admit;
using plugin_test::Configure;
using plugin_test::HostHooks;

// Slots that differ from Configure in one respect each.
struct ConfigureMode : hookset::Slot<int(std::string_view key, int value), hookset::Fallback> {
  static constexpr std::string_view name = "Configure";
  static int default_impl(std::string_view, int) { return 0; }
};
struct ConfigureResult : hookset::Slot<long(std::string_view key, int value), hookset::Always> {
  static constexpr std::string_view name = "Configure";
  static long default_impl(std::string_view, int) { return 0; }
};
struct Sum {
  int operator()(std::vector<int> outputs) const {
    int total = 0;
    for (int v : outputs) total += v;
    return total;
  }
};
struct ConfigureCompanion : hookset::Slot<int(std::string_view key, int value), hookset::Always,
                                          hookset::Aggregate<Sum>> {
  static constexpr std::string_view name = "Configure";
  static int default_impl(std::string_view, int) { return 0; }
};
// Declared as Configure is, under another name.
struct Setup : hookset::Slot<int(std::string_view key, int value), hookset::Always> {
  static int default_impl(std::string_view, int) { return 0; }
};
namespace elsewhere {
// Configure again, in another namespace: the same name and shape, so the same slot to a library.
struct Configure : hookset::Slot<int(std::string_view key, int value), hookset::Always> {
  static int default_impl(std::string_view, int) { return 1; }
};
}  // namespace elsewhere

// Known at compile time.
static_assert(hookset::slot_fingerprint<Configure> == hookset::slot_fingerprint<Configure>);
static_assert(hookset::set_manifest<HostHooks>.slot_count == 4);

struct library {
  void* handle = nullptr;
  explicit library(const char* path) : handle(dlopen(path, RTLD_NOW | RTLD_LOCAL)) {}
  library(const library&) = delete;
  ~library() {
    if (handle) dlclose(handle);
  }
  const hookset::SetManifest& manifest() const {
    REQUIRE(handle != nullptr);
    auto fn = reinterpret_cast<plugin_test_manifest_fn>(dlsym(handle, "plugin_test_manifest"));
    REQUIRE(fn != nullptr);
    return *fn();
  }
};

}  // namespace

TEST_CASE("slot_shape spells the slot's declaration: signature, mode, companions") {
  CHECK(hookset::slot_shape<Configure> ==
        hookset::slot_shape<elsewhere::Configure>);  // (the Slot<...> base, not the type)
  const std::string shape(hookset::slot_shape<Admit>);
  CHECK(shape.find("hookset::Slot<") == 0);
  CHECK(shape.find("hookset::Always") != std::string::npos);
  CHECK(shape.find("hookset::ShortCircuit") != std::string::npos);
  CHECK(std::string(hookset::slot_shape<ConfigureMode>).find("hookset::Fallback") !=
        std::string::npos);
}

TEST_CASE("slot_fingerprint is the same for a slot of the same name and declaration") {
  CHECK(hookset::slot_fingerprint<Configure> == hookset::slot_fingerprint<elsewhere::Configure>);
}

TEST_CASE("slot_fingerprint differs with the name, the signature, the mode or a companion") {
  const std::uint64_t configure = hookset::slot_fingerprint<Configure>;
  CHECK(hookset::slot_fingerprint<Setup> != configure);
  CHECK(hookset::slot_fingerprint<ConfigureResult> != configure);
  CHECK(hookset::slot_fingerprint<ConfigureMode> != configure);
  CHECK(hookset::slot_fingerprint<ConfigureCompanion> != configure);
  CHECK(hookset::slot_fingerprint<ConfigureMode> != hookset::slot_fingerprint<ConfigureResult>);
}

TEST_CASE("set_manifest lists every slot in order, nested sets' too, with the ABI and toolchain") {
  const hookset::SetManifest& manifest = hookset::set_manifest<HostHooks>;
  CHECK(manifest.abi_version == hookset::abi_version);
  CHECK(std::string_view(manifest.toolchain).size() > 0);
  REQUIRE(manifest.slot_count == 4);
  CHECK(manifest.slots[0].name_view() == "Configure");
  CHECK(manifest.slots[1].name_view() == "Admit");
  CHECK(manifest.slots[2].name_view() == "Apply");
  CHECK(manifest.slots[3].name_view() == "Record");
  CHECK(manifest.slots[0].fingerprint == hookset::slot_fingerprint<Configure>);
  CHECK(manifest.slots[3].shape_view() == hookset::slot_shape<plugin_test::audit::Record>);
  CHECK(hookset::manifest_mismatch(manifest, manifest).empty());
  // Another set, or the same slots in another order: another fingerprint.
  CHECK(hookset::set_manifest<hookset::HookSet<Configure, Admit>>.fingerprint !=
        manifest.fingerprint);
  using Reordered =
      hookset::HookSet<Admit, Configure, plugin_test::Apply, plugin_test::audit::Hooks>;
  CHECK(hookset::set_manifest<Reordered>.fingerprint != manifest.fingerprint);
}

TEST_CASE("manifest_mismatch names the first slot that differs") {
  const hookset::SetManifest& host = hookset::set_manifest<HostHooks>;
  using Changed =
      hookset::HookSet<ConfigureResult, Admit, plugin_test::Apply, plugin_test::audit::Hooks>;
  CHECK(hookset::manifest_mismatch(host, hookset::set_manifest<Changed>) ==
        "slot 'Configure' is declared differently: " + std::string(hookset::slot_shape<Configure>) +
            " in this program, " + std::string(hookset::slot_shape<ConfigureResult>) +
            " in the library");
  using Fewer = hookset::HookSet<Configure, Admit, plugin_test::Apply>;
  CHECK(hookset::manifest_mismatch(host, hookset::set_manifest<Fewer>) ==
        "slot 'Record' of this program's set is not in the library's");
  using More =
      hookset::HookSet<Configure, Admit, plugin_test::Apply, plugin_test::audit::Hooks, Setup>;
  CHECK(hookset::manifest_mismatch(host, hookset::set_manifest<More>) ==
        "slot 'Setup' of the library's set is not in this program's");
  using Reordered =
      hookset::HookSet<Admit, Configure, plugin_test::Apply, plugin_test::audit::Hooks>;
  CHECK(hookset::manifest_mismatch(host, hookset::set_manifest<Reordered>) ==
        "the sets list the same slots in another order: slot 'Configure' is at position 0 in "
        "this program's set, not in the library's");
}

TEST_CASE("manifest_mismatch refuses another ABI version or toolchain before any slot") {
  const hookset::SetManifest& host = hookset::set_manifest<HostHooks>;
  hookset::SetManifest other_abi = host;
  other_abi.abi_version = hookset::abi_version + 1;
  CHECK(hookset::manifest_mismatch(host, other_abi) ==
        "the library was built against hookset's binary interface version " +
            std::to_string(hookset::abi_version + 1) + ", this program against version " +
            std::to_string(hookset::abi_version));
  hookset::SetManifest other_toolchain = host;
  other_toolchain.toolchain = "another compiler/another library";
  CHECK(hookset::manifest_mismatch(host, other_toolchain)
            .starts_with("the library was built with another compiler/another library, this "
                         "program with "));
}

TEST_CASE("a shared library built from the same declarations has the same manifest") {
  const library same(HOOKSET_TEST_PLUGIN_SAME);
  const hookset::SetManifest& theirs = same.manifest();
  const hookset::SetManifest& mine = hookset::set_manifest<HostHooks>;
  CHECK(&theirs != &mine);  // (the library's own copy)
  CHECK(theirs.fingerprint == mine.fingerprint);
  CHECK(hookset::manifest_mismatch(mine, theirs).empty());
}

TEST_CASE("a shared library that declares a slot otherwise is refused, naming the slot") {
  const library other(HOOKSET_TEST_PLUGIN_OTHER_SIGNATURE);
  const std::string why =
      hookset::manifest_mismatch(hookset::set_manifest<HostHooks>, other.manifest());
  CHECK(why.starts_with("slot 'Configure' is declared differently: "));
  CHECK(why.find("long") != std::string::npos);
}

TEST_CASE("a shared library whose set lists the slots in another order is refused") {
  const library other(HOOKSET_TEST_PLUGIN_OTHER_ORDER);
  CHECK(hookset::manifest_mismatch(hookset::set_manifest<HostHooks>, other.manifest())
            .starts_with("the sets list the same slots in another order"));
}

TEST_CASE("a shared library whose slot passes a type of another definition is refused") {
  const library other(HOOKSET_TEST_PLUGIN_OTHER_LAYOUT);
  CHECK(hookset::manifest_mismatch(hookset::set_manifest<HostHooks>, other.manifest()) ==
        "slot 'Apply' is declared alike, but a type it passes has another size or alignment in "
        "the library (" +
            std::string(hookset::slot_shape<plugin_test::Apply>) + "): its definition changed");
}
