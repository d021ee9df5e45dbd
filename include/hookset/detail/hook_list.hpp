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
// signature shares this code (<hookset/impl/hook_list.ipp>: compiled once with
// HOOKSET_SEPARATE_COMPILATION, coro/config.hpp).

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/coro/config.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/errors.hpp>

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

// Releases what this thread parked (out of line, as what reaches thread_locals: config.hpp).
void release_parked_lists() noexcept;

HOOKSET_THREAD_LOCAL_ACCESS bool in_sync_dispatch() noexcept { return sync_dispatch_depth != 0; }
// (The two steps as written once; reached through the accessors below, or directly by
// lean_sync_dispatch_scope.)
HOOKSET_ALWAYS_INLINE void enter_sync_dispatch_here() noexcept { ++sync_dispatch_depth; }
HOOKSET_ALWAYS_INLINE void leave_sync_dispatch_here() noexcept {
  if (--sync_dispatch_depth == 0 && has_parked_lists) [[unlikely]]
    release_parked_lists();
}
HOOKSET_THREAD_LOCAL_ACCESS void enter_sync_dispatch() noexcept { enter_sync_dispatch_here(); }
HOOKSET_THREAD_LOCAL_ACCESS void leave_sync_dispatch() noexcept { leave_sync_dispatch_here(); }
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

// The same scope for the lean loops (the engine's plain_loops): functions kept out of line that
// are not coroutines, where reaching the thread-locals inline is safe with Clang too - the address
// is computed on the thread that makes the call (config.hpp) - and saves Clang two calls a
// dispatch. Only in such a function: never in one that may be inlined into a coroutine.
class lean_sync_dispatch_scope {
 public:
  HOOKSET_ALWAYS_INLINE lean_sync_dispatch_scope() noexcept { enter_sync_dispatch_here(); }
  HOOKSET_ALWAYS_INLINE ~lean_sync_dispatch_scope() { leave_sync_dispatch_here(); }
  lean_sync_dispatch_scope(const lean_sync_dispatch_scope&) = delete;
  lean_sync_dispatch_scope& operator=(const lean_sync_dispatch_scope&) = delete;
};

// ---- snapshot ---------------------------------------------------------------------------------

// Puts `hooks` in the named order (see named_order).
HOOKSET_DECL void apply_named_order(std::vector<hook_entry>& hooks, std::string_view slot,
                                    const hook_record* checked);

// The companions configured on a slot (configure<S>), shared (not copied) by snapshots and
// dispatches; the engine of the slot's kind knows their types. One collection indexed by
// companion_role: what copies, merges or compares them loops over the roles. Each keeps a name
// of its own as well, because the dispatch binds each one, by name, to its typed instance.
struct configured_companions {
  // What the list's hooks and companions need alive while the list exists: the shared library
  // of a plugin whose registrations it holds (<hookset/plugin.hpp>); empty otherwise. First, so
  // that it goes last, after every entry and companion (whose code the library holds). Copies
  // of the list, the lists a keyed slot derives from it and lists it extends keep it too. One
  // pointer (several plugins' libraries: a pair of anchors, keep_alive): a list made for one
  // dispatch (a keyed slot's filtered list) copies it for the price of a null pointer.
  std::shared_ptr<const void> anchor;
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
  HOOKSET_DECL bool overlaps(const configured_companions& other) const noexcept;
  // Takes each companion `other` configures, replacing this one's of the same role.
  HOOKSET_DECL void take_configured(const configured_companions& other) noexcept;
  // Keeps `more` alive too, with what the list keeps already: a list that takes another's
  // entries (extend), or a plugin's registrations.
  HOOKSET_DECL void keep_alive(const std::shared_ptr<const void>& more);

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
  // How a dispatch of the list makes its context: the make_context of a registration that
  // needs one (a time limit, an interceptor; kept by summarize()), null when none does.
  dispatch_context* (*make_context)(CallOptions) = nullptr;
  // The code of a watched dispatch, when some hook always needs it (a time limit, a failure
  // policy: its record's watched; kept by summarize()), null otherwise.
  const watched_functions* watched = nullptr;
  // The slot's interceptors (interceptor.hpp), outermost first: in priority and named order,
  // then registration; `interceptors_base` in priority and registration order alone (what the
  // named order is worked out from again at every change). A list with interceptors is never
  // all_plain, so the lean dispatch paths never look at them.
  std::vector<hook_entry> interceptors;
  std::vector<hook_entry> interceptors_base;
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
  // Inserts a registration that names no other into the list when others name an order: set by
  // arrange whenever it leaves the list constrained (`unconstrained` not empty). A registration
  // that names no order reaches the named-order code only through this pointer, so a program
  // whose registrations name none does not contain that code.
  void (*insert_constrained)(hook_list&, hook_entry entry, std::string_view slot) = nullptr;
  // The interceptor layer of the slot's kind (interceptor_layer::entry_points), which every
  // interceptor's registration names; kept by summarize(), null without interceptors.
  const void* interceptor_code = nullptr;

  bool any_interceptor() const noexcept { return interceptor_code != nullptr; }
  // Whether a dispatch of the list needs a context or its interceptor layer even when nobody
  // watches it and it has no options (a time limit, an interceptor).
  bool needs_watching() const noexcept { return any_time_limit || any_interceptor(); }

  hook_list() = default;
  HOOKSET_DECL hook_list(const hook_list& other);
  // (Out of line, once: it releases every entry and companion.)
  HOOKSET_NOINLINE HOOKSET_DECL ~hook_list();
  hook_list& operator=(const hook_list&) = delete;

  // The hooks in priority and registration order.
  const std::vector<hook_entry>& base_order() const noexcept {
    return unconstrained.empty() ? hooks : unconstrained;
  }

