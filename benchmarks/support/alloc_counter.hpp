#pragma once
// Counts heap allocations per thread by replacing the global allocation functions, and reports
// them as the `allocs_per_dispatch` counter every benchmark carries.
//
// The replacement functions are definitions, not inline: include this header from exactly one
// translation unit per program (each benchmarks/*.cpp is its own program).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <benchmark/benchmark.h>

namespace hookset_bench {

// Per thread: a two-thread benchmark counts each thread's own dispatches, and the hot path pays
// no shared-memory write.
inline thread_local constinit std::uint64_t thread_allocations = 0;

inline std::uint64_t allocations() noexcept { return thread_allocations; }

// Records the count when constructed; report() sets `allocs_per_dispatch` = allocations made on
// this thread since then / iterations (Google Benchmark sums the counter over threads and
// divides by the iterations of all threads).
class alloc_meter {
 public:
  alloc_meter() noexcept : start_(allocations()) {}
  void report(benchmark::State& state) const {
    state.counters["allocs_per_dispatch"] = benchmark::Counter(
        static_cast<double>(allocations() - start_), benchmark::Counter::kAvgIterations);
  }

 private:
  std::uint64_t start_;
};

namespace detail {

inline void* counted_allocate(std::size_t size) {
  ++thread_allocations;
  if (size == 0) size = 1;
  if (void* p = std::malloc(size)) return p;
  throw std::bad_alloc();
}

inline void* counted_allocate(std::size_t size, std::align_val_t align) {
  ++thread_allocations;
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void*)) a = sizeof(void*);
  std::size_t rounded = (size + a - 1) / a * a;  // aligned_alloc wants a multiple of the alignment
  if (rounded == 0) rounded = a;
  if (void* p = std::aligned_alloc(a, rounded)) return p;
  throw std::bad_alloc();
}

}  // namespace detail
}  // namespace hookset_bench

// ---- the replaced global allocation functions -------------------------------------------------

void* operator new(std::size_t size) { return hookset_bench::detail::counted_allocate(size); }
void* operator new[](std::size_t size) { return hookset_bench::detail::counted_allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return hookset_bench::detail::counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return hookset_bench::detail::counted_allocate(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t align) {
  return hookset_bench::detail::counted_allocate(size, align);
}
void* operator new[](std::size_t size, std::align_val_t align) {
  return hookset_bench::detail::counted_allocate(size, align);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return hookset_bench::detail::counted_allocate(size, align);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return hookset_bench::detail::counted_allocate(size, align);
  } catch (...) {
    return nullptr;
  }
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
