// A set-wide interceptor must fit every slot of the set: this one returns int, which the
// string slot's dispatch does not yield.
// EXPECT: hookset: an interceptor is called as interceptor\(hookset::Next<Slot> next, args...\)
// EXPECT: Name
#include <hookset/hookset.hpp>
#include <string>
struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Name : hookset::Slot<std::string(int), hookset::Singleton> {
  static std::string default_impl(int) { return "n"; }
};
int main() {
  hookset::HookSet<Count, Name> set;
  set.intercept_all([](auto, int x) -> int { return x; });
}
