// Validators belong to Pipeline slots (they run after the mutating hooks): hookset::validator
// on any other slot is rejected with hookset's message.
// EXPECT: hookset: hookset::validator\(fn\) registers a validating hook, which only a Pipeline slot has
// EXPECT: CountTokens
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string_view>
struct CountTokens : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view text) { return static_cast<int>(text.size()); }
};
int main() {
  hookset::HookSet<CountTokens> set;
  set.add<CountTokens>(hookset::validator(
      [](std::string_view, std::optional<int>) -> hookset::Validation { return hookset::pass(); }));
}
