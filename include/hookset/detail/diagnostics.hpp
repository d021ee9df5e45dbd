#pragma once
// Every compile-time diagnostic of hookset, in one place. Each check is written so that its
// failure yields one error - ours - whose instantiation context names the slot (or the set,
// the hook type) involved: the static_asserts sit in templates taking those types as arguments.

#include <concepts>
#include <coroutine>
#include <cstddef>
#include <cstdlib>
#include <type_traits>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/companions.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/format.hpp>
#include <hookset/pipeline.hpp>

namespace hookset::detail {

// A keyed slot's key type: hashed by std::hash and compared with ==. (A concept at namespace
// scope: Clang 16 crashes on the same requires-expression written inside a nested class
// template's lambda.)
template <class Key>
concept hashable_key = requires(const Key& k) {
  { std::hash<Key>{}(k) } -> std::convertible_to<std::size_t>;
  { k == k } -> std::convertible_to<bool>;
};

// ---------------------------------------------------------------------------------------------
// Slots

// Each rule of a slot has `holds` and `report()` (its static_assert, whose instantiation
// context, slot_rules<YourSlot>::..., names the slot). The rules come in stages, each judged only
// when the stages before it hold; check_rules reports a stage's first broken rule: one error.
// (Whether a slot keeps them all, slot_ok below, is judged without the rules' classes.)
// all_hold is a fold, one instantiation per stage (a recursion costs one per rule). It
// instantiates every rule of its stage, so a stage groups rules that stay well-formed, and call
// none of the user's code that an earlier rule has not vouched for, when one of them fails.
template <class Stage>
inline constexpr bool all_hold = false;
template <class... Rules>
inline constexpr bool all_hold<mp::mp_list<Rules...>> = (Rules::holds && ...);
template <class Rule, class... Rest>
constexpr bool check_rules(mp::mp_list<Rule, Rest...>) {
  if constexpr (!Rule::holds) {
    Rule::report();
    return false;
  } else if constexpr (sizeof...(Rest) == 0) {
    return true;
  } else {
    return check_rules(mp::mp_list<Rest...>{});
  }
}

template <class O>
using is_keyed_option = mp::mp_bool<std::is_same_v<O, Keyed>>;

template <class C>
inline constexpr bool is_builtin_chain =
    std::is_same_v<C, ShortCircuit> || std::is_same_v<C, FirstSuccess>;

// The first value type of slot S that observer events would render but cannot (void: none):
// with `trace_values`, its result - a pipeline's output and its input.
template <class S, class Kind>
constexpr auto first_unrenderable_value() {
  using result = typename S::result_type;
  using params = typename S::parameter_types;
  if constexpr (!slot_traces_values<S>() || std::is_void_v<result>) {
    return std::type_identity<void>{};
  } else if constexpr (Kind::is_pipeline && !mp::mp_empty<params>::value) {
    using input = std::remove_cvref_t<mp::mp_front<params>>;
    if constexpr (!formattable<result>) return std::type_identity<result>{};
    else if constexpr (!formattable<input>) return std::type_identity<input>{};
    else return std::type_identity<void>{};
  } else if constexpr (!Kind::is_pipeline && !formattable<typename Kind::output>) {
    return std::type_identity<typename Kind::output>{};
  } else {
    return std::type_identity<void>{};
  }
}
template <class S, class Kind>
using unrenderable_value_t = typename decltype(first_unrenderable_value<S, Kind>())::type;

// A slot's declaration without the slot: all that the option rules read.
template <class Result, class Params, class Options>
struct slot_declaration {
  using result_type = Result;
  using parameter_types = Params;
  using option_types = Options;
};

// Whether a declaration keeps each option rule, and all: judged once for slots declared alike,
// without a class per rule (slot_rules<Slot> reports a broken one, naming the slot).
template <class Decl>
struct option_verdicts {
  using options = typename Decl::option_types;
  using opts = slot_options<Decl>;
  using result = typename Decl::result_type;
  using params = typename Decl::parameter_types;
  template <template <class> class P>
  static constexpr std::size_t count = option_count<options, P>;
  static constexpr bool has_companion = mp::mp_any_of<options, is_companion>::value;

