// A historic slot that keeps no call.
// EXPECT: hookset: Historic<N> needs N >= 1
// EXPECT: Configure
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Configure : hookset::Slot<void(int), hookset::Always, hookset::Historic<0>> {
  static void default_impl(int) {}
};
int main() { hookset::HookSet<Configure> set; (void)set; }
