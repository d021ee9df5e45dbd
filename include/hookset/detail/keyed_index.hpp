#pragma once
// Keyed slots' storage: what a registration's key selector means at run time, and the per-key
// hook lists a dispatch looks its key up in.
//
// Why this shape: all registrations of a keyed slot stay in the slot's one hook_list, in the
// slot's order (priority, registration, named order), so that count, remove, holds, clear,
// extend and named ordering work exactly as for any slot; each registration's record carries
// its selector. Every change of that list derives, once, an immutable index from it (the list's
// `keyed` companion, replaced copy-on-write with the list): for each key with an exact
// registration, the precomputed list of the hooks that key runs (its exact registrations, the
// matchers that match it and the any-key registrations, merged in the slot's order); and the
// list of the any-key registrations alone. An exact-key dispatch is then one hash lookup and
// an ordinary dispatch over that list; only a key without an exact registration, in a slot with
// matchers, has its list filtered at dispatch time.

#include <concepts>
#include <cstddef>
#if !defined(__GNUC__) && !defined(__clang__)
#include <cstring>  // (std::memcpy; GCC and Clang use their builtin, without the header)
#endif
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/coro/config.hpp>
#include <hookset/coro/move_function.hpp>
#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/keyed.hpp>

namespace hookset::detail {

// How a key is looked up and matched: string keys as std::string_view (no allocation).
template <class K>
struct key_lookup {
  using type = const K&;
  using hash = std::hash<K>;  // (std::hash<K> of a key type with one: it comes with K's header)
  static bool same(const K& stored, const K& key) { return stored == key; }
};
// String keys, inline, eight bytes a step (keys are names: short): a dispatch's one hash and one
// comparison cost a few loads and multiplications, not calls into the library's byte-wise hash
// and memcmp (those were ~60 of Clang 14's instructions per keyed dispatch).
struct string_key {
  // One unaligned load. (Assembling a word byte by byte cost GCC 12 about 56 instructions per
  // keyed dispatch: it does not merge the loads. The builtin needs no <cstring>.)
  template <class Word>
  static Word load(const char* at) noexcept {
    Word word;
#if defined(__GNUC__) || defined(__clang__)
    __builtin_memcpy(&word, at, sizeof word);
#else
    std::memcpy(&word, at, sizeof word);
#endif
    return word;
  }
  // A key of fewer than 8 bytes as one word: two overlapping 4-byte loads, or for up to 3 bytes
  // the first, middle and last. Every byte is read, so for keys of one size equal words mean
  // equal keys.
  static std::uint64_t short_word(const char* key, std::size_t size) noexcept {
    if (size >= 4)
      return load<std::uint32_t>(key) |
             static_cast<std::uint64_t>(load<std::uint32_t>(key + size - 4)) << 32;
    if (size == 0) return 0;
    return static_cast<std::uint64_t>(static_cast<unsigned char>(key[0])) |
           static_cast<std::uint64_t>(static_cast<unsigned char>(key[size / 2])) << 8 |
           static_cast<std::uint64_t>(static_cast<unsigned char>(key[size - 1])) << 16;
  }

  // The bytes past a long key's whole words (size % 8 of them) as one number: the last whole
  // word shifted, a load that stays inside the key; a short key is its short_word. (On a
  // big-endian machine the shift keeps other bytes: still a fixed function of the key, which
  // is all a hash needs.)
  static std::uint64_t tail(const char* key, std::size_t size) noexcept {
    if (size < 8) return short_word(key, size);
    const std::size_t left = size % 8;
    return left == 0 ? 0 : load<std::uint64_t>(key + size - 8) >> (8 * (8 - left));
  }

  struct hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept {
      std::uint64_t hash = 0x9e3779b97f4a7c15ull ^ key.size();
      for (std::size_t at = 0; key.size() - at >= 8; at += 8) {
        hash = (hash ^ load<std::uint64_t>(key.data() + at)) * 0xbf58476d1ce4e5b9ull;
        hash ^= hash >> 31;
      }
      hash = (hash ^ tail(key.data(), key.size())) * 0x94d049bb133111ebull;
      return static_cast<std::size_t>(hash ^ (hash >> 29));
    }
  };

