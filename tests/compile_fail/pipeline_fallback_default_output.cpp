// EXPECT: hookset: the slot's default_impl must be callable as ExpectedDefault
// EXPECT: Decision<std::(__cxx11::|__1::)?(basic_string<char|string)
// EXPECT: DecideByOutput
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
// A Pipeline + Fallback slot's default decides: returning the output instead is an error.
struct DecideByOutput
    : hookset::Slot<int(std::string), hookset::Pipeline, hookset::Fallback> {
  static int default_impl(const std::string& input) { return static_cast<int>(input.size()); }
};
int main() { hookset::HookSet<DecideByOutput> set; (void)set; }
