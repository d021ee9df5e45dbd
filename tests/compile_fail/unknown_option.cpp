// EXPECT: hookset: unknown slot option
// EXPECT: Odd
#include <hookset/hookset.hpp>
struct NotAnOption {};
struct Odd : hookset::Slot<int(), hookset::Always, NotAnOption> { static int default_impl() { return 0; } };
int main() { hookset::HookSet<Odd> set; (void)set; }
