// Exception safety (docs/semantics.md, "Errors and bad input"): an exception thrown by the default,
// by a hook in any position (sync, coroutine, coroutine after a real suspension) or by a companion
// propagates out of the dispatch and leaves the set unchanged and usable; an allocation failure
// during registration (add, add_hooks, remove, configure, extend, copy-then-add, add from inside a
// running hook) or during a dispatch leaves the set unchanged. Leaks show in the ASan tree.
//
// This file replaces the global operator new/delete (for the whole test program) with versions
// that can be told to fail: the n-th allocation from now, or the n-th and every later one (an
// exhausted heap, which also fails whatever a rollback allocates). Each registration test runs
// its operation with n = 1, 2, ... until it succeeds, so every allocation it makes fails once.
#include "hookset_catch.hpp"
#include "replaced_new.hpp"

#include "test_support.hpp"

#include <cstdlib>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/hookset.hpp>

// ---- the failing allocator ---------------------------------------------------------------------

namespace {

// Only this thread's allocations count, and only while armed.
thread_local constinit long allocations_until_failure = 0;  // 0: disarmed
thread_local constinit bool failure_persists = false;

bool allocation_fails() noexcept {
  if (allocations_until_failure == 0) return false;
  if (allocations_until_failure > 1) {
    --allocations_until_failure;
    return false;
  }
  if (!failure_persists) allocations_until_failure = 0;
  return true;
}

}  // namespace

// The replaced operator new (replaced_new.hpp) fails when armed.
void* test_allocation::allocate(std::size_t size) noexcept {
  if (allocation_fails()) return nullptr;
  return std::malloc(size);
}
void test_allocation::release(void* block) noexcept { std::free(block); }

namespace {

// Arms the allocator for one scope: the n-th allocation from now fails (and, when `persistent`,
// every one after it).
class FailingAllocations {
 public:
  FailingAllocations(long n, bool persistent) noexcept {
    allocations_until_failure = n;
    failure_persists = persistent;
  }
  ~FailingAllocations() {
    allocations_until_failure = 0;
    failure_persists = false;
  }
  FailingAllocations(const FailingAllocations&) = delete;
  FailingAllocations& operator=(const FailingAllocations&) = delete;
};

using hookset::Flow;
using hookset::Task;
using test_support::ManualEvent;

// ---- who throws
// ----------------------------------------------------------------------------------

enum class Thrower { nobody, default_impl, hook1, hook2, hook3, chain, aggregate, finalize };
Thrower thrower = Thrower::nobody;

const char* message_of(Thrower who) {
  switch (who) {
    case Thrower::default_impl:
      return "default failed";
    case Thrower::hook1:
      return "hook 1 failed";
    case Thrower::hook2:
      return "hook 2 failed";
    case Thrower::hook3:
      return "hook 3 failed";
    case Thrower::chain:
      return "chain failed";
    case Thrower::aggregate:
      return "aggregate failed";
    case Thrower::finalize:
      return "finalize failed";
    case Thrower::nobody:
      break;
  }
  return "";
}
void throw_if(Thrower me) {
  if (thrower == me) throw std::runtime_error(message_of(me));
}

// Coroutine hooks of kind `suspending` park on a fresh event each time; finish() fires them.
std::vector<std::unique_ptr<ManualEvent>> gates;
ManualEvent& new_gate() {
  gates.push_back(std::make_unique<ManualEvent>());
  return *gates.back();
}

// Runs a dispatch to its end, releasing every hook that parks, and returns its value or rethrows.
template <class Awaitable>
int finish(Awaitable dispatch) {
  test_support::Outcome<int> outcome;
  test_support::detach(std::move(dispatch), outcome);
  while (!outcome.done) {
    auto waiting = std::move(gates);
    gates.clear();
    REQUIRE_FALSE(waiting.empty());
    for (auto& gate : waiting) gate->fire();
  }
  if (outcome.error) std::rethrow_exception(outcome.error);
  return *outcome.value;
}

// ---- companions ---------------------------------------------------------------------------------

struct BreakOnNegative {
  Flow operator()(const int& v) const {
    throw_if(Thrower::chain);
    return v < 0 ? Flow::Break : Flow::Continue;
  }
};
struct AsyncBreakOnNegative {
  Task<Flow> operator()(const int& v) const {
    throw_if(Thrower::chain);
    co_return v < 0 ? Flow::Break : Flow::Continue;
  }
};
int sum(const std::vector<int>& values) {
  int total = 0;
  for (int v : values) total += v;
  return total;
}
struct Sum {
  int operator()(std::vector<int> outputs) const {
    throw_if(Thrower::aggregate);
    return sum(outputs);
  }
};
struct AsyncSum {
  Task<int> operator()(std::vector<int> outputs) const {
    throw_if(Thrower::aggregate);
    co_return sum(outputs);
  }
};
struct Plus1000 {
  int operator()(int r) const {
    throw_if(Thrower::finalize);
    return r + 1000;
  }
};
struct AsyncPlus1000 {
  Task<int> operator()(int r) const {
    throw_if(Thrower::finalize);
    co_return r + 1000;
  }
};

// ---- slots: int(int), every default returns its argument
// ------------------------------------------

int plain_default(int x) {
  throw_if(Thrower::default_impl);
  return x;
}
Task<int> coroutine_default(int x) { co_return plain_default(x); }

struct AlwaysFold : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return plain_default(x); }
};
struct AsyncFallbackFold : hookset::Slot<int(int), hookset::Fallback> {
  static Task<int> default_impl(int x) { return coroutine_default(x); }
};
struct ChainAggregate : hookset::Slot<int(int), hookset::Always, hookset::Chain<BreakOnNegative>,
                                      hookset::Aggregate<Sum>> {
  static int default_impl(int x) { return plain_default(x); }
};
struct AsyncChainFinalize
    : hookset::Slot<int(int), hookset::Fallback, hookset::Chain<AsyncBreakOnNegative>,
                    hookset::Finalize<Plus1000>> {
  static Task<int> default_impl(int x) { return coroutine_default(x); }
};
struct AsyncAggregate : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<AsyncSum>> {
  static int default_impl(int x) { return plain_default(x); }
};
struct AsyncFinalize : hookset::Slot<int(int), hookset::Always, hookset::Finalize<AsyncPlus1000>> {
  static Task<int> default_impl(int x) { return coroutine_default(x); }
};
struct Single : hookset::Slot<int(int), hookset::Singleton> {
  static int default_impl(int x) { return plain_default(x); }
};
struct NestedFold : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return plain_default(x); }
};

