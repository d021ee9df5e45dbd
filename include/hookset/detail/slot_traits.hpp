#pragma once
// Everything the library derives from a slot type, in one place:
//  - slot_kind<...>: what the dispatch machinery is keyed by - result, parameters, mode,
//    companions - and nothing that names the slot, so slots sharing a signature and options
//    share one instantiation of the engine, the storage and the hook adapters;
//  - slot_descriptor<Kind>: what a slot contributes at run time (its name, its default, its
//    failure policy), one constexpr object per slot.
// The rules a slot must follow are in diagnostics.hpp.

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/attributed.hpp>
#include <hookset/companions.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/hook_options.hpp>
#include <hookset/keyed.hpp>
#include <hookset/pipeline.hpp>
#include <hookset/slot.hpp>

namespace hookset::detail {

// The engine (detail/dispatch/dispatch.hpp), whose driver a slot with an asynchronous default
// names in its descriptor.
template <class Kind, class Params>
class dispatch;

namespace mp = boost::mp11;

template <class O>
struct is_mode : std::bool_constant<std::is_same_v<O, Always> || std::is_same_v<O, Fallback> ||
                                    std::is_same_v<O, Singleton> || std::is_same_v<O, Pipeline>> {};
template <class O>
struct is_terminals : std::false_type {};
template <class... C>
struct is_terminals<Terminals<C...>> : std::true_type {};
template <class O>
struct is_chain : std::false_type {};
template <class C>
struct is_chain<Chain<C>> : std::true_type {};
template <class O>
struct is_aggregate : std::false_type {};
template <class A>
struct is_aggregate<Aggregate<A>> : std::true_type {};
template <class O>
struct is_finalize : std::false_type {};
template <class F>
struct is_finalize<Finalize<F>> : std::true_type {};
template <class O>
struct is_output : std::false_type {};
template <class T>
struct is_output<Output<T>> : std::true_type {};

template <class O>
struct is_concurrency : std::false_type {};
template <>
struct is_concurrency<Concurrent> : std::true_type {};
template <std::size_t N>
struct is_concurrency<MaxConcurrent<N>> : std::true_type {};

// How many hooks of a slot may be in flight at once: 1 (one after another) unless the slot
// says Concurrent (unlimited) or MaxConcurrent<N>.
inline constexpr std::size_t unlimited_concurrency = static_cast<std::size_t>(-1);
template <class O>
struct concurrency_of : std::integral_constant<std::size_t, 1> {};
template <>
struct concurrency_of<Concurrent> : std::integral_constant<std::size_t, unlimited_concurrency> {};
template <std::size_t N>
struct concurrency_of<MaxConcurrent<N>> : std::integral_constant<std::size_t, N> {};

template <class O>
struct is_historic_option : std::false_type {};
template <std::size_t N>
struct is_historic_option<Historic<N>> : std::true_type {};

template <class O>
using is_companion = mp::mp_bool<is_chain<O>::value || is_aggregate<O>::value ||
                                 is_finalize<O>::value || is_output<O>::value>;
template <class O>
using is_known_option =
    mp::mp_bool<is_mode<O>::value || is_companion<O>::value || is_concurrency<O>::value ||
                is_terminals<O>::value || std::is_same_v<O, Keyed> || is_historic_option<O>::value>;

template <class Options, template <class> class P>
inline constexpr std::size_t option_count = mp::mp_count_if<Options, P>::value;

// The `type` of the first option matching P, or void when the slot has none.
template <class Options, template <class> class P>
using option_type = typename mp::mp_eval_if_c<option_count<Options, P> == 0, mp::mp_identity<void>,
                                              mp::mp_front, mp::mp_copy_if<Options, P>>::type;

// ---------------------------------------------------------------------------------------------
// slot_kind: the engine's key

// How a fold hook's `last` crosses the type-erased call. A small trivially copyable R goes as
// two scalars, (value, has_value), so that a dispatch keeps it in registers from hook to hook
// (GCC 12 assembles a std::optional argument in memory, and the narrow stores that build it
// cannot be forwarded to the wide load that passes it: a stall on every hook). Anything else
// goes as std::optional<R>&& (moved, never copied).
template <class R>
inline constexpr bool last_in_registers = [] {
  if constexpr (std::is_void_v<R>) return false;
  else
    return std::is_trivially_copyable_v<R> && std::is_trivially_default_constructible_v<R> &&
           sizeof(R) <= 16;
}();

template <class R, bool Fold>
struct last_wire {
  using type = mp::mp_list<>;
};
template <class R>
struct last_wire<R, true> {
  using type =
      mp::mp_if_c<last_in_registers<R>, mp::mp_list<R, bool>, mp::mp_list<std::optional<R>&&>>;
};

template <class Ret>
struct function_pointer {
  template <class... P>
  using fn = Ret (*)(P...);
};

// The mode a slot declared with both Pipeline and Fallback is keyed by: a pipeline whose default
// decides like a hook, and runs only when no hook does (see pipeline.hpp).
struct fallback_pipeline {};

// A pipeline slot R(Input, PassThrough...): what its hooks return, and what its dispatch
// returns. Only the input is threaded (and rewritten); the rest reach every hook unchanged.
template <class R, class Params, class Terminals, bool IsPipeline, bool DefaultDecides>
struct pipeline_types {
  using decision = R;  // not a pipeline: hooks produce R
  template <class Output>
  using result = Output;
};
template <class R, class Input, class... PassThrough, class... Custom, bool DefaultDecides>
struct pipeline_types<R, mp::mp_list<Input, PassThrough...>, Terminals<Custom...>, true,
                      DefaultDecides> {
  using decision = Decision<Input, R, Custom...>;
  // A deciding default is not run once hooks are registered: when they all pass, the dispatch
  // ends in Pass ("run normally", on the input as finally rewritten).
  template <class>
  using result = std::conditional_t<DefaultDecides, PipelineResult<Input, R, Pass, Custom...>,
                                    PipelineResult<Input, R, Custom...>>;
};

// The roles a companion plays, in the order of slot_kind::companions: the index of the one
// collection of companions that a slot's kind, its storage and its configuration share.
enum class companion_role : std::size_t { chain, aggregate, finalize };
inline constexpr std::size_t companion_role_count = 3;

template <class R, class Params, class Mode, class ChainC, class AggregateC, class FinalizeC,
          class OutputOption, std::size_t Concurrency = 1, class TerminalsOption = Terminals<>,
          bool IsKeyed = false>
struct slot_kind;

template <class R, class... A, class Mode, class ChainC, class AggregateC, class FinalizeC,
          class OutputOption, std::size_t Concurrency, class TerminalsOption, bool IsKeyed>
struct slot_kind<R, mp::mp_list<A...>, Mode, ChainC, AggregateC, FinalizeC, OutputOption,
                 Concurrency, TerminalsOption, IsKeyed> {
  // A Keyed slot: its dispatch looks up the hooks of its key (the last argument) at its start.
  static constexpr bool is_keyed = IsKeyed;
  static constexpr bool is_pipeline =
      std::is_same_v<Mode, Pipeline> || std::is_same_v<Mode, fallback_pipeline>;
  // A Pipeline + Fallback slot: the default decides (returns a Decision), only without hooks.
  static constexpr bool default_decides = std::is_same_v<Mode, fallback_pipeline>;
  using pipeline =
      pipeline_types<R, mp::mp_list<std::remove_cvref_t<A>...>, TerminalsOption,
                     is_pipeline && sizeof...(A) >= 1 && !std::is_void_v<R>, default_decides>;
  // What each hook produces (a pipeline's hooks: a Decision); what the default produces (R, or
  // a Decision where the default decides).
  using result = typename pipeline::decision;
  using default_result = std::conditional_t<default_decides, result, R>;
  using parameters = mp::mp_list<A...>;
  using mode = Mode;
  using chain = ChainC;
  using aggregate = AggregateC;
  using finalize = FinalizeC;
  // The same, as one collection indexed by companion_role (void: the slot has none of a role).
  using companions = mp::mp_list<ChainC, AggregateC, FinalizeC>;
  using output = typename pipeline::template result<
      std::conditional_t<std::is_void_v<OutputOption>, R, OutputOption>>;

  static constexpr bool is_always = std::is_same_v<Mode, Always>;
  static constexpr bool is_fallback = std::is_same_v<Mode, Fallback>;
  static constexpr bool is_singleton = std::is_same_v<Mode, Singleton>;
  static constexpr bool has_chain = !std::is_void_v<ChainC>;
  static constexpr bool has_aggregate = !std::is_void_v<AggregateC>;
  static constexpr bool has_finalize = !std::is_void_v<FinalizeC>;
  static constexpr bool has_output = !std::is_void_v<OutputOption>;
  static constexpr bool is_void = std::is_void_v<R>;
  // Fold slots hand each hook the previous output as `std::optional<R> last`.
  static constexpr bool is_fold =
      !is_singleton && !is_pipeline && !has_chain && !has_aggregate && !is_void;
  // Whether the result is made apart from the last output: by a companion, or a pipeline's.
  static constexpr bool has_producer = has_aggregate || has_finalize || is_pipeline;
  // Hooks in flight at once (1: one after another).
  static constexpr std::size_t concurrency = Concurrency;
  static constexpr bool is_concurrent = Concurrency != 1;

  // The default (and every hook of a non-fold slot) is called as `f(object, args...)`; a fold
  // slot's hooks also get `last`, as last_wire says. `object` is the hook (null for the default).
  using wire = typename last_wire<R, is_fold>::type;
  using default_sync_fn = default_result (*)(void*, arg_ref_t<A>...);
  using default_async_fn = Task<default_result> (*)(void*, arg_ref_t<A>...);
  using hook_sync_fn = mp::mp_apply_q<function_pointer<result>,
                                      mp::mp_append<mp::mp_list<void*, arg_ref_t<A>...>, wire>>;
  using hook_async_fn = mp::mp_apply_q<function_pointer<Task<result>>,
                                       mp::mp_append<mp::mp_list<void*, arg_ref_t<A>...>, wire>>;
};

// A slot's options, read without judging them (the rules below do that). Read from the
// declaration, not the slot: slots declared alike share one reading.
template <class Result, class Params, class Options>
struct declared_options {
  using options = Options;
  // Pipeline may take Fallback beside it (the default's rule, not a second mode).
  static constexpr bool is_pipeline = mp::mp_contains<options, Pipeline>::value;
  using mode =
      mp::mp_if_c<is_pipeline,
                  mp::mp_if<mp::mp_contains<options, Fallback>, fallback_pipeline, Pipeline>,
                  mp::mp_front<mp::mp_push_back<mp::mp_copy_if<options, is_mode>, void>>>;
  using chain = option_type<options, is_chain>;
  using aggregate = option_type<options, is_aggregate>;
  using finalize = option_type<options, is_finalize>;
  using output_option = option_type<options, is_output>;
  using concurrency_option =
      mp::mp_front<mp::mp_push_back<mp::mp_copy_if<options, is_concurrency>, void>>;
  using terminals_option =
      mp::mp_front<mp::mp_push_back<mp::mp_copy_if<options, is_terminals>, Terminals<>>>;
  using kind = slot_kind<Result, Params, mode, chain, aggregate, finalize, output_option,
                         concurrency_of<concurrency_option>::value, terminals_option,
                         mp::mp_contains<options, Keyed>::value>;
};
template <class S>
using slot_options = declared_options<typename S::result_type, typename S::parameter_types,
                                      typename S::option_types>;

template <class S>
using kind_of = typename slot_options<S>::kind;

// ---------------------------------------------------------------------------------------------
// Historic slots (Historic<N>): not part of the kind - a historic slot dispatches as any other
// slot of its signature and options; HookSet::call records the call before it dispatches.

template <class S>
inline constexpr bool is_historic = option_count<typename S::option_types, is_historic_option> != 0;
template <class S>
using is_historic_t = mp::mp_bool<is_historic<S>>;
// How many calls a historic slot keeps (0: it keeps none).
template <class S>
inline constexpr std::size_t history_capacity = [] {
  using given = mp::mp_copy_if<typename S::option_types, is_historic_option>;
  if constexpr (mp::mp_empty<given>::value) return std::size_t{0};
  else return mp::mp_front<given>::value;
}();

// What a historic slot records of an argument: the parameter's value type (decayed), except
// that a std::string_view is recorded as a std::string - a view would outlive what it views.
template <class P>
struct recorded {
  using type = std::decay_t<P>;
};
template <class Char, class Traits>
struct recorded<std::basic_string_view<Char, Traits>> {
  using type = std::basic_string<Char, Traits>;
};
template <class P>
using recorded_t = typename recorded<std::decay_t<P>>::type;
// Whether a kept value can be kept: copied into the log and out of it, and assigned over the
// oldest one when the log is full.
template <class T>
using is_keepable = mp::mp_bool<std::is_copy_constructible_v<T> && std::is_move_assignable_v<T>>;

// ---------------------------------------------------------------------------------------------
// What a slot contributes at run time

// What every slot contributes, whatever its kind (the part of a dispatch that does not depend
// on the slot's types reads it: detail/dispatch/frame.hpp) ...
struct slot_facts {
  std::string_view name;
  FailurePolicy on_failure;  // for hooks registered without their own
  bool trace_values;         // observers of its dispatches get values (format.hpp)
  // What runs its dispatch on after the asynchronous default suspended it (the engine's
  // driver_code); null for a synchronous default.
  const void* suspended_driver = nullptr;
};

// ... and its default, called as its kind declares.
template <class Kind>
struct slot_descriptor : slot_facts {
  // Exactly one is set: the default as a synchronous call or as one producing a Task.
  typename Kind::default_sync_fn default_sync;
  typename Kind::default_async_fn default_async;
};

template <class S, class Params = typename S::parameter_types>
struct default_call;
template <class S, class... A>
struct default_call<S, mp::mp_list<A...>> {
  using result = typename kind_of<S>::default_result;
  static constexpr bool declared = requires { &S::default_impl; };
  static constexpr call_kind kind = [] {
    if constexpr (requires(arg_ref_t<A>... a) { S::default_impl(a...); })
      return classify_result<decltype(S::default_impl(std::declval<arg_ref_t<A>>()...)), result>();
    else return call_kind::invalid;
  }();
  // For diagnostics: the call shape default_impl must have.
  using expected_call = result(arg_ref_t<A>...);

