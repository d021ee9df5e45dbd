// A hook returning hookset::Validation is meant as a validator: registered without
// hookset::validator it would run among the mutating hooks, so hookset says how to register it.
// EXPECT: hookset: this hook returns hookset::Validation: register it as hookset::validator\(hook\)
// EXPECT: CheckToolCall
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct CheckToolCall : hookset::Slot<std::string(std::string), hookset::Pipeline> {
  static std::string default_impl(const std::string& call) { return call; }
};
int main() {
  hookset::HookSet<CheckToolCall> set;
  set.add<CheckToolCall>([](const std::string& call) -> hookset::Validation {
    if (call.empty()) return hookset::reject("empty");
    return hookset::pass();
  });
}
