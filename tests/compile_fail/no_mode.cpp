// EXPECT: hookset: a slot needs exactly one mode
// EXPECT: Modeless
#include <hookset/hookset.hpp>
struct Modeless : hookset::Slot<int()> { static int default_impl() { return 0; } };
int main() { hookset::HookSet<Modeless> set; (void)set; }
