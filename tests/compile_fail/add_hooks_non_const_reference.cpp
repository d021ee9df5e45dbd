// add_hooks: an operator taking the slot first whose parameter is a non-const reference (the
// slot hands its value parameter as a const lvalue) is reported, naming the slot, even next to
// a correct operator for another slot: the slot never silently keeps its default.
// EXPECT: hookset: add_hooks\(object\): the object's operator\(\) for slot Slot does not match the slot's signature: it takes a parameter by non-const reference
// EXPECT: Rewrite
// EXPECT-NOT: implements no slot
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct Count : hookset::Slot<int(int), hookset::Always> { static int default_impl(int x) { return x; } };
struct Rewrite : hookset::Slot<std::string(std::string), hookset::Singleton> {
  static std::string default_impl(std::string s) { return s; }
};
struct Policy {
  int operator()(Count, int x, std::optional<int>) const { return x + 1; }
  std::string operator()(Rewrite, std::string& s) const { return s + "!"; }  // wrong: const lvalue
};
int main() {
  hookset::HookSet<Count, Rewrite> set;
  set.add_hooks(Policy{});
}
