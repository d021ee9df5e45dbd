// A Keyed slot needs a parameter: its last one is the key.
// EXPECT: hookset: a Keyed slot takes its key as its last parameter
// EXPECT: NoKey
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct NoKey : hookset::Slot<int(), hookset::Always, hookset::Keyed> {
  static int default_impl() { return 0; }
};
int main() {
  hookset::HookSet<NoKey> set;
  (void)set;
}
