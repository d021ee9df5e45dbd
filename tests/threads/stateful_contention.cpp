// Stateful hooks under contention from several threads (docs/semantics.md, "Stateful hooks"): calls
// are serialised - every id handed out exactly once - and a waiter resumed by another thread's
// unlock finishes its dispatch there. Also run under ThreadSanitizer (scripts/test.sh).
#include "hookset_catch.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>

namespace {

struct NextId : hookset::Slot<int(std::string_view who), hookset::Always> {
  static int default_impl(std::string_view) { return 0; }
};
struct Audit : hookset::Slot<int(int id), hookset::Always> {
  static int default_impl(int id) { return id; }
};
using Set = hookset::HookSet<NextId, Audit>;

constexpr int threads = 8;
constexpr int per_thread = 5000;

std::vector<int> run_threads(const Set& set) {
  std::vector<std::vector<int>> ids(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&set, &mine = ids[t]] {
      mine.reserve(per_thread);
      for (int i = 0; i < per_thread; ++i)
        mine.push_back(hookset::sync_wait(set.call<NextId>("worker")));
    });
  for (auto& worker : workers) worker.join();
  std::vector<int> all;
  for (auto& mine : ids) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end());
  return all;
}

std::vector<int> one_to(int n) {
  std::vector<int> expected(n);
  std::iota(expected.begin(), expected.end(), 1);
  return expected;
}

TEST_CASE("8 threads share one synchronous Stateful counter: every id exactly once") {
  Set set;
  set.add<NextId>(hookset::Stateful{
      [next = 0](std::string_view, std::optional<int>) mutable { return ++next; }});
  CHECK(run_threads(set) == one_to(threads * per_thread));
}

TEST_CASE(
    "8 threads share a coroutine Stateful that dispatches another slot while holding its lock") {
  Set set;
  struct Counter {
    const Set* set;
    int next = 0;
    hookset::Task<int> operator()(std::string_view, std::optional<int>) {
      const int id = ++next;
      co_return co_await set->call<Audit>(id);  // Audit's stateful hook: a second lock, nested
    }
  };
  set.add<Audit>(hookset::Stateful{[seen = 0](int id, std::optional<int> last) mutable {
    ++seen;  // state written under the Stateful's lock (TSan watches it)
    return seen > 0 ? last.value_or(id) : 0;
  }});
  set.add<NextId>(hookset::Stateful{Counter{&set}});
  CHECK(run_threads(set) == one_to(threads * per_thread));
}

}  // namespace
