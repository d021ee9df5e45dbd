#pragma once
// HookSet<Slots...>: owns the hooks of its slots (and of nested sets) and dispatches them.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/set.hpp>

#include <hookset/detail/dispatch.hpp>
#include <hookset/detail/hook_shape.hpp>
#include <hookset/detail/slot_state.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/observer.hpp>
#include <hookset/slot.hpp>

namespace hookset {

template <class... Members>
class HookSet;

namespace detail {

template <class T> struct is_hook_set : std::false_type {};
template <class... M> struct is_hook_set<HookSet<M...>> : std::true_type {};

// Every slot a member contributes: itself, or all slots of a nested set.
template <class M> struct slots_of { using type = mp::mp_list<M>; };
template <class... M> struct slots_of<HookSet<M...>> {
  using type = mp::mp_append<mp::mp_list<>, typename slots_of<M>::type...>;
};

template <class M>
using is_valid_member = mp::mp_bool<is_hook_set<M>::value || std::is_base_of_v<slot_base, M>>;

template <class M>
using member_storage_t = typename mp::mp_if<is_hook_set<M>, mp::mp_identity<M>,
                                            mp::mp_identity<slot_storage<M>>>::type;

template <class M>
constexpr bool check_slot_member() {
  if constexpr (is_hook_set<M>::value) return true;
  else return check_slot<M>();
}

template <class Slots, class S>
using occurs_more_than_once = mp::mp_bool<(mp::mp_count<Slots, S>::value > 1)>;

// Diagnostics whose template arguments name the offending slot in the compiler's context lines.
template <class Slot, class Set>
constexpr bool report_slot_not_in_set() {
  static_assert(sizeof(Slot) == 0,
                "hookset: this slot is not part of this HookSet: add it to the HookSet's slot list "
                "(or to a nested HookSet)");
  return false;
}
template <class Slot>
constexpr bool report_duplicate_slot() {
  static_assert(sizeof(Slot) == 0,
                "hookset: a slot may appear only once in a HookSet, nested sets included");
  return false;
}
template <class Member>
constexpr bool report_invalid_member() {
  static_assert(sizeof(Member) == 0,
                "hookset: HookSet<...> takes slot types (deriving from hookset::Slot<R(Args...), "
                "Mode, ...>) and nested HookSets");
  return false;
}
template <class S, class Target>
using implements_slot_t = mp::mp_bool<implements_slot<S, Target>>;

template <class Object, class Set>
constexpr bool report_implements_nothing() {
  static_assert(sizeof(Object) == 0,
                "hookset: add_hooks(object): the object implements no slot of this HookSet; a slot "
                "S is implemented by a call operator taking S first: object(S, args..., [last])");
  return false;
}
template <class Nested, class Set>
constexpr bool report_not_a_nested_set() {
  static_assert(sizeof(Nested) == 0,
                "hookset: nested<N>(): N must be a HookSet listed directly among this set's "
                "members (see Set)");
  return false;
}
template <class Slot, class Companion>
constexpr bool report_not_a_companion() {
  static_assert(sizeof(Slot) == 0,
                "hookset: configure<Slot>(companion): the companion's type must be the slot's "
                "Chain<C>, Aggregate<A> or Finalize<F> type C, A or F");
  return false;
}
template <class Slot, class Companion>
constexpr bool report_mutable_companion() {
  static_assert(sizeof(Slot) == 0,
                "hookset: a configured companion is shared by every dispatch of the set and is "
                "called as const: make its call operator const");
  return false;
}

// How a registered hook is held: borrowed (std::ref), shared (std::shared_ptr) or owned.
template <class Hook>
struct hook_holding {
  using value_type = std::decay_t<Hook>;
  using target = const value_type;
  static constexpr bool owned = true;
  template <class H>
  static std::shared_ptr<const void> hold(H&& hook, void*& object) {
    // (A function reference decays to a pointer that cannot be null: nothing to check.)
    if constexpr ((std::is_pointer_v<value_type> || std::is_member_pointer_v<value_type>) &&
                  !std::is_function_v<std::remove_reference_t<H>>)
      if (hook == nullptr) throw std::invalid_argument("hookset: cannot register a null hook");
    auto owner = std::make_shared<const value_type>(std::forward<H>(hook));
    object = const_cast<value_type*>(owner.get());  // called only through `const value_type&`
    return owner;
  }
};
template <class T>
struct hook_holding<std::reference_wrapper<T>> {
  using target = T;
  static constexpr bool owned = false;
  static std::shared_ptr<const void> hold(std::reference_wrapper<T> hook, void*& object) {
    object = const_cast<std::remove_const_t<T>*>(&hook.get());  // constness kept in `target`
    return nullptr;
  }
};
template <class T>
struct hook_holding<std::shared_ptr<T>> {
  using target = T;
  static constexpr bool owned = false;
  static std::shared_ptr<const void> hold(std::shared_ptr<T> hook, void*& object) {
    if (!hook) throw std::invalid_argument("hookset: cannot register a null std::shared_ptr hook");
    object = const_cast<std::remove_const_t<T>*>(hook.get());
    return hook;
  }
};

// An entry calling `object` (of type Target, kept alive by `owner`) for slot S; Tag is {S} for
// the adapters of a multi-slot object.
template <class S, class Target, class... Tag>
hook_entry<S> make_hook_entry(void* object, std::shared_ptr<const void> owner, Priority priority) {
  using calls = hook_calls<S>;
  hook_entry<S> entry;
  entry.object = object;
  entry.owner = std::move(owner);
  if constexpr (calls::template kind<Target, Tag...> == call_kind::sync)
    entry.sync = &calls::template call_sync<Target, Tag...>;
  else
    entry.async = &calls::template call_async<Target, Tag...>;
  entry.priority = priority.value;
  entry.id = HookId::next();
  return entry;
}

// Where an entry of `priority` goes: after every entry that runs before or with it.
template <class Entries>
auto insertion_point(Entries& entries, int priority) {
  return std::upper_bound(entries.begin(), entries.end(), priority,
                          [](int p, const auto& entry) { return p < entry.priority; });
}

// The strong guarantee for an edit spanning several slots (add_hooks, extend). Holding a copy of
// the set (reference counts only: cannot throw) makes every edit of it copy-on-write, so the held
// lists stay intact, and roll_back() puts them back without allocating.
template <class Set>
class all_or_nothing {
 public:
  explicit all_or_nothing(Set& set) noexcept : set_(set), before_(set) {}
  all_or_nothing(const all_or_nothing&) = delete;
  all_or_nothing& operator=(const all_or_nothing&) = delete;
  void roll_back() noexcept { set_ = std::move(before_); }

