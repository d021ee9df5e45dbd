// EXPECT: hookset: add_hooks\(object\): the object implements no slot of this HookSet
// EXPECT: Unrelated
#include <hookset/hookset.hpp>
struct Tick : hookset::Slot<void(), hookset::Always> { static void default_impl() {} };
struct Unrelated { void operator()(int) const {} };
int main() {
  hookset::HookSet<Tick> set;
  set.add_hooks(Unrelated{});
}