  static constexpr bool result_is_value = !std::is_reference_v<result>;
  static constexpr bool known_options = mp::mp_all_of<options, is_known_option>::value;
  // (Fallback beside Pipeline is the pipeline's default rule, not a second mode.)
  static constexpr bool one_mode =
      count<is_mode> == 1 ||
      (count<is_mode> == 2 && opts::is_pipeline && mp::mp_contains<options, Fallback>::value);
  static constexpr bool companions_once =
      count<is_chain> <= 1 && count<is_aggregate> <= 1 && count<is_finalize> <= 1 &&
      count<is_output> <= 1 && count<is_concurrency> <= 1 && count<is_historic_option> <= 1;
  // (MaxConcurrent<0>'s own static_assert fires only if something instantiates the class, which
  // naming it among a slot's options never does: checked here, with the slot named.)
  static constexpr bool concurrency_positive = !mp::mp_contains<options, MaxConcurrent<0>>::value;
  static constexpr bool history_positive = !mp::mp_contains<options, Historic<0>>::value;
  // A historic slot keeps a copy of each call's arguments, to replay them later.
  template <class P>
  using recorded_keepable = is_keepable<recorded_t<P>>;
  static constexpr bool history_copyable =
      count<is_historic_option> == 0 || mp::mp_all_of<params, recorded_keepable>::value;
  static constexpr bool aggregate_or_finalize =
      !(count<is_aggregate> == 1 && count<is_finalize> == 1);
  static constexpr bool output_produced =
      count<is_output> == 0 || count<is_aggregate> == 1 || count<is_finalize> == 1;
  static constexpr bool singleton_alone =
      !(has_companion && std::is_same_v<typename opts::mode, Singleton>);
  // Concurrent hooks must not depend on one another: no fold (`last` chains them), and a chain
  // may only be FirstSuccess (whose answer is the first success in registration order).
  using chain = typename opts::chain;
  static constexpr bool concurrency_fits =
      count<is_concurrency> == 0 ||
      (!std::is_same_v<typename opts::mode, Singleton> &&
       (std::is_void_v<result> || count<is_aggregate> == 1 ||
        std::is_same_v<chain, FirstSuccess>)&&(std::is_void_v<chain> ||
                                               std::is_same_v<chain, FirstSuccess>));
  // A pipeline's hooks decide on one input, which the dispatch owns (by value) and may rewrite;
  // they combine with nothing else.
  static constexpr bool pipeline_fits = [] {
    if constexpr (!opts::is_pipeline) {
      return count<is_terminals> == 0;
    } else {
      if constexpr (mp::mp_empty<params>::value) return false;
      else
        return !std::is_reference_v<mp::mp_front<params>> &&
               !std::is_const_v<mp::mp_front<params>> && !std::is_void_v<result> &&
               !has_companion && count<is_concurrency> == 0 && count<is_terminals> <= 1;
    }
  }();
  // A pipeline's other parameters reach every hook and the default as they are: no hook may
  // change what the next one sees except through rewrite() of the input.
  template <class T>
  using is_writable_reference =
      mp::mp_bool<std::is_reference_v<T> && !std::is_const_v<std::remove_reference_t<T>>>;
  static constexpr bool pipeline_pass_through_read_only = [] {
    if constexpr (!opts::is_pipeline || mp::mp_empty<params>::value) return true;
    else return mp::mp_none_of<mp::mp_pop_front<params>, is_writable_reference>::value;
  }();
  // A keyed slot's key is its last parameter, stored and compared by value.
  static constexpr bool keyed_has_key = [] {
    if constexpr (!is_keyed<Decl>) return count<is_keyed_option> == 0;
    else if constexpr (mp::mp_empty<params>::value) return false;
    else return count<is_keyed_option> == 1;
  }();
  static constexpr bool void_alone = !(has_companion && std::is_void_v<result>);

  static constexpr bool all = result_is_value && known_options && one_mode && singleton_alone &&
                              void_alone && companions_once && concurrency_positive &&
                              aggregate_or_finalize && output_produced && concurrency_fits &&
                              pipeline_fits && pipeline_pass_through_read_only && keyed_has_key &&
                              history_positive && history_copyable;
};

// The tests of the rules below that read the declaration only (its kind, its companions), at
// namespace scope: slots declared alike share their instantiations.
template <class Key>
constexpr bool key_hashable_holds() {
  if constexpr (std::is_void_v<Key>) return true;
  else return hashable_key<Key>;
}
template <class C, class Result>
constexpr bool builtin_chain_holds() {
  if constexpr (!is_builtin_chain<C>) return true;
  else return has_has_value<Result>;
}
template <class Kind, class Chain>
constexpr bool chain_shape_holds() {
  if constexpr (std::is_void_v<Chain>) return true;
  else return companion_calls<Kind>::template chain_kind<Chain> != call_kind::invalid;
}
template <class Kind, class Aggregator>
constexpr bool aggregate_shape_holds() {
  if constexpr (std::is_void_v<Aggregator>) return true;
  else return companion_calls<Kind>::template aggregate_kind<Aggregator> != call_kind::invalid;
}
template <class Aggregator>
constexpr bool verdict_lattice_holds() {
  if constexpr (!requires { typename Aggregator::verdict_type; }) return true;
  else return Aggregator::lattice_complete;
}
template <class Aggregator, class Result, class Produced>
constexpr bool verdict_shape_holds() {
  if constexpr (!requires { typename Aggregator::verdict_type; }) return true;
  else
    return std::is_same_v<Result, typename Aggregator::verdict_type> &&
           std::is_same_v<Produced, typename Aggregator::verdicts_type>;
}
template <class Kind, class Finalizer>
constexpr bool finalize_shape_holds() {
  if constexpr (std::is_void_v<Finalizer>) return true;
  else return companion_calls<Kind>::template finalize_kind<Finalizer> != call_kind::invalid;
}
// The chain stage, then the producer stage but its rendering rule (which reads the slot): the
// companion rules of slot_rules, judged once for slots declared alike.
template <class Opts, class Result>
constexpr bool companions_hold() {
  using kind = typename Opts::kind;
  if constexpr (!builtin_chain_holds<typename Opts::chain, Result>() ||
                !chain_shape_holds<kind, typename Opts::chain>())
    return false;
  else
    return verdict_lattice_holds<typename Opts::aggregate>() &&
           verdict_shape_holds<typename Opts::aggregate, Result, typename kind::output>() &&
           aggregate_shape_holds<kind, typename Opts::aggregate>() &&
           finalize_shape_holds<kind, typename Opts::finalize>();
}

template <class Slot>
struct slot_rules {
  using options = typename Slot::option_types;
  using opts = slot_options<Slot>;
  using result = typename Slot::result_type;
  using verdicts =
      option_verdicts<slot_declaration<result, typename Slot::parameter_types, options>>;

