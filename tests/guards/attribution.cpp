// Attribution (docs/semantics.md, "Dispatching"): `call<S>(args...).with_attribution()` yields
// hookset::Attributed<T> - the result, and the registration that produced it (empty for the
// slot's default): under a fold the last hook that produced the folded value, under a chain the
// hook whose output the chain returned, under Singleton the one hook. The name is a copy. Also:
// asynchronous hooks, concurrent chains, options given before or after, observed dispatches,
// interceptors (the outermost one answers) and keyed slots.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;
using hookset::Attributed;
using hookset::HookId;
using hookset::HookOptions;
using hookset::Task;
using test_support::detach;
using test_support::ManualEvent;
using test_support::Outcome;

namespace {

using MaybeInt = std::optional<int>;

// Folds.
struct Sum : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct OnlyHooks : hookset::Slot<int(int), hookset::Fallback> {
  static int default_impl(int x) { return -x; }
};
struct Text : hookset::Slot<std::string(int), hookset::Always> {  // `last` not in registers
  static std::string default_impl(int) { return "d"; }
};
struct Describe {
  std::string operator()(int result) const { return "result " + std::to_string(result); }
};
struct Described : hookset::Slot<int(int), hookset::Always, hookset::Finalize<Describe>,
                                 hookset::Output<std::string>> {
  static int default_impl(int x) { return x; }
};
// Chains.
struct BreakOnNegative {
  hookset::Flow operator()(const int& output) const {
    return output < 0 ? hookset::Flow::Break : hookset::Flow::Continue;
  }
};
struct Gate : hookset::Slot<int(int), hookset::Always, hookset::Chain<BreakOnNegative>> {
  static int default_impl(int x) { return x; }
};
struct Lookup
    : hookset::Slot<MaybeInt(int), hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static MaybeInt default_impl(int x) { return -x; }
};
struct LookupConcurrently
    : hookset::Slot<MaybeInt(int), hookset::Fallback, hookset::Chain<hookset::FirstSuccess>,
                    hookset::Concurrent> {
  static MaybeInt default_impl(int) { return std::nullopt; }
};
struct Pick : hookset::Slot<int(int), hookset::Singleton> {
  static int default_impl(int x) { return x; }
};
struct Tool : hookset::Slot<int(int, std::string_view), hookset::Always, hookset::Keyed> {
  static int default_impl(int x, std::string_view) { return x; }
};

using Set =
    hookset::HookSet<Sum, OnlyHooks, Text, Described, Gate, Lookup, LookupConcurrently, Pick, Tool>;

HookOptions named(std::string name) { return HookOptions{.name = std::move(name)}; }
HookOptions fail_open(std::string name) {
  return HookOptions{.name = std::move(name), .on_failure = hookset::FailOpen};
}
auto add_to_last(int n) {
  return [n](int, std::optional<int> last) { return *last + n; };
}

}  // namespace

TEST_CASE("attributed: a fold's result comes from the last hook that ran") {
  Set set;
  set.add<Sum>(add_to_last(1), named("one"));
  const HookId two = set.add<Sum>(add_to_last(10), named("two"));
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(5).with_attribution());
  CHECK(sum.value == 16);
  CHECK(sum.hook == two);
  CHECK(sum.name == "two");

  // Not in registers: the general loop.
  set.add<Text>([](int, std::optional<std::string> last) { return *last + "a"; }, named("a"));
  const HookId b = set.add<Text>([](int, std::optional<std::string> last) { return *last + "b"; });
  const Attributed<std::string> text = hookset::sync_wait(set.call<Text>(0).with_attribution());
  CHECK(text.value == "dab");
  CHECK(text.hook == b);
  CHECK(text.name.empty());  // registered without a name

  // Finalize: what the finalizer received.
  const HookId f = set.add<Described>(add_to_last(2), named("f"));
  const Attributed<std::string> described =
      hookset::sync_wait(set.call<Described>(1).with_attribution());
  CHECK(described.value == "result 3");
  CHECK(described.hook == f);

  // Singleton: the one hook.
  const HookId only = set.add<Pick>([](int x) { return x * 7; }, named("only"));
  const Attributed<int> picked = hookset::sync_wait(set.call<Pick>(2).with_attribution());
  CHECK(picked.value == 14);
  CHECK(picked.hook == only);
}

TEST_CASE("attributed: the default alone produced it - no registration") {
  Set set;
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(5).with_attribution());
  CHECK(sum.value == 5);
  CHECK_FALSE(sum.hook);
  CHECK(sum.name.empty());
  const Attributed<int> fallback = hookset::sync_wait(set.call<OnlyHooks>(5).with_attribution());
  CHECK(fallback.value == -5);
  CHECK_FALSE(fallback.hook);
  const Attributed<int> picked = hookset::sync_wait(set.call<Pick>(3).with_attribution());
  CHECK(picked.value == 3);
  CHECK_FALSE(picked.hook);
}

