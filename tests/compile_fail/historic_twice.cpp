// Historic given twice.
// EXPECT: hookset: each companion option \(and Concurrent / MaxConcurrent, Historic\) may be given once
// EXPECT: Configure
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Configure
    : hookset::Slot<void(int), hookset::Always, hookset::Historic<2>, hookset::Historic<4>> {
  static void default_impl(int) {}
};
int main() { hookset::HookSet<Configure> set; (void)set; }
