#pragma once
// Flow and the built-in chain companions.
//
// A chain companion looks at each output of a slot's dispatch and says whether the dispatch
// goes on (Continue) or stops with that output (Break).

#include <concepts>
#include <type_traits>

namespace hookset {

enum class Flow { Continue, Break };

namespace detail {
template <class R>
concept has_has_value = requires(const R& r) {
  { r.has_value() } -> std::convertible_to<bool>;
};
}  // namespace detail

// Breaks on the first failed output: std::expected, tl::expected, boost::outcome results,
// std::optional, or any type with has_value(). Typical for validation gates.
struct ShortCircuit {
  template <detail::has_has_value R>
  constexpr Flow operator()(const R& output) const noexcept(noexcept(output.has_value())) {
    return output.has_value() ? Flow::Continue : Flow::Break;
  }
};

// Breaks on the first output that has a value: "the first hook that knows the answer wins".
struct FirstSuccess {
  template <detail::has_has_value R>
  constexpr Flow operator()(const R& output) const noexcept(noexcept(output.has_value())) {
    return output.has_value() ? Flow::Break : Flow::Continue;
  }
};

}  // namespace hookset
