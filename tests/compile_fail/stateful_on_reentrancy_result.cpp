// EXPECT: hookset: Stateful<T>: T::on_reentrancy\(ReentrancyError\) must return what the hook returns
// EXPECT: Confused
#include <optional>
#include <string>
#include <hookset/hookset.hpp>
struct Count : hookset::Slot<int(int), hookset::Always> { static int default_impl(int x) { return x; } };
struct Confused {
  int operator()(int x, std::optional<int>) { return x; }
  std::string on_reentrancy(hookset::ReentrancyError) { return "not an int"; }
};
int main() {
  hookset::HookSet<Count> set;
  set.add<Count>(hookset::Stateful{Confused{}});
  return hookset::sync_wait(set.call<Count>(1));
}