 private:
  Set& set_;
  Set before_;
};

// Checks a HookSet's member list once, where the set type is first used.
template <class... Members>
constexpr bool validate_hook_set() {
  using members = mp::mp_list<Members...>;
  using slots = typename slots_of<HookSet<Members...>>::type;
  using invalid = mp::mp_remove_if<members, is_valid_member>;
  if constexpr (!mp::mp_empty<invalid>::value) {
    report_invalid_member<mp::mp_front<invalid>>();
  } else {
    using duplicates = mp::mp_copy_if_q<slots, mp::mp_bind_front<occurs_more_than_once, slots>>;
    if constexpr (!mp::mp_empty<duplicates>::value)
      report_duplicate_slot<mp::mp_front<duplicates>>();
    else
      (check_slot_member<Members>(), ...);
  }
  return true;
}

}  // namespace detail

template <class... Members>
class HookSet {
  template <class...> friend class HookSet;
  using members = boost::mp11::mp_list<Members...>;

 public:
  // Every slot callable through this set, nested sets' slots included.
  using slots = typename detail::slots_of<HookSet>::type;
  template <class S>
  static constexpr bool contains = boost::mp11::mp_contains<slots, S>::value;

  HookSet() = default;

  // ---- registration ----------------------------------------------------------------------

  // Registers `hook` for slot S. An rvalue is moved in, an lvalue copied, std::ref(x) borrows
  // x, a std::shared_ptr shares it. Returns the id that remove() takes.
  template <class S, class Hook>
  HookId add(Hook&& hook, Priority priority = {}) {
    if constexpr (!contains<S>) {
      detail::report_slot_not_in_set<S, HookSet>();
      return {};
    } else {
      using target = typename detail::hook_holding<std::remove_cvref_t<Hook>>::target;
      if constexpr (!detail::hook_shape_ok<S, target>) {
        detail::report_hook_shape<S, typename detail::hook_calls<S>::expected_call, target>();
        return {};
      } else {
        void* object = nullptr;
        auto owner = detail::hook_holding<std::remove_cvref_t<Hook>>::hold(std::forward<Hook>(hook), object);
        auto entry = detail::make_hook_entry<S, target>(object, std::move(owner), priority);
        const HookId id = entry.id;
        insert_hook<S>(std::move(entry));
        return id;
      }
    }
  }

