#pragma once
// The hook lists' code (detail/hook_list.hpp): parking, copy-on-write, the named order and
// registration. Not templates, the same for every slot: compiled once with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <hookset/coro/config.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/errors.hpp>

namespace hookset::detail {

// ---- parking ---------------------------------------------------------------------------------

HOOKSET_NOINLINE HOOKSET_DECL void release_parked_lists() noexcept {
  // Releasing may destroy hooks whose destructors dispatch and park again: loop until quiet.
  while (has_parked_lists) {
    std::vector<parked_list> batch;
    batch.swap(parked_lists());
    has_parked_lists = false;
    for (const parked_list& parked : batch) parked.release(parked.list);
  }
}

// ---- snapshot ---------------------------------------------------------------------------------

HOOKSET_DECL bool configured_companions::overlaps(
    const configured_companions& other) const noexcept {
  for (std::size_t role = 0; role != companion_role_count; ++role)
    if ((*this)[companion_role(role)] && other[companion_role(role)]) return true;
  return false;
}
HOOKSET_DECL void configured_companions::take_configured(
    const configured_companions& other) noexcept {
  for (std::size_t role = 0; role != companion_role_count; ++role)
    if (other[companion_role(role)]) (*this)[companion_role(role)] = other[companion_role(role)];
}

HOOKSET_DECL void configured_companions::keep_alive(const std::shared_ptr<const void>& more) {
  if (!more || more == anchor) return;
  if (!anchor) {
    anchor = more;
    return;
  }
  struct both {
    std::shared_ptr<const void> first, second;
  };
  anchor = std::make_shared<const both>(both{anchor, more});
}

HOOKSET_DECL hook_list::hook_list(const hook_list& other)
    : configured_companions(other),
      hooks(other.hooks),
      unconstrained(other.unconstrained),
      leading_plain(other.leading_plain),
      all_plain(other.all_plain),
      hooks_plain(other.hooks_plain),
      any_time_limit(other.any_time_limit),
      make_context(other.make_context),
      watched(other.watched),
      interceptors(other.interceptors),
      interceptors_base(other.interceptors_base),
      keyed(other.keyed),
      index_keys(other.index_keys),
      list_for_key(other.list_for_key),
      insert_constrained(other.insert_constrained),
      interceptor_code(other.interceptor_code) {}

HOOKSET_DECL void hook_list::arrange(std::vector<hook_entry> base, std::string_view slot,
                                     const hook_record* checked) {
  std::vector<hook_entry> ordered = base;
  apply_named_order(ordered, slot, checked);
  bool constrained = false;
  for (const hook_entry& e : base)
    constrained = constrained || !e.record->before.empty() || !e.record->after.empty();
  hooks.swap(ordered);
  if (constrained) {
    unconstrained.swap(base);
    insert_constrained = &insert_in_named_order;
  } else {
    unconstrained.clear();
  }
}

HOOKSET_DECL void hook_list::insert_in_named_order(hook_list& list, hook_entry entry,
                                                   std::string_view slot) {
  const hook_record* added = entry.record.get();
  std::vector<hook_entry> base = list.base_order();
  base.insert(insertion_point(base, entry), std::move(entry));
  list.arrange(std::move(base), slot, added);
}

HOOKSET_DECL void hook_list::summarize() noexcept {
  leading_plain = 0;
  while (leading_plain != hooks.size() && hooks[leading_plain].plain) ++leading_plain;
  hooks_plain = leading_plain == hooks.size();
  all_plain = hooks_plain && interceptors.empty();
  any_time_limit = false;
  make_context = nullptr;
  watched = nullptr;
  // (Only a hook that is not quiet has a time limit or names the watched code: the records of the
  // quiet ones, the leading plain hooks among them, are not read - a keyed dispatch summarizes the
  // list filtered for its key.)
  for (std::size_t i = leading_plain; i != hooks.size(); ++i) {
    const hook_entry& e = hooks[i];
    if (e.quiet) continue;
    any_time_limit = any_time_limit || e.record->timeout.has_value();
    if (e.record->make_context) make_context = e.record->make_context;
    if (e.record->watched) watched = e.record->watched;
  }
  interceptor_code = nullptr;
  for (const hook_entry& e : interceptors) {
    if (e.record->make_context) make_context = e.record->make_context;
    interceptor_code = e.record->interceptor_code;
  }
}

HOOKSET_DECL void hook_list::release(void* list) noexcept {
  auto* self = static_cast<hook_list*>(list);
  if (self->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(self);
}

hook_list::~hook_list() {}  // (inline as declared, in header-only mode)

HOOKSET_NOINLINE HOOKSET_DECL void hook_list::destroy(hook_list* list) noexcept { delete list; }

// ---- copy-on-write ----------------------------------------------------------------------------

HOOKSET_DECL hook_list* hook_list_owner::editable_in_place() noexcept {
  if (list_ && !in_sync_dispatch() && !list_->index_keys &&
      list_->refs.load(std::memory_order_acquire) == 1)
    return list_;
  return nullptr;
}

HOOKSET_NOINLINE HOOKSET_DECL hook_list* hook_list_owner::list_to_edit() {
  if (hook_list* list = editable_in_place()) return list;
  auto fresh = list_ ? std::make_unique<hook_list>(*list_) : std::make_unique<hook_list>();
  if (in_sync_dispatch()) parked_lists().reserve(parked_lists().size() + 1);
  return fresh.release();
}

HOOKSET_NOINLINE HOOKSET_DECL void hook_list_owner::drop_edit(hook_list* edited) noexcept {
  if (edited != list_) hook_list::destroy(edited);
}

HOOKSET_NOINLINE HOOKSET_DECL void hook_list_owner::finish_edit(hook_list* edited) {
  if (edited == list_) return edited->summarize();
  std::unique_ptr<hook_list> fresh(edited);
  fresh->summarize();
  if (fresh->index_keys) fresh->keyed = fresh->index_keys(*fresh);
  retire(std::exchange(list_, fresh.release()));
}

// (Inline as declared, in header-only mode; never inlined.)
void hook_list_owner::retire(hook_list* list) noexcept {
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

// ---- order ------------------------------------------------------------------------------------

// Where `entry` goes: after every entry that runs before or with it. A pipeline's validators
// run after all of its mutating hooks (their phase comes before their priority).
HOOKSET_DECL std::vector<hook_entry>::iterator insertion_point(std::vector<hook_entry>& entries,
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
HOOKSET_DECL std::vector<std::size_t> named_order(const std::vector<const hook_record*>& records,
                                                  std::string_view slot,
                                                  const hook_record* checked) {
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

HOOKSET_DECL void apply_named_order(std::vector<hook_entry>& hooks, std::string_view slot,
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

// Registers `entry`, which names no other registration, in `owner`: a singleton slot keeps only
// the newest hook (with a warning when it replaces one), any other slot inserts it in order.
HOOKSET_NOINLINE HOOKSET_DECL void insert_hook(hook_list_owner& owner, hook_entry entry,
                                               bool singleton, std::string_view slot,
                                               Observer* observer) {
  const bool replaced = singleton && owner.count() != 0;
  owner.modify([&](hook_list& list) {
    if (singleton) {
      list.hooks.reserve(1);
      list.hooks.clear();
      list.hooks.push_back(std::move(entry));
    } else if (list.unconstrained.empty()) {
      // No registration names another: the order is priority, then registration. (Nothing to
      // undo when the insertion throws: hook_entry moves without throwing.)
      list.hooks.insert(insertion_point(list.hooks, entry), std::move(entry));
    } else {
      // Others name an order: worked out again with this one, through the pointer arrange left
      // (this function does not name the named-order code).
      list.insert_constrained(list, std::move(entry), slot);
    }
  });
  if (replaced)
    warn(slot, "singleton hook replaced: the slot keeps only the newest hook", observer);
}

// The same for an entry that may name others (before/after): a singleton slot refuses names
// (there is no other registration to order against).
HOOKSET_NOINLINE HOOKSET_DECL void insert_hook_in_named_order(hook_list_owner& owner,
                                                              hook_entry entry, bool singleton,
                                                              std::string_view slot,
                                                              Observer* observer) {
  const hook_record& record = *entry.record;
  if (record.before.empty() && record.after.empty())
    return insert_hook(owner, std::move(entry), singleton, slot, observer);
  if (singleton) {
    // One hook, nothing to order it against: a name in before/after can match no other
    // registration, which the named order's rule makes an error (the set unchanged).
    const bool before = !record.before.empty();
    throw OrderingError(
        std::string(slot),
        "registration '" + record.name + "' asks to run " +
            (before ? "before '" + record.before.front() : "after '" + record.after.front()) +
            "', but a singleton slot keeps one hook: there is no other to order it against");
  }
  owner.modify(
      [&](hook_list& list) { hook_list::insert_in_named_order(list, std::move(entry), slot); });
}

HOOKSET_NOINLINE HOOKSET_DECL HookId add_hook(hook_list_owner& list, void* object,
                                              std::shared_ptr<const void>* owner, Priority priority,
                                              const hook_facts& facts, Observer* observer) {
  hook_entry entry =
      make_entry(object, owner ? std::move(*owner) : nullptr, priority, facts.slot_policy,
                 facts.watched, facts.sync, facts.async, facts.suspended_driver, facts.validates);
  const HookId id = entry.id();
  insert_hook(list, std::move(entry), facts.singleton, facts.slot, observer);
  return id;
}
HOOKSET_NOINLINE HOOKSET_DECL HookId add_hook(hook_list_owner& list, void* object,
                                              std::shared_ptr<const void>* owner,
                                              HookOptions&& options, const hook_facts& facts,
                                              Observer* observer) {
  hook_entry entry =
      make_entry(object, owner ? std::move(*owner) : nullptr, std::move(options), facts.slot_policy,
                 facts.sync, facts.async, facts.suspended_driver, facts.validates);
  const HookId id = entry.id();
  insert_hook_in_named_order(list, std::move(entry), facts.singleton, facts.slot, observer);
  return id;
}

// Registers the interceptor `entry` in `owner`, ordered as hooks are (priority, then
// registration, then named order among the slot's interceptors).
HOOKSET_NOINLINE HOOKSET_DECL void insert_interceptor(hook_list_owner& owner, hook_entry entry,
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
HOOKSET_NOINLINE HOOKSET_DECL void extend_list(hook_list_owner& mine, const hook_list_owner& theirs,
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
    // (First: if a later step throws, the worst left behind is an anchor kept too long.)
    list.keep_alive(source->anchor);
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

HOOKSET_DECL bool holds_id(const std::vector<hook_entry>& entries, HookId id) noexcept {
  for (const hook_entry& e : entries)
    if (e.id() == id) return true;
  return false;
}

// Removes the registration `id` (a hook or an interceptor); false when the list does not hold
// it.
HOOKSET_NOINLINE HOOKSET_DECL bool remove_hook(hook_list_owner& owner, HookId id) {
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

HOOKSET_DECL bool holds_hook(const hook_list_owner& owner, HookId id) noexcept {
  const hook_list* list = owner.current();
  return list && (holds_id(list->hooks, id) || holds_id(list->interceptors, id));
}

// Removes every hook and interceptor.
HOOKSET_DECL void clear_hooks(hook_list_owner& owner) {
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
