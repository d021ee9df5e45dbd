// EXPECT: hookset: Output<T> requires Aggregate<A> or Finalize<F>
// EXPECT: Lonely
#include <hookset/hookset.hpp>
#include <string>
struct Lonely : hookset::Slot<int(), hookset::Always, hookset::Output<std::string>> {
  static int default_impl() { return 0; }
};
int main() { hookset::HookSet<Lonely> set; (void)set; }
