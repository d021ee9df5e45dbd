#pragma once
// Per-slot storage: an immutable, reference-counted snapshot of the hooks and configured
// companions (slot_state), owned copy-on-write by the set (slot_storage).
//
// Why this shape: a synchronous dispatch must not allocate or write shared memory, so it walks
// the set's current snapshot without taking a reference. The set therefore never frees a
// snapshot while a synchronous dispatch runs on its thread: a snapshot it lets go of then is
// *parked* (thread-locally) and released when the outermost synchronous dispatch ends. A
// dispatch that suspends takes a reference first, so it keeps its hooks (and their captures)
// alive until it completes, whatever happens to the set meanwhile.

#include <atomic>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <hookset/detail/hook_shape.hpp>
#include <hookset/slot.hpp>

namespace hookset::detail {

// ---- parking ---------------------------------------------------------------------------------

inline thread_local unsigned sync_dispatch_depth = 0;
inline thread_local bool has_parked_states = false;

struct parked_state {
  void* state;
  void (*release)(void*) noexcept;
};

inline std::vector<parked_state>& parked_states() {
  thread_local std::vector<parked_state> parked;
  return parked;
}

inline void release_parked_states() noexcept {
  // Releasing may destroy hooks whose destructors dispatch and park again: loop until quiet.
  while (has_parked_states) {
    std::vector<parked_state> batch;
    batch.swap(parked_states());
    has_parked_states = false;
    for (const parked_state& parked : batch) parked.release(parked.state);
  }
}

// Marks a synchronous stretch of a dispatch on this thread.
class sync_dispatch_scope {
 public:
  sync_dispatch_scope() noexcept { ++sync_dispatch_depth; }
  ~sync_dispatch_scope() {
    if (--sync_dispatch_depth == 0 && has_parked_states) release_parked_states();
  }
  sync_dispatch_scope(const sync_dispatch_scope&) = delete;
  sync_dispatch_scope& operator=(const sync_dispatch_scope&) = delete;
};

// ---- snapshot ---------------------------------------------------------------------------------

// A companion instance configured on a set; shared (not copied) by snapshots and dispatches.
template <class C>
struct configured_companion {
  std::shared_ptr<const C> instance;
};
template <>
struct configured_companion<void> {};

template <class S>
struct slot_state {
  using traits = slot_traits<S>;

  mutable std::atomic<std::size_t> refs{1};
  std::vector<hook_entry<S>> hooks;  // in dispatch order: priority, then registration
  [[no_unique_address]] configured_companion<typename traits::chain> chain;
  [[no_unique_address]] configured_companion<typename traits::aggregate> aggregate;
  [[no_unique_address]] configured_companion<typename traits::finalize> finalize;

  slot_state() = default;
  slot_state(const slot_state& other)
      : hooks(other.hooks), chain(other.chain), aggregate(other.aggregate), finalize(other.finalize) {}
  slot_state& operator=(const slot_state&) = delete;

  void acquire() const noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  static void release(void* state) noexcept {
    auto* self = static_cast<slot_state*>(state);
    if (self->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete self;
  }
  static void release_ref(const slot_state* state) noexcept { release(const_cast<slot_state*>(state)); }
};

// The set's side of a slot: its current snapshot, replaced copy-on-write on every change.
template <class S>
class slot_storage {
 public:
  using state_type = slot_state<S>;

  slot_storage() noexcept = default;
  slot_storage(const slot_storage& other) noexcept : state_(other.state_) {
    if (state_) state_->acquire();
  }
  slot_storage(slot_storage&& other) noexcept : state_(std::exchange(other.state_, nullptr)) {}
  slot_storage& operator=(slot_storage other) noexcept {
    std::swap(state_, other.state_);
    return *this;
  }
  ~slot_storage() { retire(std::exchange(state_, nullptr)); }

  // What a dispatch starting now runs over; nullptr when nothing was ever registered.
  const state_type* current() const noexcept { return state_; }
  std::size_t count() const noexcept { return state_ ? state_->hooks.size() : 0; }

  // Applies `edit(state_type&)` to a snapshot no one else can see and publishes it. Strong
  // guarantee: when `edit` throws, the slot is unchanged. `edit` may be applied in place only
  // when nothing else holds the snapshot and no dispatch on this thread walks it, so an in-place
  // `edit` must itself leave the state unchanged when it throws (single vector inserts do).
  template <class Edit>
  decltype(auto) modify(Edit&& edit) {
    if (state_ && sync_dispatch_depth == 0 && state_->refs.load(std::memory_order_acquire) == 1)
      return std::forward<Edit>(edit)(*state_);
    auto fresh = state_ ? std::make_unique<state_type>(*state_) : std::make_unique<state_type>();
    if (sync_dispatch_depth != 0) parked_states().reserve(parked_states().size() + 1);
    if constexpr (std::is_void_v<decltype(std::forward<Edit>(edit)(*fresh))>) {
      std::forward<Edit>(edit)(*fresh);
      retire(std::exchange(state_, fresh.release()));
    } else {
      decltype(auto) result = std::forward<Edit>(edit)(*fresh);
      retire(std::exchange(state_, fresh.release()));
      return result;
    }
  }

 private:
  // Lets go of the set's reference, parking it while a synchronous dispatch runs here.
  static void retire(state_type* state) noexcept {
    if (!state) return;
    if (sync_dispatch_depth == 0) return state_type::release(state);
    try {
      parked_states().push_back({state, &state_type::release});
      has_parked_states = true;
    } catch (...) {
      // Out of memory while parking: leaking the snapshot is the only choice that cannot let
      // a running dispatch read freed memory. modify() reserves first, so only ~slot_storage
      // can get here.
    }
  }

  state_type* state_ = nullptr;
};

}  // namespace hookset::detail
