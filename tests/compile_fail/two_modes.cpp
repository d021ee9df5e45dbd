// EXPECT: hookset: a slot needs exactly one mode
// EXPECT: Undecided
#include <hookset/hookset.hpp>
struct Undecided : hookset::Slot<int(), hookset::Always, hookset::Fallback> { static int default_impl() { return 0; } };
int main() { hookset::HookSet<Undecided> set; (void)set; }
