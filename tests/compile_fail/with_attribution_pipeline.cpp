// EXPECT: hookset: call<Slot>\(args...\)\.with_attribution\(\): a Pipeline slot's result already names
// EXPECT: PipelineResult::decided_by
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
#include <string>
struct Rewrite : hookset::Slot<std::string(std::string), hookset::Pipeline> {
  static std::string default_impl(const std::string& input) { return input; }
};
int main() {
  hookset::HookSet<Rewrite> set;
  auto result = hookset::sync_wait(set.call<Rewrite>(std::string("x")).with_attribution());
  (void)result;
}
