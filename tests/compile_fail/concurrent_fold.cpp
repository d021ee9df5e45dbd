// EXPECT: hookset: Concurrent / MaxConcurrent<N> is for slots whose hooks do not depend
// EXPECT: ConcurrentFold
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct ConcurrentFold : hookset::Slot<int(int), hookset::Always, hookset::Concurrent> {
  static int default_impl(int x) { return x; }
};
int main() { hookset::HookSet<ConcurrentFold> set; (void)set; }