  // Equal sizes, then whole words, the last one ending at the key's end (overlapping the one
  // before it): no byte-wise tail.
  static bool same(std::string_view stored, std::string_view key) noexcept {
    const std::size_t size = key.size();
    if (stored.size() != size) return false;
    const char* a = stored.data();
    const char* b = key.data();
    if (size < 8) return short_word(a, size) == short_word(b, size);
    for (std::size_t at = 0; size - at > 8; at += 8)
      if (load<std::uint64_t>(a + at) != load<std::uint64_t>(b + at)) return false;
    return load<std::uint64_t>(a + size - 8) == load<std::uint64_t>(b + size - 8);
  }
};
template <>
struct key_lookup<std::string> {
  using type = std::string_view;
  using hash = string_key::hash;
  static bool same(std::string_view stored, std::string_view key) noexcept {
    return string_key::same(stored, key);
  }
};
template <class K>
using key_lookup_t = typename key_lookup<K>::type;

// '*' matches any run of characters (also none), '?' any one character. Linear backtracking to
// the last '*': no recursion, no allocation.
inline bool glob_matches(std::string_view pattern, std::string_view text) noexcept {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star = std::string_view::npos;
  std::size_t resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

enum class key_match : unsigned char { exact, prefix, glob, predicate };

// A registration's selector, type-erased in its hook_record (an any-key registration has none).
template <class K>
struct key_selector {
  key_match how = key_match::exact;
  std::optional<K> key;  // exact
  std::string pattern;   // prefix, glob
  move_function<bool(key_lookup_t<K>)> predicate;

  bool matches(key_lookup_t<K> candidate) const {
    switch (how) {
      case key_match::exact:
        return candidate == *key;
      case key_match::prefix:
        if constexpr (std::is_same_v<K, std::string>) return candidate.starts_with(pattern);
        else return false;
      case key_match::glob:
        if constexpr (std::is_same_v<K, std::string>) return glob_matches(pattern, candidate);
        else return false;
      case key_match::predicate:
        return predicate(candidate);
    }
    return false;
  }
  // Whether two registrations select the same keys, as far as can be told (a Singleton slot's
  // new registration replaces one with the same selector). Predicates are never the same.
  static bool same(const key_selector* a, const key_selector* b) {
    if (!a || !b) return !a && !b;
    if (a->how != b->how) return false;
    switch (a->how) {
      case key_match::exact:
        return *a->key == *b->key;
      case key_match::prefix:
      case key_match::glob:
        return a->pattern == b->pattern;
      case key_match::predicate:
        return false;
    }
    return false;
  }
};

template <class K>
const key_selector<K>* selector_of(const hook_entry& entry) noexcept {
  return static_cast<const key_selector<K>*>(entry.record->key_selector.get());
}

// Whether `Selector` may select keys of keyed slot S; reports the first problem.
template <class S, class Selector>
constexpr bool key_selector_fits() {
  using K = key_type_t<S>;
  using Sel = std::remove_cvref_t<Selector>;
  if constexpr (std::is_same_v<Sel, KeyPrefix> || std::is_same_v<Sel, KeyGlob>) {
    if constexpr (!std::is_same_v<K, std::string>)
      return report_pattern_on_non_string_key<S, Sel>();
    else return true;
  } else if constexpr (is_key_selector_t<Sel>::value && !std::is_same_v<Sel, AnyKey> &&
                       requires { &Sel::predicate; }) {
    using P = decltype(Sel::predicate);
    if constexpr (!std::is_invocable_r_v<bool, const P&, const K&>)
      return report_matcher_shape<S, P, K>();
    else return true;
  } else if constexpr (requires { &Sel::value; }) {
    using Given = decltype(Sel::value);
    if constexpr (!std::is_constructible_v<K, const Given&>) return report_key_type<S, K, Given>();
    else return true;
  } else {
    return true;
  }
}

// The run-time selector of a registration (null: every key).
template <class K, class Selector>
std::shared_ptr<const key_selector<K>> make_key_selector(Selector&& given) {
  using Sel = std::remove_cvref_t<Selector>;
  if constexpr (std::is_same_v<Sel, AnyKey>) {
    return nullptr;
  } else {
    auto selector = std::make_shared<key_selector<K>>();
    if constexpr (std::is_same_v<Sel, KeyPrefix>) {
      selector->how = key_match::prefix;
      selector->pattern = std::forward<Selector>(given).text;
    } else if constexpr (std::is_same_v<Sel, KeyGlob>) {
      selector->how = key_match::glob;
      selector->pattern = std::forward<Selector>(given).pattern;
    } else if constexpr (requires { &Sel::predicate; }) {
      using P = decltype(Sel::predicate);
      selector->how = key_match::predicate;
      if constexpr (std::is_same_v<K, std::string> &&
                    !std::is_invocable_r_v<bool, const P&, std::string_view>)
        // (Only a predicate that insists on a std::string makes its matching allocate.)
        selector->predicate =
            [predicate = std::forward<Selector>(given).predicate](std::string_view candidate) {
          return static_cast<bool>(predicate(std::string(candidate)));
        };
      else
        selector->predicate =
            [predicate = std::forward<Selector>(given).predicate](key_lookup_t<K> candidate) {
          return static_cast<bool>(predicate(candidate));
        };
    } else {
      selector->how = key_match::exact;
      selector->key.emplace(std::forward<Selector>(given).value);
    }
    return selector;
  }
}

// The key of a dispatch's arguments, as it is looked up.
template <class K, class Arg>
decltype(auto) lookup_key(const Arg& argument) {
  if constexpr (std::is_same_v<K, std::string>) return std::string_view(argument);
  else if constexpr (std::is_same_v<std::remove_cvref_t<Arg>, K>) return (argument);
  else return K(argument);
}

// The key argument of keyed slot S as a dispatch binds it (what list_for_key reads).
template <class S>
using key_argument_t =
    std::remove_reference_t<bound_t<boost::mp11::mp_back<typename S::parameter_types>>>;

// The keys with an exact registration and their lists: immutable once built, so an
// open-addressing table (linear probing, at most half full, each slot's hash kept) over a dense
// array. A lookup hashes once and compares keys only on equal hashes - a node-based map of
// string keys would hash the keys of its chain again on a miss. (V: what a key maps to - its list,
// or, while an index is built, the positions of its registrations.)
template <class K, class V = hook_list_owner>
class keyed_table {
 public:
  struct entry {
    std::size_t hash;
    K key;
    V value;
  };
  using hasher = typename key_lookup<K>::hash;

  void reserve(std::size_t keys) {
    entries_.reserve(keys);
    std::size_t size = 8;
    unsigned bits = 3;
    for (; size < 2 * keys; size *= 2) ++bits;
    slots_.assign(size, 0);
    mask_ = size - 1;
    shift_ = 64 - bits;
  }
  // Adds a key not in the table yet, within what reserve() made room for.
  void insert(K key, V value) {
    const std::size_t hash = hasher{}(key);
    std::size_t at = home(hash);
    while (slots_[at] != 0) at = (at + 1) & mask_;
    entries_.push_back({hash, std::move(key), std::move(value)});
    slots_[at] = entries_.size();
  }
  // The value of `key`, added (value-initialised) if it is not in the table yet, within what
  // reserve() made room for. Keys keep the order they were first added in.
  V& find_or_insert(const K& key) {
    const std::size_t hash = hasher{}(key);
    std::size_t at = home(hash);
    for (; slots_[at] != 0; at = (at + 1) & mask_) {
      entry& candidate = entries_[slots_[at] - 1];
      if (candidate.hash == hash && key_lookup<K>::same(candidate.key, key)) return candidate.value;
    }
    entries_.push_back({hash, key, V{}});
    slots_[at] = entries_.size();
    return entries_.back().value;
  }
  // (Inlined into the dispatch's key lookup, its one hot caller: GCC 12 stopped inlining it
  // when the key comparison became inline code instead of a call of memcmp, +11 instructions.)
  HOOKSET_ALWAYS_INLINE const V* find(key_lookup_t<K> key) const {
    if (entries_.empty()) return nullptr;
    const std::size_t hash = hasher{}(key);
    for (std::size_t at = home(hash);; at = (at + 1) & mask_) {
      const std::size_t slot = slots_[at];
      if (slot == 0) return nullptr;
      const entry& candidate = entries_[slot - 1];
      if (candidate.hash == hash && key_lookup<K>::same(candidate.key, key))
        return &candidate.value;
    }
  }
  const std::vector<entry>& entries() const noexcept { return entries_; }

 private:
  // The slot a hash starts probing at: its top bits after a multiplication (whatever the hash
  // function's weak bits, keys spread).
  std::size_t home(std::size_t hash) const noexcept {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(hash) * 0x9e3779b97f4a7c15ull) >>
                                    shift_);
  }

  std::vector<entry> entries_;
  std::vector<std::size_t> slots_;  // 1 + the entry's index; 0: free
  std::size_t mask_ = 0;
  unsigned shift_ = 61;
};

