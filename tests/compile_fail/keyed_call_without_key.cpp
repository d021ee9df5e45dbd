// A keyed dispatch without its key (the last argument).
// EXPECT: hookset: call<Slot>\(args..., key\) of a Keyed slot takes exactly the slot's arguments: the key is the last argument
// EXPECT: RunTool
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string_view>
struct RunTool : hookset::Slot<int(int, std::string_view tool), hookset::Always, hookset::Keyed> {
  static int default_impl(int x, std::string_view) { return x; }
};
int main() {
  hookset::HookSet<RunTool> set;
  auto dispatch = set.call<RunTool>(1);
  (void)dispatch;
}