using Inner = hookset::HookSet<NestedFold>;
using Set = hookset::HookSet<AlwaysFold, AsyncFallbackFold, ChainAggregate, AsyncChainFinalize,
                             AsyncAggregate, AsyncFinalize, Single, Inner>;

template <class S>
constexpr bool is_fold = std::is_same_v<S, AlwaysFold> || std::is_same_v<S, AsyncFallbackFold> ||
                         std::is_same_v<S, AsyncFinalize> || std::is_same_v<S, NestedFold>;

// ---- hooks: number t folds as last*10 + t, or outputs x*10 + t
// ------------------------------------

enum class Kind { sync, coroutine, suspending };
const char* name_of(Kind kind) {
  return kind == Kind::sync        ? "sync"
         : kind == Kind::coroutine ? "coroutine"
                                   : "coroutine that suspends";
}

Thrower thrower_of_hook(int t) {
  return t == 1 ? Thrower::hook1 : t == 2 ? Thrower::hook2 : Thrower::hook3;
}
int fold_step(std::optional<int> last, int t) { return last ? *last * 10 + t : t; }

template <class S>
auto make_coroutine_hook(int t, bool suspends) {
  if constexpr (is_fold<S>) {
    return [t, suspends](int, std::optional<int> last) -> Task<int> {
      if (suspends) co_await new_gate();
      throw_if(thrower_of_hook(t));
      co_return fold_step(last, t);
    };
  } else {
    return [t, suspends](int x) -> Task<int> {
      if (suspends) co_await new_gate();
      throw_if(thrower_of_hook(t));
      co_return x * 10 + t;
    };
  }
}

