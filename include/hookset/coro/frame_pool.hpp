#pragma once
// frame_pool: recycles coroutine frames so a steady loop of Task dispatches allocates nothing.
//
// Each thread keeps a small cache of free blocks per size class (64-byte steps up to 2 KiB).
// Design decisions, each to keep this obviously correct:
//  - Every block comes from global ::operator new and has exactly its class size, so any block
//    can be handed back to global ::operator delete at any time, from any thread. That makes a
//    block freed on another thread harmless: it simply joins that thread's cache.
//  - Each class holds at most `max_blocks_per_class` blocks; beyond that a freed block goes
//    straight back to ::operator delete, so the cache never hoards memory.
//  - Sizes above `max_pooled_size` are not pooled at all.
//  - The cache is destroyed at thread exit (its destructor frees its blocks). A trivially
//    destructible thread-local flag, readable for the whole life of the thread, records that; a
//    frame freed later in thread exit (e.g. by another thread_local's destructor) then goes to
//    ::operator delete instead of touching the destroyed cache.
//  - Under AddressSanitizer a cached block is poisoned until it is handed out again, so a frame
//    used after it was freed is reported as it would be without the pool.

#include <cstddef>
#include <new>

#include <hookset/coro/config.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define HOOKSET_FRAME_POOL_POISONS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOOKSET_FRAME_POOL_POISONS 1
#endif
#endif
#if defined(HOOKSET_FRAME_POOL_POISONS)
#include <sanitizer/asan_interface.h>
#endif

namespace hookset::detail {

class frame_pool {
 public:
  static constexpr std::size_t size_step = 64;
  static constexpr std::size_t max_pooled_size = 2048;
  static constexpr std::size_t max_blocks_per_class = 32;

  // (config.hpp: out of line under Clang, as they reach the thread's cache.)
  [[nodiscard]] HOOKSET_THREAD_LOCAL_ACCESS static void* allocate(std::size_t size) {
    if (size > max_pooled_size || cache_state == state::destroyed) {
      return ::operator new(block_size(size));
    }
    thread_cache& cache = local_cache();
    const std::size_t cls = size_class(size);
    if (free_block* block = cache.head[cls]) {
      unpoison(block, block_size(size));
      cache.head[cls] = block->next;
      --cache.count[cls];
      return block;
    }
    return ::operator new(block_size(size));
  }

  HOOKSET_THREAD_LOCAL_ACCESS static void deallocate(void* pointer, std::size_t size) noexcept {
    // Only an alive cache takes blocks: never one already destroyed at thread exit, and we do not
    // create a cache just to park a block in it (that could happen after thread_local destruction).
    if (size <= max_pooled_size && cache_state == state::alive) {
      thread_cache& cache = local_cache();
      const std::size_t cls = size_class(size);
      if (cache.count[cls] < max_blocks_per_class) {
        cache.head[cls] = ::new (pointer) free_block{cache.head[cls]};
        ++cache.count[cls];
        poison(pointer, block_size(size));
        return;
      }
    }
    release(pointer, block_size(size));
  }

 private:
  static constexpr std::size_t class_count = max_pooled_size / size_step;

  struct free_block {
    free_block* next;
  };

  // A cached block's bytes past its link (the link is read when the block is taken).
  static void poison([[maybe_unused]] void* block, [[maybe_unused]] std::size_t size) noexcept {
#if defined(HOOKSET_FRAME_POOL_POISONS)
    ASAN_POISON_MEMORY_REGION(static_cast<char*>(block) + sizeof(free_block),
                              size - sizeof(free_block));
#endif
  }
  static void unpoison([[maybe_unused]] void* block, [[maybe_unused]] std::size_t size) noexcept {
#if defined(HOOKSET_FRAME_POOL_POISONS)
    ASAN_UNPOISON_MEMORY_REGION(block, size);
#endif
  }

  static void release(void* block, [[maybe_unused]] std::size_t size) noexcept {
#if defined(__cpp_sized_deallocation)  // Clang leaves sized deallocation off by default
    ::operator delete(block, size);
#else
    ::operator delete(block);
#endif
  }

  // Size class `c` holds blocks of (c + 1) * size_step bytes.
  static constexpr std::size_t size_class(std::size_t size) noexcept {
    return size == 0 ? 0 : (size - 1) / size_step;
  }
  // The size actually requested from ::operator new (and given back to sized delete): pooled
  // sizes are rounded up to their class so a block fits any request of its class.
  static constexpr std::size_t block_size(std::size_t size) noexcept {
    return size > max_pooled_size ? size : (size_class(size) + 1) * size_step;
  }

  enum class state : unsigned char { not_created, alive, destroyed };
  static inline thread_local constinit state cache_state = state::not_created;

  struct thread_cache {
    free_block* head[class_count] = {};
    std::size_t count[class_count] = {};

    thread_cache() noexcept { cache_state = state::alive; }
    thread_cache(const thread_cache&) = delete;
    thread_cache& operator=(const thread_cache&) = delete;
    ~thread_cache() {
      cache_state = state::destroyed;  // first: nothing may enter this cache from now on
      for (std::size_t cls = 0; cls < class_count; ++cls) {
        while (free_block* block = head[cls]) {
          head[cls] = block->next;
          unpoison(block, (cls + 1) * size_step);
          release(block, (cls + 1) * size_step);
        }
      }
    }
  };

  static thread_cache& local_cache() noexcept {
    static thread_local thread_cache cache;
    return cache;
  }
};

}  // namespace hookset::detail
