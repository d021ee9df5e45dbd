// EXPECT: hookset: the slot needs a default
// EXPECT: NoDefault
#include <hookset/hookset.hpp>
struct NoDefault : hookset::Slot<int(int), hookset::Always> {};
int main() { hookset::HookSet<NoDefault> set; (void)set; }
