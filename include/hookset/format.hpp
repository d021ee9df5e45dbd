#pragma once
// Values in observer events and traces: how hookset renders a value as text. Nothing is rendered
// unless asked for - by an observer (Observer::wants_values) or by the slot
// (`static constexpr bool trace_values = true;`) - and a dispatch nobody observes renders
// nothing either way.
//
// Give your type a rendering with a function found by argument-dependent lookup:
//
//   namespace app {
//   struct ToolCall { std::string tool, args; };
//   std::string hookset_format(const ToolCall& call) { return call.tool + " " + call.args; }
//   }
//
// or, for a type whose namespace is not yours, specialise hookset::value_format:
//
//   template <> struct hookset::value_format<foreign::Id> {
//     static std::string format(const foreign::Id& id) { return id.str(); }
//   };
//
// Built in: bool, arithmetic types, std::string, std::string_view, and std::optional of a
// renderable type ("nullopt" when empty).

#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace hookset {

namespace detail::format_lookup {
// Unqualified lookup finds this (never callable), so a call below finds only what ADL finds.
void hookset_format() = delete;

template <class T>
concept has_adl_format = requires(const T& value) {
  { hookset_format(value) } -> std::convertible_to<std::string>;
};

template <class T>
std::string adl_format(const T& value) {
  return hookset_format(value);
}
}  // namespace detail::format_lookup

// How a T is rendered: through `hookset_format(const T&)` found by ADL, unless specialised.
template <class T>
struct value_format {
  static std::string format(const T& value) requires detail::format_lookup::has_adl_format<T> {
    return detail::format_lookup::adl_format(value);
  }
};

template <class T>
requires std::is_arithmetic_v<T>
struct value_format<T> {
  static std::string format(const T& value) {
    if constexpr (std::is_same_v<T, bool>) return value ? "true" : "false";
    else if constexpr (std::is_same_v<T, char>) return std::string(1, value);
    else return std::to_string(value);
  }
};
template <>
struct value_format<std::string> {
  static std::string format(const std::string& value) { return value; }
};
template <>
struct value_format<std::string_view> {
  static std::string format(std::string_view value) { return std::string(value); }
};

// Whether hookset can render a T.
template <class T>
concept formattable = requires(const T& value) {
  { value_format<T>::format(value) } -> std::convertible_to<std::string>;
};

template <formattable T>
struct value_format<std::optional<T>> {
  static std::string format(const std::optional<T>& value) {
    return value ? value_format<T>::format(*value) : std::string("nullopt");
  }
};

namespace detail {
// A value's rendering, or nothing for a type without one (an observer asked for the values of
// every dispatch it sees; a slot that asks is checked at compile time instead).
template <class T>
std::string render_value(const T& value) {
  if constexpr (formattable<T>) return value_format<T>::format(value);
  else return {};
}
}  // namespace detail

}  // namespace hookset