  struct result_is_value {
    static constexpr bool holds = verdicts::result_is_value;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a slot's result type must be a value type or void, not a reference");
    }
  };
  struct known_options {
    static constexpr bool holds = verdicts::known_options;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: unknown slot option: options are one mode (hookset::Always, "
                    "hookset::Fallback, hookset::Singleton, hookset::Pipeline), the companions "
                    "hookset::Chain<C>, hookset::Aggregate<A>, hookset::Finalize<F>, "
                    "hookset::Output<T>, hookset::Concurrent or hookset::MaxConcurrent<N>, "
                    "hookset::Terminals<...> (Pipeline slots), hookset::Keyed and "
                    "hookset::Historic<N>");
    }
  };
  struct one_mode {
    static constexpr bool holds = verdicts::one_mode;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a slot needs exactly one mode: hookset::Always, hookset::Fallback, "
                    "hookset::Singleton or hookset::Pipeline (which may add hookset::Fallback: "
                    "its default then decides, and only when no hook is registered)");
    }
  };
  struct companions_once {
    static constexpr bool holds = verdicts::companions_once;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: each companion option (and Concurrent / MaxConcurrent, Historic) may "
                    "be given once per slot");
    }
  };
  struct concurrency_positive {
    static constexpr bool holds = verdicts::concurrency_positive;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: MaxConcurrent<N> needs N >= 1: at most N hooks in flight at once "
                    "(MaxConcurrent<0> would let none start, and the dispatch would never end)");
    }
  };
  struct aggregate_or_finalize {
    static constexpr bool holds = verdicts::aggregate_or_finalize;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Aggregate and Finalize are mutually exclusive: keep one of them");
    }
  };
  struct output_produced {
    static constexpr bool holds = verdicts::output_produced;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Output<T> requires Aggregate<A> or Finalize<F> to produce the T");
    }
  };
  struct singleton_alone {
    static constexpr bool holds = verdicts::singleton_alone;
    static constexpr void report() {
      static_assert(
          holds,
          "hookset: a Singleton slot takes no companion (no Chain, Aggregate, Finalize or "
          "Output): its one hook's output, or its default's, is the result");
    }
  };
  struct concurrency_fits {
    static constexpr bool holds = verdicts::concurrency_fits;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Concurrent / MaxConcurrent<N> is for slots whose hooks do not depend "
                    "on each other: Aggregate slots, void slots and Chain<FirstSuccess> slots (not "
                    "fold slots, where each hook gets the previous one's output, nor Singleton "
                    "slots, nor other chains)");
    }
  };
  struct pipeline_fits {
    static constexpr bool holds = verdicts::pipeline_fits;
    static constexpr void report() {
      static_assert(
          holds,
          "hookset: a Pipeline slot takes its input as its first parameter, by value (the "
          "input its hooks pass on or rewrite), has a non-void result (what complete() "
          "produces) and no companion or concurrency option; Terminals<...> is for Pipeline "
          "slots only");
    }
  };
  struct pipeline_pass_through_read_only {
    static constexpr bool holds = verdicts::pipeline_pass_through_read_only;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a Pipeline slot's parameters after the input are passed unchanged "
                    "to every hook and the default: take each by value or by const reference "
                    "(const T&), not by non-const reference - only rewrite() changes what the "
                    "next hook sees");
    }
  };
  struct keyed_has_key {
    static constexpr bool holds = verdicts::keyed_has_key;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a Keyed slot takes its key as its last parameter: declare at least "
                    "one parameter (and give hookset::Keyed once)");
    }
  };
  struct history_positive {
    static constexpr bool holds = verdicts::history_positive;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Historic<N> needs N >= 1: the number of calls the set keeps to "
                    "replay to hooks registered later (a slot that keeps none leaves the option "
                    "out)");
    }
  };
  struct history_copyable {
    static constexpr bool holds = verdicts::history_copyable;
    // Names the first parameter type that cannot be kept (in the compiler's context lines).
    template <class Uncopyable>
    static constexpr void report_for() {
      static_assert(is_keepable<Uncopyable>::value,
                    "hookset: a Historic slot keeps a copy of each call's arguments to replay them "
                    "to hooks registered later, so every parameter's value type (the parameter "
                    "decayed; a std::string_view is kept as a std::string) must be "
                    "copy-constructible and assignable, and Uncopyable is not: take it as "
                    "something copyable (a std::shared_ptr instead of a std::unique_ptr), or drop "
                    "hookset::Historic");
    }
    static constexpr void report() {
      using kept = mp::mp_transform<recorded_t, typename Slot::parameter_types>;
      report_for<mp::mp_front<mp::mp_remove_if<kept, is_keepable>>>();
    }
  };
  template <class Key>
  struct key_hashable_as {
    static constexpr bool holds = key_hashable_holds<Key>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a Keyed slot's key type Key (its last parameter, decayed) needs "
                    "std::hash<Key> and ==, or use a string key");
    }
  };
  using key_type = mp::mp_eval_if_c<!is_keyed<Slot>, void, key_type_t, Slot>;
  using key_hashable = key_hashable_as<key_type>;
  struct void_alone {
    static constexpr bool holds = verdicts::void_alone;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: a void slot takes no companion (there are no outputs to combine)");
    }
  };
  template <class ExpectedDefault>
  struct default_declared_as {
    static constexpr bool holds = default_call<Slot>::declared;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: the slot needs a default: `static R default_impl(Args...)` "
                    "(or returning hookset::Task<R>; a Pipeline + Fallback slot's default "
                    "returns the slot's decision), see ExpectedDefault");
    }
  };
  template <class ExpectedDefault>
  struct default_shape_as {
    static constexpr bool holds = default_call<Slot>::kind != call_kind::invalid;
    static constexpr void report() {
      static_assert(
          holds,
          "hookset: the slot's default_impl must be callable as ExpectedDefault and return "
          "R, hookset::Task<R> or another awaitable of R");
    }
  };
  using default_declared = default_declared_as<typename default_call<Slot>::expected_call>;
  using default_shape = default_shape_as<typename default_call<Slot>::expected_call>;

  using calls = companion_calls<typename opts::kind>;
  template <class C, class Result>
  struct builtin_chain_needs_has_value {
    static constexpr bool holds = builtin_chain_holds<C, Result>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Chain<ShortCircuit> and Chain<FirstSuccess> look at the result's "
                    "has_value(): the slot's result type R needs one (std::optional, "
                    "std::expected, boost::outcome, ...), or use a chain companion of your own");
    }
  };
  struct chain_shape {
    static constexpr bool holds = chain_shape_holds<typename opts::kind, typename opts::chain>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: the Chain companion must be callable as `Flow c(const R&)` "
                    "(or return hookset::Task<Flow>) for the slot's result type R");
    }
  };
  template <class Aggregator, class Result, class Produced>
  struct aggregate_shape_for {
    static constexpr bool holds = aggregate_shape_holds<typename opts::kind, Aggregator>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: the Aggregate companion must be callable as `R a(std::vector<R>)`, "
                    "or `T a(std::vector<R>)` with Output<T> (returning it directly or as a Task); "
                    "see Aggregator, Result (R) and Produced (R, or T with Output<T>)");
    }
  };
  // A verdict aggregate (guard.hpp's JoinVerdicts<D, L>) needs a whole lattice L, and joins
  // Verdict<D>s into Verdicts<D>.
  template <class Aggregator>
  struct verdict_lattice_complete_for {
    static constexpr bool holds = verdict_lattice_holds<Aggregator>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: JoinVerdicts<D, L>: the lattice L (by default "
                    "hookset::verdict_lattice<D>: specialise it for your decision type D) needs "
                    "`static constexpr D bottom`, `static constexpr D failed` and "
                    "`static constexpr D join(D, D)`; see Aggregator");
    }
  };
  template <class Aggregator, class Result, class Produced>
  struct verdict_shape_for {
    static constexpr bool holds = verdict_shape_holds<Aggregator, Result, Produced>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: Aggregate<JoinVerdicts<D>> needs hooks returning "
                    "hookset::Verdict<D> and Output<hookset::Verdicts<D>>: declare the slot as "
                    "hookset::VerdictSlot<hookset::Verdict<D>(Args...), Mode>; see Aggregator, "
                    "Result (R) and Produced");
    }
  };
  template <class Finalizer, class Result, class Produced>
  struct finalize_shape_for {
    static constexpr bool holds = finalize_shape_holds<typename opts::kind, Finalizer>();
    static constexpr void report() {
      static_assert(holds,
                    "hookset: the Finalize companion must be callable as `R f(R)`, or `T f(R)` "
                    "with Output<T> (returning it directly or as a Task); see Finalizer, Result "
                    "(R) and Produced (R, or T with Output<T>)");
    }
  };
  // A slot that asks for its values in observer events needs a rendering of each.
  template <class Unrenderable>
  struct values_renderable_for {
    static constexpr bool holds = std::is_void_v<Unrenderable>;
    static constexpr void report() {
      static_assert(holds,
                    "hookset: the slot asks for its values in observer events (trace_values), "
                    "but Unrenderable has no rendering: declare `std::string "
                    "hookset_format(const T&)` in its namespace, or specialise "
                    "hookset::value_format<T> (see <hookset/format.hpp>)");
    }
  };
  using values_renderable = values_renderable_for<unrenderable_value_t<Slot, typename opts::kind>>;

  using aggregate_shape =
      aggregate_shape_for<typename opts::aggregate, result, typename opts::kind::output>;
  using verdict_lattice_complete = verdict_lattice_complete_for<typename opts::aggregate>;
  using verdict_shape =
      verdict_shape_for<typename opts::aggregate, result, typename opts::kind::output>;
  using finalize_shape =
      finalize_shape_for<typename opts::finalize, result, typename opts::kind::output>;

  // The options first: the default and companion checks read the parsed options. A slot that
  // takes no companion at all (Singleton, void) is told so before any rule about which
  // companions go together, which would send its author to one it cannot take either.
  using option_rules =
      mp::mp_list<result_is_value, known_options, one_mode, singleton_alone, void_alone,
                  companions_once, concurrency_positive, aggregate_or_finalize, output_produced,
                  concurrency_fits, pipeline_fits, pipeline_pass_through_read_only, keyed_has_key,
                  history_positive, history_copyable>;
  // Then the rules that call the user's code (the key's std::hash and ==, default_impl, the
  // companions), stage by stage as a recursion would; within a stage, a broken rule leaves the
  // others' calls harmless (no default_impl to call; the built-in chains are constrained; a
  // verdict aggregate is hookset's, and excludes a Finalize).
  using key_rules = mp::mp_list<key_hashable>;
  using default_rules = mp::mp_list<default_declared, default_shape>;
  using chain_rules =
      mp::mp_list<builtin_chain_needs_has_value<typename opts::chain, result>, chain_shape>;
  using producer_rules = mp::mp_list<verdict_lattice_complete, verdict_shape, aggregate_shape,
                                     finalize_shape, values_renderable>;

  static constexpr bool check() {
    if constexpr (!verdicts::all) return check_rules(option_rules{});
    else if constexpr (!all_hold<key_rules>) return check_rules(key_rules{});
    else if constexpr (!all_hold<default_rules>) return check_rules(default_rules{});
    else if constexpr (!all_hold<chain_rules>) return check_rules(chain_rules{});
    else return check_rules(producer_rules{});
  }
};

