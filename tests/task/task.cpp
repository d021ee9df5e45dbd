// Tests of hookset::Task and detail::frame_pool.
//
// This file replaces the global operator new/delete (for the whole test program) with versions
// that count what the current thread allocates, so the tests can assert "no heap allocation".

#include <hookset/task.hpp>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "hookset_catch.hpp"
#include "replaced_new.hpp"

namespace {

// Counted per thread: other threads (if any) do not disturb a measurement.
thread_local constinit std::size_t heap_allocations = 0;
// Set to a block to count how often it is freed, from any thread.
std::atomic<void*> watched_block{nullptr};
std::atomic<int> watched_block_frees{0};

void note_free(void* block) noexcept {
  if (block != nullptr && block == watched_block.load()) ++watched_block_frees;
}

}  // namespace

void* test_allocation::allocate(std::size_t size) noexcept {
  ++heap_allocations;
  return std::malloc(size);
}
void test_allocation::release(void* block) noexcept {
  note_free(block);
  std::free(block);
}

using hookset::sync_wait;
using hookset::Task;
using hookset::detail::frame_pool;

namespace {

// Counts live instances, to see whether coroutine frames (which hold copies of parameters)
// have been destroyed.
struct instance_counter {
  static inline int alive = 0;
  instance_counter() noexcept { ++alive; }
  instance_counter(const instance_counter&) noexcept { ++alive; }
  instance_counter(instance_counter&&) noexcept { ++alive; }
  ~instance_counter() { --alive; }
};

Task<int> value_of(int value) { co_return value; }

Task<int> twice(int value) {
  const int half = co_await value_of(value);
  co_return half * 2;
}

Task<std::unique_ptr<int>> make_unique_int(int value) {
  auto owned = std::make_unique<int>(value);
  co_return owned;  // implicitly moved
}

Task<int&> reference_to(int& target) { co_return target; }

Task<> set_flag(bool& flag) {
  flag = true;
  co_return;
}

Task<int> throw_runtime_error(std::string message) {
  throw std::runtime_error(message);
  co_return 0;
}

Task<> throw_logic_error() {
  throw std::logic_error("void task failed");
  co_return;
}

Task<int> await_without_catching(std::string message) {
  const int value = co_await throw_runtime_error(std::move(message));
  co_return value + 1;  // never reached
}

Task<std::string> catch_nested(std::string message) {
  try {
    co_await await_without_catching(std::move(message));
  } catch (const std::runtime_error& error) {
    co_return std::string("caught: ") + error.what();
  }
  co_return "not thrown";
}

Task<> keep_counter(instance_counter, bool& ran) {
  ran = true;
  co_return;
}

Task<long> sum_of_synchronous_tasks(int count) {
  long sum = 0;
  for (int i = 0; i < count; ++i) sum += co_await value_of(i);
  co_return sum;
}

Task<long> sum_of_nested_synchronous_tasks(int count) {
  long sum = 0;
  for (int i = 0; i < count; ++i) sum += co_await twice(i);
  co_return sum;
}

Task<int> count_void_tasks(int count) {
  int flags_set = 0;
  for (int i = 0; i < count; ++i) {
    bool flag = false;
    co_await set_flag(flag);
    flags_set += flag ? 1 : 0;
  }
  co_return flags_set;
}

Task<int> count_lvalue_awaits(int count) {
  int total = 0;
  for (int i = 0; i < count; ++i) {
    Task<int> task = value_of(1);
    total += co_await task;
  }
  co_return total;
}

}  // namespace

TEST_CASE("Task yields the value it co_returns", "[task]") {
  CHECK(sync_wait(value_of(7)) == 7);
  CHECK(sync_wait(twice(21)) == 42);
}

TEST_CASE("co_await on an lvalue Task yields a reference to the stored value", "[task]") {
  static_assert(std::is_same_v<hookset::detail::await_result_t<Task<std::string>&>, std::string&>);
  auto check = []() -> Task<bool> {
    Task<std::string> task = []() -> Task<std::string> { co_return "kept"; }();
    std::string& first = co_await task;
    std::string& second = co_await task;  // finished: not started again, same object
    co_return &first == &second&& first == "kept";
  };
  CHECK(sync_wait(check()));
}

TEST_CASE("Task supports move-only values, moved out by co_await std::move(task)", "[task]") {
  static_assert(std::is_same_v<hookset::detail::await_result_t<Task<std::unique_ptr<int>>>,
                               std::unique_ptr<int>>);
  auto check = []() -> Task<int> {
    Task<std::unique_ptr<int>> task = make_unique_int(5);
    std::unique_ptr<int> owned = co_await std::move(task);
    co_return owned ? *owned : -1;
  };
  CHECK(sync_wait(check()) == 5);
  std::unique_ptr<int> direct = sync_wait(make_unique_int(9));
  REQUIRE(direct);
  CHECK(*direct == 9);
}

