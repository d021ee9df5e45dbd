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
// Neither is a template: the entries are type-erased (hook_call.hpp), so every slot of every
// signature shares this code.

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/coro/config.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/errors.hpp>
#include <hookset/observer.hpp>

namespace hookset::detail {

// ---- parking ---------------------------------------------------------------------------------

// How deep this thread is in synchronous stretches of dispatches, and the snapshots retired
// meanwhile (config.hpp: these thread_locals only through the functions below).
inline thread_local constinit unsigned sync_dispatch_depth = 0;
inline thread_local constinit bool has_parked_lists = false;

struct parked_list {
  void* list;
  void (*release)(void*) noexcept;
};

HOOKSET_THREAD_LOCAL_ACCESS std::vector<parked_list>& parked_lists() {
  thread_local std::vector<parked_list> parked;
  return parked;
}

HOOKSET_NOINLINE inline void release_parked_lists() noexcept {
  // Releasing may destroy hooks whose destructors dispatch and park again: loop until quiet.
  while (has_parked_lists) {
    std::vector<parked_list> batch;
    batch.swap(parked_lists());
    has_parked_lists = false;
    for (const parked_list& parked : batch) parked.release(parked.list);
  }
}

HOOKSET_THREAD_LOCAL_ACCESS bool in_sync_dispatch() noexcept { return sync_dispatch_depth != 0; }
HOOKSET_THREAD_LOCAL_ACCESS void enter_sync_dispatch() noexcept { ++sync_dispatch_depth; }
HOOKSET_THREAD_LOCAL_ACCESS void leave_sync_dispatch() noexcept {
  if (--sync_dispatch_depth == 0 && has_parked_lists) [[unlikely]]
    release_parked_lists();
}
// Parks a retired snapshot until this thread's synchronous stretches are over (throws when
// out of memory).
HOOKSET_THREAD_LOCAL_ACCESS void park_list(parked_list parked) {
  parked_lists().push_back(parked);
  has_parked_lists = true;
}

// Marks a synchronous stretch of a dispatch on this thread.
class sync_dispatch_scope {
 public:
  HOOKSET_ALWAYS_INLINE sync_dispatch_scope() noexcept { enter_sync_dispatch(); }
  HOOKSET_ALWAYS_INLINE ~sync_dispatch_scope() { leave_sync_dispatch(); }
  sync_dispatch_scope(const sync_dispatch_scope&) = delete;
  sync_dispatch_scope& operator=(const sync_dispatch_scope&) = delete;
};

// ---- snapshot ---------------------------------------------------------------------------------

inline void apply_named_order(std::vector<hook_entry>& hooks, std::string_view slot,
                              const hook_record* checked);

// The companions configured on a slot (configure<S>), shared (not copied) by snapshots and
// dispatches; the engine of the slot's kind knows their types. One collection indexed by
// companion_role: what copies, merges or compares them loops over the roles. Each keeps a name
// of its own as well, because the dispatch binds each one, by name, to its typed instance.
struct configured_companions {
  std::shared_ptr<const void> chain;
  std::shared_ptr<const void> aggregate;
  std::shared_ptr<const void> finalize;

  std::shared_ptr<const void>& operator[](companion_role role) noexcept {
    return this->*member_for(role);
  }
  const std::shared_ptr<const void>& operator[](companion_role role) const noexcept {
    return this->*member_for(role);
  }
  friend bool operator==(const configured_companions&, const configured_companions&) = default;

  // Whether `other` configures a companion of a role this one configures too.
  bool overlaps(const configured_companions& other) const noexcept {
    for (std::size_t role = 0; role != companion_role_count; ++role)
      if ((*this)[companion_role(role)] && other[companion_role(role)]) return true;
    return false;
  }
  // Takes each companion `other` configures, replacing this one's of the same role.
  void take_configured(const configured_companions& other) noexcept {
    for (std::size_t role = 0; role != companion_role_count; ++role)
      if (other[companion_role(role)]) (*this)[companion_role(role)] = other[companion_role(role)];
  }

