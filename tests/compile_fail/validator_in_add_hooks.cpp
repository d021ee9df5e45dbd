// add_hooks registers mutating hooks only: an object whose call operator for a pipeline slot
// returns hookset::Validation would run among the mutators, so hookset says how to register it.
// EXPECT: hookset: this hook returns hookset::Validation: register it as hookset::validator\(hook\)
// EXPECT: an add_hooks object cannot register validators
// EXPECT: CheckToolCall
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct CheckToolCall : hookset::Slot<std::string(std::string), hookset::Pipeline> {
  static std::string default_impl(const std::string& call) { return call; }
};
struct Plugin {
  hookset::Validation operator()(CheckToolCall, const std::string& call) const {
    if (call.empty()) return hookset::reject("empty");
    return hookset::pass();
  }
};
int main() {
  hookset::HookSet<CheckToolCall> set;
  set.add_hooks(Plugin{});
}
