// A chain companion returns Flow.
// EXPECT: hookset: the Chain companion must be callable as `Flow c\(const R&\)`
// EXPECT: Gate
#include <hookset/hookset.hpp>
#include <optional>
struct Yes { bool operator()(const std::optional<int>&) const { return true; } };
struct Gate : hookset::Slot<std::optional<int>(), hookset::Always, hookset::Chain<Yes>> {
  static std::optional<int> default_impl() { return 0; }
};
int main() { hookset::HookSet<Gate> set; (void)set; }
