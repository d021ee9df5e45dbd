#pragma once
// The frame pool's per-thread set-up and clean-up (coro/frame_pool.hpp): compiled once with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <cstddef>

#include <hookset/coro/config.hpp>
#include <hookset/coro/frame_pool.hpp>

namespace hookset::detail {

struct frame_pool::cache_owner {
  cache_owner() noexcept { local_cache.status = state::alive; }
  cache_owner(const cache_owner&) = delete;
  cache_owner& operator=(const cache_owner&) = delete;
  ~cache_owner() {
    thread_cache& cache = local_cache;
    cache.status = state::destroyed;  // first: nothing may enter this cache from now on
    for (std::size_t cls = 0; cls < class_count; ++cls) {
      while (free_block* block = cache.head[cls]) {
        cache.head[cls] = block->next;
        unpoison(block, (cls + 1) * size_step);
        release(block, (cls + 1) * size_step);
      }
    }
  }
};

HOOKSET_NOINLINE HOOKSET_DECL bool frame_pool::adopt_cache() noexcept {
  static thread_local cache_owner owner;
  return local_cache.status == state::alive;
}

}  // namespace hookset::detail