// Whether S is a slot at all, and a well-formed one; check_slot<S>() reports the first broken rule.
template <class S>
constexpr bool is_slot_type() noexcept {
  return std::is_base_of_v<slot_base, S>;
}
// The option and key stages of slot_rules, which read the declaration only: judged once for
// slots declared alike.
template <class Result, class Params, class Options>
constexpr bool declaration_holds() {
  using declaration = slot_declaration<Result, Params, Options>;
  if constexpr (!option_verdicts<declaration>::all) return false;
  else if constexpr (!is_keyed<declaration>) return true;
  else return key_hashable_holds<key_type_t<declaration>>();
}
// Whether slot S keeps every rule of slot_rules, judged stage by stage as its check() does, but
// without its classes: slot_rules<S> is instantiated only for a broken slot, to report it. Per
// slot, this computes what only the slot has - its default, whether it traces its values - and
// looks the rest up (a class per rule per slot was most of what a set cost per slot).
template <class S>
inline constexpr bool slot_ok = [] {
  if constexpr (!is_slot_type<S>()) {
    return false;
  } else {
    using result = typename S::result_type;
    using opts = slot_options<S>;
    if constexpr (!declaration_holds<result, typename S::parameter_types,
                                     typename S::option_types>())
      return false;
    else if constexpr (!default_call<S>::declared || default_call<S>::kind == call_kind::invalid)
      return false;
    else if constexpr (!companions_hold<opts, result>()) return false;
    else if constexpr (!slot_traces_values<S>()) return true;
    else return std::is_void_v<unrenderable_value_t<S, typename opts::kind>>;
  }
}();
template <class S>
constexpr bool check_slot() {
  return slot_rules<S>::check();
}

