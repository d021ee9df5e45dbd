// Conan's test_package: hookset's headers and Boost's are found, and a hook is dispatched.
#include <hookset/hookset.hpp>

#include <cstdio>
#include <optional>

struct Answer : hookset::Slot<int(int question), hookset::Always> {
  static int default_impl(int question) { return question; }
};

int main() {
  hookset::HookSet<Answer> hooks;
  hooks.add<Answer>([](int, std::optional<int> last) { return *last + 41; });
  const int answer = hookset::sync_wait(hooks.call<Answer>(1));
  std::printf("hookset test_package: answer %d\n", answer);
  return answer == 42 ? 0 : 1;
}
