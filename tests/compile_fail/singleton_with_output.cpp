// Output<T> on a Singleton slot: the rule that fires is that a Singleton takes no companion,
// not "Output<T> requires Aggregate<A> or Finalize<F>" (which a Singleton cannot take either).
// EXPECT: hookset: a Singleton slot takes no companion
// EXPECT: Label
// EXPECT-NOT: Output<T> requires
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct Label : hookset::Slot<int(), hookset::Singleton, hookset::Output<std::string>> {
  static int default_impl() { return 0; }
};
int main() { hookset::HookSet<Label> set; (void)set; }