// ---------------------------------------------------------------------------------------------
// Hooks

// A hook that does not fit its slot. Says which part is wrong: const-ness, the trailing `last`,
// the parameters, or the result.
template <class Slot, class ExpectedCall, class Hook, class... Tag>
constexpr bool report_hook_shape() {
  using kind = kind_of<Slot>;
  using calls = hook_calls<kind>;
  using mutable_hook = std::remove_const_t<Hook>;
  constexpr bool needs_mutable = std::is_const_v<Hook> &&
                                 calls::template kind<Hook, Tag...> == call_kind::invalid &&
                                 calls::template kind<mutable_hook, Tag...> != call_kind::invalid;
  constexpr bool wrong_last = kind::is_fold
                                  ? !calls::template callable_with_last<Hook, Tag...> &&
                                        calls::template callable_without_last<Hook, Tag...>
                                  : !calls::template callable_without_last<Hook, Tag...> &&
                                        calls::template callable_with_last<Hook, Tag...>;
  constexpr bool callable = kind::is_fold ? calls::template callable_with_last<Hook, Tag...>
                                          : calls::template callable_without_last<Hook, Tag...>;
  constexpr bool takes_non_const_reference =
      calls::template callable_with_mutable_arguments<Hook, Tag...>;
  constexpr bool operator_of_object = sizeof...(Tag) != 0;  // add_hooks: called as (Slot, ...)
  if constexpr (needs_mutable) {
    static_assert(!needs_mutable,
                  "hookset: an owned hook is called as const, but this hook's call operator is "
                  "not const: make it const, keep mutable state in hookset::Stateful<T>, or "
                  "register std::ref(hook) or a std::shared_ptr to it");
  } else if constexpr (wrong_last && kind::is_fold) {
    static_assert(!wrong_last,
                  "hookset: this slot folds `last`: the hook must take the slot's arguments "
                  "followed by `std::optional<R> last` (see ExpectedCall)");
  } else if constexpr (wrong_last) {
    static_assert(!wrong_last,
                  "hookset: this slot does not fold `last` (Singleton, Chain, Aggregate or void "
                  "slot): the hook must take only the slot's arguments, without a trailing "
                  "std::optional<R> (see ExpectedCall)");
  } else if constexpr (callable) {
    static_assert(!callable,
                  "hookset: the hook takes the slot's arguments, but its result is wrong: it must "
                  "return the slot's result type R, hookset::Task<R> or another awaitable of R "
                  "(see ExpectedCall)");
  } else if constexpr (takes_non_const_reference && operator_of_object) {
    static_assert(!takes_non_const_reference,
                  "hookset: add_hooks(object): the object's operator() for slot Slot does not "
                  "match the slot's signature: it takes a parameter by non-const reference, but "
                  "the slot hands each argument declared by value as a const lvalue (one object "
                  "shared by the default and every hook); take it by value or by const& (see "
                  "ExpectedCall)");
  } else if constexpr (takes_non_const_reference) {
    static_assert(!takes_non_const_reference,
                  "hookset: the hook takes a parameter by non-const reference, but the slot "
                  "hands each argument declared by value as a const lvalue (one object shared by "
                  "the default and every hook); take it by value or by const& (see "
                  "ExpectedCall)");
  } else if constexpr (operator_of_object) {
    static_assert(callable,
                  "hookset: add_hooks(object): the object's operator() for slot Slot does not "
                  "match the slot's signature: the hook cannot be called with the slot's "
                  "arguments; it must be callable as (Slot, then the parameters of "
                  "ExpectedCall), a trailing std::stop_token parameter allowed");
  } else {
    static_assert(callable,
                  "hookset: the hook cannot be called with the slot's arguments: it must be "
                  "callable as ExpectedCall (a trailing std::stop_token parameter is allowed)");
  }
  return false;
}

