// An owned hook is called as const; mutable state belongs in Stateful<T>.
// EXPECT: hookset: an owned hook is called as const
// EXPECT: Stateful
// EXPECT: NextId
#include <hookset/hookset.hpp>
#include <optional>
struct NextId : hookset::Slot<int(), hookset::Singleton> {
  static int default_impl() { return 0; }
};
int main() {
  hookset::HookSet<NextId> set;
  set.add<NextId>([counter = 0]() mutable { return ++counter; });
}
