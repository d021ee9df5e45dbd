// A slot may appear once in a set, nested sets included.
// EXPECT: hookset: a slot may appear only once in a HookSet
// EXPECT: Twice
#include <hookset/hookset.hpp>
struct Twice : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
struct Other : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
int main() {
  hookset::HookSet<Twice, hookset::HookSet<Other, Twice>> set;
  (void)set;
}
