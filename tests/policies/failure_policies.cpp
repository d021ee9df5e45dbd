// Failure policies, in every mode x companion, synchronous and asynchronous: Propagate (the
// hook's own exception), FailClosed (HookFailed naming slot, hook and cause), FailOpen (the
// dispatch goes on as if the hook had not run: its result equals that of the same set without
// the hook - the oracle used here - and the skip is reported). A slot may declare its default
// policy; a companion's failure is not a hook's and always propagates.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::FailurePolicy;
using hookset::Task;

namespace {

struct Sum {
  int operator()(std::vector<int> v) const {
    int total = 0;
    for (int x : v) total = total * 10 + x;  // order-sensitive
    return total;
  }
};
struct Twice {
  int operator()(int x) const { return 2 * x; }
};

struct AFold : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct FFold : hookset::Slot<int(int), hookset::Fallback> {
  static int default_impl(int x) { return 100 + x; }
};
struct AChain : hookset::Slot<std::optional<int>(int), hookset::Always,
                              hookset::Chain<hookset::ShortCircuit>> {
  static std::optional<int> default_impl(int x) { return x; }
};
struct FChain : hookset::Slot<std::optional<int>(int), hookset::Fallback,
                              hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<int> default_impl(int) { return -1; }
};
struct AAgg : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return x; }
};
struct FAgg : hookset::Slot<int(int), hookset::Fallback, hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return 100 + x; }
};
struct Fin : hookset::Slot<int(int), hookset::Always, hookset::Finalize<Twice>> {
  static int default_impl(int x) { return x; }
};
struct Single : hookset::Slot<int(int), hookset::Singleton> {
  static int default_impl(int x) { return 100 + x; }
};
struct Notify : hookset::Slot<void(int), hookset::Always> {
  static void default_impl(int) { test_support::note("default"); }
};
// A slot whose hooks fail closed unless they say otherwise.
struct Gate : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
  static constexpr hookset::FailurePolicy on_failure = hookset::FailClosed;
};
struct Broken {
  int operator()(std::vector<int>) const { throw std::runtime_error("aggregate broke"); }
};
struct BrokenAgg : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Broken>> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<AFold, FFold, AChain, FChain, AAgg, FAgg, Fin, Single, Notify, Gate,
                             BrokenAgg>;

template <class S>
constexpr bool folds = hookset::detail::kind_of<S>::is_fold;
template <class S>
using result_of = typename S::result_type;

// A hook answering `tag` in the slot's shape (a fold hook combines it with `last`).
template <class S>
auto ok_hook(int tag, bool async) {
  using R = result_of<S>;
  if constexpr (std::is_void_v<R>) {
    return [tag, async](int) -> Task<void> {
      test_support::note("h" + std::to_string(tag));
      (void)async;
      co_return;
    };
  } else if constexpr (folds<S>) {
    return [tag, async](int x, std::optional<R> last) -> Task<R> {
      (void)async;
      co_return last.value_or(0) * 10 + x + tag;
    };
  } else if constexpr (std::is_same_v<S, FChain>) {
    // FirstSuccess: only the last hook knows.
    return [tag](int x) -> Task<R> {
      if (tag == 3) co_return x + tag;
      co_return std::nullopt;
    };
  } else {
    return [tag](int x) -> Task<R> { co_return x + tag; };
  }
}

// A hook that throws, at once or after suspending (async).
struct Suspend {
  bool await_ready() const noexcept { return false; }
  bool await_suspend(std::coroutine_handle<>) const noexcept { return false; }  // (resumes at once)
  void await_resume() const noexcept {}
};
template <class S>
auto failing_hook(bool async) {
  using R = result_of<S>;
  auto body = [async]() -> Task<void> {
    if (async) co_await Suspend{};
    throw std::runtime_error("h2 broke");
  };
  if constexpr (std::is_void_v<R>) {
    return [body](int) -> Task<void> { co_await body(); };
  } else if constexpr (folds<S>) {
    return [body](int, std::optional<R>) -> Task<R> {
      co_await body();
      co_return R{};
    };
  } else {
    return [body](int) -> Task<R> {
      co_await body();
      co_return R{};
    };
  }
}

template <class S>
auto run(const Set& set) {
  if constexpr (std::is_void_v<result_of<S>>) {
    test_support::fresh_log();
    hookset::sync_wait(set.call<S>(5));
    return test_support::logged();
  } else {
    return hookset::sync_wait(set.call<S>(5));
  }
}

