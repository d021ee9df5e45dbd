// A tripwire's work is an awaitable, or a callable taking hookset::Admission& and returning one:
// a callable taking nothing is told so.
// EXPECT: hookset: a tripwire's work is an awaitable
// EXPECT-ERRORS: 1
#include <hookset/hookset.hpp>
struct Watch : hookset::VerdictSlot<hookset::Verdict<>(int), hookset::Always> {
  static hookset::Verdict<> default_impl(int) { return {}; }
};
hookset::Task<int> work() { co_return 1; }
int main() {
  hookset::HookSet<Watch> set;
  auto run = hookset::tripwire(set.call<Watch>(1)).around(&work);
  (void)run;
}
