// history<S>() of a slot that keeps none.
// EXPECT: hookset: history<Slot>\(\) and clear_history<Slot>\(\) are for Historic slots
// EXPECT: Validate
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Validate : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int) {}
};
int main() {
  hookset::HookSet<Validate> set;
  auto calls = set.history<Validate>();
  (void)calls;
}
