// A validator (hookset::validator) can only pass or reject: one returning a Decision, which could
// rewrite the input or complete the dispatch, is rejected with hookset's message.
// EXPECT: hookset: a validator can only pass or reject: return hookset::Validation
// EXPECT: not a decision that may rewrite the input
// EXPECT: CheckToolCall
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct CheckToolCall : hookset::Slot<std::string(std::string), hookset::Pipeline> {
  static std::string default_impl(const std::string& call) { return call; }
};
int main() {
  hookset::HookSet<CheckToolCall> set;
  set.add<CheckToolCall>(hookset::validator(
      [](const std::string& call) -> hookset::decision_t<CheckToolCall> {
        return hookset::rewrite(call + " --dry-run");
      }));
}
