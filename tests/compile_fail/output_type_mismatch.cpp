// With Output<T> the aggregate must produce T.
// EXPECT: hookset: the Aggregate companion must be callable as
// EXPECT: Labels
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
#include <vector>
struct CountThem { int operator()(std::vector<int> v) const { return static_cast<int>(v.size()); } };
struct Labels : hookset::Slot<int(), hookset::Always, hookset::Aggregate<CountThem>, hookset::Output<std::string>> {
  static int default_impl() { return 0; }
};
int main() { hookset::HookSet<Labels> set; (void)set; }
