// JoinVerdicts joins hookset::Verdict<D>s: a slot whose hooks return something else is told so.
// EXPECT: hookset: Aggregate<JoinVerdicts<D>> needs hooks returning hookset::Verdict<D>
// EXPECT: Gate
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Gate : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<hookset::JoinVerdicts<>>,
                            hookset::Output<hookset::Verdicts<>>> {
  static int default_impl(int) { return 0; }
};
int main() { hookset::HookSet<Gate> set; (void)set; }
