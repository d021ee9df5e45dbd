#pragma once
// The part of a dispatch that does not depend on its slot's types (dispatch.hpp derives from
// it): the snapshot's cursor, the counters, the flags, the observers and the context - and the
// code that only reads and writes those, above all a watched dispatch's begin and end (who
// observes it, its context, the events told at its end).
//
// Why a class of its own: the engine is instantiated and optimised once per slot kind, and
// every kind carried its own copy of that code though none of it names a type of the slot.
// Here it is ordinary code, one copy for every kind (<hookset/impl/frame.ipp>: compiled once with
// HOOKSET_SEPARATE_COMPILATION, coro/config.hpp). The engine keeps what needs the types: the
// arguments, the outputs, the companions and the pending awaitables.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/events.hpp>
#include <hookset/detail/dispatch/hook_outcome.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_clock.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/detail/slot_traits.hpp>

namespace hookset::detail {

// What a step of the rules left: go on with the next hook, stop the hooks (a Break, a pipeline's
// terminal decision), or a pending awaitable (the dispatch suspends).
enum class progress : unsigned char { more, stop, suspended };

// What the watched start (dispatch_frame::start_watched), the hook loop with bookkeeping
// (run_hooks_with_bookkeeping) and the watched run of one hook (run_bookkept_hook) need of the
// slot's types: the entry points the engine of each slot kind fills once (steps.hpp,
// bookkept_steps). The start, the loop and the run themselves - the dispatch's begin and end,
// which hook runs how, its begin and events, its context, catching its failure, its conclusion -
// are the frame's: one copy for every kind.
struct hook_steps {
  // The rules over the snapshot (rules::start_snapshot): true when the dispatch is complete.
  bool (*start_rules)(dispatch_frame& dispatch);
  // The interceptors' start in a watched dispatch (the snapshot has interceptors and the dispatch
  // is not the rest of another). Null for a kind that attributes its result: such a dispatch
  // never starts here with interceptors.
  bool (*start_interceptors)(dispatch_frame& dispatch);
  // The hand-written loop of an unwatched dispatch (plain_loops.hpp), for a dispatch that only
  // observers watch, asking for no hook events, whose hooks are all plain (hook_list::all_plain):
  // it counts the hooks run (next_) for the end. A fold has one; for the other kinds it is null
  // and the rules run the dispatch.
  bool (*start_plain)(dispatch_frame& dispatch);
  // The dispatch's result, told to observers that asked for values.
  void (*report_result)(dispatch_frame& dispatch) noexcept;
  // Calls a synchronous hook; its output is kept aside until its fate is known.
  void (*call)(dispatch_frame& dispatch, const hook_entry& hook);
  // Starts a coroutine hook: its Task is pending, the dispatch suspends on it.
  void (*start)(dispatch_frame& dispatch, const hook_entry& hook);
  // The hook's fate: produced, the output kept aside (`returned`: the hook returned one) becomes
  // the newest; substituted, the aggregate's output made of `error` does; skipped, nothing
  // does. Drops the output kept aside in every case.
  void (*settle)(dispatch_frame& dispatch, const hook_entry& hook, hook_step step, bool returned,
                 const std::exception_ptr& error);
  // Calls a plain hook, whose output needs no fate (nothing can skip it): it is the newest.
  void (*produce)(dispatch_frame& dispatch, const hook_entry& hook);
  // Takes the newest output (the rules' take_output); null for the kinds whose output only
  // becomes the next `last` or the result (nothing to call: the loop goes on).
  progress (*take)(dispatch_frame& dispatch);
  // The hooks are done - `stopped` by an output (progress::stop), or all run: the rules' finish
  // (false: it suspended).
  bool (*finish)(dispatch_frame& dispatch, bool stopped);
  // A concurrent slot's first coroutine hook: it and every later one run concurrently (the
  // driver's); null for the other kinds.
  void (*run_concurrently)(dispatch_frame& dispatch, const hook_entry& hook);
  bool substitutes;         // the aggregate makes an output of a FailClosed hook's failure
  bool told_with_decision;  // a pipeline: a hook's end is told with its decision
};

class dispatch_frame {
 protected:
  // flags_
  static constexpr std::uint8_t holds_list = 1;  // owns a reference to list_
  static constexpr std::uint8_t suspended = 2;   // await_ready returned false: a pending
                                                 // awaitable exists
  static constexpr std::uint8_t driving = 4;  // the driver exists (it owns the pending awaitables)
  // A context (options, time limits, the rest of an intercepted dispatch) or observers watch the
  // dispatch: context_ (null: none) and what observers_ says of observers (watching()) are set.
  // Whatever watches a dispatch is found behind this one bit: a dispatch without it tests
  // nothing more.
  static constexpr std::uint8_t watched = 8;
  static constexpr std::uint8_t keeps_owner = 16;  // the dispatch keeps what its lists belong to

