// Frozen and shared sets: a frozen set dispatches like the set it came from and has no way to
// change; a SharedHookSet lets many threads dispatch while another publishes changed versions,
// each dispatch running on exactly one version - kept alive until it completes.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

using hookset::Task;

namespace {

// Every hook of version v answers v: a dispatch that mixed versions would show two values.
struct Versions {
  std::vector<int> operator()(std::vector<int> outputs) const { return outputs; }
};
struct Seen : hookset::Slot<int(int), hookset::Fallback, hookset::Aggregate<Versions>,
                            hookset::Output<std::vector<int>>> {
  static int default_impl(int) { return -1; }
};
struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Seen, Count>;

template <class T>
constexpr bool can_add = requires(T& t) {
  t.template add<Count>([](int x, std::optional<int>) { return x; });
};

}  // namespace

TEST_CASE("a frozen set dispatches like its set and cannot be changed") {
  Set set;
  set.add<Count>([](int x, std::optional<int> last) { return x + *last; });
  const auto frozen = set.freeze();
  set.add<Count>([](int x, std::optional<int> last) {
    return x * *last;
  });  // the set goes on; the copy does not
  CHECK(hookset::sync_wait(frozen.call<Count>(3)) == 6);
  CHECK(hookset::sync_wait(set.call<Count>(3)) == 18);
  CHECK(frozen.count<Count>() == 1);
  STATIC_REQUIRE(can_add<Set>);
  STATIC_REQUIRE_FALSE(can_add<hookset::FrozenHookSet<Seen, Count>>);
  auto thawed = frozen.thaw();
  thawed.add<Count>([](int x, std::optional<int> last) { return x - *last; });
  CHECK(hookset::sync_wait(thawed.call<Count>(3)) == 3 - 6);
}

TEST_CASE(
    "a shared set: 8 threads dispatch while another publishes 1000 versions - each sees one") {
  hookset::SharedHookSet<Seen, Count> shared;
  std::atomic<bool> done{false};
  std::atomic<long> dispatches{0}, inconsistent{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 8; ++t)
    readers.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        const std::vector<int> seen = hookset::sync_wait(shared.call<Seen>(0));
        ++dispatches;
        // Version v has (v % 4) + 1 hooks, each answering v; version 0 has none (the default).
        const std::set<int> distinct(seen.begin(), seen.end());
        const int v = seen.front();
        if (distinct.size() != 1 || (v >= 0 && seen.size() != static_cast<std::size_t>(v % 4 + 1)))
          ++inconsistent;
      }
    });
  std::thread writer([&] {
    for (int v = 1; v <= 1000; ++v) {
      Set next;
      for (int i = 0; i <= v % 4; ++i) next.add<Seen>([v](int) { return v; });
      if (v % 2) {
        shared.publish(std::move(next));
      } else {
        shared.update([&](Set& set) { set = next; });
      }
    }
    done.store(true, std::memory_order_release);
  });
  writer.join();
  for (auto& r : readers) r.join();
  CHECK(shared.version() == 1000);
  CHECK(dispatches > 0);
  CHECK(inconsistent == 0);
}

TEST_CASE("a dispatch suspended on an old version keeps it - and finishes on it") {
  hookset::SharedHookSet<Seen, Count> shared;
  test_support::ManualEvent gate;
  auto destroyed = std::make_shared<bool>(false);
  struct Witness {
    std::shared_ptr<bool> flag;
    ~Witness() {
      if (flag) *flag = true;
    }
  };
  auto witness = std::make_shared<Witness>();
  witness->flag = destroyed;
  shared.update([&](Set& set) {
    set.add<Seen>([&gate, w = std::move(witness)](int) -> Task<int> {
      co_await gate;
      co_return 1;
    });
  });
  test_support::Outcome<std::vector<int>> out;
  test_support::detach(shared.call<Seen>(0), out);
  shared.publish(Set{});  // the version the dispatch runs on is no longer current
  CHECK_FALSE(*destroyed);
  gate.fire();
  REQUIRE(out.done);
  CHECK(*out.value == std::vector<int>{1});
  CHECK(*destroyed);  // released with the dispatch
  CHECK(hookset::sync_wait(shared.call<Seen>(0)) == std::vector<int>{-1});
}