// Sorts `values` ascending (unique keys: no stability needed), without <algorithm>.
template <class T>
void heap_sort(std::vector<T>& values) {
  const std::size_t n = values.size();
  auto sift_down = [&](std::size_t root, std::size_t end) {
    for (;;) {
      std::size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && values[child] < values[child + 1]) ++child;
      if (!(values[root] < values[child])) return;
      using std::swap;
      swap(values[root], values[child]);
      root = child;
    }
  };
  for (std::size_t i = n / 2; i-- > 0;) sift_down(i, n);
  for (std::size_t end = n; end > 1; --end) {
    using std::swap;
    swap(values[0], values[end - 1]);
    sift_down(0, end - 1);
  }
}

template <class K>
struct keyed_index {
  using lookup = key_lookup<K>;
  keyed_table<K> exact;
  hook_list_owner any_key;          // the any-key registrations alone
  std::vector<hook_entry> general;  // matcher and any-key registrations, in the slot's order
  bool has_matchers = false;
  bool singleton = false;
  configured_companions companions;      // the slot's: every key's list has them
  std::vector<hook_entry> interceptors;  // the slot's: they wrap every key's dispatch

  HOOKSET_ALWAYS_INLINE const hook_list_owner* find(key_lookup_t<K> key) const {
    return exact.find(key);
  }

