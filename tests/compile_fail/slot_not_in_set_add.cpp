// Registering for a slot the set does not hold.
// EXPECT: hookset: this slot is not part of this HookSet
// EXPECT: AuditOutput
#include <hookset/hookset.hpp>
struct Present : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
struct AuditOutput : hookset::Slot<void(int), hookset::Always> { static void default_impl(int) {} };
int main() {
  hookset::HookSet<Present> set;
  set.add<AuditOutput>([](int) {});
}