TEST_CASE("Task<T&> yields the referenced object itself", "[task]") {
  int target = 1;
  auto check = [](int& t) -> Task<bool> {
    int& ref = co_await reference_to(t);
    ref = 2;
    co_return &ref == &t;
  };
  CHECK(sync_wait(check(target)));
  CHECK(target == 2);
  static_assert(std::is_same_v<decltype(sync_wait(reference_to(target))), int&>);
  CHECK(&sync_wait(reference_to(target)) == &target);
}

TEST_CASE("Task<void> runs its body", "[task]") {
  static_assert(std::is_same_v<Task<>, Task<void>>);
  bool flag = false;
  sync_wait(set_flag(flag));
  CHECK(flag);
  CHECK(sync_wait(count_void_tasks(3)) == 3);
}

TEST_CASE("exceptions propagate through nested tasks", "[task]") {
  CHECK_THROWS_WITH(sync_wait(await_without_catching("deep")), "deep");
  CHECK_THROWS_AS(sync_wait(throw_logic_error()), std::logic_error);
  CHECK(sync_wait(catch_nested("inner")) == "caught: inner");

  auto failing_reference = []() -> Task<int&> {
    static int unused = 0;
    throw std::out_of_range("no reference");
    co_return unused;
  };
  CHECK_THROWS_AS(sync_wait(failing_reference()), std::out_of_range);
}

TEST_CASE("an exception is rethrown each time a finished task is awaited again", "[task]") {
  auto check = []() -> Task<int> {
    Task<int> task = throw_runtime_error("again");
    int caught = 0;
    for (int i = 0; i < 2; ++i) {
      try {
        co_await task;
      } catch (const std::runtime_error&) {
        ++caught;
      }
    }
    co_return caught;
  };
  CHECK(sync_wait(check()) == 2);
}

TEST_CASE("Task is lazy: the body runs only when awaited", "[task]") {
  bool flag = false;
  Task<> task = set_flag(flag);
  CHECK_FALSE(flag);
  CHECK_FALSE(task.is_ready());
  sync_wait(task);
  CHECK(flag);
  CHECK(task.is_ready());
}

TEST_CASE("destroying a Task destroys its frame, started or not", "[task]") {
  REQUIRE(instance_counter::alive == 0);
  bool ran = false;
  {
    Task<> never_started = keep_counter(instance_counter{}, ran);
    CHECK(instance_counter::alive == 1);  // the parameter copy lives in the frame
  }
  CHECK(instance_counter::alive == 0);
  CHECK_FALSE(ran);
  {
    Task<> finished = keep_counter(instance_counter{}, ran);
    sync_wait(finished);
    CHECK(ran);
    CHECK(instance_counter::alive == 1);  // a finished frame stays until its Task goes
  }
  CHECK(instance_counter::alive == 0);
}

TEST_CASE("Task is move-only and a move transfers the frame", "[task]") {
  static_assert(!std::is_copy_constructible_v<Task<int>>);
  static_assert(std::is_nothrow_move_constructible_v<Task<int>>);
  static_assert(std::is_nothrow_move_assignable_v<Task<int>>);
  bool ran = false;
  Task<> first = keep_counter(instance_counter{}, ran);
  Task<> second = std::move(first);
  CHECK(instance_counter::alive == 1);
  Task<> third = keep_counter(instance_counter{}, ran);
  CHECK(instance_counter::alive == 2);
  third = std::move(second);  // third's own frame is destroyed
  CHECK(instance_counter::alive == 1);
  sync_wait(third);
  CHECK(ran);
  third = Task<>{};
  CHECK(instance_counter::alive == 0);
}

TEST_CASE("awaiting an empty Task throws std::logic_error", "[task]") {
  CHECK_THROWS_AS(sync_wait(Task<int>{}), std::logic_error);
}

// The requirement. Each of these would nest one or two stack frames per iteration if
// the awaiter were resumed by a plain call from the finished task: 1,000,000 iterations
// overflow an 8 MiB stack.
TEST_CASE("a million synchronously completing co_awaits in a loop do not overflow the stack",
          "[task][stack]") {
  constexpr int count = 1'000'000;
  constexpr long expected = static_cast<long>(count) * (count - 1) / 2;
  CHECK(sync_wait(sum_of_synchronous_tasks(count)) == expected);
  CHECK(sync_wait(sum_of_nested_synchronous_tasks(count)) == 2 * expected);
  CHECK(sync_wait(count_void_tasks(count)) == count);
  CHECK(sync_wait(count_lvalue_awaits(count)) == count);
}

