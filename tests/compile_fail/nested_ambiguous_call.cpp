// A slot that two named nested sets have is ambiguous through the outer set: which copy's hooks
// would run? The error says to go through nested<Name>().
// EXPECT: hookset: this slot belongs to more than one nested set of this HookSet
// EXPECT: set\.nested<Name>\(\)
// EXPECT: Run
// EXPECT: Primary
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Run : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
struct Log : hookset::Slot<void(), hookset::Always> { static void default_impl() {} };
using Tools = hookset::HookSet<Run>;
struct Primary;
struct Backup;
int main() {
  hookset::HookSet<hookset::Nested<Primary, Tools>, hookset::Nested<Backup, Tools>, Log> set;
  (void)set.call<Log>();  // unique: fine
  auto dispatch = set.call<Run>();
  (void)dispatch;
}
