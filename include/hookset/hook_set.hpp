#pragma once
// HookSet<Slots...>: owns the hooks of its slots (and of nested sets) and dispatches them.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/type.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/set.hpp>

#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/engine.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/hook_options.hpp>
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
using is_valid_member = mp::mp_bool<is_hook_set<M>::value || is_slot_type<M>()>;

// What a set stores for a member it rejected: nothing, so that no second error follows ours.
struct rejected_member {};

template <class M, bool Nested = is_hook_set<M>::value, bool Valid = Nested || slot_ok<M>>
struct member_storage { using type = M; };
template <class M>
struct member_storage<M, false, true> { using type = hook_list_owner<kind_of<M>>; };
template <class M>
struct member_storage<M, false, false> { using type = rejected_member; };
template <class M>
using member_storage_t = typename member_storage<M>::type;

template <class Slots, class S>
using occurs_more_than_once = mp::mp_bool<(mp::mp_count<Slots, S>::value > 1)>;

template <class S, class Target>
using implements_slot_t = mp::mp_bool<implements_slot<S, Target>>;

// How a registered hook is held: borrowed (std::ref), shared (std::shared_ptr) or owned.
template <class Hook>
struct hook_holding {
  using value_type = std::decay_t<Hook>;
  using target = const value_type;
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
  static std::shared_ptr<const void> hold(std::reference_wrapper<T> hook, void*& object) {
    object = const_cast<std::remove_const_t<T>*>(&hook.get());  // constness kept in `target`
    return nullptr;
  }
};
template <class T>
struct hook_holding<std::shared_ptr<T>> {
  using target = T;
  static std::shared_ptr<const void> hold(std::shared_ptr<T> hook, void*& object) {
    if (!hook) throw std::invalid_argument("hookset: cannot register a null std::shared_ptr hook");
    object = const_cast<std::remove_const_t<T>*>(hook.get());
    return hook;
  }
};

// The strong guarantee for an edit spanning several slots (add_hooks, extend, clear). Holding
// a copy of the set (reference counts only: cannot throw) makes every edit of it copy-on-write,
// so the held lists stay intact, and roll_back() puts them back without allocating.
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

// Checks a HookSet's member list once, where the set type is first used; reports the first
// problem only.
template <class Slot, class... Rest>
constexpr void check_slots() {
  if constexpr (!check_slot<Slot>()) return;
  else if constexpr (sizeof...(Rest) > 0) check_slots<Rest...>();
}
template <class... Slots>
constexpr void check_slot_list(mp::mp_list<Slots...>) {
  if constexpr (sizeof...(Slots) > 0) check_slots<Slots...>();
}

template <class... Members>
constexpr bool validate_hook_set() {
  using members = mp::mp_list<Members...>;
  using invalid = mp::mp_remove_if<members, is_valid_member>;
  if constexpr (!mp::mp_empty<invalid>::value) {
    report_invalid_member<mp::mp_front<invalid>>();
  } else {
    using slots = typename slots_of<HookSet<Members...>>::type;
    using duplicates = mp::mp_copy_if_q<slots, mp::mp_bind_front<occurs_more_than_once, slots>>;
    if constexpr (!mp::mp_empty<duplicates>::value)
      report_duplicate_slot<mp::mp_front<duplicates>>();
    else
      check_slot_list(mp::mp_remove_if<members, is_hook_set>{});  // nested sets check their own
  }
  return true;  // the report above is the error; this static_assert adds none
}

}  // namespace detail

template <class... Members>
class HookSet {
  template <class...> friend class HookSet;
  using members = boost::mp11::mp_list<Members...>;
  static_assert(detail::validate_hook_set<Members...>());

 public:
  // Every slot callable through this set, nested sets' slots included.
  using slots = typename detail::slots_of<HookSet>::type;
  template <class S>
  static constexpr bool contains = boost::mp11::mp_contains<slots, S>::value;

  HookSet() = default;

  // ---- registration ----------------------------------------------------------------------

