// EXPECT: hookset: a Pipeline slot takes its input as its first parameter, by value
// EXPECT: GateToolCall
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
#include <vector>
struct Sum {
  int operator()(std::vector<int> outputs) const { return static_cast<int>(outputs.size()); }
};
struct GateToolCall : hookset::Slot<int(std::string), hookset::Pipeline, hookset::Aggregate<Sum>> {
  static int default_impl(std::string input) { return static_cast<int>(input.size()); }
};
int main() { hookset::HookSet<GateToolCall> set; (void)set; }
