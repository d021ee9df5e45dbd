// EXPECT: hookset: Aggregate and Finalize are mutually exclusive
// EXPECT: Both
#include <hookset/hookset.hpp>
#include <vector>
struct Sum { int operator()(std::vector<int> v) const { return static_cast<int>(v.size()); } };
struct Twice { int operator()(int x) const { return 2 * x; } };
struct Both : hookset::Slot<int(), hookset::Always, hookset::Aggregate<Sum>, hookset::Finalize<Twice>> {
  static int default_impl() { return 0; }
};
int main() { hookset::HookSet<Both> set; (void)set; }