  // Registers `hook` for slot S. An rvalue is moved in, an lvalue copied, std::ref(x) borrows
  // x, a std::shared_ptr shares it. `options` is a Priority or a HookOptions (name, priority,
  // time limit, failure policy, named order). Returns the id that remove() takes.
  template <class S, class Hook>
  HookId add(Hook&& hook, Priority priority = {}) {
    return add_with<S>(std::forward<Hook>(hook), detail::to_hook_options(priority));
  }
  template <class S, class Hook>
  HookId add(Hook&& hook, HookOptions options) {
    return add_with<S>(std::forward<Hook>(hook), std::move(options));
  }
  template <class S, class Hook, class Options = Priority>
  HookId add(boost::hana::basic_type<S>, Hook&& hook, Options options = {}) {
    return add<S>(std::forward<Hook>(hook), std::move(options));
  }

  template <class S, class Hook, class Options = Priority>
  HookSet&& with(Hook&& hook, Options options = {}) && {
    add<S>(std::forward<Hook>(hook), std::move(options));
    return std::move(*this);
  }

  // Registers `object` for every slot of this set, nested sets included, that it implements
  // with a call operator taking the slot first: `object(S{}, args..., [last])`, in the slot's
  // hook shape. The object is stored once (owned, std::ref-borrowed or std::shared_ptr-shared,
  // as with add) and each slot gets a light adapter to it, with the same options. A generic
  // catch-all call operator matches every slot. Returns the ids of the registrations, in the
  // set's slot order.
  template <class Object>
  std::vector<HookId> add_hooks(Object&& object, Priority priority = {}) {
    return add_hooks_with(std::forward<Object>(object), detail::to_hook_options(priority));
  }
  template <class Object>
  std::vector<HookId> add_hooks(Object&& object, HookOptions options) {
    return add_hooks_with(std::forward<Object>(object), std::move(options));
  }

  template <class Object, class Options = Priority>
  HookSet&& with_hooks(Object&& object, Options options = {}) && {
    add_hooks(std::forward<Object>(object), std::move(options));
    return std::move(*this);
  }

  // Unregisters the hook `id` names; false if this set does not hold it.
  bool remove(HookId id) {
    bool removed = false;
    for_each_list([&](auto& owner) {
      if (removed) return;
      const auto* list = owner.current();
      if (!list || std::none_of(list->hooks.begin(), list->hooks.end(), [&](const auto& e) { return e.id() == id; }))
        return;
      owner.modify([&](auto& fresh) { std::erase_if(fresh.hooks, [&](const auto& e) { return e.id() == id; }); });
      removed = true;
    });
    return removed;
  }

  // Whether this set holds the registration `id` (in any slot, nested sets included).
  bool holds(HookId id) const noexcept {
    bool found = false;
    const_cast<HookSet*>(this)->for_each_list([&](auto& owner) {
      if (const auto* list = owner.current())
        found = found || std::any_of(list->hooks.begin(), list->hooks.end(), [&](const auto& e) { return e.id() == id; });
    });
    return found;
  }

  // Removes every hook of slot S (configured companions stay).
  template <class S>
  void clear() {
    if constexpr (!contains<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_slot_not_in_set<S, HookSet>();
    } else {
      auto& owner = storage_for<S>();
      if (owner.count() != 0) owner.modify([](auto& list) { list.hooks.clear(); });
    }
  }
  // Removes every hook of every slot, nested sets included (configured companions stay).
  void clear() {
    detail::all_or_nothing<HookSet> transaction(*this);
    try {
      for_each_list([](auto& owner) {
        if (owner.count() != 0) owner.modify([](auto& list) { list.hooks.clear(); });
      });
    } catch (...) {
      transaction.roll_back();
      throw;
    }
  }

  // Registered hooks of S: lets a caller skip building expensive arguments.
  template <class S>
  std::size_t count() const noexcept {
    if constexpr (!contains<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_slot_not_in_set<S, HookSet>();
      return 0;
    } else {
      return storage_for<S>().count();
    }
  }