  // A Singleton slot runs, for a key, the last registration of the slot's order that selects it.
  void keep_last_if_singleton(std::vector<hook_entry>& hooks) const {
    if (singleton && hooks.size() > 1) hooks.erase(hooks.begin(), hooks.end() - 1);
  }

  // An owner of a snapshot with `hooks` and the slot's companions; `before`'s, when it has
  // exactly that (an edit elsewhere in the slot leaves this key's list shared, not copied).
  hook_list_owner owner_of(std::vector<hook_entry> hooks, const hook_list_owner* before) const {
    if (before) {
      const hook_list* old = before->current();
      auto same = [](const hook_entry& a, const hook_entry& b) { return a.record == b.record; };
      auto all_same = [&](const std::vector<hook_entry>& a, const std::vector<hook_entry>& b) {
        if (a.size() != b.size()) return false;
        for (std::size_t i = 0; i != a.size(); ++i)
          if (!same(a[i], b[i])) return false;
        return true;
      };
      if (old && static_cast<const configured_companions&>(*old) == companions &&
          all_same(hooks, old->hooks) && all_same(interceptors, old->interceptors))
        return *before;
    }
    return hook_list_owner(new_list(std::move(hooks)));
  }

  // A list of `hooks` with the slot's companions and interceptors, made from nothing: no one
  // else has seen it, so it skips the copy-on-write steps of an edit (hook_list_owner::modify:
  // a copy of the current list, the old one retired or parked), which filtered_list, on a
  // dispatch's path, would pay for nothing.
  std::unique_ptr<hook_list> new_list(std::vector<hook_entry> hooks) const {
    auto list = std::make_unique<hook_list>();
    list->hooks = std::move(hooks);
    static_cast<configured_companions&>(*list) = companions;
    list->interceptors = interceptors;
    list->summarize();
    return list;
  }

