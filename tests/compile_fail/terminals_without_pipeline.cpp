// EXPECT: Terminals<...> is for Pipeline slots only
// EXPECT: FoldWithTerminals
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct Abort {
  std::string why;
};
struct FoldWithTerminals : hookset::Slot<int(std::string), hookset::Always, hookset::Terminals<Abort>> {
  static int default_impl(std::string input) { return static_cast<int>(input.size()); }
};
int main() { hookset::HookSet<FoldWithTerminals> set; (void)set; }