  // Gives slot S a configured instance of its Chain, Aggregate or Finalize type, used by every
  // later dispatch instead of a default-constructed one.
  template <class S, class Companion>
  void configure(Companion&& companion) {
    using C = std::remove_cvref_t<Companion>;
    if constexpr (!contains<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_slot_not_in_set<S, HookSet>();
    } else {
      using kind = detail::kind_of<S>;
      if constexpr (!std::is_same_v<C, typename kind::chain> && !std::is_same_v<C, typename kind::aggregate> &&
                    !std::is_same_v<C, typename kind::finalize>) {
        [[maybe_unused]] constexpr bool reported = detail::report_not_a_companion<S, C>();
      } else if constexpr (!callable_as_const<kind, C>()) {
        [[maybe_unused]] constexpr bool reported = detail::report_mutable_companion<S, C>();
      } else {
        auto instance = std::make_shared<const C>(std::forward<Companion>(companion));
        storage_for<S>().modify([&](auto& list) {
          if constexpr (std::is_same_v<C, typename kind::chain>) list.chain.instance = std::move(instance);
          else if constexpr (std::is_same_v<C, typename kind::aggregate>) list.aggregate.instance = std::move(instance);
          else list.finalize.instance = std::move(instance);
        });
      }
    }
  }

  // Merges `other`'s hooks into this set: by priority, after this set's hooks of equal
  // priority, then by the registrations' named order. A singleton hook or configured companion
  // of `other` replaces this set's, with a warning. Nested sets are extended recursively.
  void extend(const HookSet& other) {
    detail::all_or_nothing<HookSet> transaction(*this);  // merged slot by slot: undo them all
    try {
      extend_members(other);
    } catch (...) {
      transaction.roll_back();
      throw;
    }
  }

  HookSet&& with_extended(const HookSet& other) && {
    extend(other);
    return std::move(*this);
  }

  // ---- observation -----------------------------------------------------------------------

  // An observer for this set's dispatches and warnings, in addition to the process-wide one
  // (nullptr: none). It must outlive the dispatches that start while it is installed. Copies
  // of the set share it.
  void set_observer(Observer* observer) noexcept { observer_ = observer; }
  Observer* observer() const noexcept { return observer_; }

  // ---- nested sets ---------------------------------------------------------------------------

