// ShortCircuit / FirstSuccess need has_value() on the result: one error, ours, naming the slot.
// EXPECT: hookset: Chain<ShortCircuit> and Chain<FirstSuccess> look at the result's has_value\(\)
// EXPECT: Gate
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Gate : hookset::Slot<int(int), hookset::Always, hookset::Chain<hookset::ShortCircuit>> {
  static int default_impl(int x) { return x; }
};
int main() { hookset::HookSet<Gate> set; (void)set; }