TEST_CASE("after warm-up, creating and awaiting tasks makes no heap allocation",
          "[task][frame_pool]") {
  // Warm-up fills this thread's frame cache with one block per frame size in use.
  CHECK(sync_wait(sum_of_nested_synchronous_tasks(10)) == 90);

  const std::size_t before = heap_allocations;
  const long sum = sync_wait(sum_of_nested_synchronous_tasks(10'000));
  const std::size_t allocated = heap_allocations - before;

  CHECK(sum == 2L * 10'000 * 9'999 / 2);
  CHECK(allocated == 0);
}

TEST_CASE("sync_wait of a ready awaitable makes no coroutine frame and no allocation",
          "[task][frame_pool]") {
  struct ready {
    bool await_ready() const noexcept { return true; }
    void await_suspend(std::coroutine_handle<>) const noexcept {}
    int await_resume() const noexcept { return 3; }
  };
  // On a fresh thread the frame cache is empty, so even a recycled frame would show up here.
  std::size_t allocated = 1;
  int value = 0;
  std::thread([&] {
    const std::size_t before = heap_allocations;
    value = sync_wait(ready{});
    allocated = heap_allocations - before;
  }).join();
  CHECK(allocated == 0);
  CHECK(value == 3);
}

TEST_CASE("frame_pool reuses a freed block of the same size class", "[frame_pool]") {
  void* first = frame_pool::allocate(100);
  frame_pool::deallocate(first, 100);

  const std::size_t before = heap_allocations;
  void* second = frame_pool::allocate(128);  // same 64-byte step as 100
  CHECK(second == first);
  CHECK(heap_allocations - before == 0);
  frame_pool::deallocate(second, 128);
}

TEST_CASE("frame_pool sends sizes above the pooled limit to operator new", "[frame_pool]") {
  constexpr std::size_t large = frame_pool::max_pooled_size + 1;
  frame_pool::deallocate(frame_pool::allocate(large), large);
  const std::size_t before = heap_allocations;
  frame_pool::deallocate(frame_pool::allocate(large), large);
  CHECK(heap_allocations - before == 1);
}

TEST_CASE("frame_pool keeps at most max_blocks_per_class blocks per class", "[frame_pool]") {
  constexpr std::size_t size = 1000;
  constexpr std::size_t extra = 8;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i < frame_pool::max_blocks_per_class + extra; ++i) {
    blocks.push_back(frame_pool::allocate(size));
  }
  for (void* block : blocks) frame_pool::deallocate(block, size);

  // All of them were freed; only max_blocks_per_class came back to the cache.
  const std::size_t before = heap_allocations;
  std::vector<void*> again;
  again.reserve(blocks.size());
  const std::size_t after_reserve = heap_allocations;
  for (std::size_t i = 0; i < blocks.size(); ++i) again.push_back(frame_pool::allocate(size));
  CHECK(heap_allocations - after_reserve == extra);
  CHECK(after_reserve - before == 1);
  for (void* block : again) frame_pool::deallocate(block, size);
}

TEST_CASE("a block freed on another thread joins that thread's cache", "[frame_pool]") {
  void* block = frame_pool::allocate(200);
  watched_block = block;
  watched_block_frees = 0;
  bool reused = false;
  std::thread([block, &reused] {
    frame_pool::deallocate(frame_pool::allocate(8), 8);  // create this thread's cache
    frame_pool::deallocate(block, 200);
    reused = frame_pool::allocate(200) == block;
    frame_pool::deallocate(block, 200);
  }).join();
  CHECK(reused);
  // The thread's exit released its cache, block included, exactly once.
  CHECK(watched_block_frees == 1);
  watched_block = nullptr;
}

TEST_CASE("a block freed after the thread's cache was destroyed goes to operator delete",
          "[frame_pool]") {
  struct frees_at_thread_exit {
    void* block = nullptr;
    ~frees_at_thread_exit() { frame_pool::deallocate(block, 300); }
  };
  void* block = frame_pool::allocate(300);
  watched_block = block;
  watched_block_frees = 0;
  std::thread([block] {
    // Constructed before this thread's cache, so destroyed after it (reverse order).
    thread_local frees_at_thread_exit holder;
    holder.block = block;
    frame_pool::deallocate(frame_pool::allocate(300), 300);  // creates the cache
  }).join();
  CHECK(watched_block_frees == 1);  // freed, not parked in the destroyed cache
  watched_block = nullptr;
}
