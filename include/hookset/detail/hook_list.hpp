#pragma once
// Per-slot storage: an immutable, reference-counted snapshot of the hooks and configured
// companions (hook_list), owned copy-on-write by the set (hook_list_owner); and the order the
// hooks of a slot run in.
//
// Why this shape: a synchronous dispatch must not allocate or write shared memory, so it walks
// the set's current snapshot without taking a reference. The set therefore never frees a
// snapshot while a synchronous dispatch runs on its thread: a snapshot it lets go of then is
// *parked* (thread-locally) and released when the outermost synchronous dispatch ends. A
// dispatch that suspends takes a reference first, so it keeps its hooks (and their captures)
// alive until it completes, whatever happens to the set meanwhile.
//
// Both are keyed by the slot's kind, not the slot: slots of one signature share the code.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/detail/hook_call.hpp>
#include <hookset/errors.hpp>

namespace hookset::detail {

// ---- parking ---------------------------------------------------------------------------------

inline thread_local unsigned sync_dispatch_depth = 0;
inline thread_local bool has_parked_lists = false;

struct parked_list {
  void* list;
  void (*release)(void*) noexcept;
};

inline std::vector<parked_list>& parked_lists() {
  thread_local std::vector<parked_list> parked;
  return parked;
}

inline void release_parked_lists() noexcept {
  // Releasing may destroy hooks whose destructors dispatch and park again: loop until quiet.
  while (has_parked_lists) {
    std::vector<parked_list> batch;
    batch.swap(parked_lists());
    has_parked_lists = false;
    for (const parked_list& parked : batch) parked.release(parked.list);
  }
}

// Marks a synchronous stretch of a dispatch on this thread.
class sync_dispatch_scope {
 public:
  sync_dispatch_scope() noexcept { ++sync_dispatch_depth; }
  ~sync_dispatch_scope() {
    if (--sync_dispatch_depth == 0 && has_parked_lists) release_parked_lists();
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

template <class Kind>
struct hook_list {
  using entry = hook_entry<Kind>;

  mutable std::atomic<std::size_t> refs{1};
  std::vector<entry> hooks;  // in dispatch order: priority and named order, then registration
  [[no_unique_address]] configured_companion<typename Kind::chain> chain;
  [[no_unique_address]] configured_companion<typename Kind::aggregate> aggregate;
  [[no_unique_address]] configured_companion<typename Kind::finalize> finalize;

  hook_list() = default;
  hook_list(const hook_list& other)
      : hooks(other.hooks), chain(other.chain), aggregate(other.aggregate), finalize(other.finalize) {}
  hook_list& operator=(const hook_list&) = delete;

  void acquire() const noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  static void release(void* list) noexcept {
    auto* self = static_cast<hook_list*>(list);
    if (self->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete self;
  }
  static void release_ref(const hook_list* list) noexcept { release(const_cast<hook_list*>(list)); }
};

// The set's side of a slot: its current snapshot, replaced copy-on-write on every change.
template <class Kind>
class hook_list_owner {
 public:
  using list_type = hook_list<Kind>;

  hook_list_owner() noexcept = default;
  hook_list_owner(const hook_list_owner& other) noexcept : list_(other.list_) {
    if (list_) list_->acquire();
  }
  hook_list_owner(hook_list_owner&& other) noexcept : list_(std::exchange(other.list_, nullptr)) {}
  hook_list_owner& operator=(hook_list_owner other) noexcept {
    std::swap(list_, other.list_);
    return *this;
  }
  ~hook_list_owner() { retire(std::exchange(list_, nullptr)); }

  // What a dispatch starting now runs over; nullptr when nothing was ever registered.
  const list_type* current() const noexcept { return list_; }
  std::size_t count() const noexcept { return list_ ? list_->hooks.size() : 0; }

  // Applies `edit(list_type&)` to a snapshot no one else can see and publishes it. Strong
  // guarantee: when `edit` throws, the slot is unchanged. `edit` may be applied in place only
  // when nothing else holds the snapshot and no dispatch on this thread walks it, so an in-place
  // `edit` must itself leave the list unchanged when it throws.
  template <class Edit>
  decltype(auto) modify(Edit&& edit) {
    if (list_ && sync_dispatch_depth == 0 && list_->refs.load(std::memory_order_acquire) == 1)
      return std::forward<Edit>(edit)(*list_);
    auto fresh = list_ ? std::make_unique<list_type>(*list_) : std::make_unique<list_type>();
    if (sync_dispatch_depth != 0) parked_lists().reserve(parked_lists().size() + 1);
    if constexpr (std::is_void_v<decltype(std::forward<Edit>(edit)(*fresh))>) {
      std::forward<Edit>(edit)(*fresh);
      retire(std::exchange(list_, fresh.release()));
    } else {
      decltype(auto) result = std::forward<Edit>(edit)(*fresh);
      retire(std::exchange(list_, fresh.release()));
      return result;
    }
  }

  // Drops every hook and configured companion (no-op when there are none).
  void reset() noexcept { retire(std::exchange(list_, nullptr)); }

 private:
  // Lets go of the set's reference, parking it while a synchronous dispatch runs here.
  static void retire(list_type* list) noexcept {
    if (!list) return;
    if (sync_dispatch_depth == 0) return list_type::release(list);
    try {
      parked_lists().push_back({list, &list_type::release});
      has_parked_lists = true;
    } catch (...) {
      // Out of memory while parking: leaking the snapshot is the only choice that cannot let
      // a running dispatch read freed memory. modify() reserves first, so only reset() and
      // ~hook_list_owner can get here.
    }
  }

  list_type* list_ = nullptr;
};

// ---- order ------------------------------------------------------------------------------------

// Where an entry of `priority` goes: after every entry that runs before or with it.
template <class Entries>
auto insertion_point(Entries& entries, int priority) {
  return std::upper_bound(entries.begin(), entries.end(), priority,
                          [](int p, const auto& entry) { return p < entry.priority(); });
}

// Puts `entries` (already in priority and registration order) in the order their named
// before/after constraints ask for, moving as little as possible: each step takes the earliest
// entry whose predecessors have all been placed. `checked` is the registration whose names
// must all exist (a new one); names of other entries that match nothing are ignored (their
// registration was removed). Throws OrderingError for an unknown name or a cycle, leaving
// `entries` as it was.
template <class Entry>
void apply_named_order(std::vector<Entry>& entries, std::string_view slot, const hook_record* checked) {
  const bool constrained = std::any_of(entries.begin(), entries.end(), [](const Entry& e) {
    return !e.record->before.empty() || !e.record->after.empty();
  });
  if (!constrained) return;

  const std::size_t n = entries.size();
  auto named = [&](const std::string& name, auto&& each) {
    bool found = false;
    for (std::size_t j = 0; j < n; ++j)
      if (entries[j].record->name == name) {
        found = true;
        each(j);
      }
    return found;
  };
  // edges[i]: the entries that must run after entry i.
  std::vector<std::vector<std::size_t>> edges(n);
  std::vector<std::size_t> incoming(n, 0);
  auto add_edge = [&](std::size_t from, std::size_t to) {
    if (from == to) return;
    edges[from].push_back(to);
    ++incoming[to];
  };
  for (std::size_t i = 0; i < n; ++i) {
    const hook_record& record = *entries[i].record;
    for (const std::string& name : record.before)
      if (!named(name, [&](std::size_t j) { add_edge(i, j); }) && &record == checked)
        throw OrderingError(std::string(slot), "registration '" + record.name + "' asks to run before '" +
                                                   name + "', but the slot has no registration of that name");
    for (const std::string& name : record.after)
      if (!named(name, [&](std::size_t j) { add_edge(j, i); }) && &record == checked)
        throw OrderingError(std::string(slot), "registration '" + record.name + "' asks to run after '" +
                                                   name + "', but the slot has no registration of that name");
  }
  std::vector<std::size_t> order;
  order.reserve(n);
  std::vector<bool> placed(n, false);
  while (order.size() < n) {
    std::size_t next = n;
    for (std::size_t i = 0; i < n; ++i)
      if (!placed[i] && incoming[i] == 0) {
        next = i;
        break;
      }
    if (next == n) {
      std::string cycle;
      for (std::size_t i = 0; i < n; ++i)
        if (!placed[i]) cycle += (cycle.empty() ? "'" : ", '") + entries[i].record->name + "'";
      throw OrderingError(std::string(slot), "the before/after constraints form a cycle among " + cycle);
    }
    placed[next] = true;
    order.push_back(next);
    for (std::size_t to : edges[next]) --incoming[to];
  }
  std::vector<Entry> sorted;
  sorted.reserve(n);
  for (std::size_t i : order) sorted.push_back(entries[i]);
  entries.swap(sorted);
}

}  // namespace hookset::detail