  // Makes `base` (in priority and registration order) the list, in the named order it asks
  // for. `checked`: a new registration whose names must exist. Leaves the list unchanged when
  // it throws.
  HOOKSET_DECL void arrange(std::vector<hook_entry> base, std::string_view slot,
                            const hook_record* checked);
  // Inserts `entry` into `list` and works out the named order again, checking the names
  // `entry` gives: what a registration that names an order runs, and what `insert_constrained`
  // points to.
  HOOKSET_DECL static void insert_in_named_order(hook_list& list, hook_entry entry,
                                                 std::string_view slot);

  // Recomputes what the engine reads of the list as a whole (after every edit).
  HOOKSET_DECL void summarize() noexcept;

  void acquire() const noexcept { refs.fetch_add(1, std::memory_order_relaxed); }
  HOOKSET_DECL static void release(void* list) noexcept;
  // The last reference went: the list goes (out of line: a list's destructor is large, and
  // release is inlined wherever a dispatch lets its snapshot go).
  static void destroy(hook_list* list) noexcept;
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
  // The owner of `fresh`, a list no one else has seen: it takes the list's one reference.
  explicit hook_list_owner(std::unique_ptr<hook_list> fresh) noexcept : list_(fresh.release()) {}
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
    // (One call of `edit` and calls of the steps below: `edit` is this template's only code.)
    hook_list* const edited = list_to_edit();
    try {
      std::forward<Edit>(edit)(*edited);
    } catch (...) {
      drop_edit(edited);
      throw;
    }
    finish_edit(edited);
  }

 private:
  // modify()'s steps, the same for every edit (not templates). The list to edit in place, or
  // null: only when nothing else holds the snapshot and no dispatch on this thread walks it (a
  // keyed list is never edited in place: deriving its index may throw after the edit).
  HOOKSET_DECL hook_list* editable_in_place() noexcept;
  // The list to edit: the current one in place, or else a copy of it (or an empty list), owned
  // by the caller, with room reserved for parking the current one.
  hook_list* list_to_edit();
  // After `edit` threw: the copy goes (a list edited in place was left unchanged by `edit`).
  void drop_edit(hook_list* edited) noexcept;
  // After `edit`: the list edited in place is summarized again, an edited copy made current (it
  // is dropped if deriving its keyed index throws).
  void finish_edit(hook_list* edited);
  // Lets go of the set's reference, parking it while a synchronous dispatch runs here. (Out of
  // line: inlined, it put ~0.6 KB per slot into every HookSet's destructor.)
  HOOKSET_NOINLINE HOOKSET_DECL static void retire(hook_list* list) noexcept;

  hook_list* list_ = nullptr;
};

// ---- order ------------------------------------------------------------------------------------

// Where `entry` goes: after every entry that runs before or with it. A pipeline's validators
// run after all of its mutating hooks (their phase comes before their priority).
HOOKSET_DECL std::vector<hook_entry>::iterator insertion_point(std::vector<hook_entry>& entries,
                                                               const hook_entry& entry);

// The order named before/after constraints ask for, as a permutation of `records` (given in
// priority and registration order), moving as little as possible: each step takes the earliest
// registration whose predecessors have all been placed. Empty when no registration has
// constraints (the order stays). `checked` is the registration whose names must all exist (a
// new one); names of others that match nothing are ignored (their registration was removed).
// Throws OrderingError for an unknown name or a cycle.
HOOKSET_DECL std::vector<std::size_t> named_order(const std::vector<const hook_record*>& records,
                                                  std::string_view slot,
                                                  const hook_record* checked);

// ---- registration -----------------------------------------------------------------------------

// Registers `entry`, which names no other registration (no before/after), in `owner`: a
// singleton slot keeps only the newest hook (with a warning when it replaces one), any other slot
// inserts it in order. (Reaches the named-order code only when the list already has some.)
void insert_hook(hook_list_owner& owner, hook_entry entry, bool singleton, std::string_view slot,
                 Observer* observer);
// The same for an entry that may name others (registered with HookOptions).
void insert_hook_in_named_order(hook_list_owner& owner, hook_entry entry, bool singleton,
                                std::string_view slot, Observer* observer);

// Registers a hook: its entry (make_entry) inserted as insert_hook does - or, with
// HookOptions, insert_hook_in_named_order. `*owner` (when `owner` is not null) keeps the hook
// alive and is moved from. Returns the registration's id.
HookId add_hook(hook_list_owner& list, void* object, std::shared_ptr<const void>* owner,
                Priority priority, const hook_facts& facts, Observer* observer);
HookId add_hook(hook_list_owner& list, void* object, std::shared_ptr<const void>* owner,
                HookOptions&& options, const hook_facts& facts, Observer* observer);

// Registers the interceptor `entry` in `owner`, ordered as hooks are (priority, then
// registration, then named order among the slot's interceptors).
void insert_interceptor(hook_list_owner& owner, hook_entry entry, std::string_view slot);

// Merges `theirs` into `mine` (extend): see HookSet::extend.
void extend_list(hook_list_owner& mine, const hook_list_owner& theirs, bool singleton,
                 std::string_view slot, Observer* observer);

// Removes the registration `id` (a hook or an interceptor); false when the list does not hold
// it.
bool remove_hook(hook_list_owner& owner, HookId id);

// Whether the list holds the registration `id` (a hook or an interceptor).
HOOKSET_DECL bool holds_hook(const hook_list_owner& owner, HookId id) noexcept;

// Removes every hook and interceptor.
HOOKSET_DECL void clear_hooks(hook_list_owner& owner);

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/hook_list.ipp>
#endif
