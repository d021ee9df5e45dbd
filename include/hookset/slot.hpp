#pragma once
// Declaring a slot: hookset::Slot<R(Args...), Mode, Options...>, the modes, the companion,
// dispatch and history options, slot_name<S>, and slot_c<S> (a slot as a constexpr value).
//
//   struct ValidatePrompt : hookset::Slot<std::optional<std::string>(std::string_view prompt),
//                                         hookset::Always> {
//     static std::optional<std::string> default_impl(std::string_view prompt);
//   };
//   inline constexpr auto validate_prompt = hookset::slot_c<ValidatePrompt>;
//
// The rules a slot's options follow are checked where a HookSet lists the slot
// (detail/slot_traits.hpp), so the compiler's context lines name it.

#include <cstddef>
#include <string_view>

#include <boost/hana/type.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/detail/type_name.hpp>

namespace hookset {

// Modes: how the default and the hooks combine.
struct Always {};     // the default runs first, then every hook
struct Fallback {};   // the default runs only when no hook does the job
struct Singleton {};  // at most one hook, which replaces the default
// Each hook decides on the input: pass it on (maybe rewritten) or end (pipeline.hpp). A Pipeline
// slot may add Fallback: its default then decides too, and only when no hook is registered.
struct Pipeline {};

// Companions, each naming a policy type with a call operator.
template <class C>
struct Chain {
  using type = C;
};  // Flow c(const R&): continue or stop
template <class A>
struct Aggregate {
  using type = A;
};  // R a(std::vector<R>) (or T with Output<T>)
template <class F>
struct Finalize {
  using type = F;
};  // R f(R) (or T with Output<T>)
template <class T>
struct Output {
  using type = T;
};  // the dispatch's result type becomes T

// Dispatch option for Aggregate slots, void slots and Chain<FirstSuccess> slots: hooks that
// suspend run at the same time (each starts without waiting for the one before to finish);
// outputs are still taken in registration order. MaxConcurrent<N>: at most N hooks in flight.
struct Concurrent {};
template <std::size_t N>
struct MaxConcurrent {
  static_assert(N > 0, "hookset::MaxConcurrent<N>: N must be at least 1");
  static constexpr std::size_t value = N;
};

// Slot option: the set remembers the slot's last N calls - a copy of each call's arguments,
// oldest dropped first - and replays them to every hook registered for the slot later (a plugin
// loaded after start-up still receives `Configure`). HookSet::history<S>() reads them.
template <std::size_t N>
struct Historic {
  static_assert(N > 0, "hookset::Historic<N>: N must be at least 1");
  static constexpr std::size_t value = N;
};

namespace detail {
struct slot_base {};
}  // namespace detail

template <class Signature, class... Options>
struct Slot {
  static_assert(
      sizeof(Signature) == 0,
      "hookset::Slot<Signature, Mode, ...>: Signature must be a function type R(Args...)");
};

template <class R, class... Args, class... Options>
struct Slot<R(Args...), Options...> : detail::slot_base {
  using result_type = R;
  using parameter_types = boost::mp11::mp_list<Args...>;
  using option_types = boost::mp11::mp_list<Options...>;
};

namespace detail {
template <class S>
constexpr std::string_view slot_name_of() noexcept {
  if constexpr (requires {
                  { S::name } -> std::convertible_to<std::string_view>;
                })
    return std::string_view(S::name);
  else return unqualified(qualified_type_name<S>());
}
}  // namespace detail

// The slot's name: `static constexpr std::string_view name` if the slot declares one, else its
// unqualified type name.
template <class S>
inline constexpr std::string_view slot_name = detail::slot_name_of<S>();

// A slot as a value: `set.call(slot_c<S>, args...)` and `set.add(slot_c<S>, hook)` mean
// `set.call<S>(args...)` and `set.add<S>(hook)`. Name one once, next to the slot:
//   inline constexpr auto choose_model = hookset::slot_c<ChooseModel>;
template <class S>
inline constexpr boost::hana::type<S> slot_c{};

}  // namespace hookset