TEST_CASE("attributed: a hook that failed open leaves the previous producer") {
  hookset::Observer quiet;  // (the fail-open warnings go here, not to std::clog)
  Set set;
  set.set_observer(&quiet);
  const HookId one = set.add<Sum>(add_to_last(1), named("one"));
  set.add<Sum>([](int, std::optional<int>) -> int { throw std::runtime_error("no"); },
               fail_open("broken"));
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(5).with_attribution());
  CHECK(sum.value == 6);
  CHECK(sum.hook == one);
  CHECK(sum.name == "one");

  // Every hook of a Fallback slot failed open: the default answers.
  set.add<OnlyHooks>([](int, std::optional<int>) -> int { throw std::runtime_error("no"); },
                     fail_open("broken"));
  const Attributed<int> fallback = hookset::sync_wait(set.call<OnlyHooks>(5).with_attribution());
  CHECK(fallback.value == -5);
  CHECK_FALSE(fallback.hook);
}

TEST_CASE("attributed: a chain's result comes from the hook that stopped it") {
  Set set;
  set.add<Gate>([](int x) { return x + 1; }, named("fine"));
  const HookId breaker = set.add<Gate>([](int) { return -1; }, named("breaker"));
  set.add<Gate>([](int) { return 100; }, named("never"));
  const Attributed<int> gate = hookset::sync_wait(set.call<Gate>(1).with_attribution());
  CHECK(gate.value == -1);
  CHECK(gate.hook == breaker);
  CHECK(gate.name == "breaker");
  // The default breaks: no hook runs, and no registration produced it.
  const Attributed<int> early = hookset::sync_wait(set.call<Gate>(-4).with_attribution());
  CHECK(early.value == -4);
  CHECK_FALSE(early.hook);

  set.add<Lookup>([](int) { return MaybeInt{}; }, named("unsure"));
  const HookId knows = set.add<Lookup>([](int x) { return MaybeInt{x * 2}; }, named("knows"));
  const Attributed<MaybeInt> found = hookset::sync_wait(set.call<Lookup>(4).with_attribution());
  CHECK(found.value == 8);
  CHECK(found.hook == knows);
  CHECK(found.name == "knows");
}

TEST_CASE("attributed: a chain the default answers is attributed to no registration") {
  Set set;
  set.add<Lookup>([](int) { return MaybeInt{}; }, named("unsure"));
  set.add<Lookup>([](int) { return MaybeInt{}; }, named("unsure too"));
  const Attributed<MaybeInt> found = hookset::sync_wait(set.call<Lookup>(4).with_attribution());
  CHECK(found.value == -4);  // every hook continued: the default's last word
  CHECK_FALSE(found.hook);
  CHECK(found.name.empty());
}

TEST_CASE("attributed: coroutine hooks and options given before or after") {
  Set set;
  set.add<Sum>(add_to_last(1), named("sync"));
  const HookId coro = set.add<Sum>(
      [](int, std::optional<int> last) -> Task<int> { co_return *last * 10; }, named("coro"));
  const Attributed<int> sum =
      hookset::sync_wait(set.call<Sum>(1).with_timeout(10s).with_attribution());
  CHECK(sum.value == 20);
  CHECK(sum.hook == coro);
  CHECK(sum.name == "coro");
  // Without options (the driver runs such hooks back to back), then a plain one after them.
  const HookId last = set.add<Sum>(add_to_last(5), named("last"));
  const Attributed<int> plain = hookset::sync_wait(set.call<Sum>(1).with_attribution());
  CHECK(plain.value == 25);
  CHECK(plain.hook == last);
  set.remove(last);
  const Attributed<int> coro_last = hookset::sync_wait(set.call<Sum>(1).with_attribution());
  CHECK(coro_last.value == 20);
  CHECK(coro_last.hook == coro);

  // A hook that suspends, awaited from a Task, the options given after.
  ManualEvent go;
  const HookId waits = set.add<Gate>(
      [&go](int x) -> Task<int> {
        co_await go;
        co_return -x;
      },
      named("waits"));
  hookset::stop_source stop;
  Outcome<Attributed<int>> out;
  detach(
      [](const Set& hooks, hookset::stop_token token) -> Task<Attributed<int>> {
        co_return co_await hooks.call<Gate>(3).with_attribution().with_stop_token(token);
      }(set, stop.get_token()),
      out);
  CHECK_FALSE(out.done);
  go.fire();
  REQUIRE(out.done);
  REQUIRE(out.value);
  CHECK(out.value->value == -3);
  CHECK(out.value->hook == waits);
  CHECK(out.value->name == "waits");
}