  template <class S, class Hook>
  HookSet&& with(Hook&& hook, Priority priority = {}) && {
    add<S>(std::forward<Hook>(hook), priority);
    return std::move(*this);
  }

  // Registers `object` for every slot of this set, nested sets included, that it implements
  // with a call operator taking the slot first: `object(S{}, args..., [last])`, in the slot's
  // hook shape. The object is stored once (owned, std::ref-borrowed or std::shared_ptr-shared,
  // as with add) and each slot gets a light adapter to it. A generic catch-all call operator
  // matches every slot. Returns the ids of the registrations, in the set's slot order.
  template <class Object>
  std::vector<HookId> add_hooks(Object&& object, Priority priority = {}) {
    namespace mp = boost::mp11;
    using target = typename detail::hook_holding<std::remove_cvref_t<Object>>::target;
    using implemented = mp::mp_copy_if_q<slots, mp::mp_bind_back<detail::implements_slot_t, target>>;
    if constexpr (mp::mp_empty<implemented>::value) {
      detail::report_implements_nothing<std::remove_cvref_t<Object>, HookSet>();
      return {};
    } else {
      void* raw = nullptr;
      auto owner = detail::hook_holding<std::remove_cvref_t<Object>>::hold(std::forward<Object>(object), raw);
      std::vector<HookId> ids;
      ids.reserve(mp::mp_size<implemented>::value);
      detail::all_or_nothing<HookSet> transaction(*this);
      try {
        mp::mp_for_each<mp::mp_transform<mp::mp_identity, implemented>>([&](auto slot) {
          using S = typename decltype(slot)::type;
          if constexpr (!detail::hook_shape_ok<S, target, S>) {
            detail::report_hook_shape<S, typename detail::hook_calls<S>::expected_call, target, S>();
          } else {
            auto entry = detail::make_hook_entry<S, target, S>(raw, owner, priority);
            const HookId id = entry.id;
            insert_hook<S>(std::move(entry));
            ids.push_back(id);
          }
        });
      } catch (...) {
        transaction.roll_back();  // also undoes a singleton hook replaced before the throw
        throw;
      }
      return ids;
    }
  }

  template <class Object>
  HookSet&& with_hooks(Object&& object, Priority priority = {}) && {
    add_hooks(std::forward<Object>(object), priority);
    return std::move(*this);
  }

  // Unregisters the hook `id` names; false if this set does not hold it.
  bool remove(HookId id) {
    bool removed = false;
    boost::hana::for_each(members_, [&](auto& member) {
      if (removed) return;
      if constexpr (detail::is_hook_set<std::remove_cvref_t<decltype(member)>>::value) {
        removed = member.remove(id);
      } else if (const auto* state = member.current()) {
        const auto& hooks = state->hooks;
        if (std::none_of(hooks.begin(), hooks.end(), [&](const auto& e) { return e.id == id; })) return;
        member.modify([&](auto& fresh) {
          std::erase_if(fresh.hooks, [&](const auto& e) { return e.id == id; });
        });
        removed = true;
      }
    });
    return removed;
  }

  // Registered hooks of S: lets a caller skip building expensive arguments.
  template <class S>
  std::size_t count() const noexcept {
    if constexpr (!contains<S>) {
      detail::report_slot_not_in_set<S, HookSet>();
      return 0;
    } else {
      return storage_for<S>().count();
    }
  }

