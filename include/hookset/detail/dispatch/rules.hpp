#pragma once
// The rules of a dispatch. Each is stated once, in the function named after it:
//   start       Always: the default runs first and its output is taken like a hook's;
//               Fallback, Singleton: nothing runs before the hooks.
//   take_output what happens to each output (the default's under Always, then each hook's):
//               a fold slot keeps it as the next `last`; a chain companion judges it (Break ends
//               the hooks); an aggregate collects it; a Pipeline's decision passes the input on
//               or ends the dispatch (pipeline_rules.hpp).
//   finish      when the hooks are done: a Fallback or Singleton slot whose hooks produced no
//               output runs its default alone (run_sole_default); a Fallback + Chain slot whose
//               hooks all said Continue has the default's last word; then the result is
//               produced (produce_result: aggregate, finalize, or the last output).
//
// Every step returns true when the dispatch is complete and false when it left an awaitable
// pending (an asynchronous default or companion), naming in the dispatch's `resume_` the step
// that takes its value (a `step`: one of these functions). The hook loop between start and
// finish is the dispatch's (dispatch.hpp: run_hooks), and the frame's with bookkeeping.

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/attributed.hpp>
#include <hookset/companions.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/collect.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/hook_id.hpp>

namespace hookset::detail {

// Whether calling a companion C as const calls what a non-const lvalue of it calls: C has one
// call operator (not overloaded, not a template), and it is const.
template <class Member>
inline constexpr bool is_const_call_operator = false;
template <class R, class C, class... A, bool no_throw>
inline constexpr bool is_const_call_operator<R (C::*)(A...) const noexcept(no_throw)> = true;
template <class C>
concept one_const_call_operator = is_const_call_operator<decltype(&C::operator())>;

template <class Dispatch>  // (the dispatch grants the rules its friendship)
class dispatch_rules : public aggregate_collection<Dispatch> {
  using collecting = aggregate_collection<Dispatch>;
  using Kind = typename Dispatch::kind;
  using result = typename Dispatch::result;
  using output = typename Dispatch::output;
  using entry = hook_entry;
  using next = progress;
  using step = typename Dispatch::step;
  using pending_kind = typename Dispatch::pending_kind;
  static constexpr bool is_void = Dispatch::is_void;
  static constexpr bool attributed = Dispatch::attributed;

