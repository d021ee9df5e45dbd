// An interceptor must be callable as (hookset::Next<Slot>, args...) and return the dispatch's
// result: this one forgets the Next.
// EXPECT: hookset: an interceptor is called as interceptor\(hookset::Next<Slot> next, args...\)
// EXPECT: Count
#include <hookset/hookset.hpp>
struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
int main() {
  hookset::HookSet<Count> set;
  set.intercept<Count>([](int x) { return x; });
}