  // What an asynchronous step left pending: the default's value, a hook's (its outcome judged
  // by after_hook), a chain verdict, the result of a producer, the concurrent hooks, the first
  // interceptor's output - and, once await_suspend handed that one's Task to the awaiting
  // coroutine itself (no driver: interceptor_layer::awaited_directly), `awaited`.
  enum class pending_kind : unsigned char {
    value,
    hook,
    flow,
    output,
    concurrent,
    intercepted,
    awaited
  };

  // The dispatch's result told to observers that asked for values (the engine's, for its types).
  using report_values_fn = void (*)(dispatch_frame&) noexcept;

  dispatch_frame(const hook_list_owner* owner, const slot_facts* slot, Observer* set_observer,
                 std::uint8_t flags = 0) noexcept
      : owner_(owner), slot_(slot), set_observer_(set_observer), flags_(flags) {}

  // ---- a watched dispatch (impl/frame.ipp) ----------------------------------------------------

  // The general start: observers, options, time limits or interceptors. Who observes the
  // dispatch (the observers of the one it is the rest of, or the process-wide and the set's), a
  // context when a hook has a time limit, the code the watched parts run, the context's begin (a
  // stopped or late dispatch goes no further); then the interceptors or the rules, through the
  // kind's `steps`; and the end when it completed (end_watching: else its driver ends it). True
  // when the dispatch is complete. One function for the begin, the rules' call and the end: a
  // watched dispatch that completes at once makes one call into the frame, not three.
  bool start_watched(const hook_steps& steps);
  void begin_time_limits();  // (a hook's time limit sets a context; out of the way)
  // No error, for end_watching (a constant: no exception_ptr for the caller to make and free).
  static inline const std::exception_ptr no_error{};
  // The dispatch, watched, is over (with `error`, or not): tells the observers (its result first,
  // through `report`, when they asked for values), stops its timers.
  void end_watching(const std::exception_ptr& error, report_values_fn report) noexcept;
  // The context ends; true when this dispatch is the rest of an intercepted one (which then
  // reports, with the hooks run here).
  bool end_context() noexcept;
  // The hooks of an intercepted dispatch are reported as that dispatch's (false: nobody
  // observes that one).
  bool adopt_observers(const intercept_link& outer) noexcept;

  // The hooks from next_ on, one at a time, when a dispatch has a context or reports hook
  // events, or from its first hook that is not plain (a coroutine hook, a time limit, a failure
  // policy); the rules' finish after them. True when the dispatch is complete.
  bool run_hooks_with_bookkeeping(const hook_steps& steps);
  // A bookkept hook (a quiet one, nothing watching: the call alone; else run_bookkept_hook).
  hook_step run_one_hook(const hook_entry& hook, const hook_steps& steps);

  // One bookkept hook, and plain hooks in a row that report events (hook_outcome.hpp): the
  // frame's own state, the slot's types through `steps`.
  friend hook_step run_bookkept_hook(dispatch_frame& dispatch, const hook_entry& hook,
                                     const hook_steps& steps);
  friend progress run_observed_hooks(dispatch_frame& dispatch, const hook_steps& steps);

  // ---- small helpers (inline) ---------------------------------------------------------------