 public:
  // (The collection's names, used here unqualified and by the other layers as the rules'.)
  using collecting::collect;
  using collecting::collect_output;
  using collecting::collects_default_in_place;
  using collecting::fill_collected;
  using collecting::make_list_for_default;
  using collecting::presized;
  using collecting::reserve_outputs;
  using collecting::watched;
  using typename collecting::attribute;
  // The rules over the snapshot (list_; null: no hook) - for watched_policy::start, after its
  // bookkeeping began, and for a dispatch whose hooks are all plain (hook_entry::plain), unwatched
  // and without options (plain_loops::start): no observer to tell, no context to begin or end, no
  // time limit, every failure propagates. One out-of-line copy for both.
  HOOKSET_NOINLINE static bool start_snapshot(Dispatch& self) {
    if (self.list_) [[likely]] {
      self.hooks_ = self.list_->hooks.data();
      self.count_ = self.list_->hooks.size();
      self.plain_end_ = self.list_->leading_plain;  // (all of them when all are plain)
      if constexpr (Kind::has_chain) self.chain_.bind(self.list_->chain);
      if constexpr (Kind::has_aggregate) self.aggregate_.bind(self.list_->aggregate);
      if constexpr (Kind::has_finalize) self.finalize_.bind(self.list_->finalize);
    } else {
      self.count_ = self.plain_end_ = 0;
    }
    self.next_ = self.produced_ = 0;
    if (!self.chain_.usable() || !self.aggregate_.usable() || !self.finalize_.usable()) [[unlikely]]
      throw_companion_not_configured(self.slot_->name);
    if constexpr (Kind::has_aggregate) reserve_outputs(self);
    // Hooks may change the set: keep this snapshot alive. (The lean scope: a function out of
    // line, never inlined into a coroutine - config.hpp.)
    lean_sync_dispatch_scope scope;
    if (start(self)) return true;
    // Suspending (an asynchronous default, hook or companion): from here on the dispatch owns
    // a reference to its snapshot, taken while the synchronous scope still protects it (it may
    // already be parked).
    if (self.list_) self.hold_list();
    return false;
  }
  HOOKSET_ALWAYS_INLINE static bool start(Dispatch& self) {
    if constexpr (collects_default_in_place) {
      // The default's output straight into the list (an asynchronous one: after_head).
      if (!call_default_into_list(self, &after_head)) return false;
      return after_output_taken(self);
    } else if constexpr (Kind::is_always) {
      if (!call_default(self, &after_head)) return false;
      if constexpr (Kind::has_aggregate) return after_head(self);  // (below)
      else return after_head_inline(self);
    } else {
      return Dispatch::loop::run_hooks(self);
    }
  }
  // start() for a slot with no hooks: the same rules, with the hook loop left out.
  HOOKSET_ALWAYS_INLINE static bool start_without_hooks(Dispatch& self) {
    // The counters, where they are read: by finish (produced_) but for a fold or a void slot,
    // whose synchronous default ends the dispatch; by a step resumed after an asynchronous
    // default or companion (all of them).
    constexpr bool ends_with_default = Kind::is_always && !Kind::has_chain && !Kind::has_producer;
    if (!ends_with_default || !self.slot().default_sync)
      self.next_ = self.count_ = self.produced_ = self.plain_end_ = 0;
    if constexpr (Kind::is_always) {
      if constexpr (Kind::has_aggregate && !Kind::has_chain) {
        if constexpr (collects_default_in_place) {
          // As start(), in a list of one.
          make_list_for_default(self);
          if (!call_default_into_list(self, &after_head)) return false;
          return produce_result(self);
        } else {
          if (!call_default(self, &after_head)) return false;
          return aggregate_default_alone(self);
        }
      }
      if (!call_default(self, &after_head)) return false;
      if (take_output(self) == next::suspended) return false;
    }
    return finish(self);
  }
  // An aggregate with no hook receives the default's output alone, collected in a vector made
  // for exactly one (no growth; an unwatched dispatch: no output watch to tell). (An attributed
  // output collected in place goes straight into the dispatch's list: start_without_hooks.)
  HOOKSET_ALWAYS_INLINE static bool aggregate_default_alone(Dispatch& self) {
    using collected = typename Dispatch::collected;
    std::vector<collected> alone;
    if constexpr (std::is_default_constructible_v<result> &&
                  std::is_nothrow_move_assignable_v<result>) {
      alone = std::vector<collected>(1);
      fill_collected(alone.front(), *self.value_, nullptr);
    } else {
      alone.reserve(1);
      if constexpr (attributed) alone.emplace_back(attribute{*self.value_, nullptr});
      else alone.push_back(std::move(*self.value_));
    }
    return aggregate_outputs(self, std::move(alone));
  }
  HOOKSET_NOINLINE static bool start_without_hooks_outlined(Dispatch& self) {
    return start_without_hooks(self);
  }
  // After the default's output, the rest of the dispatch: inline into start() but for the
  // kinds that collect outputs, whose rest is large (there start() calls the out-of-line copy
  // a dispatch resumed after an asynchronous default runs anyway: 0.6-1 KB per kind; where the
  // default's output went straight into the list, the hooks' part alone: after_output_taken).
  static bool after_head(Dispatch& self) {
    if constexpr (collects_default_in_place) {
      collect(self);  // (an asynchronous default's output, in value_)
      return after_output_taken(self);
    } else {
      return after_head_inline(self);
    }
  }
  // The hooks and the end, after start() collected the default's output in place: the copy of
  // the hook loop start() and after_head share.
  HOOKSET_NOINLINE static bool after_output_taken(Dispatch& self) {
    return Dispatch::loop::run_hooks(self);
  }
  HOOKSET_ALWAYS_INLINE static bool after_head_inline(Dispatch& self) {
    return Dispatch::loop::continue_after(self, take_output(self));
  }
  HOOKSET_ALWAYS_INLINE static next take_output(Dispatch& self) {
    if constexpr (Kind::is_pipeline) {
      return pipeline_rules<Dispatch>::take_decision(self);
    } else if constexpr (Kind::has_chain) {
      return self.chain_.visit([&](auto& chain) {
        using verdict = decltype(chain(std::as_const(*self.value_)));
        if constexpr (classify_result<verdict, Flow>() == call_kind::sync) {
          return after_verdict(self, chain(std::as_const(*self.value_)));
        } else {
          self.pending_flow_.emplace(to_task<Flow>(chain(std::as_const(*self.value_))));
          self.suspend_into(pending_kind::flow, &resume_after_verdict, &Dispatch::suspended_driver);
          return next::suspended;
        }
      });
    } else {
      collect(self);
      return next::more;
    }
  }
  HOOKSET_ALWAYS_INLINE static next after_verdict(Dispatch& self, Flow flow) {
    collect(self);
    return flow == Flow::Break ? next::stop : next::more;
  }
  static bool resume_after_verdict(Dispatch& self) {
    return Dispatch::loop::continue_after(self, after_verdict(self, self.flow_));
  }
  HOOKSET_ALWAYS_INLINE static bool finish(Dispatch& self) {
    if constexpr (Kind::is_pipeline) return pipeline_rules<Dispatch>::finish(self);
    if constexpr (!Kind::is_always) {
      if (self.produced_ == 0) return run_sole_default(self);
    }
    if constexpr (Kind::is_fallback && Kind::has_chain && !Kind::has_aggregate) {
      // Every hook said Continue: the default has the last word.
      if (!call_default(self, &produce_result)) return false;
    }
    return produce_result(self);
  }
  // The hooks were stopped (progress::stop): a chain's Break, a pipeline's terminal decision.
  HOOKSET_ALWAYS_INLINE static bool finish_stopped(Dispatch& self) {
    if constexpr (Kind::is_pipeline) return true;  // the terminal decision made the result
    else if constexpr (Kind::is_fallback && Kind::has_chain && !Kind::has_aggregate)
      return produce_result(self);  // the hook that broke answered: not the default
    else return finish(self);
  }
  HOOKSET_ALWAYS_INLINE static bool run_sole_default(Dispatch& self) {
    if (!call_default(self, &after_sole_default)) return false;
    return after_sole_default(self);
  }
  HOOKSET_ALWAYS_INLINE static bool after_sole_default(Dispatch& self) {
    if constexpr (Kind::has_aggregate && !Kind::has_output) {
      self.output_.emplace(std::move(*self.value_));  // returned directly, not aggregated
      return true;
    } else {
      if constexpr (presized)
        if (self.outputs_.empty()) make_list_for_default(self);  // (a dispatch without hooks)
      collect(self);
      return produce_result(self);
    }
  }
  HOOKSET_ALWAYS_INLINE static bool produce_result(Dispatch& self) {
    if constexpr (presized)
      if (self.outputs_.size() > self.collected_) [[unlikely]]
        drop_unfilled(self);
    if constexpr (Kind::has_aggregate) return aggregate_outputs(self, std::move(self.outputs_));
    else if constexpr (Kind::has_finalize)
      return self.finalize_.visit(
          [&](auto& finalize) { return call_producer(self, finalize, std::move(*self.value_)); });
    else return true;  // the result is value_ itself
  }
  // A presized list's elements that no output filled (a hook skipped by FailOpen): rare, so
  // dropped out of line (destroying an attributed verdict is 0.1 KB at each place).
  HOOKSET_NOINLINE static void drop_unfilled(Dispatch& self) {
    while (self.outputs_.size() > self.collected_) self.outputs_.pop_back();
  }
  // The aggregate's call on the outputs. Outputs that own memory (a verdict's strings) make it
  // large: one copy out of line, for the hooks' outputs and the default's alone; outputs that
  // are plain values keep it inline (a call would cost a one-hook dispatch 2 %).
  template <class Outputs>  // (a template: outputs_ does not exist without an aggregate)
  HOOKSET_ALWAYS_INLINE static bool aggregate_outputs(Dispatch& self, Outputs&& outputs) {
    if constexpr (std::is_trivially_copyable_v<result>)
      return aggregate_outputs_here(self, std::forward<Outputs>(outputs));
    else return aggregate_outputs_outlined(self, std::forward<Outputs>(outputs));
  }
  template <class Outputs>
  HOOKSET_ALWAYS_INLINE static bool aggregate_outputs_here(Dispatch& self, Outputs&& outputs) {
    return self.aggregate_.visit([&](auto& aggregate) {
      return call_producer(self, aggregate, std::forward<Outputs>(outputs));
    });
  }
  template <class Outputs>
  HOOKSET_NOINLINE static bool aggregate_outputs_outlined(Dispatch& self, Outputs&& outputs) {
    using aggregate = typename Kind::aggregate;
    if constexpr (one_const_call_operator<aggregate>) {
      // The companion chosen (the set's, else the dispatch's own), then called at one place:
      // visit() has two calls, each a copy of the call (0.3 KB for a verdict slot's). Only where
      // the dispatch's own, a non-const lvalue, calls the same operator as const.
      const aggregate& chosen =
          self.aggregate_.visit([](const aggregate& c) -> const aggregate& { return c; });
      return call_producer(self, chosen, std::forward<Outputs>(outputs));
    } else {
      return aggregate_outputs_here(self, std::forward<Outputs>(outputs));
    }
  }
  // Runs the default; false (with `then` as the step to resume) when it is asynchronous.
  HOOKSET_ALWAYS_INLINE static bool call_default(Dispatch& self, step then) {
    if (self.has_context()) [[unlikely]]
      self.check_stop();
    if constexpr (Kind::is_pipeline) {
      // The default ends the pipeline (pipeline_rules::default_outcome), on the input as
      // finally rewritten.
      if (self.slot().default_sync) [[likely]] {
        self.output_.emplace(pipeline_rules<Dispatch>::default_outcome(
            self, self.call_with_args(self.slot().default_sync, nullptr)));
        return true;
      }
      return Dispatch::driver_code_from(self.slot_->suspended_driver)->call_default(self, then);
    } else {
      self.produced_by(nullptr);
      if (self.slot().default_sync) [[likely]] {
        if constexpr (is_void) self.call_with_args(self.slot().default_sync, nullptr);
        else if constexpr (std::is_trivially_copyable_v<result>)
          self.value_ = self.call_with_args(self.slot().default_sync, nullptr);
        // A value that owns memory replaces the old one (mostly none: the default runs first):
        // a move assignment would add its code for both states of value_ (a verdict's: 0.4 KB).
        else self.value_.emplace(self.call_with_args(self.slot().default_sync, nullptr));
        return true;
      }
      return Dispatch::driver_code_from(self.slot_->suspended_driver)->call_default(self, then);
    }
  }
  // call_default() where the default's output goes straight into the list
  // (collects_default_in_place); an asynchronous one's goes to value_, as call_default's.
  HOOKSET_ALWAYS_INLINE static bool call_default_into_list(Dispatch& self, step then) {
    if (self.has_context()) [[unlikely]]
      self.check_stop();
    self.produced_by(nullptr);
    if (self.slot().default_sync) [[likely]] {
      collect_output(self, self.call_with_args(self.slot().default_sync, nullptr));
      return true;
    }
    return Dispatch::driver_code_from(self.slot_->suspended_driver)->call_default(self, then);
  }
  // Reached through the descriptor's driver code: only a slot with an asynchronous default
  // names it.
  static bool call_default_async(Dispatch& self, step then) {
    if constexpr (Kind::is_pipeline) {
      self.pending_output_.emplace(pipeline_rules<Dispatch>::complete(
          self.call_with_args(self.slot().default_async, nullptr), self));
      self.suspend_into(pending_kind::output, then, &Dispatch::suspended_driver);
    } else {
      self.pending_value_.emplace(self.call_with_args(self.slot().default_async, nullptr));
      self.suspend_into(pending_kind::value, then, &Dispatch::suspended_driver);
    }
    return false;
  }
  template <class Companion, class Input>
  static bool call_producer(Dispatch& self, Companion& companion, Input&& input) {
    if (self.has_context()) [[unlikely]]  // (the test inline: GCC called check_stop for it)
      self.check_stop();
    using produced = decltype(companion(std::forward<Input>(input)));
    if constexpr (classify_result<produced, output>() == call_kind::sync) {
      // A dispatch produces its output once: none to destroy (a verdict slot's: a loop).
      if constexpr (!std::is_trivially_destructible_v<output>) {
        const bool nothing_produced = !self.output_.has_value();
        HOOKSET_ASSUME(nothing_produced);
      }
      self.output_.emplace(companion(std::forward<Input>(input)));
      return true;
    } else {
      self.pending_output_.emplace(to_task<output>(companion(std::forward<Input>(input))));
      self.suspend_into(pending_kind::output, &complete, &Dispatch::suspended_driver);
      return false;
    }
  }
  static bool complete(Dispatch&) { return true; }
};

}  // namespace hookset::detail