  // Gives slot S a configured instance of its Chain, Aggregate or Finalize type, used by every
  // later dispatch instead of a default-constructed one.
  template <class S, class Companion>
  void configure(Companion&& companion) {
    using traits = detail::slot_traits<S>;
    using C = std::remove_cvref_t<Companion>;
    if constexpr (!contains<S>) {
      detail::report_slot_not_in_set<S, HookSet>();
    } else if constexpr (!std::is_same_v<C, typename traits::chain> &&
                         !std::is_same_v<C, typename traits::aggregate> &&
                         !std::is_same_v<C, typename traits::finalize>) {
      detail::report_not_a_companion<S, C>();
    } else if constexpr (!callable_as_const<S, C>()) {
      detail::report_mutable_companion<S, C>();
    } else {
      auto instance = std::make_shared<const C>(std::forward<Companion>(companion));
      storage_for<S>().modify([&](auto& state) {
        if constexpr (std::is_same_v<C, typename traits::chain>) state.chain.instance = std::move(instance);
        else if constexpr (std::is_same_v<C, typename traits::aggregate>) state.aggregate.instance = std::move(instance);
        else state.finalize.instance = std::move(instance);
      });
    }
  }

  // Merges `other`'s hooks into this set: by priority, after this set's hooks of equal
  // priority. A singleton hook or configured companion of `other` replaces this set's, with a
  // warning. Nested sets are extended recursively.
  void extend(const HookSet& other) {
    detail::all_or_nothing<HookSet> transaction(*this);  // merged slot by slot: undo them all
    try {
      boost::mp11::mp_for_each<boost::mp11::mp_iota_c<sizeof...(Members)>>([&](auto index) {
        constexpr std::size_t i = decltype(index)::value;
        using member = boost::mp11::mp_at_c<members, i>;
        auto& mine = boost::hana::at_c<i>(members_);
        const auto& theirs = boost::hana::at_c<i>(other.members_);
        if constexpr (detail::is_hook_set<member>::value) mine.extend(theirs);
        else extend_slot<member>(mine, theirs);
      });
    } catch (...) {
      transaction.roll_back();
      throw;
    }
  }

  HookSet&& with_extended(const HookSet& other) && {
    extend(other);
    return std::move(*this);
  }

  // ---- nested sets ---------------------------------------------------------------------------

  // The nested set N, one of this set's own members: hand a subsystem its part of the
  // application's hooks, or extend that part with a standalone N. Its slots stay callable
  // through this set, which sees every change made through the reference.
  template <class N>
  decltype(auto) nested() noexcept {
    if constexpr (!boost::mp11::mp_contains<members, N>::value || !detail::is_hook_set<N>::value)
      return detail::report_not_a_nested_set<N, HookSet>();
    else
      return static_cast<N&>(boost::hana::at_c<boost::mp11::mp_find<members, N>::value>(members_));
  }
  template <class N>
  decltype(auto) nested() const noexcept {
    return std::as_const(const_cast<HookSet*>(this)->template nested<N>());
  }

  // ---- dispatch ----------------------------------------------------------------------------

  // Dispatches slot S: returns an awaitable of the slot's result (`co_await` it, or pass it to
  // hookset::sync_wait). Arguments are bound once to the slot's parameter types; the hooks
  // are looked up when the dispatch starts.
  template <class S, class... Args>
  auto call(Args&&... args) const {
    if constexpr (!contains<S>) {
      detail::report_slot_not_in_set<S, HookSet>();
    } else {
      using parameters = typename detail::slot_traits<S>::parameters;
      static_assert(sizeof...(Args) == boost::mp11::mp_size<parameters>::value,
                    "hookset: call<Slot>(args...) takes exactly the slot's arguments");
      return detail::dispatch<S>(storage_for<S>(), std::forward<Args>(args)...);
    }
  }

 private:

  static_assert(detail::validate_hook_set<Members...>());