  // Nobody watching, no options: a dispatch with nothing to report and nothing to stop.
  HOOKSET_ALWAYS_INLINE bool unwatched() const noexcept {
    return !set_observer_ && !(flags_ & watched) && !observer_installed();
  }
  // What watches the dispatch (each a test of `watched` first: nothing more when it is clear).
  dispatch_context* context_if_any() const noexcept {
    return (flags_ & watched) ? context_ : nullptr;
  }
  bool has_context() const noexcept { return (flags_ & watched) && context_; }
  bool observed() const noexcept { return (flags_ & watched) && observers_.watching(); }
  // An observer asked for per-hook events.
  bool hook_events() const noexcept { return (flags_ & watched) && observers_.hook_events; }
  // Its hooks are run one by one with their bookkeeping: it has a context or reports hook events.
  HOOKSET_ALWAYS_INLINE bool bookkept() const noexcept {
    return (flags_ & watched) && (context_ || observers_.hook_events);
  }
  // Whether this dispatch is the rest of an intercepted one.
  intercept_link* intercepted_by() const noexcept {
    return has_context() ? context_->intercepted_by() : nullptr;
  }
  // From here on the dispatch owns a reference to its snapshot (a list filtered for a key was
  // its own from the start).
  void hold_list() noexcept {
    if (flags_ & holds_list) return;
    list_->acquire();
    flags_ |= holds_list;
  }
  dispatch_context& context() {
    if (!has_context()) set_context(make_dispatch_context(CallOptions{}));
    return *context_;
  }
  void set_context(dispatch_context* context) noexcept {
    if (!(flags_ & watched)) {  // (nothing watched it yet: no observer either)
      observers_.watch_nothing();
      flags_ |= watched;
    }
    context_ = context;
  }
  // The context goes (it is set): deleted unless an adapter lent it (run_under).
  void drop_context() noexcept {
    if (!context_->lent()) dispatch_context::destroy(context_);
  }
  // What the dispatch holds that is not its slot's: its snapshot's reference, its context.
  void release_frame() noexcept {
    if (flags_ & holds_list) hook_list::release_ref(list_);
    if (has_context()) drop_context();
  }
  // Before a step that runs user code: a cancelled or late dispatch goes no further.
  void check_stop(const hook_entry* hook = nullptr) const {
    if (has_context()) context_->check(slot_->name, hook);
  }
  // `hook` and this dispatch as the code that begins and concludes a bookkept hook sees them
  // (hook_outcome.hpp).
  bookkept_hook bookkept(const hook_entry& hook) noexcept {
    return {hook,
            slot_->name,
            hook_position_,
            context_if_any(),
            hook_events() ? &observers_ : nullptr,
            set_observer_};
  }
  void report_hook_end(const hook_entry& hook, HookOutcome outcome,
                       std::exception_ptr error) noexcept {
    observers_.hook_end(slot_->name, hook, hook_position_, hook_started_, outcome,
                        std::move(error));
  }
  // A coroutine interceptor's Task ended, with `error` or not: observers that want hook events
  // see its end.
  void interceptor_done(std::size_t index, hook_clock::ticks started,
                        std::exception_ptr error) noexcept {
    if (hook_events())
      observers_.interceptor_end(slot_->name, list_->interceptors[index], index, started,
                                 std::move(error));
  }

  // ---- data ---------------------------------------------------------------------------------
  // Written on every dispatch: flags_ and, where they are read, the counters. The rest is
  // written only on the paths that read it.

  const hook_list_owner* owner_;  // the slot's hook lists, in the set
  const slot_facts* slot_;        // (the engine's descriptor of the slot)
  Observer* set_observer_;
  std::uint8_t flags_;
  pending_kind pending_;  // what is pending while suspended

  const hook_list* list_;
  const hook_entry* hooks_;
  std::size_t count_;
  std::size_t plain_end_;  // the end of the leading stretch of plain hooks
  std::size_t next_;       // hooks started so far: what hooks_run reports
  std::size_t produced_;   // hooks that produced an output (not skipped by FailOpen)

  dispatch_observers observers_;  // valid when flags_ has `watched`: see observed()
  // The hook being concluded, for its events (valid when hook_events()).
  std::size_t hook_position_;
  hook_clock::ticks hook_started_;
  const hook_entry* current_;  // the hook a suspension waits for

  dispatch_context* context_;  // valid when flags_ has `watched` (null: none); owned unless lent()
};

// An attributed output's name (empty): a copy of its producer's. One copy for every kind (inline,
// a string's copy assignment was 0.25 KB at each place that collects one: collect.hpp).
void copy_producer_name(std::string& to, const hook_entry& from);

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/frame.ipp>
#endif
