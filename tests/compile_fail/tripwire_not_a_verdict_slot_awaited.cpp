// A tripwire over another slot's dispatch, awaited at once: hookset says why first, and once (not
// sync_wait, complaining about what around() returned).
// EXPECT: hookset: a tripwire's guards are a verdict slot's dispatch
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Check : hookset::Slot<bool(int), hookset::Always> {
  static bool default_impl(int) { return true; }
};
hookset::Task<int> work() { co_return 1; }
int main() {
  hookset::HookSet<Check> set;
  (void)hookset::sync_wait(hookset::tripwire(set.call<Check>(1)).around(work()));
}
