// A set's own slot may not also be a slot of a named nested set: nested<Name>() could reach only
// one of the two. Named nested sets share slots only with each other (or unnamed nested sets).
// EXPECT: hookset: a slot may appear only once in a HookSet, nested sets included
// EXPECT: not with the set's own slots
// EXPECT: Run
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Run : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
struct Primary;
int main() {
  hookset::HookSet<hookset::Nested<Primary, hookset::HookSet<Run>>, Run> set;
  (void)set;
}
