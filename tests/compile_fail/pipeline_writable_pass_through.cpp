// EXPECT: hookset: a Pipeline slot's parameters after the input are passed unchanged
// EXPECT: by const reference
// EXPECT: GateWithMutableMeta
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct ToolMeta {
  std::string owner;
};
struct GateWithMutableMeta
    : hookset::Slot<int(std::string, ToolMeta&), hookset::Pipeline, hookset::Fallback> {
  static hookset::Decision<std::string, int> default_impl(const std::string&, ToolMeta&) {
    return hookset::pass();
  }
};
int main() { hookset::HookSet<GateWithMutableMeta> set; (void)set; }
