#pragma once
// Keyed slots: one slot whose hooks are registered per key (a tool name, an event type, ...).
//
//   struct CheckTool : hookset::Slot<ToolResult(ToolCall call, std::string_view tool),
//                                    hookset::Pipeline, hookset::Keyed> {
//     static ToolResult default_impl(const ToolCall&, std::string_view tool);
//   };
//   set.add<CheckTool>(hookset::key("fs_read"), hook);    // this key only
//   set.add<CheckTool>(hookset::prefix("fs_"), hook);     // keys starting with "fs_"
//   set.add<CheckTool>(hookset::glob("fs_*"), hook);      // '*': any run, '?': one character
//   set.add<CheckTool>(hookset::matching(pred), hook);    // keys for which pred(key) is true
//   set.add<CheckTool>(hook);                             // every key (also: hookset::any_key)
//   co_await set.call<CheckTool>(call, "fs_read");        // the key is the last argument
//
// The key is the slot's last parameter; hooks and the default receive it like any other. A
// dispatch runs the hooks registered for its key, in the slot's order, with the slot's mode and
// companions (docs/semantics.md, "Keyed slots").

#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

namespace hookset {

// Slot option: the slot's last parameter is a key that selects which hooks run.
struct Keyed {};

namespace detail {

// Keys that are strings in any spelling are stored as std::string and looked up as
// std::string_view, whatever the caller passes: no allocation per dispatch.
template <class P>
inline constexpr bool is_string_key =
    std::is_same_v<std::remove_cvref_t<P>, std::string> ||
    std::is_same_v<std::remove_cvref_t<P>, std::string_view> ||
    std::is_same_v<std::decay_t<P>, const char*> || std::is_same_v<std::decay_t<P>, char*>;

template <class Params>
struct key_storage {
  using type = void;  // a Keyed slot without parameters is reported (diagnostics.hpp)
};
template <class P, class... Ps>
struct key_storage<boost::mp11::mp_list<P, Ps...>> {
  using last = boost::mp11::mp_back<boost::mp11::mp_list<P, Ps...>>;
  using type = std::conditional_t<is_string_key<last>, std::string, std::decay_t<last>>;
};

template <class S>
inline constexpr bool is_keyed = boost::mp11::mp_contains<typename S::option_types, Keyed>::value;

}  // namespace detail

// How keyed slot S stores its keys: std::string when the key parameter is a string
// (std::string_view, std::string, const std::string&, const char*), else the decayed parameter
// type (which needs std::hash and ==).
template <class S>
using key_type_t = typename detail::key_storage<typename S::parameter_types>::type;

// ---- key selectors: which keys a registration is for ------------------------------------------

// Exactly one key.
template <class K>
struct ExactKey {
  K value;
};
// Every key that starts with `text` (string keys).
struct KeyPrefix {
  std::string text;
};
// Every key that matches `pattern`, where '*' matches any run of characters and '?' any one
// character (string keys).
struct KeyGlob {
  std::string pattern;
};
// Every key for which `predicate(key)` is true; called at registration for each exact key of
// the slot and at dispatch for a key without an exact registration.
template <class Predicate>
struct KeyMatching {
  Predicate predicate;
};
// Every key: what a registration without a selector means.
struct AnyKey {
  explicit constexpr AnyKey() noexcept = default;
};
inline constexpr AnyKey any_key{};

template <class K>
auto key(K&& value) {
  if constexpr (detail::is_string_key<K> || std::is_convertible_v<K, std::string_view>)
    return ExactKey<std::string>{std::string(std::string_view(value))};
  else return ExactKey<std::decay_t<K>>{std::forward<K>(value)};
}
inline KeyPrefix prefix(std::string_view text) { return KeyPrefix{std::string(text)}; }
inline KeyGlob glob(std::string_view pattern) { return KeyGlob{std::string(pattern)}; }
template <class Predicate>
KeyMatching<std::decay_t<Predicate>> matching(Predicate&& predicate) {
  return {std::forward<Predicate>(predicate)};
}

namespace detail {
template <class T>
struct is_key_selector_t : std::false_type {};
template <class K>
struct is_key_selector_t<ExactKey<K>> : std::true_type {};
template <>
struct is_key_selector_t<KeyPrefix> : std::true_type {};
template <>
struct is_key_selector_t<KeyGlob> : std::true_type {};
template <class P>
struct is_key_selector_t<KeyMatching<P>> : std::true_type {};
template <>
struct is_key_selector_t<AnyKey> : std::true_type {};
template <class T>
inline constexpr bool is_key_selector = is_key_selector_t<std::remove_cvref_t<T>>::value;
}  // namespace detail

}  // namespace hookset
