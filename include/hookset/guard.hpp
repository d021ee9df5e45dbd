#pragma once
// Verdict aggregation: decision hooks whose verdicts form a lattice (deny > ask > allow by
// default), joined into one decision that lists every contribution (docs/semantics.md,
// "Verdict slots").
//
//   struct CheckTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall&), hookset::Always,
//                                           hookset::Concurrent> {
//     static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
//   };
//   hookset::Verdicts<> v = co_await hooks.call<CheckTool>(call);
//   if (v.decision == hookset::Permission::deny) refuse(v.decided_by()->value.reason);

#include <concepts>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <hookset/attributed.hpp>
#include <hookset/companions.hpp>
#include <hookset/errors.hpp>
#include <hookset/slot.hpp>

namespace hookset {

// The default lattice's decisions, from the bottom up.
enum class Permission { allow, ask, deny };

// What one verdict hook returns.
template <class D = Permission>
struct Verdict {
  D decision{};
  std::string reason{};
  // Set when the verdict stands for a hook's failure, not its judgement: under FailClosed a hook
  // that throws or exceeds its own time limit contributes the lattice's failed verdict with what
  // it threw (or the DispatchTimeout) here (JoinVerdicts::failed_hook_output). So a caller tells
  // "denied" from "could not decide" (refuse, or try again later).
  std::exception_ptr failure{};

  bool failed() const noexcept { return static_cast<bool>(failure); }
};

// The lattice of decisions D. Specialise it for a decision type of your own (or give
// JoinVerdicts a lattice type with the same three members):
//   static constexpr D bottom;          // the join of no verdict at all (join's identity)
//   static constexpr D failed;          // what a failed hook counts as under FailClosed
//   static constexpr D join(D, D);      // commutative, associative, idempotent
template <class D>
struct verdict_lattice;

template <>
struct verdict_lattice<Permission> {
  static constexpr Permission bottom = Permission::allow;
  static constexpr Permission failed = Permission::deny;
  static constexpr Permission join(Permission a, Permission b) noexcept { return a < b ? b : a; }
};

namespace detail {
template <class L, class D>
concept verdict_lattice_for = requires(D a, D b) {
  { L::bottom } -> std::convertible_to<D>;
  { L::failed } -> std::convertible_to<D>;
  { L::join(a, b) } -> std::convertible_to<D>;
};
}  // namespace detail

// A verdict slot's result: the join of every verdict, and each verdict with the registration
// that gave it (an empty HookId: the slot's default), in registration order (the default
// first under Always).
template <class D = Permission>
struct Verdicts {
  D decision{};
  std::vector<Attributed<Verdict<D>>> contributions{};

  // The first contribution whose verdict is the joined decision (null if none is: no
  // contribution at all, or a join that is none of its inputs).
  const Attributed<Verdict<D>>* decided_by() const noexcept {
    for (const auto& contribution : contributions)
      if (contribution.value.decision == decision) return &contribution;
    return nullptr;
  }
};

// The aggregate companion of a verdict slot: joins the verdicts in lattice L. Under FailClosed
// a hook that fails (throws, or exceeds its own time limit) contributes L::failed with the
// error's text as its reason and the error as its failure, instead of failing the dispatch.
template <class D = Permission, class L = verdict_lattice<D>>
struct JoinVerdicts {
  using verdict_type = Verdict<D>;    // what its slot's hooks return
  using verdicts_type = Verdicts<D>;  // what its slot's dispatch returns (Output<Verdicts<D>>)
  using lattice = L;
  // (A slot using it checks this: diagnostics.hpp.)
  static constexpr bool lattice_complete = detail::verdict_lattice_for<L, D>;

  Verdicts<D> operator()(std::vector<Attributed<Verdict<D>>> verdicts) const {
    D joined = L::bottom;
    for (const auto& contribution : verdicts) joined = L::join(joined, contribution.value.decision);
    return Verdicts<D>{joined, std::move(verdicts)};
  }

  static Verdict<D> failed_hook_output(const std::exception_ptr& error) {
    return Verdict<D>{L::failed, detail::exception_text(error), error};
  }
};

// A verdict slot in one line: VerdictSlot<Verdict<D>(Args...), Mode, Options...> is
// Slot<Verdict<D>(Args...), Mode, Options..., Aggregate<JoinVerdicts<D>>, Output<Verdicts<D>>>.
namespace detail {
// D of a signature Verdict<D>(Args...); for any other signature, Permission (and the slot's
// checks report that its hooks do not return a verdict).
template <class Signature>
struct verdict_decision_of {
  using type = Permission;
};
template <class D, class... Args>
struct verdict_decision_of<Verdict<D>(Args...)> {
  using type = D;
};
}  // namespace detail
template <class Signature, class... Options>
struct VerdictSlot
    : Slot<Signature, Options...,
           Aggregate<JoinVerdicts<typename detail::verdict_decision_of<Signature>::type>>,
           Output<Verdicts<typename detail::verdict_decision_of<Signature>::type>>> {};

}  // namespace hookset
