// A historic slot whose parameter can be copied but not assigned over the oldest kept call.
// EXPECT: hookset: a Historic slot keeps a copy of each call's arguments
// EXPECT: Configure
// EXPECT: Pinned
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Pinned {
  const int value;
};
struct Configure : hookset::Slot<void(Pinned), hookset::Always, hookset::Historic<4>> {
  static void default_impl(Pinned) {}
};
int main() { hookset::HookSet<Configure> set; (void)set; }