TEST_CASE("attributed: a concurrent chain is attributed to the hook whose answer was taken") {
  Set set;
  ManualEvent first, second;
  set.add<LookupConcurrently>(
      [&first](int) -> Task<MaybeInt> {
        co_await first;
        co_return std::nullopt;
      },
      named("first"));
  const HookId taken = set.add<LookupConcurrently>(
      [&second](int x) -> Task<MaybeInt> {
        co_await second;
        co_return x;
      },
      named("second"));
  set.add<LookupConcurrently>([](int) -> Task<MaybeInt> { co_return 99; }, named("third"));
  Outcome<Attributed<MaybeInt>> out;
  detach(set.call<LookupConcurrently>(7).with_attribution(), out);
  // The third answered at once, but answers are taken in registration order.
  second.fire();
  CHECK_FALSE(out.done);
  first.fire();
  REQUIRE(out.done);
  REQUIRE(out.value);
  CHECK(out.value->value == 7);
  CHECK(out.value->hook == taken);
  CHECK(out.value->name == "second");
}

TEST_CASE("attributed: the name is a copy, valid after the hook is removed") {
  Set set;
  HookId self;
  // The producing hook removes itself while the dispatch runs.
  self = set.add<Sum>(
      [&set, &self](int, std::optional<int> last) {
    set.remove(self);
    return *last + 1;
      },
      named("a name too long for the small string buffer"));
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(1).with_attribution());
  CHECK(sum.value == 2);
  CHECK(sum.hook == self);
  CHECK(sum.name == "a name too long for the small string buffer");
  CHECK(set.count<Sum>() == 0);

  const HookId gone = set.add<Gate>([](int) { return -1; }, named("gone"));
  Attributed<int> gate = hookset::sync_wait(set.call<Gate>(1).with_attribution());
  set.remove(gone);
  set.clear();
  CHECK(gate.hook == gone);
  CHECK(gate.name == "gone");

  // A shared set's dispatch keeps its version alive; attributed, too.
  Set initial;
  const HookId shared_hook = initial.add<Gate>([](int) { return -2; }, named("shared"));
  hookset::SharedHookSet<Sum, OnlyHooks, Text, Described, Gate, Lookup, LookupConcurrently, Pick,
                         Tool>
      shared(std::move(initial));
  auto dispatch = shared.call<Gate>(1).with_attribution();
  shared.update([](Set& next) { next.clear(); });
  const Attributed<int> kept = hookset::sync_wait(std::move(dispatch));
  CHECK(kept.value == -2);
  CHECK(kept.hook == shared_hook);
  CHECK(kept.name == "shared");
}

TEST_CASE("attributed: observed dispatches and keyed slots") {
  test_support::RecordingObserver observer;
  Set set;
  set.set_observer(&observer);
  set.add<Sum>(add_to_last(1), named("one"));
  const HookId two = set.add<Sum>(add_to_last(2), named("two"));
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(0).with_attribution());
  CHECK(sum.value == 3);
  CHECK(sum.hook == two);
  set.set_observer(nullptr);

  const HookId read = set.add<Tool>(
      hookset::key("read"),
      [](int x, std::string_view, std::optional<int> last) { return *last + x; }, named("read"));
  set.add<Tool>(
      hookset::key("write"), [](int, std::string_view, std::optional<int>) { return 0; },
      named("write"));
  const Attributed<int> tool = hookset::sync_wait(set.call<Tool>(2, "read").with_attribution());
  CHECK(tool.value == 4);
  CHECK(tool.hook == read);
  const Attributed<int> none = hookset::sync_wait(set.call<Tool>(2, "list").with_attribution());
  CHECK(none.value == 2);
  CHECK_FALSE(none.hook);
}

TEST_CASE("attributed: an intercepted dispatch is attributed to its outermost interceptor") {
  Set set;
  set.add<Sum>(add_to_last(1), named("hook"));
  const HookId outer = set.intercept<Sum>(
      [](hookset::Next<Sum> next, int x) { return hookset::sync_wait(next(x)) * 2; },
      named("outer"));
  set.intercept<Sum>(
      [](hookset::Next<Sum> next, int x) -> Task<int> { co_return co_await next(x + 1); },
      named("inner"));
  const Attributed<int> sum = hookset::sync_wait(set.call<Sum>(1).with_attribution());
  CHECK(sum.value == 6);  // ((1 + 1) + 1) * 2
  CHECK(sum.hook == outer);
  CHECK(sum.name == "outer");
  // The plain dispatch alongside, unchanged.
  CHECK(hookset::sync_wait(set.call<Sum>(1)) == 6);
}