template <class S>
void check_policies() {
  for (const bool async : {false, true}) {
    for (const FailurePolicy policy :
         {hookset::Propagate, hookset::FailClosed, hookset::FailOpen}) {
      CAPTURE(hookset::slot_name<S>, async, static_cast<int>(policy));
      Set with_failure, without;
      test_support::RecordingObserver observer;
      with_failure.set_observer(&observer);
      if constexpr (!hookset::detail::kind_of<S>::is_singleton) {
        with_failure.add<S>(ok_hook<S>(1, async));
        without.add<S>(ok_hook<S>(1, async));
      }
      with_failure.add<S>(failing_hook<S>(async), {.name = "h2", .on_failure = policy});
      if constexpr (!hookset::detail::kind_of<S>::is_singleton) {
        with_failure.add<S>(ok_hook<S>(3, async));
        without.add<S>(ok_hook<S>(3, async));
      }
      switch (policy) {
        case FailurePolicy::propagate:
          CHECK_THROWS_WITH(run<S>(with_failure), "h2 broke");
          break;
        case FailurePolicy::fail_closed:
          try {
            run<S>(with_failure);
            FAIL("no HookFailed");
          } catch (const hookset::HookFailed& failed) {
            CHECK(failed.slot == hookset::slot_name<S>);
            CHECK(failed.hook_name == "h2");
            CHECK_THROWS_WITH(std::rethrow_exception(failed.cause), "h2 broke");
          }
          break;
        case FailurePolicy::fail_open: {
          const auto expected = run<S>(without);
          CHECK(run<S>(with_failure) == expected);
          bool reported = false;
          for (const auto& e : observer.events)
            reported =
                reported || (e.kind == "warning" && e.message.find("'h2'") != std::string::npos &&
                             e.message.find("h2 broke") != std::string::npos);
          CHECK(reported);
          break;
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("failure policies: Always fold") { check_policies<AFold>(); }
TEST_CASE("failure policies: Fallback fold") { check_policies<FFold>(); }
TEST_CASE("failure policies: Always + Chain<ShortCircuit>") { check_policies<AChain>(); }
TEST_CASE("failure policies: Fallback + Chain<FirstSuccess>") { check_policies<FChain>(); }
TEST_CASE("failure policies: Always + Aggregate") { check_policies<AAgg>(); }
TEST_CASE("failure policies: Fallback + Aggregate") { check_policies<FAgg>(); }
TEST_CASE("failure policies: Always + Finalize") { check_policies<Fin>(); }
TEST_CASE("failure policies: Singleton - a skipped hook leaves the default") {
  check_policies<Single>();
}
TEST_CASE("failure policies: void") { check_policies<Notify>(); }

TEST_CASE("a Fallback fold whose every hook fails open runs its default") {
  Set set;
  set.add<FFold>(failing_hook<FFold>(false), {.on_failure = hookset::FailOpen});
  set.add<FFold>(failing_hook<FFold>(true), {.on_failure = hookset::FailOpen});
  CHECK(hookset::sync_wait(set.call<FFold>(5)) == 105);
}

TEST_CASE("a slot's declared policy applies to hooks registered without one") {
  Set set;
  set.add<Gate>(failing_hook<Gate>(false));  // the slot's FailClosed
  CHECK_THROWS_AS(hookset::sync_wait(set.call<Gate>(1)), hookset::HookFailed);
  Set open;
  open.add<Gate>(failing_hook<Gate>(false), {.on_failure = hookset::FailOpen});  // its own
  CHECK(hookset::sync_wait(open.call<Gate>(1)) == 1);
}

TEST_CASE("a companion's failure propagates whatever the hooks' policies") {
  Set set;
  set.add<BrokenAgg>([](int x) { return x; }, {.on_failure = hookset::FailOpen});
  CHECK_THROWS_WITH(hookset::sync_wait(set.call<BrokenAgg>(1)), "aggregate broke");
}

TEST_CASE("FailOpen on a fold hook that throws after using `last` leaves `last` as it was") {
  Set set;
  set.add<AFold>([](int, std::optional<int> last) { return *last + 1; });
  set.add<AFold>(
      [](int, std::optional<int> last) -> int {
        last.reset();  // its copy, not the dispatch's
        throw std::runtime_error("late");
      },
      {.on_failure = hookset::FailOpen});
  set.add<AFold>([](int, std::optional<int> last) { return *last * 10; });
  CHECK(hookset::sync_wait(set.call<AFold>(4)) == 50);
}
