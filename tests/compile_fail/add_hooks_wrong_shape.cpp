// add_hooks: a call operator taking the slot first must have the slot's hook shape.
// EXPECT: hookset: this slot folds `last`
// EXPECT: ValidatePrompt
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct ValidatePrompt : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Always> {
  static std::optional<std::string> default_impl(std::string_view) { return std::nullopt; }
};
struct Policy {
  std::optional<std::string> operator()(ValidatePrompt, std::string_view) const { return std::nullopt; }
};
int main() {
  hookset::HookSet<ValidatePrompt> set;
  set.add_hooks(Policy{});
}
