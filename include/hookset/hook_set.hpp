#pragma once
// HookSet<Slots...>: owns the hooks of its slots (and of nested sets) and dispatches them.

#include <array>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <boost/hana/type.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/bind.hpp>
#include <boost/mp11/list.hpp>
#include <boost/mp11/map.hpp>
#include <boost/mp11/set.hpp>

#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/engine.hpp>
#include <hookset/detail/history.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/keyed_index.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/hook_options.hpp>
#include <hookset/interceptor.hpp>
#include <hookset/keyed.hpp>
#include <hookset/nested.hpp>
#include <hookset/observer.hpp>
#include <hookset/pipeline.hpp>
#include <hookset/slot.hpp>

namespace hookset {

template <class... Members>
class HookSet;
template <class... Members>
class FrozenHookSet;

// For a Pipeline slot S: what its hooks return, and what its dispatch returns.
template <class S>
using decision_t = typename detail::kind_of<S>::result;
template <class S>
using pipeline_result_t = typename detail::kind_of<S>::output;

namespace detail {

template <class T>
struct is_hook_set : std::false_type {};
template <class... M>
struct is_hook_set<HookSet<M...>> : std::true_type {};

// A nested member: a HookSet, unnamed, or one listed under a name (Nested<Name, HookSet<...>>).
// Its key, what nested<Key>() takes, is its name, or its type when unnamed.
template <class T>
struct nested_member_traits {
  static constexpr bool named = false;
  static constexpr bool nested = is_hook_set<T>::value;
  using set = T;
  using key = T;
};
template <class Name, class... M>
struct nested_member_traits<Nested<Name, HookSet<M...>>> {
  static constexpr bool named = true;
  static constexpr bool nested = true;
  using set = HookSet<M...>;
  using key = Name;
};
template <class M>
using is_nested_member = mp::mp_bool<nested_member_traits<M>::nested>;
template <class M>
using is_named_nested = mp::mp_bool<nested_member_traits<M>::named>;
template <class M>
using nested_set_t = typename nested_member_traits<M>::set;
template <class M>
using nested_key_t = typename nested_member_traits<M>::key;

// Every slot a member contributes: itself, or all slots of a nested set (a slot twice when two
// named nested members have it).
template <class M>
struct slots_of {
  using type = mp::mp_list<M>;
};
template <class... M>
struct slots_of<HookSet<M...>> {
  using type = mp::mp_append<mp::mp_list<>, typename slots_of<M>::type...>;
};
template <class Name, class... M>
struct slots_of<Nested<Name, HookSet<M...>>> : slots_of<HookSet<M...>> {};
template <class M>
using slots_of_t = typename slots_of<M>::type;

template <class M>
using is_valid_member = mp::mp_bool<is_nested_member<M>::value || is_slot_type<M>()>;

// Whether no type occurs twice in List, in one class and one overload resolution per element:
// the class has a base {i, T} for each element T at position i, and the call that deduces i for
// T is ambiguous - the catch-all taken - when two bases match. (mp_is_set builds a set one
// element at a time, a class per element with as many bases as came before: quadratic.)
template <std::size_t I, class T>
struct indexed_type {};
template <class List, class Indices = mp::mp_iota<mp::mp_size<List>>>
struct indexed_types;
template <class... T, class... I>
struct indexed_types<mp::mp_list<T...>, mp::mp_list<I...>> : indexed_type<I::value, T>... {};
template <class T, std::size_t I>
std::true_type occurs_once(const indexed_type<I, T>*);
template <class T>
std::false_type occurs_once(...);
template <class List>
inline constexpr bool all_distinct = false;
template <class... T>
inline constexpr bool all_distinct<mp::mp_list<T...>> =
    (decltype(detail::occurs_once<T>(
         static_cast<const indexed_types<mp::mp_list<T...>>*>(nullptr)))::value &&
     ...);

template <class Slots, class S>
using occurs_more_than_once = mp::mp_bool<(mp::mp_count<Slots, S>::value > 1)>;

template <class S, class Target>
using implements_slot_t = mp::mp_bool<implements_slot<S, Target>>;

// Destroys an owned hook of type T. The only per-type piece of an owned hook's lifetime: the
// shared_ptr that owns it is a shared_ptr<const void> with this deleter, whose control block
// type is the same for every hook type.
template <class T>
void destroy_hook(void* hook) noexcept {
  delete static_cast<T*>(hook);
}

// A captureless lambda or a stateless functor: nothing to store. Every copy is the same, so
// the one static instance serves every registration (no allocation).
// (The compilers' own traits where they have them: libstdc++'s std::is_trivially_copyable and
// std::is_default_constructible instantiate a chain of helper classes for every hook type.)
template <class T>
inline constexpr bool is_stateless_hook =
#if defined(__GNUC__) || defined(__clang__)
    __is_empty(T) && __is_trivially_copyable(T) && __is_constructible(T);
#else
    std::is_empty_v<T>&& std::is_trivially_copyable_v<T>&& std::is_default_constructible_v<T>;
#endif
template <class T>
inline constexpr T stateless_instance{};

// Whether Hook is a std::reference_wrapper (std::ref / std::cref): std::unwrap_reference_t,
// C++20's <type_traits> (libc++ 16 declares it in <utility>), needs no <functional> here - the
// code that calls std::ref has included it.
template <class Hook>
inline constexpr bool is_reference_wrapper = !std::is_same_v<std::unwrap_reference_t<Hook>, Hook>;

// How a registered hook is held: borrowed (std::ref), shared (std::shared_ptr) or owned.
template <class Hook, bool = is_reference_wrapper<Hook>>
struct hook_holding {
  using value_type = std::decay_t<Hook>;
  using target = const value_type;
  // Whether hold() returns an owner (else it is always empty).
  static constexpr bool owns = !is_stateless_hook<value_type>;
  template <class H>
  static std::shared_ptr<const void> hold(H&& hook, void*& object) {
    // (A function reference decays to a pointer that cannot be null: nothing to check.)
    if constexpr ((std::is_pointer_v<value_type> ||
                   std::is_member_pointer_v<
                       value_type>)&&!std::is_function_v<std::remove_reference_t<H>>)
      if (hook == nullptr) throw std::invalid_argument("hookset: cannot register a null hook");
    if constexpr (is_stateless_hook<value_type>) {
      object = const_cast<value_type*>(&stateless_instance<value_type>);  // called only as const
      return nullptr;
    } else {
      auto* owned = new value_type(std::forward<H>(hook));
      object = owned;  // called only through `const value_type&`
      // (Should the control block's allocation throw, shared_ptr destroys `owned` itself.)
      return std::shared_ptr<const void>(static_cast<void*>(owned), &destroy_hook<value_type>);
    }
  }
};
template <class Wrapper>
struct hook_holding<Wrapper, true> {
  using target = std::remove_reference_t<std::unwrap_reference_t<Wrapper>>;
  static constexpr bool owns = false;
  static std::shared_ptr<const void> hold(Wrapper hook, void*& object) {
    object = const_cast<std::remove_const_t<target>*>(&hook.get());  // constness kept in `target`
    return nullptr;
  }
};
template <class T>
struct hook_holding<std::shared_ptr<T>, false> {
  using target = T;
  static constexpr bool owns = true;
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
// problem only. Linear in the number of slots: each is judged once (slot_ok), and only a bad
// one is checked again to report it.
template <class S>
using is_bad_slot = mp::mp_bool<!slot_ok<S>>;

template <class List>
using first_duplicate =
    mp::mp_front<mp::mp_copy_if_q<List, mp::mp_bind_front<occurs_more_than_once, List>>>;

// The rules for slots that occur more than once among a set's slots (nested sets' included): only
// nested members listed under names may share slots, with each other and with unnamed nested
// sets (such a slot is reached through nested<Name>()), never with the set's own slots. Judged
// only when some slot does occur twice; reports the first broken rule and returns false.
template <class M>
using unique_slots_of_t = mp::mp_unique<slots_of_t<M>>;
template <class Lists>
using appended = mp::mp_apply<mp::mp_append, mp::mp_push_front<Lists, mp::mp_list<>>>;

template <class Members>
constexpr bool repeats_only_among_named() {
  // Own slots and unnamed nested sets. (An unnamed nested set's own repeats, among its named
  // members, were judged where it is declared.)
  using unnamed = mp::mp_remove_if<Members, is_named_nested>;
  using unnamed_slots = appended<mp::mp_transform<unique_slots_of_t, unnamed>>;
  if constexpr (!all_distinct<unnamed_slots>) {
    return report_duplicate_slot<first_duplicate<unnamed_slots>>();
  } else {
    using own = mp::mp_remove_if<Members, is_nested_member>;
    using named_slots =
        appended<mp::mp_transform<slots_of_t, mp::mp_copy_if<Members, is_named_nested>>>;
    using shared = mp::mp_copy_if_q<own, mp::mp_bind_front<mp::mp_contains, named_slots>>;
    if constexpr (!mp::mp_empty<shared>::value)
      return report_duplicate_slot<mp::mp_front<shared>>();
    else return true;
  }
}

// Reports the first ill-formed slot among a set's own slots (nested sets check their own).
template <class Members>
constexpr void check_own_slots() {
  using own_slots = mp::mp_remove_if<Members, is_nested_member>;
  constexpr std::size_t bad = mp::mp_find_if<own_slots, is_bad_slot>::value;
  if constexpr (bad < mp::mp_size<own_slots>::value) check_slot<mp::mp_at_c<own_slots, bad>>();
}

template <class... Members>
constexpr bool validate_hook_set() {
  using members = mp::mp_list<Members...>;
  using invalid = mp::mp_remove_if<members, is_valid_member>;
  if constexpr (!mp::mp_empty<invalid>::value) {
    report_invalid_member<mp::mp_front<invalid>>();
  } else {
    using nested = mp::mp_copy_if<members, is_nested_member>;
    using keys = mp::mp_transform<nested_key_t, nested>;
    using slots = typename slots_of<HookSet<Members...>>::type;
    if constexpr (!all_distinct<keys>) {
      using key = first_duplicate<keys>;
      if constexpr (mp::mp_count<members, key>::value > 1) report_nested_set_twice<key>();
      else report_nested_name_twice<key>();
    } else if constexpr (!all_distinct<slots>) {
      // (Reported there. The common case, no slot twice, costs the one all_distinct: nested, not
      // `&&`, which would instantiate the judgement of repeats for every set.)
      if constexpr (repeats_only_among_named<members>()) check_own_slots<members>();
    } else {
      check_own_slots<members>();
    }
  }
  return true;  // the report above is the error; this static_assert adds none
}

// How a set stores its members: its own slots' hook lists in one array (indexed by the slot's
// position among them), its nested sets in a std::tuple.
template <class M>
using is_own_slot = mp::mp_bool<!is_nested_member<M>::value && slot_ok<M>>;

// Where each slot of a set lives, as an Mp11 map (one lookup, however many slots):
// {slot, own_list<i>} for the set's own slot i, {slot, in_nested<j>} for a slot of nested set j
// (j: the member's position among the nested members), {slot, ambiguous} for a slot that more
// than one nested member has.
template <std::size_t I>
struct own_list : mp::mp_size_t<I> {};
template <std::size_t J>
struct in_nested : mp::mp_size_t<J> {};
struct ambiguous {};

template <class Own, class NestedSets, class OwnIndices = mp::mp_iota<mp::mp_size<Own>>,
          class NestedIndices = mp::mp_iota<mp::mp_size<NestedSets>>>
struct slot_locations;
template <class... Own, class... NestedSets, class... I, class... J>
struct slot_locations<mp::mp_list<Own...>, mp::mp_list<NestedSets...>, mp::mp_list<I...>,
                      mp::mp_list<J...>> {
  template <class Index>
  struct located_in {
    template <class S>
    using fn = mp::mp_list<S, in_nested<Index::value>>;
  };
  using type = mp::mp_append<mp::mp_list<mp::mp_list<Own, own_list<I::value>>...>,
                             mp::mp_transform_q<located_in<J>, slots_of_t<NestedSets>>...>;
};

// A map from a list of {slot, location} pairs where a slot may repeat (nested members listed
// under names share it): a repeated slot's location is `ambiguous`. Used only when some slot
// repeats, so the common case pays nothing for it.
template <class Slots>
struct mark_ambiguous {
  template <class Pair>
  using fn = mp::mp_if_c<(mp::mp_count<Slots, mp::mp_first<Pair>>::value > 1),
                         mp::mp_list<mp::mp_first<Pair>, ambiguous>, Pair>;
};
template <class S>
struct has_slot {
  template <class M>
  using fn = mp::mp_contains<slots_of_t<M>, S>;
};

template <class Pairs, class Slots, bool Repeats = !all_distinct<Slots>>
struct located_map {
  using type = Pairs;
};
template <class Pairs, class Slots>
struct located_map<Pairs, Slots, true> {
  using type = mp::mp_unique<mp::mp_transform_q<mark_ambiguous<Slots>, Pairs>>;
};

// Reaches every hook list of a set, nested sets' included (<hookset/plugin.hpp> anchors a
// plugin's lists to its library).
template <class Set>
struct set_lists;

// What a set needs to know of its own slots at run time, to walk them in a loop.
struct own_slot_info {
  std::string_view name;
  bool singleton;
};

}  // namespace detail

template <class... Members>
class HookSet {
  template <class...>
  friend class HookSet;
  template <class>
  friend struct detail::set_lists;
  using members = boost::mp11::mp_list<Members...>;
  static_assert(detail::validate_hook_set<Members...>());
  // A member that is neither (rejected above) is stored nowhere, so that no second error
  // follows ours.
  using own_slots = boost::mp11::mp_copy_if<members, detail::is_own_slot>;
  // The nested members (HookSets, or Nested<Name, HookSet>s), and the sets stored for them.
  using nested_members = boost::mp11::mp_copy_if<members, detail::is_nested_member>;
  using nested_sets = boost::mp11::mp_transform<detail::nested_set_t, nested_members>;
  static constexpr std::size_t own_count = boost::mp11::mp_size<own_slots>::value;
  // The own slots that keep their calls (Historic<N>): each has a log in history_.
  using historic_own_slots = boost::mp11::mp_copy_if<own_slots, detail::is_historic_t>;

