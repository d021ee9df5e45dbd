// A hook whose parameters do not fit says so (not "wrong result").
// EXPECT: hookset: the hook cannot be called with the slot's arguments
// EXPECT: CountTokens
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct CountTokens : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view text) { return static_cast<int>(text.size()); }
};
int main() {
  hookset::HookSet<CountTokens> set;
  set.add<CountTokens>([](int, std::optional<int>) { return 1; });
}