// A pipeline's validator (hookset::validator(fn), pipeline.hpp): fn is called with the slot's
// arguments as hooks get them - const Input&, const PassThrough&... - a trailing stop token
// allowed, and returns what converts to Validation (pass or reject), directly or awaited.
template <class F, class Args>
struct validator_calls;
template <class F, class... A>
struct validator_calls<F, mp::mp_list<A...>> {
  using expected_call = Validation(arg_ref_t<A>...);
  template <class Target, class... Extra>
  static constexpr bool invocable = std::is_invocable_v<Target, arg_ref_t<A>..., Extra...>;
  static constexpr bool fits =
      call_kind_of<Validation, const F&, arg_ref_t<A>...>() != call_kind::invalid ||
      call_kind_of<Validation, const F&, arg_ref_t<A>..., hookset::stop_token>() !=
          call_kind::invalid;
  static constexpr bool callable = invocable<const F&> || invocable<const F&, hookset::stop_token>;
  static constexpr bool callable_with_mutable_input =
      std::is_invocable_v<const F&, std::remove_cvref_t<A>&...> ||
      std::is_invocable_v<const F&, std::remove_cvref_t<A>&..., hookset::stop_token>;
  static constexpr bool callable_as_mutable = invocable<F&> || invocable<F&, hookset::stop_token>;
};

template <class Slot, class F,
          class ExpectedCall =
              typename validator_calls<F, typename kind_of<Slot>::parameters>::expected_call>
constexpr bool validator_fits() {
  using kind = kind_of<Slot>;
  if constexpr (!kind::is_pipeline) {
    static_assert(sizeof(Slot) == 0,
                  "hookset: hookset::validator(fn) registers a validating hook, which only a "
                  "Pipeline slot has (it runs after the mutating hooks, on the final input): "
                  "register fn itself on this slot");
    return false;
  } else {
    using calls = validator_calls<F, typename kind::parameters>;
    if constexpr (calls::fits) {
      return true;
    } else if constexpr (calls::callable) {
      static_assert(sizeof(Slot) == 0,
                    "hookset: a validator can only pass or reject: return hookset::Validation "
                    "(hookset::pass() or hookset::reject(reason)) or a Task / awaitable of it, "
                    "not a decision that may rewrite the input (see ExpectedCall)");
      return false;
    } else if constexpr (calls::callable_with_mutable_input) {
      static_assert(sizeof(Slot) == 0,
                    "hookset: a validator sees the final input and cannot change it: take the "
                    "input (and the passed-through parameters) by const reference or by value, "
                    "not by non-const reference (see ExpectedCall)");
      return false;
    } else if constexpr (calls::callable_as_mutable) {
      static_assert(sizeof(Slot) == 0,
                    "hookset: a validator's callable is called as const: make its call "
                    "operator const, or register hookset::validator(std::ref(fn))");
      return false;
    } else {
      static_assert(sizeof(Slot) == 0,
                    "hookset: a validator is called as ExpectedCall: with the slot's input "
                    "and passed-through parameters as const references, a trailing "
                    "std::stop_token parameter allowed");
      return false;
    }
  }
}

// Whether calling Target with the slot's arguments yields a Validation (or an awaitable of one):
// a validator registered without hookset::validator.
template <class Res>
constexpr bool is_validation_result() {
  if constexpr (std::is_same_v<std::remove_cvref_t<Res>, Validation>) return true;
  else if constexpr (is_awaitable_v<Res>)
    return std::is_same_v<std::remove_cvref_t<await_result_t<Res>>, Validation>;
  else return false;
}
template <class Target, class Args>
struct returns_validation;
template <class Target, class... A>
struct returns_validation<Target, mp::mp_list<A...>> {
  static constexpr bool value = [] {
    if constexpr (std::is_invocable_v<Target&, A...>)
      return is_validation_result<std::invoke_result_t<Target&, A...>>();
    else if constexpr (std::is_invocable_v<Target&, A..., hookset::stop_token>)
      return is_validation_result<std::invoke_result_t<Target&, A..., hookset::stop_token>>();
    else return false;
  }();
};

