// add_hooks: an object whose only operator takes the slot first with a non-const reference
// parameter is told what is wrong with that operator, not that it implements no slot.
// EXPECT: hookset: add_hooks\(object\): the object's operator\(\) for slot Slot does not match the slot's signature
// EXPECT: Rewrite
// EXPECT-NOT: implements no slot
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct Rewrite : hookset::Slot<std::string(std::string), hookset::Singleton> {
  static std::string default_impl(std::string s) { return s; }
};
struct Policy {
  std::string operator()(Rewrite, std::string& s) const { return s + "!"; }  // wrong: const lvalue
};
int main() {
  hookset::HookSet<Rewrite> set;
  set.add_hooks(Policy{});
}
