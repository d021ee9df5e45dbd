// A key selector given to a slot that is not Keyed.
// EXPECT: hookset: a key selector \(hookset::key, prefix, glob, matching, any_key\) is for Keyed slots
// EXPECT: RunTool
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string_view>
struct RunTool : hookset::Slot<void(int, std::string_view tool), hookset::Always> {
  static void default_impl(int, std::string_view) {}
};
int main() {
  hookset::HookSet<RunTool> set;
  set.add<RunTool>(hookset::key("fs_read"), [](int, std::string_view) {});
}