template <class Slot>
constexpr bool report_unwrapped_validator() {
  static_assert(sizeof(Slot) == 0,
                "hookset: this hook returns hookset::Validation: register it as "
                "hookset::validator(hook), so that it runs after every mutating hook, on the "
                "final input (an add_hooks object cannot register validators: use add<Slot>)");
  return false;
}
// For add_hooks: whether object(S{}, args...) returns a Validation, for a pipeline slot S.
template <class S, class Target>
using returns_validation_for = mp::mp_bool<
    kind_of<S>::is_pipeline &&
    returns_validation<Target,
                       mp::mp_push_front<typename hook_ingredients<kind_of<S>>::args, S>>::value>;

// Whether a hook for pipeline slot Slot returns a Validation without being wrapped as one. (Asked
// in a function of its own: an `&&` in an `if constexpr` condition would instantiate the probe,
// two std::is_invocable, for the hook of every slot.)
template <class Slot, class Target>
constexpr bool unwrapped_validator() {
  using kind = kind_of<Slot>;
  if constexpr (!kind::is_pipeline) return false;
  else return returns_validation<Target, typename hook_ingredients<kind>::args>::value;
}

// Whether a hook registered with add<Slot> fits the slot (Target: the stored hook, as it is
// called); otherwise reports why.
template <class Slot, class Target>
constexpr bool hook_fits() {
  using kind = kind_of<Slot>;
  using hook = std::remove_const_t<Target>;
  if constexpr (is_validator<hook>) {
    return validator_fits<Slot, typename validated_callable<hook>::type>();
  } else if constexpr (unwrapped_validator<Slot, Target>()) {
    return report_unwrapped_validator<Slot>();
  } else if constexpr (!hook_shape_ok<Slot, Target>) {
    return report_hook_shape<Slot, typename hook_calls<kind>::expected_call, Target>();
  } else {
    return true;
  }
}

// ---------------------------------------------------------------------------------------------
// Sets

// What call<S>() returns for a slot whose own rules fail (already reported): awaitable, of the
// result the slot declares (T with Output<T>, else R), never run.
template <class S, class Output = option_type<typename S::option_types, is_output>>
using declared_output_t =
    std::conditional_t<std::is_void_v<Output>, typename S::result_type, Output>;
template <class T>
struct ill_formed_slot_dispatch {
  bool await_ready() const noexcept { return true; }
  void await_suspend(std::coroutine_handle<>) const noexcept {}
  T await_resume() const { std::abort(); }
};

template <class Slot, class Set>
constexpr bool report_slot_not_in_set() {
  static_assert(sizeof(Slot) == 0,
                "hookset: this slot is not part of this HookSet: add it to the HookSet's slot list "
                "(or to a nested HookSet)");
  return false;
}
template <class Slot>
constexpr bool report_duplicate_slot() {
  static_assert(sizeof(Slot) == 0,
                "hookset: a slot may appear only once in a HookSet, nested sets included (only "
                "nested sets listed under names, hookset::Nested<Name, Set>, may share slots, "
                "with each other but not with the set's own slots)");
  return false;
}
// Two unnamed nested sets of one type: nested<Set>() could not tell them apart.
template <class NestedSet>
constexpr bool report_nested_set_twice() {
  static_assert(sizeof(NestedSet) == 0,
                "hookset: a nested HookSet type may be listed only once unnamed: list each copy "
                "under a name of its own, hookset::Nested<Name, NestedSet>, and reach it with "
                "nested<Name>()");
  return false;
}
template <class Name>
constexpr bool report_nested_name_twice() {
  static_assert(sizeof(Name*) == 0,  // (a name may be an incomplete type)
                "hookset: two nested sets of a HookSet are named Name (hookset::Nested<Name, Set>, "
                "or an unnamed nested set of type Name): nested<Name>() needs one");
  return false;
}
// A slot that several nested members have (ThroughNames: the names of nested<Name>() for them).
template <class Slot, class ThroughNames>
constexpr bool report_ambiguous_slot() {
  static_assert(sizeof(Slot) == 0,
                "hookset: this slot belongs to more than one nested set of this HookSet (nested "
                "under the names ThroughNames): call, register or count it through "
                "set.nested<Name>() for the one meant");
  return false;
}
// nested<N>() with a set type N listed under several names.
template <class NestedSet, class Names>
constexpr bool report_nested_set_under_names() {
  static_assert(sizeof(NestedSet) == 0,
                "hookset: nested<N>(): N is nested more than once, under the names Names: use "
                "nested<Name>() with one of them");
  return false;
}
template <class Member>
constexpr bool report_invalid_member() {
  static_assert(sizeof(Member) == 0,
                "hookset: HookSet<...> takes slot types (deriving from hookset::Slot<R(Args...), "
                "Mode, ...>), nested HookSets and named nested HookSets (hookset::Nested<Name, "
                "Set>); Member is none of them");
  return false;
}
template <class Object, class Set>
constexpr bool report_implements_nothing() {
  static_assert(sizeof(Object) == 0,
                "hookset: add_hooks(object): the object implements no slot of this HookSet; a slot "
                "S is implemented by a call operator taking S first: object(S, args..., [last])");
  return false;
}
template <class Nested, class Set>
constexpr bool report_not_a_nested_set() {
  static_assert(sizeof(Nested*) == 0,  // (N may be a misspelt name, an incomplete type)
                "hookset: nested<N>(): N must be a HookSet listed directly among this set's "
                "members, or the Name of a member hookset::Nested<Name, Set> (see Set)");
  return false;
}
template <class Slot, class Companion>
constexpr bool report_not_a_companion() {
  static_assert(sizeof(Slot) == 0,
                "hookset: configure<Slot>(companion): the companion's type must be the slot's "
                "Chain<C>, Aggregate<A> or Finalize<F> type C, A or F");
  return false;
}
template <class Slot, class Companion>
constexpr bool report_mutable_companion() {
  static_assert(sizeof(Slot) == 0,
                "hookset: a configured companion is shared by every dispatch of the set and is "
                "called as const: make its call operator const");
  return false;
}
// An interceptor that does not fit its slot (intercept<S>, or one slot of intercept_all).
template <class Slot, class ExpectedCall, class Interceptor>
constexpr bool report_interceptor_shape() {
  static_assert(sizeof(Slot) == 0,
                "hookset: an interceptor is called as interceptor(hookset::Next<Slot> next, "
                "args...) through a const reference, with the slot's arguments as hooks get them, "
                "and returns what the dispatch yields (hookset::call_result_t<Slot>), directly or "
                "as an awaitable such as hookset::Task<call_result_t<Slot>> (ExpectedCall)");
  return false;
}

