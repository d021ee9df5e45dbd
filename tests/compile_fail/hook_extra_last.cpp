// A Chain slot's hooks take no `last`.
// EXPECT: hookset: this slot does not fold `last`
// EXPECT: ChooseModel
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view), hookset::Fallback,
                                   hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(std::string_view) { return "small"; }
};
int main() {
  hookset::HookSet<ChooseModel> set;
  set.add<ChooseModel>([](std::string_view, std::optional<std::optional<std::string>>) {
    return std::optional<std::string>();
  });
}