 public:
  // Every slot of this set, nested sets' slots included, in member order: a slot that several
  // named nested members have once for each (callable only through nested<Name>()).
  using slots = typename detail::slots_of<HookSet>::type;

 private:
  using locations =
      typename detail::located_map<typename detail::slot_locations<own_slots, nested_sets>::type,
                                   slots>::type;
  // Whether S is listed but ill-formed. The members are searched only when some member is
  // ill-formed: searched for every slot named, they cost a pass over the members per slot.
  template <class S>
  static constexpr bool lists_ill_formed() {
    if constexpr (own_count == boost::mp11::mp_size<members>::value -
                                   boost::mp11::mp_size<nested_members>::value)
      return false;
    else return boost::mp11::mp_contains<members, S>::value;
  }

 public:
  // (A slot listed in the set but ill-formed counts as contained: its own error is reported
  // where the set lists it, and "not part of this HookSet" would be false.)
  template <class S>
  static constexpr bool contains = [] {
    if constexpr (!std::is_void_v<boost::mp11::mp_map_find<locations, S>>) return true;
    else return lists_ill_formed<S>();  // (not named for a slot found: `||` would instantiate it)
  }();

 private:
  // The guard of every member that names a slot S: false when S is not one of this set's slots
  // (reported here, once for all members, with S in the compiler's context lines) or when S is
  // ill-formed (reported where the set lists it). The member then does nothing more, so no
  // second error follows the first.
  template <class S>
  static constexpr bool usable_slot() {
    if constexpr (!contains<S>) return detail::report_slot_not_in_set<S, HookSet>();
    else if constexpr (ambiguous<S>) return detail::report_ambiguous_slot<S, keys_having<S>>();
    else return detail::slot_ok<S>;
  }
  // Whether several nested members have S (listed under names): then it is reached through
  // nested<Name>(), never through this set, which could not tell which one is meant.
  template <class S>
  static constexpr bool ambiguous = std::is_same_v<boost::mp11::mp_map_find<locations, S>,
                                                   boost::mp11::mp_list<S, detail::ambiguous>>;
  // The keys (what nested<Key>() takes) of the nested members that have S, for the message.
  template <class S>
  using keys_having =
      boost::mp11::mp_transform<detail::nested_key_t,
                                boost::mp11::mp_copy_if_q<nested_members, detail::has_slot<S>>>;

