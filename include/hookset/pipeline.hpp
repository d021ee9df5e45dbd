#pragma once
// Decision pipelines: a slot whose hooks decide on an input, one after another.
//
//   struct CheckToolCall : hookset::Slot<ToolResult(ToolCall), hookset::Pipeline> {
//     static ToolResult default_impl(const ToolCall& call);   // runs the tool
//   };
//   set.add<CheckToolCall>([](const ToolCall& call) -> hookset::decision_t<CheckToolCall> {
//     if (call.path.starts_with("/etc")) return hookset::reject("outside the workspace");
//     if (call.path.empty()) return hookset::rewrite(ToolCall{call.tool, "."});
//     return hookset::pass();
//   });
//   auto outcome = hookset::sync_wait(set.call<CheckToolCall>(call));
//   if (outcome.rejected()) ...outcome.reason()...; else ...outcome.output()...; outcome.input
//
// Each hook gets the current input and returns a Decision: pass it on unchanged (pass()) or
// rewritten (rewrite(input)), or end the dispatch (complete(output), reject(reason), or one of
// the slot's own terminal kinds, declared with hookset::Terminals<Pause, Escalate, ...>). The
// first terminal decision ends the dispatch; when every hook passes, the default runs on the
// final input and its output completes it. The dispatch returns a PipelineResult: the terminal
// decision and the input as finally rewritten.
//
// Parameters after the first are passed through: every hook and the default get them as the
// caller gave them (by value or const reference), and no decision changes them.
//
//   struct DecideToolCall : hookset::Slot<ToolResult(ToolCall, const ToolMeta&),
//                                         hookset::Pipeline, hookset::Fallback> {
//     static hookset::Decision<ToolCall, ToolResult> default_impl(const ToolCall&,
//                                                                const ToolMeta&);
//   };
//
// With Fallback, the default decides like a hook - and runs only when no hook is registered
// (as a Fallback slot's default). Once hooks are registered and all of them pass, the dispatch
// ends in Pass: "run normally", on the input as finally rewritten (result.passed(),
// result.input). A pass or rewrite from the default ends the dispatch the same way.
//
// Phases: mutate, then validate. A hook registered as a validator runs after every other
// (mutating) hook of the slot, whatever the registration order, on the final input:
//
//   set.add<CheckToolCall>(hookset::validator([](const ToolCall& call) -> hookset::Validation {
//     return call.path.starts_with("/etc") ? hookset::reject("outside the workspace")
//                                          : hookset::Validation(hookset::pass());
//   }));
//
// It takes the input as const& and returns a Validation - pass() or reject(reason), nothing
// that rewrites (a compile error otherwise). The validators run in their own order (priority,
// named order, registration); the first reject ends the dispatch (decided_by names it).

#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include <hookset/hook_id.hpp>

namespace hookset {

// Slot option: the application's own terminal decisions (e.g. a Pause, an Escalate{reason}).
template <class... Custom>
struct Terminals {};

// The decisions, as values.
struct Pass {};
template <class Input>
struct Rewrite {
  Input input;
};
template <class Output>
struct Complete {
  Output output;
};
struct Reject {
  std::string reason;
};

inline Pass pass() noexcept { return {}; }
template <class Input>
Rewrite<std::decay_t<Input>> rewrite(Input&& input) {
  return {std::forward<Input>(input)};
}
template <class Output>
Complete<std::decay_t<Output>> complete(Output&& output) {
  return {std::forward<Output>(output)};
}
inline Reject reject(std::string reason) { return {std::move(reason)}; }

template <class Input, class Output, class... Custom>
class Decision;

// What a validator returns: pass or reject, nothing else - it cannot rewrite the input, nor
// complete the dispatch.
class Validation {
 public:
  Validation(Pass) noexcept {}
  Validation(Reject rejected) : rejection_(std::move(rejected)) {}

  bool passes() const noexcept { return !rejection_; }
  bool rejects() const noexcept { return rejection_.has_value(); }
  // The reason, when rejected (std::bad_optional_access otherwise).
  const std::string& reason() const { return rejection_.value().reason; }