 private:
  using member = std::shared_ptr<const void> configured_companions::*;
  static constexpr member member_for(companion_role role) noexcept {
    constexpr member by_role[companion_role_count] = {&configured_companions::chain,
                                                      &configured_companions::aggregate,
                                                      &configured_companions::finalize};
    return by_role[static_cast<std::size_t>(role)];
  }
};

// A slot's snapshot: its configured companions (a base, so that the dispatch reads each one by
// name, as a member of the list), its hooks and its interceptors.
struct hook_list : configured_companions {
  mutable std::atomic<std::size_t> refs{1};
  // In dispatch order: phase (a pipeline's validators last), priority and named order, then
  // registration.
  std::vector<hook_entry> hooks;
  // When some registration names others (before/after): the hooks in priority and registration
  // order alone, what the named order is worked out from again at every change. Empty
  // otherwise (then `hooks` is that order).
  std::vector<hook_entry> unconstrained;
  // How many hooks from the start are plain (hook_entry::plain): the engine runs that stretch
  // without looking at each entry's kind. Kept by hook_list_owner::modify.
  std::size_t leading_plain = 0;
  // Every hook is plain: a dispatch nobody watches runs them with no bookkeeping at all.
  bool all_plain = true;
  // Every hook is plain, interceptors aside: the hooks past an unobserved dispatch's
  // interceptors run in the same lean loops.
  bool hooks_plain = true;
  // Whether some hook has a time limit: its dispatch then needs a context (and timers).
  bool any_time_limit = false;
  // The slot's interceptors (interceptor.hpp), outermost first: in priority and named order,
  // then registration; `interceptors_base` in priority and registration order alone (what the
  // named order is worked out from again at every change). A list with interceptors is never
  // all_plain, so the lean dispatch paths never look at them.
  std::vector<hook_entry> interceptors;
  std::vector<hook_entry> interceptors_base;
  bool any_interceptor = false;  // kept by summarize()
  // Keyed slots: the per-key lists derived from `hooks`, and what derives them again after
  // every change (null for a slot that is not keyed). The list knows them only through these
  // pointers, which the keyed index (detail/keyed_index.hpp, built on this header) sets: the
  // dependency runs one way.
  std::shared_ptr<const void> keyed;
  std::shared_ptr<const void> (*index_keys)(const hook_list&) = nullptr;
  // The list a dispatch of the slot runs for the key `key` (its last argument, as the dispatch
  // binds it): the key's precomputed list, or - `owned` set - a list filtered for it, of which
  // the dispatch holds the only reference. Set with index_keys.
  const hook_list* (*list_for_key)(const hook_list& all, const void* key, bool& owned) = nullptr;

  hook_list() = default;
  hook_list(const hook_list& other)
      : configured_companions(other),
        hooks(other.hooks),
        unconstrained(other.unconstrained),
        leading_plain(other.leading_plain),
        all_plain(other.all_plain),
        hooks_plain(other.hooks_plain),
        any_time_limit(other.any_time_limit),
        interceptors(other.interceptors),
        interceptors_base(other.interceptors_base),
        any_interceptor(other.any_interceptor),
        keyed(other.keyed),
        index_keys(other.index_keys),
        list_for_key(other.list_for_key) {}
  hook_list& operator=(const hook_list&) = delete;

  // The hooks in priority and registration order.
  const std::vector<hook_entry>& base_order() const noexcept {
    return unconstrained.empty() ? hooks : unconstrained;
  }

  // Makes `base` (in priority and registration order) the list, in the named order it asks
  // for. `checked`: a new registration whose names must exist. Leaves the list unchanged when
  // it throws.
  void arrange(std::vector<hook_entry> base, std::string_view slot, const hook_record* checked) {
    std::vector<hook_entry> ordered = base;
    apply_named_order(ordered, slot, checked);
    bool constrained = false;
    for (const hook_entry& e : base)
      constrained = constrained || !e.record->before.empty() || !e.record->after.empty();
    hooks.swap(ordered);
    if (constrained) unconstrained.swap(base);
    else unconstrained.clear();
  }

  // Recomputes what the engine reads of the list as a whole (after every edit).
  void summarize() noexcept {
    leading_plain = 0;
    while (leading_plain != hooks.size() && hooks[leading_plain].plain) ++leading_plain;
    any_interceptor = !interceptors.empty();
    hooks_plain = leading_plain == hooks.size();
    all_plain = hooks_plain && !any_interceptor;
    any_time_limit = false;
    for (const hook_entry& e : hooks)
      any_time_limit = any_time_limit || e.record->timeout.has_value();
  }

