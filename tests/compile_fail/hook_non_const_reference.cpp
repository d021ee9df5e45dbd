// add<S>: a hook taking a value parameter of the slot by non-const reference is told why it
// does not fit (the slot hands that argument as a const lvalue), naming the slot.
// EXPECT: hookset: the hook takes a parameter by non-const reference, but the slot hands each argument declared by value as a const lvalue
// EXPECT: Rewrite
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct Rewrite : hookset::Slot<std::string(std::string), hookset::Singleton> {
  static std::string default_impl(std::string s) { return s; }
};
int main() {
  hookset::HookSet<Rewrite> set;
  set.add<Rewrite>([](std::string& s) { return s + "!"; });
}
