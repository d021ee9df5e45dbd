// What the test budget/code_firewall compiles (tests/budget/code_firewall.cmake): a file that
// registers plain synchronous hooks and dispatches their slots, and - with
// HOOKSET_FIREWALL_USES_FEATURES - one that also registers a coroutine hook, an interceptor and a
// hook named in an order, and dispatches a slot whose default is a coroutine.
#include <hookset/hookset.hpp>

#include <optional>

namespace {

struct Fold : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Other : hookset::Slot<long(long), hookset::Fallback> {
  static long default_impl(long x) { return x; }
};

#ifdef HOOKSET_FIREWALL_USES_FEATURES
struct Async : hookset::Slot<int(int), hookset::Always> {
  static hookset::Task<int> default_impl(int x) { co_return x; }
};
using Hooks = hookset::HookSet<Fold, Other, Async>;
#else
using Hooks = hookset::HookSet<Fold, Other>;
#endif

}  // namespace

int main() {
  Hooks set;
  set.add<Fold>([](int x, std::optional<int> last) { return *last + x; });
  set.add<Other>([](long x, std::optional<long>) { return x * 2; }, hookset::Priority{1});
#ifdef HOOKSET_FIREWALL_USES_FEATURES
  set.add<Fold>([](int x, std::optional<int> last) -> hookset::Task<int> { co_return *last + x; });
  set.intercept<Other>(
      [](hookset::Next<Other> next, long x) { return hookset::sync_wait(next(x)); });
  hookset::HookOptions first;
  first.name = "first";
  set.add<Other>([](long x, std::optional<long>) { return x; }, std::move(first));
  hookset::HookOptions second;
  second.after = {"first"};
  set.add<Other>([](long x, std::optional<long> last) { return *last + x; }, std::move(second));
#endif
  const int folded = hookset::sync_wait(set.call<Fold>(3));
  const long other = hookset::sync_wait(set.call<Other>(4L));
#ifdef HOOKSET_FIREWALL_USES_FEATURES
  if (hookset::sync_wait(set.call<Async>(5)) != 5) return 1;
#endif
  return folded > 0 && other > 0 ? 0 : 1;
}
