// A matcher predicate that cannot be called with the slot's key type.
// EXPECT: hookset: hookset::matching\(predicate\): the predicate must be callable as `bool predicate\(const Key&\)`
// EXPECT: RunTool
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string_view>
struct RunTool : hookset::Slot<void(int, std::string_view tool), hookset::Always, hookset::Keyed> {
  static void default_impl(int, std::string_view) {}
};
int main() {
  hookset::HookSet<RunTool> set;
  set.add<RunTool>(hookset::matching([](int key) { return key > 0; }), [](int, std::string_view) {});
}
