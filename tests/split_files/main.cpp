// Two files, header-only mode: this one dispatches a slot nothing in it watches, so it contains
// none of the code of a watched dispatch; observer_file.cpp makes the observer that watches it.
// The program links and the observer sees the dispatch only if a file that makes an observer
// brings that code (<hookset/observer.hpp>).
#include <cstdio>
#include <optional>

#include <hookset/hookset.hpp>

void install_counting_observer();
void remove_counting_observer();
int dispatches_counted();

namespace {

struct Double : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};

int failures = 0;
void check(bool holds, const char* what) {
  if (!holds) {
    std::fprintf(stderr, "FAILED: %s\n", what);
    ++failures;
  }
}

}  // namespace

int main() {
  hookset::HookSet<Double> set;
  set.add<Double>([](int x, std::optional<int> last) { return *last + x; });
  check(hookset::sync_wait(set.call<Double>(3)) == 6, "an unobserved dispatch");
  check(dispatches_counted() == 0, "nothing observed before the observer is installed");
  install_counting_observer();
  check(hookset::sync_wait(set.call<Double>(4)) == 8, "an observed dispatch");
  check(dispatches_counted() == 1, "the observer of another file saw the dispatch");
  remove_counting_observer();
  if (failures == 0) std::puts("split_files: ok");
  return failures == 0 ? 0 : 1;
}
