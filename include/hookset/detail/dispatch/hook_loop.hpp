#pragma once
// The hook loop of a dispatch: the hooks from next_ on, between the rules' start and finish
// (rules.hpp). The leading stretch of plain hooks runs here, inline - the call alone, each output
// taken - and the rest in the frame's loop with bookkeeping (frame.ipp), one copy for every kind,
// through this kind's entry points (steps.hpp). Here too what calls one hook of this kind: a
// plain one, a coroutine one's Task, and the conclusion of a hook that returned or threw.

#include <cstddef>
#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/dispatch/hook_outcome.hpp>
#include <hookset/detail/hook_list.hpp>

namespace hookset::detail {

template <class Dispatch>  // (the dispatch grants the loop its friendship)
class hook_loop {
  using Kind = typename Dispatch::kind;
  using result = typename Dispatch::result;
  using rules = typename Dispatch::rules;
  using entry = hook_entry;
  using next = progress;
  using indices = typename Dispatch::indices;
  static constexpr bool is_void = Dispatch::is_void;
  static constexpr bool judges_outputs = Dispatch::judges_outputs;
  static constexpr bool attributes_result = Dispatch::attributes_result;
  static constexpr bool substitutes = Dispatch::substitutes;

 public:
  // The hooks from next_ on: the leading plain stretch inline, the rest out of line - one loop
  // for every kind, the frame's (frame.ipp), through this kind's bookkept_steps.
  HOOKSET_ALWAYS_INLINE static bool run_hooks(Dispatch& self) {
    if (!self.bookkept()) [[likely]] {
      const next after = run_plain_stretch(self);
      if (after != next::more) return after == next::stop && rules::finish_stopped(self);
      if (self.next_ == self.count_) return rules::finish(self);
    }
    return self.run_hooks_with_bookkeeping(self.bookkept_steps);
  }
  // The leading plain hooks (synchronous, no time limit, failures propagate) from next_ on, of a
  // dispatch with no context that nobody asked for hook events: the call alone, each output
  // taken (take_output). Stops at the end of the stretch, or after an output the chain companion
  // breaks on (or suspends on). hooks_run (next_) counts the hook that threw.
  HOOKSET_ALWAYS_INLINE static next run_plain_stretch(Dispatch& self) {
    const entry* const hooks = self.hooks_;
    const std::size_t first = self.next_;
    const std::size_t end = self.plain_end_;
    if (first >= end) return next::more;
    // Without a companion judging outputs, next_ and produced_ are written once, after the
    // stretch (or by the handler, when a hook throws). So for an aggregate's outputs collected
    // in place, which never end the stretch: into a presized list, or plain values pushed.
    // (Not for a pushed value that owns memory: GCC then made the loop longer, +63 instructions
    // at 8 hooks for an Aggregate of verdicts.)
    constexpr bool counts_at_end =
        !judges_outputs || rules::presized ||
        (rules::collects_in_place && std::is_trivially_copyable_v<typename Dispatch::result>);
    if constexpr (counts_at_end && Kind::is_fold && last_in_registers<result>) {
      // `last` stays in registers from hook to hook; memory sees only the final one.
      const entry* hook = hooks + first;
      try {
        const bool has_last = self.value_.has_value();
        self.value_ = plain_loops<Dispatch>::fold_hooks(
            hook, hooks + end, has_last ? *self.value_ : result{}, has_last, self.args_, indices{});
      } catch (...) {
        self.next_ = static_cast<std::size_t>(hook - hooks) + 1;
        throw;
      }
      self.next_ = end;
      self.produced_ += end - first;
      if constexpr (attributes_result) self.produced_by(hooks + end - 1);  // (first < end)
      return next::more;
    } else {
      std::size_t i = first;
      try {
        for (; i != end; ++i) {
          const entry& hook = hooks[i];
          if constexpr (!counts_at_end) self.next_ = i + 1;
          if constexpr (rules::collects_in_place) {
            rules::collect_plain(self, hook);
            continue;
          }
          call_plain(self, hook);
          if constexpr (!counts_at_end) {
            ++self.produced_;
            self.produced_by(&hook);
            const next after = rules::take_output(self);
            if (after != next::more) return after;
          }
        }
      } catch (...) {
        if constexpr (counts_at_end) self.next_ = i + 1;
        throw;
      }
      if constexpr (counts_at_end) {
        self.next_ = i;
        self.produced_ += i - first;
        if constexpr (attributes_result) self.produced_by(hooks + i - 1);  // (first < i)
      }
      return next::more;
    }
  }
  HOOKSET_ALWAYS_INLINE static bool continue_after(Dispatch& self, next n) {
    switch (n) {
      case next::more:
        return run_hooks(self);
      case next::stop:
        return rules::finish_stopped(self);
      case next::suspended:
        return false;
    }
    return false;
  }
  static void call_plain(Dispatch& self, const entry& hook) {
    const auto sync = sync_call_of<Kind>(hook);
    if constexpr (is_void) self.call_with_args(sync, hook.object);
    else if constexpr (Kind::is_fold)
      keep_output(self, call_fold(self, sync, hook.object, std::move(self.value_)));
    else keep_output(self, self.call_with_args(sync, hook.object));
  }
  // A hook's output, kept aside until its fate was known, becomes the newest. A pipeline's
  // decision is made in place: assigning one variant to another is its converting move for every
  // pair of alternatives (1 KB of code). Any other output is assigned: a value that owns memory
  // moves into the old one's (made in place, it cost a verdict slot 20 instructions a hook).
  template <class Output>  // (result, as a template: it is void for some kinds)
  static void keep_output(Dispatch& self, Output&& output) {
    if constexpr (Kind::is_pipeline) self.value_.emplace(std::forward<Output>(output));
    else if constexpr (Kind::has_aggregate && !std::is_trivially_copyable_v<result>)
      keep_output_to_collect(self, std::forward<Output>(output));
    else self.value_ = std::forward<Output>(output);
  }
  // An aggregate's output passes through value_ on its way to the list (the bookkept and the
  // driven paths; a plain hook's is made in the list). One copy per kind, made anew (the old one
  // is moved out; a verdict's assignment is 0.25 KB). (A template: a void slot has no output.)
  template <class Output>
  HOOKSET_NOINLINE static void keep_output_to_collect(Dispatch& self, Output&& output) {
    self.value_.emplace(std::forward<Output>(output));
  }
  // Calls a fold hook with `last` as the erased call takes it (last_wire).
  template <class Fn>
  static decltype(auto) call_fold(Dispatch& self, Fn fn, void* object,
                                  std::optional<result>&& last) {
    if constexpr (last_in_registers<result>) {
      const bool has_last = last.has_value();
      return self.call_with_args(fn, object, has_last ? *last : result{}, has_last);
    } else {
      return self.call_with_args(fn, object, std::move(last));
    }
  }
  // The Task of an asynchronous hook (not started: Tasks are lazy).
  static Task<result> start_async_hook(Dispatch& self, const entry& hook) {
    const auto async = async_call_of<Kind>(hook);
    if constexpr (Kind::is_fold) return call_fold(self, async, hook.object, last_for(self, hook));
    else return self.call_with_args(async, hook.object);
  }
  // A hook returned (error null) or threw: what that means for the dispatch
  // (conclude_bookkept_hook: its own time limit, a stop of the dispatch, its failure policy, its
  // events). Here only what needs the slot's types: the output an aggregate makes of a failure,
  // and the count of outputs with their producer. A hook that returned in a dispatch with no
  // context and no hook events has nothing else to conclude: inline, no call.
  static hook_step conclude_hook(Dispatch& self, const entry& hook, std::exception_ptr error,
                                 bool own_limit_expired = false) {
    hook_step step = hook_step::produced;
    if (self.bookkept() || error || own_limit_expired) [[unlikely]] {
      // A quiet hook's failure, nothing watching: it propagates as it is, with nothing to tell
      // (and no watched code to reach).
      if (!self.bookkept() && hook.quiet) std::rethrow_exception(error);
      step = self.observers_.code->conclude_bookkept_hook(self.bookkept(hook), self.hook_started_,
                                                          error, own_limit_expired, substitutes,
                                                          Kind::is_pipeline);
      if (step == hook_step::skipped) return step;
    }
    count_output(self, hook, step, error);
    return step;
  }
  // A hook's output counts, with its producer (substituted: the output made of its failure).
  HOOKSET_ALWAYS_INLINE static void count_output(Dispatch& self, const entry& hook,
                                                 [[maybe_unused]] hook_step step,
                                                 [[maybe_unused]] const std::exception_ptr& error) {
    if constexpr (substitutes)
      if (step == hook_step::substituted)  // (a verdict slot: the lattice's failed verdict)
        substitute_failed_output(self, error);
    ++self.produced_;
    self.produced_by(&hook);
  }
  // (Out of line: the rare path, whose verdict holds strings.)
  HOOKSET_NOINLINE static void substitute_failed_output(Dispatch& self,
                                                        const std::exception_ptr& error) {
    if constexpr (substitutes) keep_output(self, Kind::aggregate::failed_hook_output(error));
  }
  // The `last` a fold hook receives: the current one, moved - except for a FailOpen hook,
  // which gets a copy when it can, so that a failure leaves `last` as if the hook had not run.
  static std::optional<result> last_for(Dispatch& self, const entry& hook) {
    if constexpr (Kind::is_fold) {
      if constexpr (std::is_copy_constructible_v<result>)
        if (hook.on_failure == FailurePolicy::fail_open) return self.value_;
      return std::move(self.value_);
    } else {
      return std::nullopt;
    }
  }
  static bool after_hook(Dispatch& self, std::exception_ptr error, value_holder<result>&& output) {
    const hook_step step = conclude_hook(self, *self.current_, std::move(error));
    if (step == hook_step::skipped) return run_hooks(self);
    if constexpr (!is_void) {  // (substituted: value_ holds the output made of the failure)
      if (step != hook_step::substituted) {
        if (output) keep_output(self, std::move(*output));
        else self.value_.reset();
      }
    }
    return continue_after(self, rules::take_output(self));
  }
};

}  // namespace hookset::detail