  void acquire() const noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  static void release(void* list) noexcept {
    auto* self = static_cast<hook_list*>(list);
    if (self->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete self;
  }
  static void release_ref(const hook_list* list) noexcept { release(const_cast<hook_list*>(list)); }
};

// The set's side of a slot: its current snapshot, replaced copy-on-write on every change.
class hook_list_owner {
 public:
  hook_list_owner() noexcept = default;
  // Another owner of `snapshot` (an intercepted dispatch's: the rest of it runs over the
  // snapshot it started with, whatever the set does meanwhile).
  explicit hook_list_owner(const hook_list* snapshot) noexcept
      : list_(const_cast<hook_list*>(snapshot)) {
    if (list_) list_->acquire();
  }
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
  const hook_list* current() const noexcept { return list_; }
  std::size_t count() const noexcept { return list_ ? list_->hooks.size() : 0; }

  // Applies `edit(hook_list&)` to a snapshot no one else can see and publishes it. Strong
  // guarantee: when `edit` throws, the slot is unchanged. `edit` may be applied in place only
  // when nothing else holds the snapshot and no dispatch on this thread walks it, so an in-place
  // `edit` must itself leave the list unchanged when it throws.
  template <class Edit>
  void modify(Edit&& edit) {
    // (A keyed list is never edited in place: deriving its index may throw after the edit.)
    if (list_ && !in_sync_dispatch() && !list_->index_keys &&
        list_->refs.load(std::memory_order_acquire) == 1) {
      std::forward<Edit>(edit)(*list_);
      list_->summarize();
      return;
    }
    auto fresh = list_ ? std::make_unique<hook_list>(*list_) : std::make_unique<hook_list>();
    if (in_sync_dispatch()) parked_lists().reserve(parked_lists().size() + 1);
    std::forward<Edit>(edit)(*fresh);
    fresh->summarize();
    if (fresh->index_keys) fresh->keyed = fresh->index_keys(*fresh);
    retire(std::exchange(list_, fresh.release()));
  }

 private:
  // Lets go of the set's reference, parking it while a synchronous dispatch runs here.
  static void retire(hook_list* list) noexcept {
    if (!list) return;
    if (!in_sync_dispatch()) return hook_list::release(list);
    try {
      park_list({list, &hook_list::release});
    } catch (...) {
      // Out of memory while parking: leaking the snapshot is the only choice that cannot let
      // a running dispatch read freed memory. modify() reserves first, so only
      // ~hook_list_owner can get here.
    }
  }

