// A shared library that tells its view of the host's set (plugin_slots.hpp), built once as
// declared and once per HOOKSET_TEST_PLUGIN_VARIANT: what a plugin hands a host to be checked.
#include "plugin_slots.hpp"

extern "C" __attribute__((visibility("default"))) const hookset::SetManifest*
plugin_test_manifest() {
  return &hookset::set_manifest<plugin_test::HostHooks>;
}
