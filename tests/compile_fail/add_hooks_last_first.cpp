// add_hooks: `last` first instead of last is reported, naming the slot.
// EXPECT: hookset: add_hooks\(object\): the object's operator\(\) for slot Slot does not match the slot's signature: the hook cannot be called with the slot's arguments
// EXPECT: Score
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct Score : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view s) { return static_cast<int>(s.size()); }
};
struct Policy {
  int operator()(Score, std::optional<int> last, std::string_view) const { return last.value_or(0); }
};
int main() {
  hookset::HookSet<Score> set;
  set.add_hooks(Policy{});
}