  hook_list* list_ = nullptr;
};

// ---- order ------------------------------------------------------------------------------------

// Where `entry` goes: after every entry that runs before or with it. A pipeline's validators
// run after all of its mutating hooks (their phase comes before their priority).
inline std::vector<hook_entry>::iterator insertion_point(std::vector<hook_entry>& entries,
                                                         const hook_entry& entry) {
  // (The first entry of a later phase or higher priority; a binary search: entries are sorted
  // by phase, then priority.)
  const bool validates = entry.validates();
  const int priority = entry.priority();
  std::size_t low = 0, high = entries.size();
  while (low != high) {
    const std::size_t mid = low + (high - low) / 2;
    const hook_entry& other = entries[mid];
    if (validates != other.validates() ? other.validates() : priority < other.priority())
      high = mid;
    else low = mid + 1;
  }
  return entries.begin() + static_cast<std::ptrdiff_t>(low);
}

// The order named before/after constraints ask for, as a permutation of `records` (given in
// priority and registration order), moving as little as possible: each step takes the earliest
// registration whose predecessors have all been placed. Empty when no registration has
// constraints (the order stays). `checked` is the registration whose names must all exist (a
// new one); names of others that match nothing are ignored (their registration was removed).
// Throws OrderingError for an unknown name or a cycle. Not a template: one copy serves every
// slot.
inline std::vector<std::size_t> named_order(const std::vector<const hook_record*>& records,
                                            std::string_view slot, const hook_record* checked) {
  bool constrained = false;
  for (const hook_record* r : records)
    constrained = constrained || !r->before.empty() || !r->after.empty();
  if (!constrained) return {};

  const std::size_t n = records.size();
  // edges[i]: the registrations that must run after registration i.
  std::vector<std::vector<std::size_t>> edges(n);
  std::vector<std::size_t> incoming(n, 0);
  auto constrain = [&](std::size_t i, const std::string& name, bool before) {
    bool found = false;
    for (std::size_t j = 0; j < n; ++j) {
      if (records[j]->name != name || j == i) continue;
      found = true;
      if (records[i]->validates != records[j]->validates) {
        // Phases order these two already (a pipeline's mutating hooks, then its validators): a
        // constraint that agrees holds, one that contradicts cannot.
        if (before == records[j]->validates) continue;
        throw OrderingError(std::string(slot),
                            "registration '" + records[i]->name + "' asks to run " +
                                (before ? "before '" : "after '") + name +
                                "', but a pipeline's validators run after every mutating hook, "
                                "whatever the named order");
      }
      const std::size_t from = before ? i : j;
      const std::size_t to = before ? j : i;
      edges[from].push_back(to);
      ++incoming[to];
    }
    if (!found && records[i] == checked)
      throw OrderingError(std::string(slot),
                          "registration '" + records[i]->name + "' asks to run " +
                              (before ? "before '" : "after '") + name +
                              "', but the slot has no other registration of that name");
  };
  for (std::size_t i = 0; i < n; ++i) {
    for (const std::string& name : records[i]->before) constrain(i, name, true);
    for (const std::string& name : records[i]->after) constrain(i, name, false);
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
        if (!placed[i]) cycle += (cycle.empty() ? "'" : ", '") + records[i]->name + "'";
      throw OrderingError(std::string(slot),
                          "the before/after constraints form a cycle among " + cycle);
    }
    placed[next] = true;
    order.push_back(next);
    for (std::size_t to : edges[next]) --incoming[to];
  }
  return order;
}

inline void apply_named_order(std::vector<hook_entry>& hooks, std::string_view slot,
                              const hook_record* checked) {
  std::vector<const hook_record*> records;
  records.reserve(hooks.size());
  for (const hook_entry& e : hooks) records.push_back(e.record.get());
  const std::vector<std::size_t> order = named_order(records, slot, checked);
  if (order.empty()) return;
  std::vector<hook_entry> sorted;
  sorted.reserve(hooks.size());
  for (std::size_t i : order) sorted.push_back(hooks[i]);
  hooks.swap(sorted);
}

// ---- registration -----------------------------------------------------------------------------
// Not templates: one copy serves every slot.

// Registers `entry` in `owner`: a singleton slot keeps only the newest hook (with a warning when
// it replaces one), any other slot inserts it in order.
HOOKSET_NOINLINE inline void insert_hook(hook_list_owner& owner, hook_entry entry, bool singleton,
                                         std::string_view slot, Observer* observer) {
  if (singleton) {
    // One hook, nothing to order it against: a name in before/after can match no other
    // registration, which the named order's rule makes an error (the set unchanged).
    const hook_record& record = *entry.record;
    if (!record.before.empty() || !record.after.empty()) {
      const bool before = !record.before.empty();
      throw OrderingError(
          std::string(slot),
          "registration '" + record.name + "' asks to run " +
              (before ? "before '" + record.before.front() : "after '" + record.after.front()) +
              "', but a singleton slot keeps one hook: there is no other to "
              "order it against");
    }
    const bool replaced = owner.count() != 0;
    owner.modify([&](hook_list& list) {
      list.hooks.reserve(1);
      list.hooks.clear();
      list.hooks.push_back(std::move(entry));
    });
    if (replaced)
      warn(slot, "singleton hook replaced: the slot keeps only the newest hook", observer);
  } else {
    owner.modify([&](hook_list& list) {
      const hook_record* added = entry.record.get();
      std::vector<hook_entry> base = list.base_order();
      base.insert(insertion_point(base, entry), std::move(entry));
      list.arrange(std::move(base), slot, added);
    });
  }
}

// Registers the interceptor `entry` in `owner`, ordered as hooks are (priority, then
// registration, then named order among the slot's interceptors).
HOOKSET_NOINLINE inline void insert_interceptor(hook_list_owner& owner, hook_entry entry,
                                                std::string_view slot) {
  owner.modify([&](hook_list& list) {
    const hook_record* added = entry.record.get();
    std::vector<hook_entry> base = list.interceptors_base;
    base.insert(insertion_point(base, entry), std::move(entry));
    std::vector<hook_entry> ordered = base;
    apply_named_order(ordered, slot, added);
    list.interceptors_base.swap(base);  // (nothing below throws)
    list.interceptors.swap(ordered);
  });
}

// Merges `theirs` into `mine` (extend): see HookSet::extend.
HOOKSET_NOINLINE inline void extend_list(hook_list_owner& mine, const hook_list_owner& theirs,
                                         bool singleton, std::string_view slot,
                                         Observer* observer) {
  const hook_list* source = theirs.current();
  if (!source) return;
  // Hold the source: `theirs` may be `mine` (a set extended with itself).
  source->acquire();
  struct release_on_exit {
    const hook_list* list;
    ~release_on_exit() { hook_list::release_ref(list); }
  } hold{source};

  const bool replaces_singleton = singleton && !source->hooks.empty() && mine.count() != 0;
  bool replaces_companion = false;
  if (const hook_list* current = mine.current()) replaces_companion = current->overlaps(*source);
  mine.modify([&](hook_list& list) {
    if (singleton) {
      if (!source->hooks.empty()) {
        list.hooks = source->hooks;
        list.unconstrained.clear();
      }
    } else {
      // Build the merge aside so a throwing copy or an ordering error leaves `list` as it was.
      std::vector<hook_entry> merged = list.base_order();
      merged.reserve(merged.size() + source->hooks.size());
      for (const hook_entry& entry : source->base_order())
        merged.insert(insertion_point(merged, entry), entry);
      list.arrange(std::move(merged), slot, nullptr);
    }
    if (!source->interceptors_base.empty()) {
      std::vector<hook_entry> base = list.interceptors_base;
      for (const hook_entry& entry : source->interceptors_base)
        base.insert(insertion_point(base, entry), entry);
      std::vector<hook_entry> ordered = base;
      apply_named_order(ordered, slot, nullptr);
      list.interceptors_base.swap(base);
      list.interceptors.swap(ordered);
    }
    list.take_configured(*source);
    if (source->index_keys) {
      list.index_keys = source->index_keys;
      list.list_for_key = source->list_for_key;
    }
  });
  if (replaces_singleton) warn(slot, "singleton hook replaced by extend", observer);
  if (replaces_companion) warn(slot, "configured companion replaced by extend", observer);
}

inline bool holds_id(const std::vector<hook_entry>& entries, HookId id) noexcept {
  for (const hook_entry& e : entries)
    if (e.id() == id) return true;
  return false;
}

// Removes the registration `id` (a hook or an interceptor); false when the list does not hold
// it.
HOOKSET_NOINLINE inline bool remove_hook(hook_list_owner& owner, HookId id) {
  const hook_list* list = owner.current();
  if (!list) return false;
  const bool hook = holds_id(list->hooks, id);
  const bool interceptor = holds_id(list->interceptors, id);
  if (!hook && !interceptor) return false;
  owner.modify([&](hook_list& fresh) {
    auto is_removed = [&](const hook_entry& e) { return e.id() == id; };
    // Everything that may throw first: an in-place edit must leave the list unchanged.
    std::vector<hook_entry> base, ordered;
    if (interceptor) {
      base = fresh.interceptors_base;
      std::erase_if(base, is_removed);
      ordered = base;
      apply_named_order(ordered, {}, nullptr);
    }
    if (hook) {
      if (fresh.unconstrained.empty()) {
        std::erase_if(fresh.hooks, is_removed);
      } else {
        // Arranged again without it (its constraints gone; names it was the target of ignored).
        std::vector<hook_entry> hooks = fresh.unconstrained;
        std::erase_if(hooks, is_removed);
        fresh.arrange(std::move(hooks), {}, nullptr);
      }
    }
    if (interceptor) {
      fresh.interceptors_base.swap(base);
      fresh.interceptors.swap(ordered);
    }
  });
  return true;
}

inline bool holds_hook(const hook_list_owner& owner, HookId id) noexcept {
  const hook_list* list = owner.current();
  return list && (holds_id(list->hooks, id) || holds_id(list->interceptors, id));
}

// Removes every hook and interceptor.
inline void clear_hooks(hook_list_owner& owner) {
  const hook_list* list = owner.current();
  if (list && (!list->hooks.empty() || !list->interceptors.empty()))
    owner.modify([](hook_list& fresh) {
      fresh.hooks.clear();
      fresh.unconstrained.clear();
      fresh.interceptors.clear();
      fresh.interceptors_base.clear();
    });
}

}  // namespace hookset::detail