 public:
  HookSet() = default;

  // A set made of copies of its nested sets, given in the order the members list them (own
  // slots start empty): HookSet<Nested<Primary, Tools>, Nested<Backup, Tools>, Audit>
  // host{primary_tools, backup_tools}. Each member is a copy, as `Tools copy = primary_tools;`
  // would be: it shares the registrations (same hooks, same ids) copy-on-write, so a later change
  // to primary_tools - a removal, an addition - is not seen by `host`, nor the other way round.
  // An rvalue is moved in.
  template <class... Sets>
  requires(sizeof...(Sets) != 0 &&
           std::is_same_v<boost::mp11::mp_list<std::remove_cvref_t<Sets>...>,
                          nested_sets>) explicit HookSet(Sets&&... sets)
      : nested_(std::forward<Sets>(sets)...) {}

  // ---- registration ----------------------------------------------------------------------

  // Registers `hook` for slot S. An rvalue is moved in, an lvalue copied, std::ref(x) borrows
  // x, a std::shared_ptr shares it. `options` is a Priority or a HookOptions (name, priority,
  // time limit, failure policy, named order). Returns the id that remove() takes.
  template <class S, class Hook>
  HookId add(Hook&& hook, Priority priority = {}) {
    return add_with<S>(std::forward<Hook>(hook), priority);
  }
  template <class S, class Hook>
  HookId add(Hook&& hook, HookOptions options) {
    return add_with<S>(std::forward<Hook>(hook), std::move(options));
  }
  template <class S, class Hook, class Options = Priority>
  requires(!detail::is_key_selector<Hook>) HookId
      add(boost::hana::basic_type<S>, Hook&& hook, Options options = {}) {
    return add<S>(std::forward<Hook>(hook), std::move(options));
  }

