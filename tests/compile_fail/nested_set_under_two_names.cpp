// nested<Set>() for a set type nested under two names: which one is meant?
// EXPECT: hookset: nested<N>\(\): N is nested more than once, under the names Names
// EXPECT: nested<Name>\(\)
// EXPECT: Primary
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Run : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
using Tools = hookset::HookSet<Run>;
struct Primary;
struct Backup;
int main() {
  hookset::HookSet<hookset::Nested<Primary, Tools>, hookset::Nested<Backup, Tools>> set;
  (void)set.nested<Primary>();  // by name: fine
  (void)set.nested<Tools>();
}