template <class Slot>
constexpr bool report_call_arity() {
  static_assert(sizeof(Slot) == 0,
                "hookset: call<Slot>(args...) takes exactly the slot's arguments");
  return false;
}

// ---------------------------------------------------------------------------------------------
// Attribution: call<Slot>(args...).with_attribution()

template <class Kind>
constexpr bool report_attributed_void() {
  static_assert(
      sizeof(Kind) == 0,
      "hookset: call<Slot>(args...).with_attribution(): a void slot produces no result to "
      "attribute");
  return false;
}
template <class Kind>
constexpr bool report_attributed_aggregate() {
  static_assert(
      sizeof(Kind) == 0,
      "hookset: call<Slot>(args...).with_attribution(): an Aggregate slot's result is its "
      "companion's, made of every output; to know which registration produced each "
      "output, let the aggregate take std::vector<hookset::Attributed<R>>");
  return false;
}
template <class Kind>
constexpr bool report_attributed_pipeline() {
  static_assert(sizeof(Kind) == 0,
                "hookset: call<Slot>(args...).with_attribution(): a Pipeline slot's result already "
                "names the registration that decided it: PipelineResult::decided_by");
  return false;
}

// ---------------------------------------------------------------------------------------------
// Keyed slots

template <class Slot, class Selector>
constexpr bool report_key_selector_on_unkeyed_slot() {
  static_assert(sizeof(Slot) == 0,
                "hookset: a key selector (hookset::key, prefix, glob, matching, any_key) is for "
                "Keyed slots: add hookset::Keyed to the slot's options, or register the hook "
                "without a selector");
  return false;
}
template <class Slot>
constexpr bool report_not_keyed() {
  static_assert(sizeof(Slot) == 0,
                "hookset: keys<Slot>() and has_hooks<Slot>(key) are for Keyed slots: add "
                "hookset::Keyed to the slot's options");
  return false;
}
template <class Slot>
constexpr bool report_not_historic() {
  static_assert(sizeof(Slot) == 0,
                "hookset: history<Slot>() and clear_history<Slot>() are for Historic slots: add "
                "hookset::Historic<N> to the slot's options to have the set keep its last N calls");
  return false;
}
template <class Slot>
constexpr bool report_keyed_call_arity() {
  static_assert(sizeof(Slot) == 0,
                "hookset: call<Slot>(args..., key) of a Keyed slot takes exactly the slot's "
                "arguments: the key is the last argument");
  return false;
}
template <class Slot, class Predicate, class Key>
constexpr bool report_matcher_shape() {
  static_assert(sizeof(Predicate) == 0,
                "hookset: hookset::matching(predicate): the predicate must be callable as "
                "`bool predicate(const Key&)` with the slot's key type Key (hookset::key_type_t)");
  return false;
}
template <class Slot, class Selector>
constexpr bool report_pattern_on_non_string_key() {
  static_assert(sizeof(Slot) == 0,
                "hookset: hookset::prefix and hookset::glob select string keys: this Keyed "
                "slot's key is not a string; use hookset::matching(predicate)");
  return false;
}
template <class Slot, class Key, class Given>
constexpr bool report_key_type() {
  static_assert(sizeof(Slot) == 0,
                "hookset: hookset::key(value): Given does not convert to the slot's key type Key "
                "(hookset::key_type_t)");
  return false;
}

// ---------------------------------------------------------------------------------------------
// Stateful

template <class Slot, class Hook, class Expected, class Returned>
constexpr bool report_on_reentrancy_result() {
  static_assert(sizeof(Hook) == 0,
                "hookset: Stateful<T>: T::on_reentrancy(ReentrancyError) must return what the "
                "hook returns for the slot (Expected), directly or as an awaitable");
  return false;
}

}  // namespace hookset::detail