  // The index of `all` (a keyed slot's list, just edited): what hook_list::index_keys points to.
  template <bool Singleton>
  static std::shared_ptr<const void> build(const hook_list& all) {
    const auto* previous = static_cast<const keyed_index*>(all.keyed.get());
    auto index = std::make_shared<keyed_index>();
    index->singleton = Singleton;
    index->companions = all;
    index->interceptors = all.interceptors;

    // Where each key's exact registrations, and the others, are in the slot's order.
    // (Room for every exact registration: an upper bound on the keys.)
    keyed_table<K, std::vector<std::size_t>> exact_positions;
    std::size_t exact_registrations = 0;
    for (const hook_entry& entry : all.hooks)
      if (const key_selector<K>* selector = selector_of<K>(entry))
        exact_registrations += selector->how == key_match::exact;
    exact_positions.reserve(exact_registrations);
    std::vector<std::size_t> general_positions;
    std::vector<hook_entry> any;
    for (std::size_t i = 0; i != all.hooks.size(); ++i) {
      const hook_entry& entry = all.hooks[i];
      const key_selector<K>* selector = selector_of<K>(entry);
      if (selector && selector->how == key_match::exact) {
        exact_positions.find_or_insert(*selector->key).push_back(i);
        continue;
      }
      general_positions.push_back(i);
      index->general.push_back(entry);
      if (selector) index->has_matchers = true;
      else any.push_back(entry);
    }
    index->keep_last_if_singleton(any);
    index->any_key = index->owner_of(std::move(any), previous ? &previous->any_key : nullptr);

    index->exact.reserve(exact_positions.entries().size());
    for (const auto& group : exact_positions.entries()) {
      const K& key = group.key;
      const std::vector<std::size_t>& mine = group.value;
      std::vector<hook_entry> hooks;
      hooks.reserve(mine.size() + general_positions.size());
      auto next_mine = mine.begin();
      for (std::size_t position : general_positions) {
        const key_selector<K>* selector = selector_of<K>(all.hooks[position]);
        if (selector && !selector->matches(key)) continue;
        for (; next_mine != mine.end() && *next_mine < position; ++next_mine)
          hooks.push_back(all.hooks[*next_mine]);
        hooks.push_back(all.hooks[position]);
      }
      for (; next_mine != mine.end(); ++next_mine) hooks.push_back(all.hooks[*next_mine]);
      index->keep_last_if_singleton(hooks);
      index->exact.insert(
          key, index->owner_of(std::move(hooks), previous ? previous->find(key) : nullptr));
    }
    return index;
  }

  // The hooks a key without an exact registration runs, when the slot has matchers: a list the
  // caller holds the one reference to (`owned`), or null.
  HOOKSET_NOINLINE const hook_list* filtered_list(key_lookup_t<K> key, bool& owned) const {
    std::vector<hook_entry> hooks;
    hooks.reserve(general.size());  // (one allocation, no entry moved or destroyed as it grows)
    for (const hook_entry& entry : general) {
      const key_selector<K>* selector = selector_of<K>(entry);
      if (!selector || selector->matches(key)) hooks.push_back(entry);
    }
    keep_last_if_singleton(hooks);
    const hook_list* list = new_list(std::move(hooks)).release();  // (its one reference)
    owned = true;
    return list;
  }