  // The nested set N, one of this set's own members: hand a subsystem its part of the
  // application's hooks, or extend that part with a standalone N. Its slots stay callable
  // through this set, which sees every change made through the reference.
  template <class N>
  decltype(auto) nested() noexcept {
    if constexpr (!boost::mp11::mp_contains<members, N>::value || !detail::is_hook_set<N>::value) {
      constexpr bool reported = detail::report_not_a_nested_set<N, HookSet>();  // evaluated now: our error first
      return reported;
    } else {
      return static_cast<N&>(boost::hana::at_c<boost::mp11::mp_find<members, N>::value>(members_));
    }
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
      constexpr bool reported = detail::report_slot_not_in_set<S, HookSet>();  // evaluated now: our error first
      return reported;
    } else if constexpr (!detail::slot_ok<S>) {
      return false;  // reported where the set lists the slot
    } else if constexpr (sizeof...(Args) != boost::mp11::mp_size<typename S::parameter_types>::value) {
      constexpr bool reported = detail::report_call_arity<S>();  // evaluated now: our error first
      return reported;
    } else {
      return detail::dispatch<detail::kind_of<S>>(storage_for<S>(), detail::descriptor_of<S>, observer_,
                                                   std::forward<Args>(args)...);
    }
  }
  template <class S, class... Args>
  auto call(boost::hana::basic_type<S>, Args&&... args) const {
    return call<S>(std::forward<Args>(args)...);
  }

 private:
  template <class S, class Hook>
  HookId add_with(Hook&& hook, HookOptions&& options) {
    if constexpr (!contains<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_slot_not_in_set<S, HookSet>();
      return {};
    } else if constexpr (!detail::slot_ok<S>) {
      return {};  // reported where the set lists the slot
    } else {
      using holding = detail::hook_holding<std::remove_cvref_t<Hook>>;
      using target = typename holding::target;
      if constexpr (!detail::hook_shape_ok<S, target>) {
        [[maybe_unused]] constexpr bool reported = detail::report_hook_shape<S, typename detail::hook_calls<detail::kind_of<S>>::expected_call, target>();
        return {};
      } else {
        void* object = nullptr;
        auto owner = holding::hold(std::forward<Hook>(hook), object);
        auto entry = detail::make_hook_entry<detail::kind_of<S>, target, S>(object, std::move(owner), std::move(options),
                                                                           detail::descriptor_of<S>.on_failure);
        const HookId id = entry.id();
        insert_hook<S>(std::move(entry));
        return id;
      }
    }
  }

  template <class Object>
  std::vector<HookId> add_hooks_with(Object&& object, HookOptions&& options) {
    namespace mp = boost::mp11;
    using holding = detail::hook_holding<std::remove_cvref_t<Object>>;
    using target = typename holding::target;
    using implemented = mp::mp_copy_if_q<slots, mp::mp_bind_back<detail::implements_slot_t, target>>;
    if constexpr (mp::mp_empty<implemented>::value) {
      [[maybe_unused]] constexpr bool reported = detail::report_implements_nothing<std::remove_cvref_t<Object>, HookSet>();
      return {};
    } else {
      using misshapen = mp::mp_remove_if_q<implemented, mp::mp_bind_back<detail::hook_shape_ok_t, target>>;
      if constexpr (!mp::mp_empty<misshapen>::value) {
        using S = mp::mp_front<misshapen>;
        [[maybe_unused]] constexpr bool reported = detail::report_hook_shape<S, typename detail::hook_calls<detail::kind_of<S>>::expected_call, target, S>();
        return {};
      } else {
        void* raw = nullptr;
        auto owner = holding::hold(std::forward<Object>(object), raw);
        std::vector<HookId> ids;
        ids.reserve(mp::mp_size<implemented>::value);
        detail::all_or_nothing<HookSet> transaction(*this);
        try {
          mp::mp_for_each<mp::mp_transform<mp::mp_identity, implemented>>([&](auto slot) {
            using S = typename decltype(slot)::type;
            auto entry = detail::make_hook_entry<detail::kind_of<S>, target, S, S>(
                raw, owner, HookOptions(options), detail::descriptor_of<S>.on_failure);
            const HookId id = entry.id();
            insert_hook<S>(std::move(entry));
            ids.push_back(id);
          });
        } catch (...) {
          transaction.roll_back();  // also undoes a singleton hook replaced before the throw
          throw;
        }
        return ids;
      }
    }
  }

  template <class Kind, class C>
  static constexpr bool callable_as_const() {
    using calls = detail::companion_calls<Kind>;
    if constexpr (std::is_same_v<C, typename Kind::chain>)
      return calls::template chain_kind<const C> != detail::call_kind::invalid;
    else if constexpr (std::is_same_v<C, typename Kind::aggregate>)
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
  auto& storage_for() {
    auto& member = boost::hana::at_c<member_index<S>>(members_);
    if constexpr (std::is_same_v<boost::mp11::mp_at_c<members, member_index<S>>, S>) return member;
    else return member.template storage_for<S>();
  }
  template <class S>
  const auto& storage_for() const {
    return const_cast<HookSet*>(this)->storage_for<S>();
  }

  // Calls f(owner) for the hook list owner of every slot, nested sets included.
  template <class F>
  void for_each_list(F&& f) {
    boost::hana::for_each(members_, [&](auto& member) {
      using M = std::remove_cvref_t<decltype(member)>;
      if constexpr (detail::is_hook_set<M>::value) member.for_each_list(f);
      else if constexpr (!std::is_same_v<M, detail::rejected_member>) f(member);
    });
  }

  template <class S>
  void insert_hook(detail::hook_entry<detail::kind_of<S>> entry) {
    auto& owner = storage_for<S>();
    if constexpr (detail::kind_of<S>::is_singleton) {
      const bool replaced = owner.count() != 0;
      owner.modify([&](auto& list) {
        list.hooks.reserve(1);
        list.hooks.clear();
        list.hooks.push_back(std::move(entry));
      });
      if (replaced)
        detail::warn(slot_name<S>, "singleton hook replaced: the slot keeps only the newest hook", observer_);
    } else {
      owner.modify([&](auto& list) {
        // Built aside, so that an ordering error (or a throwing copy) leaves the list as it was.
        auto hooks = list.hooks;
        const detail::hook_record* added = entry.record.get();
        hooks.insert(detail::insertion_point(hooks, entry.priority()), std::move(entry));
        detail::apply_named_order(hooks, slot_name<S>, added);
        list.hooks.swap(hooks);
      });
    }
  }

  void extend_members(const HookSet& other) {
    boost::mp11::mp_for_each<boost::mp11::mp_iota_c<sizeof...(Members)>>([&](auto index) {
      constexpr std::size_t i = decltype(index)::value;
      using member = boost::mp11::mp_at_c<members, i>;
      auto& mine = boost::hana::at_c<i>(members_);
      const auto& theirs = boost::hana::at_c<i>(other.members_);
      if constexpr (detail::is_hook_set<member>::value) mine.extend_members(theirs);
      else if constexpr (detail::slot_ok<member>) extend_slot<member>(mine, theirs);
    });
  }

  template <class S>
  void extend_slot(detail::hook_list_owner<detail::kind_of<S>>& mine,
                   const detail::hook_list_owner<detail::kind_of<S>>& theirs) {
    using kind = detail::kind_of<S>;
    using list_type = detail::hook_list<kind>;
    const auto* source = theirs.current();
    if (!source) return;
    // Hold the source: `theirs` may be `mine` (a set extended with itself).
    source->acquire();
    struct release_on_exit {
      const list_type* list;
      ~release_on_exit() { list_type::release_ref(list); }
    } hold{source};

    const bool replaces_singleton = kind::is_singleton && !source->hooks.empty() && mine.count() != 0;
    bool replaces_companion = false;
    if (const auto* current = mine.current()) {
      if constexpr (kind::has_chain) replaces_companion |= source->chain.instance && current->chain.instance;
      if constexpr (kind::has_aggregate) replaces_companion |= source->aggregate.instance && current->aggregate.instance;
      if constexpr (kind::has_finalize) replaces_companion |= source->finalize.instance && current->finalize.instance;
    }
    mine.modify([&](auto& list) {
      if constexpr (kind::is_singleton) {
        if (!source->hooks.empty()) list.hooks = source->hooks;
      } else {
        // Build the merge aside so a throwing copy or an ordering error leaves `list` as it was.
        auto merged = list.hooks;
        merged.reserve(merged.size() + source->hooks.size());
        for (const auto& entry : source->hooks) merged.insert(detail::insertion_point(merged, entry.priority()), entry);
        detail::apply_named_order(merged, slot_name<S>, nullptr);
        list.hooks.swap(merged);
      }
      if constexpr (kind::has_chain) if (source->chain.instance) list.chain = source->chain;
      if constexpr (kind::has_aggregate) if (source->aggregate.instance) list.aggregate = source->aggregate;
      if constexpr (kind::has_finalize) if (source->finalize.instance) list.finalize = source->finalize;
    });
    if (replaces_singleton) detail::warn(slot_name<S>, "singleton hook replaced by extend", observer_);
    if (replaces_companion) detail::warn(slot_name<S>, "configured companion replaced by extend", observer_);
  }

  boost::hana::tuple<detail::member_storage_t<Members>...> members_;
  Observer* observer_ = nullptr;
};

}  // namespace hookset
