#pragma once
// Compile-time type names, used for slot_name<S> and for diagnostics naming hook types.

#include <cstddef>
#include <string_view>

namespace hookset::detail {

template <class T>
constexpr std::string_view pretty_function_of() noexcept {
#if defined(__clang__) || defined(__GNUC__)
  return __PRETTY_FUNCTION__;
#elif defined(_MSC_VER)
  return __FUNCSIG__;
#else
#error "hookset: unsupported compiler for type names"
#endif
}

// The qualified name of T as the compiler spells it, cut out of pretty_function_of<T>().
// GCC: "... [with T = ns::Name; std::string_view = ...]", Clang: "... [T = ns::Name]". What
// comes before and after the name is the same for every T: measured once, on `int`, so that a
// name costs one substr to evaluate, not a scan of the text (a slot's name is evaluated for
// every slot of a program).
struct type_name_frame {
  std::size_t prefix;
  std::size_t suffix;
};
inline constexpr type_name_frame type_name_frame_of = [] {
  constexpr std::string_view probe = pretty_function_of<int>();
  constexpr std::size_t prefix = probe.find("T = int") + 4;
  return type_name_frame{prefix, probe.size() - prefix - 3};
}();

template <class T>
constexpr std::string_view qualified_type_name() noexcept {
  constexpr std::string_view text = pretty_function_of<T>();
  return text.substr(type_name_frame_of.prefix,
                     text.size() - type_name_frame_of.prefix - type_name_frame_of.suffix);
}

// Drops every enclosing scope ("ns::", "(anonymous namespace)::", "f()::") but keeps
// template arguments intact: "app::Tag<x::Y>" -> "Tag<x::Y>".
constexpr std::string_view unqualified(std::string_view name) noexcept {
  std::size_t cut = 0;
  int depth = 0;
  for (std::size_t i = 0; i + 1 < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(') ++depth;
    else if (c == '>' || c == ')') --depth;
    else if (c == ':' && name[i + 1] == ':' && depth == 0) cut = i + 2;
  }
  return name.substr(cut);
}

template <class T>
inline constexpr std::string_view type_name = qualified_type_name<T>();

}  // namespace hookset::detail
