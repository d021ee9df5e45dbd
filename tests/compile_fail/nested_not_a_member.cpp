// EXPECT: hookset: nested<N>\(\): N must be a HookSet listed directly among this set's members
#include <hookset/hookset.hpp>
struct Tick : hookset::Slot<void(), hookset::Always> { static void default_impl() {} };
struct Tock : hookset::Slot<void(), hookset::Always> { static void default_impl() {} };
int main() {
  hookset::HookSet<Tick, hookset::HookSet<Tock>> set;
  set.nested<hookset::HookSet<Tick>>();
}