  // (Inlined where a dispatch calls it directly - where its call site knows the slot - as the
  // thin wrapper it is.)
  HOOKSET_ALWAYS_INLINE static result call_sync(void*, arg_ref_t<A>... args) {
    if constexpr (std::is_void_v<result>) S::default_impl(args...);
    else return S::default_impl(args...);
  }
  static Task<result> call_async(void*, arg_ref_t<A>... args) {
    return to_task<result>(S::default_impl(args...));
  }
};

template <class S>
constexpr FailurePolicy slot_failure_policy() noexcept {
  if constexpr (requires {
                  { S::on_failure } -> std::convertible_to<FailurePolicy>;
                })
    return S::on_failure;
  else return FailurePolicy::propagate;
}

// Whether a slot asks for its values in observer events: `static constexpr bool trace_values`.
template <class S>
constexpr bool slot_traces_values() noexcept {
  if constexpr (requires {
                  { S::trace_values } -> std::convertible_to<bool>;
                })
    return S::trace_values;
  else return false;
}

template <class S>
constexpr slot_descriptor<kind_of<S>> make_descriptor() noexcept {
  slot_descriptor<kind_of<S>> descriptor{
      {slot_name<S>, slot_failure_policy<S>(), slot_traces_values<S>()}, nullptr, nullptr};
  if constexpr (default_call<S>::kind == call_kind::sync) {
    descriptor.default_sync = &default_call<S>::call_sync;
  } else {
    descriptor.default_async = &default_call<S>::call_async;
    descriptor.suspended_driver =
        &dispatch<kind_of<S>, typename kind_of<S>::parameters>::suspended_driver;
  }
  return descriptor;
}
template <class S>
inline constexpr slot_descriptor<kind_of<S>> descriptor_of = make_descriptor<S>();

// ---------------------------------------------------------------------------------------------
// Companions: called as `const C&` when configured on a set (shared by concurrent dispatches)
// and as `C&` when default-constructed for one dispatch.

template <class Kind>
struct companion_calls {
  using result = typename Kind::result;
  using output = typename Kind::output;
  template <class C>
  static constexpr call_kind chain_kind = call_kind_of<Flow, C&, const result&>();
  // An aggregate takes std::vector<R>, or - when it cannot - std::vector<Attributed<R>>: each
  // output with the registration that produced it.
  template <class A>
  static constexpr bool aggregate_attributed =
      call_kind_of<output, A&, std::vector<result>&&>() ==
      call_kind::invalid&& call_kind_of<output, A&, std::vector<Attributed<result>>&&>() !=
      call_kind::invalid;
  template <class A>
  static constexpr call_kind aggregate_kind =
      aggregate_attributed<A> ? call_kind_of<output, A&, std::vector<Attributed<result>>&&>()
                              : call_kind_of<output, A&, std::vector<result>&&>();
  template <class F>
  static constexpr call_kind finalize_kind = call_kind_of<output, F&, result&&>();
  // The call shape of the companion of role Role: each role's is its own.
  template <companion_role Role, class C>
  static constexpr call_kind kind_for() {
    if constexpr (Role == companion_role::chain) return chain_kind<C>;
    else if constexpr (Role == companion_role::aggregate) return aggregate_kind<C>;
    else return finalize_kind<C>;
  }
};

// What a dispatch of kind Kind collects for its aggregate: R, or Attributed<R> (above).
template <class Kind>
inline constexpr bool collects_attributed = [] {
  if constexpr (!Kind::has_aggregate) return false;
  else return companion_calls<Kind>::template aggregate_attributed<typename Kind::aggregate>;
}();

// Whether the aggregate companion of Kind turns a hook's failure under FailClosed into an
// output of the hook, `static R failed_hook_output(const std::exception_ptr&)`, instead of the
// dispatch failing with HookFailed.
// (A concept, not a requires-expression inside the lambda: Clang 16 does not take that as a
// constant expression.)
template <class Aggregator, class Result>
concept substitutes_failure_with = requires(const std::exception_ptr& error) {
  { Aggregator::failed_hook_output(error) } -> std::convertible_to<Result>;
};
template <class Kind>
inline constexpr bool substitutes_failures = [] {
  if constexpr (!Kind::has_aggregate) return false;
  else return substitutes_failure_with<typename Kind::aggregate, typename Kind::result>;
}();

// The role companion type C plays in slots of kind Kind (C: one of Kind::companions).
template <class Kind, class C>
inline constexpr companion_role companion_role_of =
    static_cast<companion_role>(mp::mp_find<typename Kind::companions, C>::value);

}  // namespace hookset::detail