template <class S>
auto make_sync_hook(int t) {
  if constexpr (is_fold<S>) {
    return [t](int, std::optional<int> last) {
      throw_if(thrower_of_hook(t));
      return fold_step(last, t);
    };
  } else {
    return [t](int x) {
      throw_if(thrower_of_hook(t));
      return x * 10 + t;
    };
  }
}

template <class S>
void add_hook(Set& set, int t, Kind kind) {
  if (kind == Kind::sync) set.add<S>(make_sync_hook<S>(t));
  else set.add<S>(make_coroutine_hook<S>(t, kind == Kind::suspending));
}

// The result with hooks 1, 2, 3 for x = 5 (the dispatch table): the fold gives 5123 from the
// default, 123 without it; the others see outputs 51, 52, 53.
template <class S>
int expected_with_three_hooks() {
  if constexpr (std::is_same_v<S, AlwaysFold> || std::is_same_v<S, NestedFold>) return 5123;
  else if constexpr (std::is_same_v<S, AsyncFallbackFold>) return 123;
  else if constexpr (std::is_same_v<S, ChainAggregate>) return 5 + 51 + 52 + 53;
  else if constexpr (std::is_same_v<S, AsyncChainFinalize>)
    return 1005;  // all Continue: finalize(default)
  else if constexpr (std::is_same_v<S, AsyncAggregate>) return 5 + 51 + 52 + 53;
  else return 6123;  // AsyncFinalize: finalize(5123)
}

// Dispatches S with x = 5 while `who` throws: the exception propagates; then the set is unchanged.
template <class S>
void throws_then_unchanged(const Set& set, Thrower who) {
  thrower = who;
  REQUIRE_THROWS_WITH(finish(set.call<S>(5)), message_of(who));
  thrower = Thrower::nobody;
  REQUIRE(set.count<S>() == 3);
  REQUIRE(finish(set.call<S>(5)) == expected_with_three_hooks<S>());
}

template <class F>
void for_each_slot_with_three_hooks(F&& f) {
  boost::mp11::mp_for_each<
      boost::mp11::mp_list<AlwaysFold, AsyncFallbackFold, ChainAggregate, AsyncChainFinalize,
                           AsyncAggregate, AsyncFinalize, NestedFold>>(f);
}

}  // namespace

using hookset::sync_wait;

// ================================================================================================
// Exceptions from the participants of a dispatch
// ================================================================================================

TEST_CASE("an exception from the default (sync or coroutine) propagates, the set is unchanged") {
  for_each_slot_with_three_hooks([](auto slot) {
    using S = decltype(slot);
    INFO(hookset::slot_name<S>);
    Set set;
    for (int t = 1; t <= 3; ++t) add_hook<S>(set, t, Kind::sync);
    REQUIRE(finish(set.call<S>(5)) == expected_with_three_hooks<S>());
    if constexpr (std::is_same_v<S, AsyncFallbackFold>) {
      // A Fallback default runs only without hooks (or after them, with a chain).
      const Set empty;
      thrower = Thrower::default_impl;
      REQUIRE_THROWS_WITH(finish(empty.call<S>(5)), "default failed");
      thrower = Thrower::nobody;
      REQUIRE(finish(empty.call<S>(5)) == 5);
    } else {
      throws_then_unchanged<S>(set, Thrower::default_impl);
    }
  });
}

TEST_CASE("an exception from the first, middle or last hook propagates, the set is unchanged") {
  for (const Kind kind : {Kind::sync, Kind::coroutine, Kind::suspending}) {
    for_each_slot_with_three_hooks([kind](auto slot) {
      using S = decltype(slot);
      INFO(hookset::slot_name<S> << ", " << name_of(kind) << " hooks");
      Set set;
      for (int t = 1; t <= 3; ++t) add_hook<S>(set, t, kind);
      for (const Thrower who : {Thrower::hook1, Thrower::hook2, Thrower::hook3}) {
        INFO(message_of(who));
        throws_then_unchanged<S>(set, who);
      }
    });
  }
}

