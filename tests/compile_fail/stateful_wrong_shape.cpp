// EXPECT: hookset: this slot folds `last`
// EXPECT: Forgetful
#include <hookset/hookset.hpp>
struct Count : hookset::Slot<int(int), hookset::Always> { static int default_impl(int x) { return x; } };
struct Forgetful {
  int n = 0;
  int operator()(int x) { return x + ++n; }  // no `last`: wrong for a fold slot
};
int main() {
  hookset::HookSet<Count> set;
  set.add<Count>(hookset::Stateful{Forgetful{}});
}
