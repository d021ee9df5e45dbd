#pragma once
// Slot declarations: the modes, the companion options, slot_name, and the rules a slot's
// options must follow (checked where the slot type is defined, so the diagnostic points at it).

#include <string_view>
#include <concepts>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/detail/type_name.hpp>

namespace hookset {

// Modes: how the default and the hooks combine.
struct Always {};     // the default runs first, then every hook
struct Fallback {};   // the default runs only when no hook does the job
struct Singleton {};  // at most one hook, which replaces the default

// Companions, each naming a policy type with a call operator.
template <class C> struct Chain     { using type = C; };  // Flow c(const R&): continue or stop
template <class A> struct Aggregate { using type = A; };  // R a(std::vector<R>) (or T with Output<T>)
template <class F> struct Finalize  { using type = F; };  // R f(R) (or T with Output<T>)
template <class T> struct Output    { using type = T; };  // the dispatch's result type becomes T

namespace detail {

namespace mp = boost::mp11;

struct slot_base {};

template <class O> struct is_mode : std::bool_constant<std::is_same_v<O, Always> ||
                                                       std::is_same_v<O, Fallback> ||
                                                       std::is_same_v<O, Singleton>> {};
template <class O> struct is_chain : std::false_type {};
template <class C> struct is_chain<Chain<C>> : std::true_type {};
template <class O> struct is_aggregate : std::false_type {};
template <class A> struct is_aggregate<Aggregate<A>> : std::true_type {};
template <class O> struct is_finalize : std::false_type {};
template <class F> struct is_finalize<Finalize<F>> : std::true_type {};
template <class O> struct is_output : std::false_type {};
template <class T> struct is_output<Output<T>> : std::true_type {};

template <class O>
using is_companion = mp::mp_bool<is_chain<O>::value || is_aggregate<O>::value ||
                                 is_finalize<O>::value || is_output<O>::value>;
template <class O>
using is_known_option = mp::mp_bool<is_mode<O>::value || is_companion<O>::value>;

// The `type` of the one option matching P, or void when the slot has none.
template <class Options, template <class> class P>
using option_type = typename mp::mp_eval_if_c<mp::mp_count_if<Options, P>::value == 0,
                                              mp::mp_identity<void>, mp::mp_front,
                                              mp::mp_copy_if<Options, P>>::type;

template <class Options, template <class> class P>
inline constexpr std::size_t option_count = mp::mp_count_if<Options, P>::value;

}  // namespace detail

template <class Signature, class... Options>
struct Slot {
  static_assert(std::is_function_v<Signature>,
                "hookset::Slot<Signature, Mode, ...>: Signature must be a function type R(Args...)");
};

template <class R, class... Args, class... Options>
struct Slot<R(Args...), Options...> : detail::slot_base {
  using result_type = R;
  using parameter_types = boost::mp11::mp_list<Args...>;
  using option_types = boost::mp11::mp_list<Options...>;

};

namespace detail {

// The rules a slot's options follow. Checked where a HookSet holding the slot is used (its
// template argument names the slot in the compiler's context lines); the base Slot<> itself
// cannot name the deriving slot.
template <class Options>
struct option_rules {
  template <template <class> class P>
  static constexpr std::size_t count = option_count<Options, P>;
  static constexpr bool has_companion = mp::mp_any_of<Options, is_companion>::value;

