// A historic slot whose parameter cannot be copied into its history.
// EXPECT: hookset: a Historic slot keeps a copy of each call's arguments
// EXPECT: Configure
// EXPECT: unique_ptr
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <memory>
struct Configure : hookset::Slot<void(int, const std::unique_ptr<int>&), hookset::Always,
                                 hookset::Historic<4>> {
  static void default_impl(int, const std::unique_ptr<int>&) {}
};
int main() { hookset::HookSet<Configure> set; (void)set; }
