// EXPECT: hookset: call<Slot>\(args...\)\.with_attribution\(\): an Aggregate slot's result is its companion's
// EXPECT: std::vector<hookset::Attributed<R>>
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <vector>
struct Sum {
  int operator()(std::vector<int> outputs) const { return static_cast<int>(outputs.size()); }
};
struct Total : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return x; }
};
int main() {
  hookset::HookSet<Total> set;
  auto total = hookset::sync_wait(set.call<Total>(1).with_attribution());
  (void)total;
}
