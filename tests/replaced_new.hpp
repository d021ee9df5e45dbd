// Replaces the global operator new/delete family for a whole test program with one that goes
// through two functions the including file defines:
//
//   void* test_allocation::allocate(std::size_t size) noexcept;  // nullptr: out of memory
//   void test_allocation::release(void* block) noexcept;
//
// so a test can count what a thread allocates ("no heap allocation") or make an allocation fail.
// Include it in exactly one translation unit of the program. The whole unaligned family is
// replaced, so every such block is allocated and freed there (a sanitizer's own nothrow or array
// new would otherwise pair with this delete); coroutine frames come from the promise's operator
// new, i.e. frame_pool's plain ::operator new(size_t), so the aligned forms can stay the
// library's. Sanitizer runtimes linked statically (Clang's) define these too and cannot link
// with it; GCC's are shared libraries and can.
#pragma once

#include <cstddef>
#include <new>

namespace test_allocation {
void* allocate(std::size_t size) noexcept;
void release(void* block) noexcept;

inline void* allocate_or_throw(std::size_t size) {
  if (void* block = allocate(size == 0 ? 1 : size)) return block;
  throw std::bad_alloc();
}
}  // namespace test_allocation

void* operator new(std::size_t size) { return test_allocation::allocate_or_throw(size); }
void* operator new[](std::size_t size) { return test_allocation::allocate_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return test_allocation::allocate(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return test_allocation::allocate(size == 0 ? 1 : size);
}
void operator delete(void* block) noexcept { test_allocation::release(block); }
void operator delete[](void* block) noexcept { test_allocation::release(block); }
void operator delete(void* block, const std::nothrow_t&) noexcept {
  test_allocation::release(block);
}
void operator delete[](void* block, const std::nothrow_t&) noexcept {
  test_allocation::release(block);
}
void operator delete(void* block, std::size_t) noexcept { test_allocation::release(block); }
void operator delete[](void* block, std::size_t) noexcept { test_allocation::release(block); }
