// Two unnamed nested sets of one type: nested<Set>() could not tell them apart. The error
// suggests naming each copy.
// EXPECT: hookset: a nested HookSet type may be listed only once unnamed
// EXPECT: hookset::Nested<Name, NestedSet>
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Run : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
using Tools = hookset::HookSet<Run>;
int main() {
  hookset::HookSet<Tools, Tools> set;
  (void)set;
}
