// A program built with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp): hookset_src.cpp compiles
// <hookset/impl/src.hpp>, this file only dispatches. What runs here - registration and the named
// order, the observer plumbing and hook events, a hook's time limit on the timer thread, the
// error texts - is code this file does not contain, so the program links and answers only if
// src.hpp defines it once. Not a Catch2 test: a plain program (CTest
// separate_compilation/program) that fails with the first wrong answer.

#include <hookset/hookset.hpp>

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "test_support.hpp"

#if !defined(HOOKSET_SEPARATE_COMPILATION) || defined(HOOKSET_HEADER_ONLY)
#error "built without HOOKSET_SEPARATE_COMPILATION: the test would check nothing"
#endif

namespace {

using namespace std::chrono_literals;

struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Name : hookset::Slot<std::string(std::string), hookset::Always> {
  static std::string default_impl(std::string s) { return s; }
};
using Hooks = hookset::HookSet<Count, Name>;

// A hook that waits until its dispatch stops it (its own time limit, here).
hookset::Task<int> waits_until_stopped(int x, std::optional<int> last) {
  {
    const hookset::stop_token token = co_await hookset::current_stop_token();
    test_support::until_stopped waiter{token};
    co_await waiter;
  }
  co_return *last + x;
}

struct HookEvents : test_support::RecordingObserver {
  int hook_ends = 0;
  bool slow_timed_out = false;
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_end(const hookset::HookEvent& event) override {
    ++hook_ends;
    if (event.name == "slow") slow_timed_out = event.outcome == hookset::HookOutcome::skipped;
  }
};

int failures = 0;
void check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "separate compilation: FAILED: %s\n", what);
  ++failures;
}

}  // namespace

int main() {
  Hooks set;
  // Registration, with a named order (hook_list.ipp).
  set.add<Count>([](int x, std::optional<int> last) { return *last + x; },
                 hookset::HookOptions{.name = "plus"});
  set.add<Count>([](int x, std::optional<int> last) { return *last * 10 + x; },
                 hookset::HookOptions{.name = "times ten", .before = {"plus"}});
  set.add<Name>([](std::string s, std::optional<std::string> last) { return *last + "/" + s; });
  // default 2, times ten: 22, plus: 24.
  check(hookset::sync_wait(set.call<Count>(2)) == 24, "a named order: times ten, then plus");
  check(hookset::sync_wait(set.call<Name>(std::string("a"))) == "a/a", "a second slot");

  // A name that matches no registration: OrderingError's text (errors.ipp).
  try {
    set.add<Count>([](int x, std::optional<int>) { return x; },
                   hookset::HookOptions{.name = "lost", .before = {"nobody"}});
    check(false, "an unknown name in `before` throws");
  } catch (const hookset::OrderingError& e) {
    check(std::string(e.what()).find("'nobody'") != std::string::npos, "OrderingError names it");
  }

  // Observed, with a FailOpen hook whose time limit expires on the timer thread (context.ipp,
  // executor.ipp): skipped, warned about, told to the observer (events.ipp).
  HookEvents observer;
  set.set_observer(&observer);
  set.add<Count>(
      waits_until_stopped,
      hookset::HookOptions{.name = "slow", .timeout = 10ms, .on_failure = hookset::FailOpen});
  check(hookset::sync_wait(set.call<Count>(2)) == 24, "the slow hook is skipped");
  check(observer.slow_timed_out, "the slow hook's end is told: skipped");
  check(observer.hook_ends == 3, "three hook ends are told");
  bool warned = false;
  for (const auto& e : observer.events)
    warned = warned || (e.kind == "warning" && e.message.find("'slow'") != std::string::npos);
  check(warned, "the skipped hook is warned about, by name");

  // The dispatch's own deadline: DispatchTimeout naming the hook that ran (errors.ipp).
  set.clear<Count>();
  set.add<Count>(waits_until_stopped, hookset::HookOptions{.name = "slow"});
  try {
    hookset::sync_wait(set.call<Count>(1).with_timeout(10ms));
    check(false, "the deadline expires");
  } catch (const hookset::DispatchTimeout& e) {
    check(e.hook_name == "slow" && !e.per_hook, "DispatchTimeout names the running hook");
    check(std::string(e.what()).find("deadline expired while hook 'slow' ran") != std::string::npos,
          "DispatchTimeout's text");
  }
  set.set_observer(nullptr);

  if (failures == 0) std::puts("separate compilation: all checks passed");
  return failures == 0 ? 0 : 1;
}
