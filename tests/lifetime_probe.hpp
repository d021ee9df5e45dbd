// The lifetime oracle of the tests: a probe object that hooks take by value (a coroutine hook's
// frame keeps its copy until the frame is destroyed) and that records, for every instance, its
// owner (a dispatch, a tripwire run), when and on which thread it was made and destroyed.
//
// The rule it checks (docs/semantics.md, "Structured lifetime"): once a dispatch or a tripwire
// has completed - the statement that awaited it is over - nothing it created is alive. A test
// takes a mark before it starts the dispatch and, after the statement that awaited it, asks
// which probes of that owner made since the mark are still alive:
//
//   const auto mark = lifetime::mark();
//   sync_wait(set.call<S>(Request{x, lifetime::Probe(7)}));
//   CHECK(lifetime::alive_since(7, mark).empty());
//
// or, for something that completes later (on this thread or another), run_checked below.
//
// An instance that outlives its owner's completion is reported with its thread and age, and
// again (late_destructions) when it is finally destroyed, with the thread that destroyed it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <hookset/coro/awaitable_traits.hpp>

#include "test_support.hpp"

namespace test_support::lifetime {

using clock = std::chrono::steady_clock;

struct Instance {
  int owner = 0;
  std::uint64_t made = 0;  // its place in the sequence of instances made
  std::thread::id made_on;
  clock::time_point made_at;
  bool overdue = false;  // reported alive after its owner completed
};

// Every live instance, by address; the destructions of overdue ones.
struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, Instance> alive;
  std::vector<std::string> late;
  std::atomic<std::uint64_t> next{1};
};
inline Registry& registry() {
  static Registry instance;
  return instance;
}

inline std::string describe(const Instance& i, const char* what) {
  std::ostringstream text;
  text << "probe #" << i.made << " of owner " << i.owner << " " << what << " (made on thread "
       << i.made_on << ", "
       << std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - i.made_at).count()
       << " us ago; now on thread " << std::this_thread::get_id() << ")";
  return text.str();
}

// A point in the sequence of instances made: alive_since counts the ones made after it.
inline std::uint64_t mark() { return registry().next.load(); }

// The instances of `owner` made since `since` that are still alive, described; each is marked
// overdue, so that its destruction is recorded in late_destructions() too.
inline std::vector<std::string> alive_since(int owner, std::uint64_t since) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> found;
  for (auto& [address, instance] : r.alive)
    if (instance.owner == owner && instance.made >= since) {
      instance.overdue = true;
      found.push_back(describe(instance, "alive after its owner completed"));
    }
  return found;
}

// Destructions of instances that were found alive after their owner completed (and clears it).
inline std::vector<std::string> late_destructions() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::vector<std::string> late;
  late.swap(r.late);
  return late;
}

// Live instances in all (for a test that ends: none may be left behind).
inline std::size_t alive_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.alive.size();
}

// The probe: copies and moves are new instances of the same owner.
class Probe {
 public:
  explicit Probe(int owner = 0) : owner_(owner) { enter(); }
  Probe(const Probe& other) : owner_(other.owner_) { enter(); }
  Probe(Probe&& other) noexcept : owner_(other.owner_) { enter(); }
  Probe& operator=(const Probe& other) {
    retag(other.owner_);
    return *this;
  }
  ~Probe() {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    if (auto it = r.alive.find(this); it != r.alive.end()) {
      if (it->second.overdue) r.late.push_back(describe(it->second, "destroyed late"));
      r.alive.erase(it);
    }
  }
  int owner() const noexcept { return owner_; }

 private:
  void enter() {
    Registry& r = registry();
    Instance instance{owner_, r.next.fetch_add(1), std::this_thread::get_id(), clock::now()};
    std::lock_guard lock(r.mutex);
    r.alive[this] = instance;
  }
  void retag(int owner) {
    owner_ = owner;
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    r.alive[this].owner = owner;
  }

  int owner_;
};

// What run_checked saw: the awaited thing's error, and the owner's probes alive after it.
struct Checked {
  bool done = false;
  std::exception_ptr error;
  std::vector<std::string> outlived;
};

// Runs what start() returns at once (a dispatch, a tripwire run) without blocking and, when the
// statement that awaited it is over, records which of the owner's probes made since it started
// are still alive. start() makes the awaitable inside that statement, so it is gone by then too.
// keep(result), if given, sees the result inside that statement.
struct discard {
  template <class... R>
  void operator()(R&&...) const noexcept {}
};
template <class Start, class Keep = discard>
Detached run_checked(Start start, int owner, Checked& out, Keep keep = {}) {
  const std::uint64_t since = mark();
  try {
    if constexpr (std::is_void_v<hookset::detail::await_result_t<decltype(start())>>)
      co_await start();
    else keep(co_await start());
  } catch (...) {
    out.error = std::current_exception();
  }
  out.outlived = alive_since(owner, since);
  out.done = true;
}

}  // namespace test_support::lifetime
