// A decision type's lattice needs bottom, failed and join.
// EXPECT: hookset: JoinVerdicts<D, L>: the lattice L
// EXPECT: Level
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
enum class Level { low, high };
template <>
struct hookset::verdict_lattice<Level> {
  static constexpr Level bottom = Level::low;
  static constexpr Level failed = Level::high;
};
struct Rate : hookset::VerdictSlot<hookset::Verdict<Level>(int), hookset::Always> {
  static hookset::Verdict<Level> default_impl(int) { return {}; }
};
int main() { hookset::HookSet<Rate> set; (void)set; }
