// EXPECT: hookset: a void slot takes no companion
// EXPECT: Notify
#include <hookset/hookset.hpp>
struct Never { void operator()(void) const {} };
struct Notify : hookset::Slot<void(int), hookset::Always, hookset::Finalize<Never>> {
  static void default_impl(int) {}
};
int main() { hookset::HookSet<Notify> set; (void)set; }