TEST_CASE("an exception from a hook of mixed sync and coroutine hooks, and from a singleton hook") {
  Set set;
  add_hook<AlwaysFold>(set, 1, Kind::suspending);
  add_hook<AlwaysFold>(set, 2, Kind::sync);
  add_hook<AlwaysFold>(set, 3, Kind::coroutine);
  for (const Thrower who : {Thrower::hook1, Thrower::hook2, Thrower::hook3})
    throws_then_unchanged<AlwaysFold>(set, who);

  set.add<Single>([](int x) {
    throw_if(Thrower::hook1);
    return x + 1;
  });
  thrower = Thrower::hook1;
  REQUIRE_THROWS_WITH(sync_wait(set.call<Single>(5)), "hook 1 failed");
  thrower = Thrower::nobody;
  REQUIRE(set.count<Single>() == 1);
  REQUIRE(sync_wait(set.call<Single>(5)) == 6);
}

TEST_CASE(
    "an exception from a chain, aggregate or finalize companion (sync or coroutine) propagates, "
    "the set is unchanged") {
  for (const Kind kind : {Kind::sync, Kind::suspending}) {
    INFO(name_of(kind) << " hooks");
    Set set;
    for (int t = 1; t <= 3; ++t) {
      add_hook<ChainAggregate>(set, t, kind);
      add_hook<AsyncChainFinalize>(set, t, kind);
      add_hook<AsyncAggregate>(set, t, kind);
      add_hook<AsyncFinalize>(set, t, kind);
    }
    throws_then_unchanged<ChainAggregate>(set, Thrower::chain);         // sync chain
    throws_then_unchanged<ChainAggregate>(set, Thrower::aggregate);     // sync aggregate
    throws_then_unchanged<AsyncChainFinalize>(set, Thrower::chain);     // coroutine chain
    throws_then_unchanged<AsyncChainFinalize>(set, Thrower::finalize);  // sync finalize
    throws_then_unchanged<AsyncAggregate>(set, Thrower::aggregate);     // coroutine aggregate
    throws_then_unchanged<AsyncFinalize>(set, Thrower::finalize);       // coroutine finalize
  }
  // Without hooks too: the chain on the default, the aggregate of the default alone.
  const Set empty;
  thrower = Thrower::chain;
  REQUIRE_THROWS_WITH(sync_wait(empty.call<ChainAggregate>(5)), "chain failed");
  thrower = Thrower::aggregate;
  REQUIRE_THROWS_WITH(sync_wait(empty.call<ChainAggregate>(5)), "aggregate failed");
  thrower = Thrower::finalize;
  REQUIRE_THROWS_WITH(finish(empty.call<AsyncChainFinalize>(5)), "finalize failed");
  thrower = Thrower::nobody;
  REQUIRE(sync_wait(empty.call<ChainAggregate>(5)) == 5);
}

// ================================================================================================
// Allocation failures
// ================================================================================================

namespace {

// A plugin for add_hooks: implements four slots (one of them in the nested set).
struct Plugin {
  int tag;
  int operator()(AlwaysFold, int, std::optional<int> last) const { return fold_step(last, tag); }
  int operator()(ChainAggregate, int x) const { return x * 10 + tag; }
  int operator()(Single, int x) const { return x + tag; }
  int operator()(NestedFold, int, std::optional<int> last) const { return fold_step(last, tag); }
};

// The same without the singleton slot.
struct ListPlugin {
  int tag;
  int operator()(AlwaysFold, int, std::optional<int> last) const { return fold_step(last, tag); }
  int operator()(ChainAggregate, int x) const { return x * 10 + tag; }
  int operator()(NestedFold, int, std::optional<int> last) const { return fold_step(last, tag); }
};

// Everything observable about a set: every slot's count and its result for x = 5.
std::string fingerprint(const Set& set) {
  std::string text;
  boost::mp11::mp_for_each<Set::slots>([&](auto slot) {
    using S = decltype(slot);
    text += std::string(hookset::slot_name<S>) + ":" + std::to_string(set.count<S>()) + "=" +
            std::to_string(finish(set.call<S>(5))) + " ";
  });
  return text;
}

// A set with hooks in several slots (some coroutines), so extend and copies touch many lists.
Set populated(int base) {
  Set set;
  for (int t = 1; t <= 2; ++t) {
    set.add<AlwaysFold>(make_sync_hook<AlwaysFold>(base + t), hookset::Priority{t % 2});
    set.add<AsyncFallbackFold>(make_coroutine_hook<AsyncFallbackFold>(base + t, false));
    set.add<ChainAggregate>(make_sync_hook<ChainAggregate>(base + t));
    set.add<AsyncChainFinalize>(make_coroutine_hook<AsyncChainFinalize>(base + t, false));
    set.add<NestedFold>(make_sync_hook<NestedFold>(base + t));
  }
  set.add<Single>(make_sync_hook<Single>(base));
  return set;
}

// What one registration test works on: a set, possibly a copy sharing its lists, another set to
// extend from.
struct Fixture {
  std::unique_ptr<Set> set;
  std::unique_ptr<Set> copy;
  std::unique_ptr<Set> other;
  hookset::HookId some_id;

