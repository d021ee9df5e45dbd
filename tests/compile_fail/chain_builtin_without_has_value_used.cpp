// A slot with Chain<ShortCircuit> on a result without has_value(), listed, called, registered,
// configured and counted: one error, ours; the set does hold the slot, so no false "not part of
// this HookSet" follows, nor errors from the code around the call.
// EXPECT: hookset: Chain<ShortCircuit> and Chain<FirstSuccess> look at the result's has_value\(\)
// EXPECT: Gate
// EXPECT-NOT: not part of this HookSet
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Gate : hookset::Slot<int(int), hookset::Always, hookset::Chain<hookset::ShortCircuit>> {
  static int default_impl(int x) { return x; }
};
struct Other : hookset::Slot<int(int), hookset::Always> { static int default_impl(int x) { return x; } };
using Inner = hookset::HookSet<Gate>;
hookset::Task<int> twice(const hookset::HookSet<Other, Inner>& set) {
  co_return co_await set.call<Gate>(1) + co_await set.call<Gate>(2);
}
int main() {
  hookset::HookSet<Other, Inner> outer;
  Inner inner;
  int result = hookset::sync_wait(inner.call<Gate>(1));
  inner.add<Gate>([](int x) { return x; });
  inner.configure<Gate>(hookset::ShortCircuit{});
  inner.clear<Gate>();
  result += static_cast<int>(outer.count<Gate>()) + hookset::sync_wait(twice(outer));
  return result;
}
