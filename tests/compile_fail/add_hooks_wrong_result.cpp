// add_hooks: an operator with the right parameters but the wrong result says which part is wrong.
// EXPECT: hookset: the hook takes the slot's arguments, but its result is wrong
// EXPECT: Score
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct Score : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) { return static_cast<int>(s.size()); }
};
struct Policy {
  std::string operator()(Score, std::string_view, std::optional<int>) const { return "high"; }
};
int main() {
  hookset::HookSet<Score> set;
  set.add_hooks(Policy{});
}
