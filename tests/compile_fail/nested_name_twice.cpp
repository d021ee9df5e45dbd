// Two nested members under one name: nested<Name>() needs one. (A name may stay incomplete.)
// EXPECT: hookset: two nested sets of a HookSet are named Name
// EXPECT: Primary
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Run : hookset::Slot<int(), hookset::Always> { static int default_impl() { return 0; } };
struct Log : hookset::Slot<void(), hookset::Always> { static void default_impl() {} };
struct Primary;
int main() {
  hookset::HookSet<hookset::Nested<Primary, hookset::HookSet<Run>>,
                   hookset::Nested<Primary, hookset::HookSet<Log>>>
      set;
  (void)set;
}
