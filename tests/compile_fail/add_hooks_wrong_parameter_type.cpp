// add_hooks: an operator taking the slot first with a wrong parameter type is reported, even
// next to a correct operator for another slot (it is never silently skipped).
// EXPECT: hookset: add_hooks\(object\): the object's operator\(\) for slot Slot does not match the slot's signature: the hook cannot be called with the slot's arguments
// EXPECT: Audit
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Fallback,
                                   hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return "small"; }
};
struct Audit : hookset::Slot<void(const std::string&), hookset::Always> {
  static void default_impl(const std::string&) {}
};
struct Policy {
  std::optional<std::string> operator()(ChooseModel, std::string_view) const { return "large"; }
  void operator()(Audit, int) const {}  // wrong: Audit passes a std::string
};
int main() {
  hookset::HookSet<ChooseModel, Audit> set;
  set.add_hooks(Policy{});
}