  static constexpr bool known = mp::mp_all_of<Options, is_known_option>::value;
  static constexpr bool one_mode = count<is_mode> == 1;
  static constexpr bool companions_once = count<is_chain> <= 1 && count<is_aggregate> <= 1 &&
                                          count<is_finalize> <= 1 && count<is_output> <= 1;
  static constexpr bool exclusive = !(count<is_aggregate> == 1 && count<is_finalize> == 1);
  static constexpr bool output_produced =
      count<is_output> == 0 || count<is_aggregate> == 1 || count<is_finalize> == 1;
  static constexpr bool singleton_alone = !(has_companion && mp::mp_contains<Options, Singleton>::value);
  static constexpr bool all = known && one_mode && companions_once && exclusive && output_produced &&
                              singleton_alone;
};

template <class Slot>
constexpr bool report_slot_options() {
  using rules = option_rules<typename Slot::option_types>;
  using result = typename Slot::result_type;
  static_assert(!std::is_reference_v<result>,
                "hookset: a slot's result type must be a value type or void, not a reference");
  static_assert(rules::known,
                "hookset: unknown slot option: options are one mode (hookset::Always, "
                "hookset::Fallback, hookset::Singleton) and the companions hookset::Chain<C>, "
                "hookset::Aggregate<A>, hookset::Finalize<F>, hookset::Output<T>");
  static_assert(!rules::known || rules::one_mode,
                "hookset: a slot needs exactly one mode: hookset::Always, hookset::Fallback or "
                "hookset::Singleton");
  static_assert(rules::companions_once, "hookset: each companion option may be given once per slot");
  static_assert(rules::exclusive,
                "hookset: Aggregate and Finalize are mutually exclusive: keep one of them");
  static_assert(rules::output_produced,
                "hookset: Output<T> requires Aggregate<A> or Finalize<F> to produce the T");
  static_assert(rules::singleton_alone,
                "hookset: a Singleton slot takes no companion (its one hook's output is the result)");
  static_assert(!(rules::has_companion && std::is_void_v<result>),
                "hookset: a void slot takes no companion (there are no outputs to combine)");
  return false;
}

template <class S>
inline constexpr bool slot_options_ok =
    option_rules<typename S::option_types>::all && !std::is_reference_v<typename S::result_type> &&
    !(option_rules<typename S::option_types>::has_companion && std::is_void_v<typename S::result_type>);

template <class S>
constexpr std::string_view slot_name_of() noexcept {
  if constexpr (requires { { S::name } -> std::convertible_to<std::string_view>; }) {
    return std::string_view(S::name);
  } else {
    return unqualified(qualified_type_name<S>());
  }
}

// Everything the library derives from a slot type, in one place.
template <class S>
struct slot_traits {
  static_assert(std::is_base_of_v<slot_base, S>,
                "hookset: not a slot: a slot type derives from hookset::Slot<R(Args...), Mode, ...>");

  using slot = S;
  using result = typename S::result_type;
  using parameters = typename S::parameter_types;
  using options = typename S::option_types;
  using mode = mp::mp_front<mp::mp_push_back<mp::mp_copy_if<options, is_mode>, void>>;
  using chain = option_type<options, is_chain>;
  using aggregate = option_type<options, is_aggregate>;
  using finalize = option_type<options, is_finalize>;

  static constexpr bool is_always = std::is_same_v<mode, Always>;
  static constexpr bool is_fallback = std::is_same_v<mode, Fallback>;
  static constexpr bool is_singleton = std::is_same_v<mode, Singleton>;
  static constexpr bool has_chain = !std::is_void_v<chain>;
  static constexpr bool has_aggregate = !std::is_void_v<aggregate>;
  static constexpr bool has_finalize = !std::is_void_v<finalize>;
  static constexpr bool has_output = option_count<options, is_output> == 1;
  static constexpr bool is_void = std::is_void_v<result>;
  // Fold slots hand each hook the previous output as `std::optional<R> last`.
  static constexpr bool is_fold = !is_singleton && !has_chain && !has_aggregate && !is_void;

  using output = typename mp::mp_eval_if_c<!has_output, mp::mp_identity<result>,
                                           mp::mp_front, mp::mp_copy_if<options, is_output>>::type;
};

}  // namespace detail

// The slot's name: `static constexpr std::string_view name` if the slot declares one,
// else its unqualified type name.
template <class S>
inline constexpr std::string_view slot_name = detail::slot_name_of<S>();

}  // namespace hookset
