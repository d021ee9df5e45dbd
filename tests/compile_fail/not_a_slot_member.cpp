// A HookSet member that is neither a slot nor a HookSet: one error, ours, naming it.
// EXPECT: hookset: HookSet<...> takes slot types
// EXPECT: NotASlot
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct NotASlot {
  static int default_impl() { return 0; }
};
int main() {
  hookset::HookSet<NotASlot> set;
  (void)set;
}
