// A validator sees the final input as const: one taking it by non-const reference is rejected
// with hookset's message.
// EXPECT: hookset: a validator sees the final input and cannot change it
// EXPECT: not by non-const reference
// EXPECT: CheckToolCall
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct CheckToolCall : hookset::Slot<std::string(std::string), hookset::Pipeline> {
  static std::string default_impl(const std::string& call) { return call; }
};
int main() {
  hookset::HookSet<CheckToolCall> set;
  set.add<CheckToolCall>(hookset::validator([](std::string& call) -> hookset::Validation {
    call += " --dry-run";
    return hookset::pass();
  }));
}
