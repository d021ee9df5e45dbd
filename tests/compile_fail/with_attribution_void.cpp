// EXPECT: hookset: call<Slot>\(args...\)\.with_attribution\(\): a void slot produces no result
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Notify : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int) {}
};
int main() {
  hookset::HookSet<Notify> set;
  hookset::sync_wait(set.call<Notify>(1).with_attribution());
}
