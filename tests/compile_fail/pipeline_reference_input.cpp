// EXPECT: hookset: a Pipeline slot takes its input as its first parameter, by value
// EXPECT: GateByReference
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct GateByReference : hookset::Slot<int(const std::string&), hookset::Pipeline> {
  static int default_impl(const std::string& input) { return static_cast<int>(input.size()); }
};
int main() { hookset::HookSet<GateByReference> set; (void)set; }