  // Keyed slots (<hookset/keyed.hpp>): registers `hook` for the keys `selector` names -
  // hookset::key(k), prefix(p), glob(g), matching(predicate) or any_key.
  template <class S, class Selector, class Hook>
  requires detail::is_key_selector<Selector> HookId add(Selector&& selector, Hook&& hook,
                                                        Priority priority = {}) {
    return add_keyed_with<S>(std::forward<Selector>(selector), std::forward<Hook>(hook), priority);
  }
  template <class S, class Selector, class Hook>
  requires detail::is_key_selector<Selector> HookId add(Selector&& selector, Hook&& hook,
                                                        HookOptions options) {
    return add_keyed_with<S>(std::forward<Selector>(selector), std::forward<Hook>(hook),
                             std::move(options));
  }
  template <class S, class Selector, class Hook, class Options = Priority>
  requires detail::is_key_selector<Selector> HookId add(boost::hana::basic_type<S>,
                                                        Selector&& selector, Hook&& hook,
                                                        Options options = {}) {
    return add<S>(std::forward<Selector>(selector), std::forward<Hook>(hook), std::move(options));
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

  // Registers `interceptor` around every dispatch of slot S (interceptor.hpp): called as
  // interceptor(hookset::Next<S> next, args...), it returns the dispatch's result, directly or
  // as an awaitable. Held as add holds hooks; ordered as hooks are (priority, named order,
  // registration), the first one outermost. `options`: Priority, or HookOptions with a name,
  // priority and named order (a time limit or failure policy is for hooks: std::invalid_argument).
  template <class S, class Interceptor>
  HookId intercept(Interceptor&& interceptor, Priority priority = {}) {
    return intercept_with<S>(std::forward<Interceptor>(interceptor),
                             detail::to_hook_options(priority));
  }
  template <class S, class Interceptor>
  HookId intercept(Interceptor&& interceptor, HookOptions options) {
    return intercept_with<S>(std::forward<Interceptor>(interceptor), std::move(options));
  }
  template <class S, class Interceptor, class Options = Priority>
  HookId intercept(boost::hana::basic_type<S>, Interceptor&& interceptor, Options options = {}) {
    return intercept<S>(std::forward<Interceptor>(interceptor), std::move(options));
  }

  // Registers `interceptor` around every slot of this set, nested sets included: one
  // registration (one id, one stored object) called as interceptor(hookset::Next<S> next,
  // args...) for each slot S - a generic callable; next.slot_name() tells the slot. Every slot
  // must accept it (a compile error names the first that does not).
  template <class Interceptor>
  HookId intercept_all(Interceptor&& interceptor, Priority priority = {}) {
    return intercept_all_with(std::forward<Interceptor>(interceptor),
                              detail::to_hook_options(priority));
  }
  template <class Interceptor>
  HookId intercept_all(Interceptor&& interceptor, HookOptions options) {
    return intercept_all_with(std::forward<Interceptor>(interceptor), std::move(options));
  }

  // Unregisters the hook or interceptor `id` names (an intercept_all one from every slot);
  // false if this set does not hold it.
  bool remove(HookId id) {
    bool removed = false;
    for_each_list([&](auto& owner) { removed = detail::remove_hook(owner, id) || removed; });
    return removed;
  }

  // Whether this set holds the registration `id` (in any slot, nested sets included).
  bool holds(HookId id) const noexcept {
    bool found = false;
    const_cast<HookSet*>(this)->for_each_list(
        [&](auto& owner) { found = found || detail::holds_hook(owner, id); });
    return found;
  }

  // Removes every hook of slot S (configured companions stay).
  template <class S>
  void clear() {
    if constexpr (usable_slot<S>()) detail::clear_hooks(storage_for<S>());
  }
  // Removes every hook of every slot, nested sets included (configured companions stay).
  void clear() {
    detail::all_or_nothing<HookSet> transaction(*this);
    try {
      for_each_list([](auto& owner) { detail::clear_hooks(owner); });
    } catch (...) {
      transaction.roll_back();
      throw;
    }
  }

  // Registered hooks of S: lets a caller skip building expensive arguments.
  template <class S>
  std::size_t count() const noexcept {
    if constexpr (!usable_slot<S>()) {
      return 0;
    } else {
      return storage_for<S>().count();
    }
  }

  // Keyed slot S: the keys with an exact registration (hookset::key), sorted when the key type
  // is ordered.
  template <class S>
  std::vector<key_type_t<S>> keys() const {
    if constexpr (!usable_slot<S>()) {
      return {};
    } else if constexpr (!detail::is_keyed<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_not_keyed<S>();
      return {};
    } else {
      return detail::registered_keys<key_type_t<S>>(storage_for<S>());
    }
  }
  // Keyed slot S: whether a dispatch for `key` would run any hook.
  template <class S, class Key>
  bool has_hooks(const Key& key) const {
    if constexpr (!usable_slot<S>()) {
      return false;
    } else if constexpr (!detail::is_keyed<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_not_keyed<S>();
      return false;
    } else {
      const auto* index = detail::index_of<key_type_t<S>>(storage_for<S>());
      return index && index->runs_hooks_for(detail::lookup_key<key_type_t<S>>(key));
    }
  }

  // Gives slot S a configured instance of its Chain, Aggregate or Finalize type, used by every
  // later dispatch instead of a default-constructed one.
  template <class S, class Companion>
  void configure(Companion&& companion) {
    using C = std::remove_cvref_t<Companion>;
    if constexpr (usable_slot<S>()) {
      using kind = detail::kind_of<S>;
      if constexpr (!boost::mp11::mp_contains<typename kind::companions, C>::value) {
        [[maybe_unused]] constexpr bool reported = detail::report_not_a_companion<S, C>();
      } else if constexpr (!callable_as_const<kind, C>()) {
        [[maybe_unused]] constexpr bool reported = detail::report_mutable_companion<S, C>();
      } else {
        auto instance = std::make_shared<const C>(std::forward<Companion>(companion));
        storage_for<S>().modify([&](detail::hook_list& list) {
          list[detail::companion_role_of<kind, C>] = std::move(instance);
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

  // ---- history (slots declared with Historic<N>) -----------------------------------------------

  // Historic slot S: the calls the set keeps (its last N), oldest first, each as the tuple of
  // its arguments (recorded_call_t<S>). Copies of the set, frozen and shared versions share
  // them; `const` because dispatching records.
  template <class S>
  std::vector<recorded_call_t<S>> history() const {
    if constexpr (!usable_slot<S>()) {
      return {};
    } else if constexpr (!detail::is_historic<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_not_historic<S>();
      return {};
    } else {
      return call_log_for<S>().calls();
    }
  }
  // Historic slot S: forgets the calls kept so far, for every copy sharing them (`const`, as
  // recording is: the history is not one of the set's hooks).
  template <class S>
  void clear_history() const {
    if constexpr (!usable_slot<S>()) {
    } else if constexpr (!detail::is_historic<S>) {
      [[maybe_unused]] constexpr bool reported = detail::report_not_historic<S>();
    } else {
      call_log_for<S>().clear();
    }
  }

  // Replays this set's history, for every historic slot (nested sets' included, in the order
  // of `slots`), to the hooks of `newcomers` - a staging set a plugin loader registered a
  // plugin's hooks into - and to no hook of this set: each kept call, oldest first, to every hook
  // of the slot in `newcomers` in its dispatch order. Changes neither set; an exception from a
  // hook ends the replay and propagates.
  void replay_history_to(const HookSet& newcomers) const {
    namespace mp = boost::mp11;
    mp::mp_for_each<mp::mp_transform<mp::mp_identity, members>>([&](auto member) {
      using M = typename decltype(member)::type;
      if constexpr (detail::is_nested_member<M>::value) {
        constexpr std::size_t j = mp::mp_find<nested_members, M>::value;
        std::get<j>(nested_).replay_history_to(std::get<j>(newcomers.nested_));
      } else if constexpr (detail::is_own_slot<M>::value && detail::is_historic<M>) {
        replay_own_history<M>(newcomers);
      }
    });
  }
  // extend(newcomers), then replay_history_to(newcomers): what a plugin loader does with a
  // plugin's staging set. If the replay throws, the extension is undone (the set is as it was).
  void extend_and_replay(const HookSet& newcomers) {
    detail::all_or_nothing<HookSet> transaction(*this);
    try {
      extend_members(newcomers);
      replay_history_to(newcomers);
    } catch (...) {
      transaction.roll_back();
      throw;
    }
  }

  // An immutable copy of this set (sharing its hooks) that any number of threads may dispatch
  // (<hookset/shared_set.hpp>).
  FrozenHookSet<Members...> freeze() const&;
  FrozenHookSet<Members...> freeze() &&;

  // ---- observation -----------------------------------------------------------------------

  // An observer for this set's dispatches and warnings, in addition to the process-wide one
  // (nullptr: none). It must outlive the dispatches that start while it is installed. Copies
  // of the set share it.
  void set_observer(Observer* observer) noexcept { observer_ = observer; }
  Observer* observer() const noexcept { return observer_; }

  // ---- nested sets ---------------------------------------------------------------------------

 private:
  template <class N>
  struct is_nested_set {
    template <class M>
    using fn = std::is_same<detail::nested_set_t<M>, N>;
  };

 public:
  // The nested set N, one of this set's own members: hand a subsystem its part of the
  // application's hooks, or extend that part with a standalone N. Its slots stay callable
  // through this set, which sees every change made through the reference. N is the Name of a
  // member Nested<Name, Set> (that Set), or a nested set's type - unnamed, or listed once.
  template <class N>
  decltype(auto) nested() noexcept {
    namespace mp = boost::mp11;
    using keys = mp::mp_transform<detail::nested_key_t, nested_members>;
    constexpr std::size_t by_key = mp::mp_find<keys, N>::value;
    constexpr std::size_t by_set = mp::mp_find<nested_sets, N>::value;
    constexpr std::size_t count = mp::mp_size<nested_members>::value;
    if constexpr (by_key < count) {
      return static_cast<detail::nested_set_t<mp::mp_at_c<nested_members, by_key>>&>(
          std::get<by_key>(nested_));
    } else if constexpr (by_set < count && mp::mp_count<nested_sets, N>::value == 1) {
      return static_cast<N&>(std::get<by_set>(nested_));
    } else if constexpr (by_set < count) {
      // Under several names: which one is meant?
      constexpr bool reported = detail::report_nested_set_under_names<
          N, mp::mp_transform<detail::nested_key_t,
                              mp::mp_copy_if_q<nested_members, is_nested_set<N>>>>();
      return reported;
    } else {
      constexpr bool reported =
          detail::report_not_a_nested_set<N, HookSet>();  // evaluated now: our error first
      return reported;
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
    if constexpr (!usable_slot<S>()) {
      // A slot listed but ill-formed: an awaitable of the declared result, so that the caller's
      // code around the call adds no error of its own. (Not listed: usable_slot reported it.)
      if constexpr (contains<S>)
        return detail::ill_formed_slot_dispatch<detail::declared_output_t<S>>{};
      else return false;
    } else if constexpr (detail::is_keyed<S> &&
                         sizeof...(Args) !=
                             boost::mp11::mp_size<typename S::parameter_types>::value) {
      constexpr bool reported = detail::report_keyed_call_arity<S>();  // our error first
      return reported;
    } else if constexpr (sizeof...(Args) !=
                         boost::mp11::mp_size<typename S::parameter_types>::value) {
      constexpr bool reported = detail::report_call_arity<S>();  // evaluated now: our error first
      return reported;
    } else {
      if constexpr (detail::is_historic<S>)
        call_log_for<S>().record(detail::call_recorder<S>::record(args...));
      using kind = detail::kind_of<S>;
      if constexpr (detail::starts_light<kind>)
        return detail::dispatch_call<kind>(storage_for<S>(), detail::descriptor_of<S>, observer_,
                                           std::forward<Args>(args)...);
      else
        return detail::dispatch<kind>(storage_for<S>(), detail::descriptor_of<S>, observer_,
                                      std::forward<Args>(args)...);
    }
  }
  template <class S, class... Args>
  auto call(boost::hana::basic_type<S>, Args&&... args) const {
    return call<S>(std::forward<Args>(args)...);
  }

 private:
  // Registers, then - for a historic slot - replays the slot's history to the new hook alone.
  // If the replay throws, the registration is undone.
  template <class S, class Hook, class Options, class KeySelector = std::nullptr_t>
  HookId add_with(Hook&& hook, Options&& options, KeySelector key_selector = nullptr) {
    if constexpr (keeps_history<S>()) {
      detail::all_or_nothing<HookSet> transaction(*this);
      try {
        const HookId id = insert_with<S>(std::forward<Hook>(hook), std::forward<Options>(options),
                                         std::move(key_selector));
        if (id) replay_to<S>(storage_for<S>(), id);
        return id;
      } catch (...) {
        transaction.roll_back();
        throw;
      }
    } else {
      return insert_with<S>(std::forward<Hook>(hook), std::forward<Options>(options),
                            std::move(key_selector));
    }
  }

  // Whether S is a usable slot of this set that keeps its calls (Historic<N>).
  template <class S>
  static constexpr bool keeps_history() {
    if constexpr (usable_slot<S>()) return detail::is_historic<S>;
    else return false;
  }

  // The log of historic slot S: this set's, or the nested set's that has S.
  template <class S>
  detail::call_log_of<S>& call_log_for() const noexcept {
    using where = location<S>;
    if constexpr (std::is_base_of_v<detail::own_list<where::value>, where>)
      return history_.template log<S>();
    else return std::get<where::value>(nested_).template call_log_for<S>();
  }

  // Replays S's history to the registration `id`, just made in `list` (a list of S of this
  // set: call_log_for<S> is its history).
  template <class S>
  void replay_to(const detail::hook_list_owner& list, HookId id) const {
    std::vector<recorded_call_t<S>> calls = call_log_for<S>().calls();
    if (calls.empty()) return;
    std::vector<detail::hook_entry> registration;
    for (const detail::hook_entry& entry : list.current()->hooks)
      if (entry.id() == id) registration.push_back(entry);
    detail::replay<S>(calls, registration);
  }

  // Replays this set's history of own historic slot S to every hook of S in `newcomers`.
  template <class S>
  void replay_own_history(const HookSet& newcomers) const {
    const detail::hook_list* list =
        newcomers.lists_[boost::mp11::mp_find<own_slots, S>::value].current();
    if (list == nullptr || list->hooks.empty()) return;
    std::vector<recorded_call_t<S>> calls = history_.template log<S>().calls();
    if (!calls.empty()) detail::replay<S>(calls, std::vector<detail::hook_entry>(list->hooks));
  }

  // Options: Priority or HookOptions. KeySelector: a keyed registration's (make_key_selector),
  // or nullptr - every key of a keyed slot.
  template <class S, class Hook, class Options, class KeySelector = std::nullptr_t>
  HookId insert_with(Hook&& hook, Options&& options,
                     [[maybe_unused]] KeySelector key_selector = nullptr) {
    if constexpr (!usable_slot<S>()) {
      return {};
    } else {
      using holding = detail::hook_holding<std::remove_cvref_t<Hook>>;
      using target = typename holding::target;
      if constexpr (!detail::hook_fits<S, target>()) {
        return {};  // reported by hook_fits
      } else {
        void* object = nullptr;
        auto owner = holding::hold(std::forward<Hook>(hook), object);
        if constexpr (detail::is_keyed<S>) {
          auto entry = entry_for(object, std::move(owner), std::forward<Options>(options),
                                 facts_for<S, target>());
          const HookId id = entry.id();
          // (A Priority names no other registration: the named-order code is not needed.)
          insert_hook<S, !std::is_same_v<std::remove_cvref_t<Options>, Priority>>(
              storage_for<S>(), std::move(entry), std::move(key_selector));
          return id;
        } else {
          // One call of code that is not a template; a hook held by nothing (a captureless
          // lambda, std::ref) leaves the registering code no owner to release either.
          std::shared_ptr<const void>* kept = nullptr;
          if constexpr (holding::owns) kept = &owner;
          return detail::add_hook(storage_for<S>(), object, kept, std::forward<Options>(options),
                                  facts_for<S, target>(), observer_);
        }
      }
    }
  }

  // What a registration of a hook of type Target for S takes from the two types. (With a
  // Priority, the watched code is named only for a slot that declares a failure policy:
  // detail::watched_code_for_policy.)
  template <class S, class Target>
  static detail::hook_facts facts_for() noexcept {
    using calls = detail::entry_calls<detail::kind_of<S>, Target, detail::entry_slot_t<Target, S>>;
    constexpr FailurePolicy policy = detail::descriptor_of<S>.on_failure;
    return {calls::sync(),
            calls::async(),
            detail::suspended_driver_for<S, calls::suspends>(),
            policy,
            detail::watched_code_for_policy<policy>(),
            detail::is_validator<std::remove_const_t<Target>>,
            detail::kind_of<S>::is_singleton,
            slot_name<S>};
  }

  // A keyed registration's entry (the others are add_hook's).
  template <class Options>
  static detail::hook_entry entry_for(void* object, std::shared_ptr<const void> owner,
                                      Options&& options, const detail::hook_facts& facts) {
    if constexpr (std::is_same_v<std::remove_cvref_t<Options>, Priority>)
      return detail::make_entry(object, std::move(owner), options, facts.slot_policy, facts.watched,
                                facts.sync, facts.async, facts.suspended_driver, facts.validates);
    else
      return detail::make_entry(object, std::move(owner), std::forward<Options>(options),
                                facts.slot_policy, facts.sync, facts.async, facts.suspended_driver,
                                facts.validates);
  }

  template <class S, class Selector, class Hook, class Options>
  HookId add_keyed_with(Selector&& selector, Hook&& hook, Options&& options) {
    if constexpr (!usable_slot<S>()) {
      return {};
    } else if constexpr (!detail::is_keyed<S>) {
      [[maybe_unused]] constexpr bool reported =
          detail::report_key_selector_on_unkeyed_slot<S, std::remove_cvref_t<Selector>>();
      return {};
    } else if constexpr (!detail::key_selector_fits<S, Selector>()) {
      return {};  // reported by key_selector_fits
    } else {
      return add_with<S>(
          std::forward<Hook>(hook), std::forward<Options>(options),
          detail::make_key_selector<key_type_t<S>>(std::forward<Selector>(selector)));
    }
  }

  template <class S, class Interceptor>
  HookId intercept_with(Interceptor&& interceptor, HookOptions&& options) {
    if constexpr (!usable_slot<S>()) {
      return {};
    } else {
      using holding = detail::hook_holding<std::remove_cvref_t<Interceptor>>;
      using target = typename holding::target;
      if constexpr (!detail::interceptor_shape_ok<S, target>) {
        [[maybe_unused]] constexpr bool reported = detail::report_interceptor_shape<
            S, typename detail::interceptor_calls<S, target>::expected_call, target>();
        return {};
      } else {
        detail::check_interceptor_options(options);
        void* object = nullptr;
        auto owner = holding::hold(std::forward<Interceptor>(interceptor), object);
        using calls = detail::interceptor_calls<S, target>;
        auto entry = detail::make_entry(object, std::move(owner), std::move(options),
                                        FailurePolicy::propagate, calls::sync(), calls::async(),
                                        detail::suspended_driver_for<S, calls::suspends>(),
                                        /*validates=*/false, detail::interceptor_code_for<S>());
        const HookId id = entry.id();
        detail::insert_interceptor(storage_for<S>(), std::move(entry), slot_name<S>);
        return id;
      }
    }
  }

  template <class Interceptor>
  HookId intercept_all_with(Interceptor&& interceptor, HookOptions&& options) {
    namespace mp = boost::mp11;
    using holding = detail::hook_holding<std::remove_cvref_t<Interceptor>>;
    using target = typename holding::target;
    using misshapen = mp::mp_remove_if_q<slots, detail::interceptor_shape_ok_for<target>>;
    if constexpr (!mp::mp_empty<misshapen>::value) {
      using S = mp::mp_front<misshapen>;
      [[maybe_unused]] constexpr bool reported = detail::report_interceptor_shape<
          S, typename detail::interceptor_calls<S, target>::expected_call, target>();
      return {};
    } else {
      detail::check_interceptor_options(options);
      void* raw = nullptr;
      auto owner = holding::hold(std::forward<Interceptor>(interceptor), raw);
      // One id and one name for every slot; each slot's entry has its own calls, and a copy of
      // the record that names the engine code of the slot's kind. (The prototype is an
      // interceptor's record like any other - the first slot's - so it has what an
      // interceptor's record needs, the dispatch context's maker among it.)
      const detail::hook_entry prototype = detail::make_entry(
          raw, std::move(owner), std::move(options), FailurePolicy::propagate, nullptr, nullptr,
          nullptr, /*validates=*/false, detail::interceptor_code_for<mp::mp_front<slots>>());
      detail::all_or_nothing<HookSet> transaction(*this);
      try {
        auto insert = [&]<class S>(detail::hook_list_owner& list, auto& /*set*/) {
          using calls = detail::interceptor_calls<S, target>;
          detail::hook_entry entry = prototype;
          entry.sync = calls::sync();
          entry.async = calls::async();
          auto record = std::make_shared<detail::hook_record>(*prototype.record);
          record->suspended_driver = detail::suspended_driver_for<S, calls::suspends>();
          record->interceptor_code = detail::interceptor_code_for<S>();
          entry.record = std::move(record);
          detail::insert_interceptor(list, std::move(entry), slot_name<S>);
        };
        for_each_slot_list(insert);  // (a slot two nested members have: in both)
      } catch (...) {
        transaction.roll_back();
        throw;
      }
      return prototype.id();
    }
  }

  template <class Object>
  std::vector<HookId> add_hooks_with(Object&& object, HookOptions&& options) {
    namespace mp = boost::mp11;
    using holding = detail::hook_holding<std::remove_cvref_t<Object>>;
    using target = typename holding::target;
    using implemented =
        mp::mp_copy_if_q<slots, mp::mp_bind_back<detail::implements_slot_t, target>>;
    if constexpr (mp::mp_empty<implemented>::value) {
      [[maybe_unused]] constexpr bool reported =
          detail::report_implements_nothing<std::remove_cvref_t<Object>, HookSet>();
      return {};
    } else {
      using misshapen =
          mp::mp_remove_if_q<implemented, mp::mp_bind_back<detail::hook_shape_ok_t, target>>;
      using validating =
          mp::mp_copy_if_q<implemented, mp::mp_bind_back<detail::returns_validation_for, target>>;
      if constexpr (!mp::mp_empty<misshapen>::value) {
        using S = mp::mp_front<misshapen>;
        [[maybe_unused]] constexpr bool reported = detail::report_hook_shape<
            S, typename detail::hook_calls<detail::kind_of<S>>::expected_call, target, S>();
        return {};
      } else if constexpr (!mp::mp_empty<validating>::value) {
        [[maybe_unused]] constexpr bool reported =
            detail::report_unwrapped_validator<mp::mp_front<validating>>();
        return {};
      } else {
        void* raw = nullptr;
        auto owner = holding::hold(std::forward<Object>(object), raw);
        std::vector<HookId> ids;
        ids.reserve(mp::mp_size<implemented>::value);
        detail::all_or_nothing<HookSet> transaction(*this);
        try {
          auto insert = [&]<class S>(detail::hook_list_owner& list, auto& /*set*/) {
            if constexpr (detail::implements_slot<S, target>) {
              using calls = detail::entry_calls<detail::kind_of<S>, target,
                                                detail::entry_slot_t<target, S>, S>;
              auto entry = detail::make_entry(raw, owner, HookOptions(options),
                                              detail::descriptor_of<S>.on_failure, calls::sync(),
                                              calls::async(),
                                              detail::suspended_driver_for<S, calls::suspends>());
              const HookId id = entry.id();
              insert_hook<S, true>(list, std::move(entry));
              ids.push_back(id);
            }
          };
          for_each_slot_list(insert);  // (a slot two nested members have: in both)
          if constexpr (mp::mp_any_of<implemented, detail::is_historic_t>::value) {
            // Each historic slot's history to the object's registration for it, in slot order,
            // once every slot has it. (The same walk as insert's: ids are in its order.)
            std::size_t next = 0;
            auto replay =
                [&]<class S>(detail::hook_list_owner& list, [[maybe_unused]] auto& owner) {
              if constexpr (detail::implements_slot<S, target>) {
                const HookId id = ids[next++];
                if constexpr (detail::is_historic<S>) owner.template replay_to<S>(list, id);
              }
            };
            for_each_slot_list(replay);
          }
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
    return calls::template kind_for<detail::companion_role_of<Kind, C>, const C>() !=
           detail::call_kind::invalid;
  }

  // Where slot S lives: one of this set's own lists, or a nested set.
  template <class S>
  using location = boost::mp11::mp_second<boost::mp11::mp_map_find<locations, S>>;

  template <class S>
  detail::hook_list_owner& storage_for() {
    using where = location<S>;
    if constexpr (std::is_base_of_v<detail::own_list<where::value>, where>)
      return lists_[where::value];
    else return std::get<where::value>(nested_).template storage_for<S>();
  }
  template <class S>
  const detail::hook_list_owner& storage_for() const {
    return const_cast<HookSet*>(this)->storage_for<S>();
  }

  // Calls f(owner) for the hook list owner of every slot, nested sets included (each nested
  // member, however many share its type).
  template <class F>
  void for_each_list(F&& f) {
    for (detail::hook_list_owner& owner : lists_) f(owner);
    std::apply([&](auto&... nested) { (nested.for_each_list(f), ...); }, nested_);
  }

  // Calls f.template operator()<S>(owner, set) for the hook list owner of every place a slot S
  // of this set lives, and the set (this one or a nested one) whose own slot S is there, in the
  // order of `slots`: a slot that two nested members have, twice. What add_hooks and
  // intercept_all register in (storage_for<S> knows one place only).
  template <class F>
  void for_each_slot_list(F& f) {
    namespace mp = boost::mp11;
    mp::mp_for_each<mp::mp_transform<mp::mp_identity, members>>([&](auto member) {
      using M = typename decltype(member)::type;
      if constexpr (detail::is_nested_member<M>::value)
        std::get<mp::mp_find<nested_members, M>::value>(nested_).for_each_slot_list(f);
      else if constexpr (detail::is_own_slot<M>::value)
        f.template operator()<M>(lists_[mp::mp_find<own_slots, M>::value], *this);
    });
  }

  // Names and modes of the own slots, for loops over lists_.
  template <class... S>
  static constexpr std::array<detail::own_slot_info, sizeof...(S)> own_infos(
      boost::mp11::mp_list<S...>) {
    // (A keyed Singleton slot keeps a registration per selector: extend merges its lists.)
    return {{{slot_name<S>, detail::kind_of<S>::is_singleton && !detail::is_keyed<S>}...}};
  }
  static constexpr std::array<detail::own_slot_info, own_count> own_slot_infos =
      own_infos(own_slots{});

  // MayNameOrder: whether the entry may name others (before/after: registered with HookOptions).
  // `list`: the owner of S's hooks (storage_for<S>(), or one of the places add_hooks visits).
  template <class S, bool MayNameOrder, class KeySelector = std::nullptr_t>
  void insert_hook(detail::hook_list_owner& list, detail::hook_entry entry,
                   [[maybe_unused]] KeySelector key_selector = nullptr) {
    if constexpr (detail::is_keyed<S>)  // (without a selector: every key)
      return detail::insert_keyed_hook<key_type_t<S>, detail::kind_of<S>::is_singleton,
                                       detail::key_argument_t<S>>(
          list, std::move(entry), std::move(key_selector), slot_name<S>, observer_);
    else if constexpr (MayNameOrder)
      detail::insert_hook_in_named_order(list, std::move(entry), detail::kind_of<S>::is_singleton,
                                         slot_name<S>, observer_);
    else
      detail::insert_hook(list, std::move(entry), detail::kind_of<S>::is_singleton, slot_name<S>,
                          observer_);
  }

  void extend_members(const HookSet& other) {
    for (std::size_t i = 0; i < own_count; ++i)
      detail::extend_list(lists_[i], other.lists_[i], own_slot_infos[i].singleton,
                          own_slot_infos[i].name, observer_);
    boost::mp11::mp_for_each<boost::mp11::mp_iota<boost::mp11::mp_size<nested_sets>>>(
        [&](auto index) {
      constexpr std::size_t j = decltype(index)::value;
      std::get<j>(nested_).extend_members(std::get<j>(other.nested_));
    });
  }

  std::array<detail::hook_list_owner, own_count> lists_;
  boost::mp11::mp_rename<nested_sets, std::tuple> nested_;
  Observer* observer_ = nullptr;
  [[no_unique_address]] detail::set_history<historic_own_slots> history_;
};

}  // namespace hookset