  // What hook_list::list_for_key points to: the list a dispatch runs for the key it was given
  // (KeyArg: the key argument as the dispatch binds it).
  template <class KeyArg>
  static const hook_list* hooks_for_key(const hook_list& all, const void* key_argument,
                                        bool& owned) {
    const auto* index = static_cast<const keyed_index*>(all.keyed.get());
    if (!index) return &all;  // (no registration: the slot's companions and interceptors alone)
    auto&& key = lookup_key<K>(*static_cast<const KeyArg*>(key_argument));
    if (const hook_list_owner* mine = index->find(key)) return mine->current();
    if (!index->has_matchers) return index->any_key.current();
    return index->filtered_list(key, owned);
  }

  // Whether a dispatch for `key` would run a hook.
  bool runs_hooks_for(key_lookup_t<K> key) const {
    if (const hook_list_owner* mine = find(key)) return mine->count() != 0;
    for (const hook_entry& entry : general) {
      const key_selector<K>* selector = selector_of<K>(entry);
      if (!selector || selector->matches(key)) return true;
    }
    return false;
  }
};

template <class K>
const keyed_index<K>* index_of(const hook_list_owner& owner) noexcept {
  const hook_list* all = owner.current();
  return all ? static_cast<const keyed_index<K>*>(all->keyed.get()) : nullptr;
}

// The keys with an exact registration, sorted when they can be.
template <class K>
std::vector<K> registered_keys(const hook_list_owner& owner) {
  std::vector<K> keys;
  if (const keyed_index<K>* index = index_of<K>(owner)) {
    keys.reserve(index->exact.entries().size());
    for (const auto& entry : index->exact.entries()) keys.push_back(entry.key);
    if constexpr (std::totally_ordered<K>) heap_sort(keys);
  }
  return keys;
}

// Registers `entry` in keyed slot list `owner` for the keys `selector` names (null: every key).
// A Singleton slot's registration replaces one with the same selector.
template <class K, bool Singleton, class KeyArg>
void insert_keyed_hook(hook_list_owner& owner, hook_entry entry,
                       std::shared_ptr<const key_selector<K>> selector, std::string_view slot,
                       Observer* observer) {
  // (The record is the new registration's own: nothing else sees it yet.)
  std::const_pointer_cast<hook_record>(entry.record)->key_selector = std::move(selector);
  bool replaced = false;
  // The first keyed registration of a list (say one made for configured companions) must not
  // be applied in place: the index is derived only on a copy (hook_list_owner::modify), and its
  // derivation may throw. A reference held across the edit rules the in-place path out.
  struct pin {
    const hook_list* list;
    ~pin() {
      if (list) hook_list::release_ref(list);
    }
  } pinned{owner.current()};
  if (pinned.list) pinned.list->acquire();
  owner.modify([&](hook_list& list) {
    const hook_record* added = entry.record.get();
    std::vector<hook_entry> base = list.base_order();
    if constexpr (Singleton) {
      const key_selector<K>* mine = selector_of<K>(entry);
      replaced = std::erase_if(base, [&](const hook_entry& other) {
                   return key_selector<K>::same(selector_of<K>(other), mine);
                 }) != 0;
    }
    base.insert(insertion_point(base, entry), std::move(entry));
    list.index_keys = &keyed_index<K>::template build<Singleton>;
    list.list_for_key = &keyed_index<K>::template hooks_for_key<KeyArg>;
    list.arrange(std::move(base), slot, added);
  });
  if (replaced)
    warn(slot, "singleton hook replaced: a keyed slot keeps only the newest hook per selector",
         observer);
}

// A keyed slot's dispatch is an ordinary one: at its start, the engine looks up the hooks of
// its key (hook_list::list_for_key, dispatch::await_ready).

}  // namespace hookset::detail
