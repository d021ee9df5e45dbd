// A fold slot's hook must take the trailing `std::optional<R> last`.
// EXPECT: hookset: this slot folds `last`
// EXPECT: ValidatePrompt
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct ValidatePrompt : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Always> {
  static std::optional<std::string> default_impl(std::string_view) { return std::nullopt; }
};
int main() {
  hookset::HookSet<ValidatePrompt> set;
  set.add<ValidatePrompt>([](std::string_view) -> std::optional<std::string> { return std::nullopt; });
}
