// EXPECT: hookset: a Singleton slot takes no companion
// EXPECT: PickOne
#include <hookset/hookset.hpp>
#include <optional>
struct PickOne : hookset::Slot<std::optional<int>(), hookset::Singleton, hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<int> default_impl() { return 0; }
};
int main() { hookset::HookSet<PickOne> set; (void)set; }
