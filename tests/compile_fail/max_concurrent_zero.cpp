// EXPECT: hookset: MaxConcurrent<N> needs N >= 1
// EXPECT: BoundedAudit
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct BoundedAudit : hookset::Slot<void(int), hookset::Always, hookset::MaxConcurrent<0>> {
  static void default_impl(int) {}
};
int main() { hookset::HookSet<BoundedAudit> set; (void)set; }
