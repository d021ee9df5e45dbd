// A hook must return R, Task<R> or an awaitable of R.
// EXPECT: hookset: the hook takes the slot.s arguments, but its result is wrong: it must return the slot.s result type R
// EXPECT: CountTokens
#include <hookset/hookset.hpp>
#include <optional>
#include <string>
struct CountTokens : hookset::Slot<int(std::string_view), hookset::Always> {
  static int default_impl(std::string_view text) { return static_cast<int>(text.size()); }
};
int main() {
  hookset::HookSet<CountTokens> set;
  set.add<CountTokens>([](std::string_view, std::optional<int>) { return std::string("many"); });
}