  std::string fingerprints() const {
    return fingerprint(*set) + "| " + (copy ? fingerprint(*copy) : "-") + " | " +
           (other ? fingerprint(*other) : "-");
  }
};

Fixture make_fixture(bool shared) {
  Fixture f;
  f.set = std::make_unique<Set>(populated(0));
  f.some_id = f.set->add<AlwaysFold>(make_sync_hook<AlwaysFold>(7));
  if (shared) f.copy = std::make_unique<Set>(*f.set);
  f.other = std::make_unique<Set>(populated(4));
  return f;
}

// Runs `operation` with the n-th allocation failing, n = 1, 2, ... until it succeeds. After every
// failure everything must be as before; after the success, as after an unhindered run. Returns
// how many allocations the operation makes.
long every_allocation_fails(bool shared, bool persistent,
                            const std::function<void(Fixture&)>& operation) {
  Fixture reference = make_fixture(shared);
  operation(reference);
  const std::string after = reference.fingerprints();

  for (long n = 1;; ++n) {
    INFO("allocation " << n << (persistent ? " and every later one" : "") << " fails");
    Fixture fixture = make_fixture(shared);
    const std::string before = fixture.fingerprints();
    bool threw = false;
    {
      FailingAllocations failing(n, persistent);
      try {
        operation(fixture);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
    }
    if (!threw) {
      CHECK(fixture.fingerprints() == after);
      return n - 1;
    }
    const std::string now = fixture.fingerprints();
    CHECK(now == before);
    if (now != before) return -1;  // one report per setting is enough
  }
}

void every_allocation_fails_in_each_setting(const char* what,
                                            const std::function<void(Fixture&)>& operation) {
  for (const bool shared : {false, true})
    for (const bool persistent : {false, true}) {
      INFO(what << (shared ? ", lists shared with a copy" : ", lists not shared"));
      every_allocation_fails(shared, persistent, operation);
    }
}

}  // namespace

TEST_CASE("allocation failure in add<S>: the set is unchanged") {
  every_allocation_fails_in_each_setting("add", [](Fixture& f) {
    f.set->add<AlwaysFold>(make_sync_hook<AlwaysFold>(9), hookset::Priority{-1});
  });
  every_allocation_fails_in_each_setting("add coroutine hook", [](Fixture& f) {
    f.set->add<AsyncChainFinalize>(make_coroutine_hook<AsyncChainFinalize>(9, false));
  });
  every_allocation_fails_in_each_setting("add to a nested set's slot", [](Fixture& f) {
    f.set->add<NestedFold>(make_sync_hook<NestedFold>(9));
  });
  every_allocation_fails_in_each_setting("add replacing a singleton", [](Fixture& f) {
    f.set->add<Single>(make_sync_hook<Single>(9));
  });
  every_allocation_fails_in_each_setting("with<S>", [](Fixture& f) {
    Set moved = std::move(*f.set).with<AlwaysFold>(make_sync_hook<AlwaysFold>(9));
    *f.set = std::move(moved);
  });
}

TEST_CASE("allocation failure in add_hooks: all or nothing") {
  every_allocation_fails_in_each_setting("add_hooks, list slots only",
                                         [](Fixture& f) { f.set->add_hooks(ListPlugin{9}); });
  every_allocation_fails_in_each_setting("add_hooks",
                                         [](Fixture& f) { f.set->add_hooks(Plugin{9}); });
  every_allocation_fails_in_each_setting("add_hooks(shared_ptr)", [](Fixture& f) {
    f.set->add_hooks(std::make_shared<const Plugin>(Plugin{9}));
  });
}

TEST_CASE("allocation failure in remove and configure: the set is unchanged") {
  every_allocation_fails_in_each_setting("remove", [](Fixture& f) { f.set->remove(f.some_id); });
  every_allocation_fails_in_each_setting(
      "configure", [](Fixture& f) { f.set->configure<ChainAggregate>(Sum{}); });
}

TEST_CASE("allocation failure in extend: the set is unchanged") {
  every_allocation_fails_in_each_setting("extend", [](Fixture& f) { f.set->extend(*f.other); });
  every_allocation_fails_in_each_setting("extend with itself",
                                         [](Fixture& f) { f.set->extend(*f.set); });
}

TEST_CASE("allocation failure in copy, then in adding to the copy: both sets unchanged") {
  {
    // Copying shares the lists: it cannot run out of memory.
    const Fixture f = make_fixture(true);
    const std::string before = f.fingerprints();
    bool threw = false;
    {
      FailingAllocations failing(1, true);  // every allocation fails
      try {
        const Set copy(*f.set);
        const Set copy_of_copy(copy);
      } catch (const std::bad_alloc&) {
        threw = true;
      }
    }
    REQUIRE_FALSE(threw);
    REQUIRE(f.fingerprints() == before);
  }
  for (const bool persistent : {false, true}) {
    INFO("add to a copy sharing the lists");
    every_allocation_fails(true, persistent, [](Fixture& f) {
      f.copy->add<ChainAggregate>(make_sync_hook<ChainAggregate>(9));
    });
  }
}

TEST_CASE(
    "allocation failure in an add from inside a running hook: the set and the running dispatch are "
    "unaffected") {
  for (const bool persistent : {false, true}) {
    for (long n = 1;; ++n) {
      INFO("allocation " << n << (persistent ? " and every later one" : "") << " fails");
      Set set = populated(0);  // AlwaysFold: hook 2 (priority 0), hook 1 (priority 1)
      bool attempted = false;
      bool threw = false;
      set.add<AlwaysFold>(
          [&set, &attempted, &threw, n, persistent](int, std::optional<int> last) {
        if (!std::exchange(attempted, true)) {
          FailingAllocations failing(n, persistent);
          try {
            set.add<AlwaysFold>(make_sync_hook<AlwaysFold>(9));  // priority 0: after hook 2
          } catch (const std::bad_alloc&) {
            threw = true;
          }
        }
        return *last;
          },
          hookset::Priority{-10});
      // The running dispatch keeps the hooks it started with: 5 -> 5 -> 52 -> 521.
      REQUIRE(sync_wait(set.call<AlwaysFold>(5)) == 521);
      if (threw) {
        REQUIRE(set.count<AlwaysFold>() == 3);
        REQUIRE(sync_wait(set.call<AlwaysFold>(5)) == 521);
        continue;
      }
      REQUIRE(set.count<AlwaysFold>() == 4);
      REQUIRE(sync_wait(set.call<AlwaysFold>(5)) == 5291);
      break;
    }
  }
}

TEST_CASE(
    "allocation failure during a dispatch with coroutine hooks: it propagates, the set is "
    "unchanged") {
  // Each attempt runs on a new thread: coroutine frames come from a per-thread pool, which would
  // otherwise serve every attempt after the first without allocating.
  for (const bool persistent : {false, true}) {
    const Set set = populated(0);
    const std::string before = fingerprint(set);
    for (long n = 1;; ++n) {
      INFO("allocation " << n << (persistent ? " and every later one" : "") << " fails");
      bool threw = false;
      int result = 0;
      std::thread([&] {
        FailingAllocations failing(n, persistent);
        try {
          result = sync_wait(set.call<AsyncChainFinalize>(5));
        } catch (const std::bad_alloc&) {
          threw = true;
        }
      }).join();
      REQUIRE(fingerprint(set) == before);
      if (!threw) {
        REQUIRE(n > 1);  // it did allocate
        REQUIRE(result == 1005);
        break;
      }
    }
  }
}