  template <class S, class C>
  static constexpr bool callable_as_const() {
    using traits = detail::slot_traits<S>;
    using calls = detail::companion_calls<S>;
    if constexpr (std::is_same_v<C, typename traits::chain>)
      return calls::template chain_kind<const C> != detail::call_kind::invalid;
    else if constexpr (std::is_same_v<C, typename traits::aggregate>)
      return calls::template aggregate_kind<const C> != detail::call_kind::invalid;
    else
      return calls::template finalize_kind<const C> != detail::call_kind::invalid;
  }

  // Index of the member (slot or nested set) through which slot S is reached.
  template <class S, class M>
  using owns_slot = boost::mp11::mp_contains<typename detail::slots_of<M>::type, S>;
  template <class S>
  static constexpr std::size_t member_index =
      boost::mp11::mp_find_if_q<members, boost::mp11::mp_bind_front<owns_slot, S>>::value;

  template <class S>
  detail::slot_storage<S>& storage_for() {
    auto& member = boost::hana::at_c<member_index<S>>(members_);
    if constexpr (std::is_same_v<boost::mp11::mp_at_c<members, member_index<S>>, S>) return member;
    else return member.template storage_for<S>();
  }
  template <class S>
  const detail::slot_storage<S>& storage_for() const {
    return const_cast<HookSet*>(this)->storage_for<S>();
  }

  template <class S>
  void insert_hook(detail::hook_entry<S> entry) {
    using traits = detail::slot_traits<S>;
    auto& storage = storage_for<S>();
    if constexpr (traits::is_singleton) {
      const bool replaced = storage.count() != 0;
      storage.modify([&](auto& state) {
        state.hooks.reserve(1);
        state.hooks.clear();
        state.hooks.push_back(std::move(entry));
      });
      if (replaced) detail::warn(slot_name<S>, "singleton hook replaced: the slot keeps only the newest hook");
    } else {
      storage.modify([&](auto& state) {
        state.hooks.insert(detail::insertion_point(state.hooks, entry.priority), std::move(entry));
      });
    }
  }

  template <class S>
  static void extend_slot(detail::slot_storage<S>& mine, const detail::slot_storage<S>& theirs) {
    using traits = detail::slot_traits<S>;
    const auto* source = theirs.current();
    if (!source) return;
    // Hold the source: `theirs` may be `mine` (a set extended with itself).
    source->acquire();
    struct release_on_exit {
      const typename detail::slot_storage<S>::state_type* state;
      ~release_on_exit() { detail::slot_storage<S>::state_type::release_ref(state); }
    } hold{source};

    const bool replaces_singleton = traits::is_singleton && !source->hooks.empty() && mine.count() != 0;
    bool replaces_companion = false;
    if (const auto* current = mine.current()) {
      if constexpr (traits::has_chain) replaces_companion |= source->chain.instance && current->chain.instance;
      if constexpr (traits::has_aggregate) replaces_companion |= source->aggregate.instance && current->aggregate.instance;
      if constexpr (traits::has_finalize) replaces_companion |= source->finalize.instance && current->finalize.instance;
    }
    mine.modify([&](auto& state) {
      if constexpr (traits::is_singleton) {
        if (!source->hooks.empty()) state.hooks = source->hooks;
      } else {
        // Build the merge aside so a throwing copy leaves `state` as it was.
        auto merged = state.hooks;
        merged.reserve(merged.size() + source->hooks.size());
        for (const auto& entry : source->hooks)
          merged.insert(detail::insertion_point(merged, entry.priority), entry);
        state.hooks.swap(merged);
      }
      if constexpr (traits::has_chain) if (source->chain.instance) state.chain = source->chain;
      if constexpr (traits::has_aggregate) if (source->aggregate.instance) state.aggregate = source->aggregate;
      if constexpr (traits::has_finalize) if (source->finalize.instance) state.finalize = source->finalize;
    });
    if (replaces_singleton) detail::warn(slot_name<S>, "singleton hook replaced by extend");
    if (replaces_companion) detail::warn(slot_name<S>, "configured companion replaced by extend");
  }

  boost::hana::tuple<detail::member_storage_t<Members>...> members_;
};

}  // namespace hookset
