// VerdictSlot's hooks return hookset::Verdict<D>.
// EXPECT: hookset: Aggregate<JoinVerdicts<D>> needs hooks returning hookset::Verdict<D>
// EXPECT: Gate
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Gate : hookset::VerdictSlot<bool(int), hookset::Always> {
  static bool default_impl(int) { return true; }
};
int main() { hookset::HookSet<Gate> set; (void)set; }