 private:
  template <class, class, class...>
  friend class Decision;
  std::optional<Reject> rejection_;
};

// A validating hook of a pipeline slot: set.add<S>(hookset::validator(fn), options). It runs
// after every mutating hook of the slot, on the final input: fn(const Input&, const
// PassThrough&...) returns a Validation (or a Task / awaitable of one).
template <class F>
class Validator {
 public:
  Validator() = default;
  explicit Validator(F fn) : fn_(std::move(fn)) {}

  // Everything const: the validator sees the input, it cannot change it.
  template <class... A>
  requires std::invocable<const F&, const A&...>
  decltype(auto) operator()(const A&... args) const { return fn_(args...); }

 private:
  [[no_unique_address]] F fn_;  // (a captureless fn: an empty Validator, stored nowhere)
};

template <class F>
Validator<std::decay_t<F>> validator(F&& fn) {
  return Validator<std::decay_t<F>>(std::forward<F>(fn));
}

namespace detail {
template <class T>
inline constexpr bool is_validator = false;
template <class F>
inline constexpr bool is_validator<Validator<F>> = true;
template <class T>
struct validated_callable;
template <class F>
struct validated_callable<Validator<F>> {
  using type = F;
};
}  // namespace detail

// What a hook of a pipeline slot returns (hookset::decision_t<S> names it for slot S).
template <class Input, class Output, class... Custom>
class Decision {
 public:
  using variant_type = std::variant<Pass, Rewrite<Input>, Complete<Output>, Reject, Custom...>;

  Decision() = default;  // pass
  Decision(Pass) noexcept {}
  template <class I>
  requires std::constructible_from<Input, I&&> Decision(Rewrite<I> rewritten)
      : value_(std::in_place_type<Rewrite<Input>>,
               Rewrite<Input>{Input(std::move(rewritten.input))}) {}
  template <class O>
  requires std::constructible_from<Output, O&&> Decision(Complete<O> completed)
      : value_(std::in_place_type<Complete<Output>>,
               Complete<Output>{Output(std::move(completed.output))}) {}
  Decision(Reject rejected) : value_(std::move(rejected)) {}
  // A validator's answer (see Validator): pass or reject.
  Decision(Validation validated) {
    if (validated.rejection_) value_.template emplace<Reject>(std::move(*validated.rejection_));
  }
  template <class C>
  requires(std::is_same_v<std::decay_t<C>, Custom> || ...) Decision(C&& custom)
      : value_(std::forward<C>(custom)) {}

  bool passes() const noexcept { return value_.index() <= 1; }  // pass or rewrite
  bool rewrites() const noexcept { return value_.index() == 1; }
  bool is_terminal() const noexcept { return !passes(); }
  template <class Alternative>
  bool is() const noexcept {
    return std::holds_alternative<Alternative>(value_);
  }
  const variant_type& variant() const& noexcept { return value_; }
  variant_type& variant() & noexcept { return value_; }

 private:
  variant_type value_;
};

// What a pipeline dispatch returns: the terminal decision, the input as finally rewritten, and
// the registration that decided (empty when every hook passed, or the default decided).
// A Pipeline + Fallback slot's result lists Pass first among Custom: its "run normally".
template <class Input, class Output, class... Custom>
struct PipelineResult {
  std::variant<Complete<Output>, Reject, Custom...> decision;
  Input input;
  HookId decided_by;

  bool completed() const noexcept { return decision.index() == 0; }
  bool rejected() const noexcept { return decision.index() == 1; }
  // Every hook passed, or the deciding default passed: run normally, on `input`.
  bool passed() const noexcept {
    if constexpr ((std::is_same_v<Custom, Pass> || ...)) return is<Pass>();
    else return false;  // (a pipeline whose default completes never ends in Pass)
  }
  template <class Alternative>
  bool is() const noexcept {
    return std::holds_alternative<Alternative>(decision);
  }
  template <class Alternative>
  const Alternative& get() const {
    return std::get<Alternative>(decision);
  }
  // The output, when completed (std::bad_variant_access otherwise).
  const Output& output() const { return std::get<0>(decision).output; }
  // The reason, when rejected (std::bad_variant_access otherwise).
  const std::string& reason() const { return std::get<1>(decision).reason; }
};

}  // namespace hookset
