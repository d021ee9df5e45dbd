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
// GCC: "... [with T = ns::Name; std::string_view = ...]", Clang: "... [T = ns::Name]".
template <class T>
constexpr std::string_view qualified_type_name() noexcept {
  std::string_view text = pretty_function_of<T>();
  const std::size_t start = text.find("T = ") + 4;
  std::size_t end = start;
  int depth = 0;
  for (; end < text.size(); ++end) {
    const char c = text[end];
    if (c == '<' || c == '(' || c == '[') ++depth;
    else if (c == '>' || c == ')') --depth;
    else if (c == ']') {
      if (depth == 0) break;
      --depth;
    } else if (c == ';' && depth == 0) break;
  }
  return text.substr(start, end - start);
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
