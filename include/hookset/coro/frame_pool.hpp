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
//  - The cache is emptied at thread exit (an owner object's destructor frees its blocks). The
//    cache is trivially destructible and readable for the whole life of the thread, and records
//    that it was emptied; a frame freed later in thread exit (e.g. by another thread_local's
//    destructor) then goes to ::operator delete.
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
  // What registers a thread's cache for its thread exit, as this file's code reaches it: a
  // plugin host checks that its plugins reach the program's (<hookset/plugin.hpp>).
  using cache_adopter = bool (*)() noexcept;
  static cache_adopter thread_cache_adopter() noexcept { return &adopt_cache; }

  [[nodiscard]] static void* allocate(std::size_t size) {
    if (size <= max_pooled_size)
      if (void* block = take(size_class(size))) return block;
    return ::operator new(block_size(size));
  }

  static void deallocate(void* pointer, std::size_t size) noexcept {
    if (size > max_pooled_size) release(pointer, size);
    else keep_or_release(pointer, size_class(size));
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

  // The thread's cache, reached only here (config.hpp: out of line under Clang; the size
  // arithmetic around them stays inline, where a frame's size is a constant).
  // A block of class `cls` from this thread's cache, or null.
  HOOKSET_THREAD_LOCAL_ACCESS static void* take(std::size_t cls) noexcept {
    thread_cache& cache = local_cache;
    free_block* block = cache.head[cls];
    if (!block) return nullptr;  // (also when the cache is not alive: it holds nothing then)
    unpoison(block, (cls + 1) * size_step);
    cache.head[cls] = block->next;
    --cache.count[cls];
    return block;
  }
  // Keeps `block` of class `cls` in this thread's cache, or gives it back to ::operator delete.
  // Only an alive cache takes blocks: never one already destroyed at thread exit. (The rare cases
  // out of line, reached by a tail call: the common one then saves no register.)
  HOOKSET_THREAD_LOCAL_ACCESS static void keep_or_release(void* block, std::size_t cls) noexcept {
    thread_cache& cache = local_cache;
    if (cache.status != state::alive || cache.count[cls] >= max_blocks_per_class) [[unlikely]]
      return release_unless_adopted(block, cls);
    cache.head[cls] = ::new (block) free_block{cache.head[cls]};
    ++cache.count[cls];
    poison(block, (cls + 1) * size_step);
  }
  // keep_or_release() when the cache is full, destroyed or not yet created (then made alive
  // here, and the block kept).
  HOOKSET_NOINLINE static void release_unless_adopted(void* block, std::size_t cls) noexcept {
    if (local_cache.status == state::not_created && adopt_cache())
      return keep_or_release(block, cls);
    release(block, (cls + 1) * size_step);
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

  // The cache itself is trivially destructible, so reaching it costs no guard or wrapper call;
  // the first block it keeps makes it alive and registers its owner, whose destructor empties
  // it at thread exit. After that, a frame freed later in thread exit (by another
  // thread_local's destructor, say) goes to ::operator delete.
  struct thread_cache {
    free_block* head[class_count];
    unsigned char count[class_count];  // (at most max_blocks_per_class)
    state status;
  };
  static_assert(max_blocks_per_class <= 255);
  static inline thread_local constinit thread_cache local_cache{};

  // Empties the cache at thread exit; made by the first block the cache keeps
  // (<hookset/impl/frame_pool.ipp>: once per program with separate compilation).
  struct cache_owner;
  // Makes this thread's cache alive (once): true if it is. (Out of line.)
  static bool adopt_cache() noexcept;
};

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/frame_pool.ipp>
#endif
