#pragma once
// A watched dispatch's begin and end (detail/dispatch/frame.hpp): not templates, the same for
// every slot kind: compiled once with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <exception>
#include <string>
#include <string_view>

#include <hookset/call_options.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/frame.hpp>
#include <hookset/detail/observer_types.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL bool dispatch_frame::start_watched(const hook_steps& steps) {
  next_ = 0;  // (what the end reports, when the start fails; the rules' start sets the rest)
  // What watched it before it started: its options (a context) - or, the rest of an intercepted
  // dispatch, that dispatch.
  dispatch_context* context = context_if_any();
  intercept_link* const outer = context ? context->intercepted_by() : nullptr;
  Observer* const global = current_observer();
  bool observing = false;
  if (outer) [[unlikely]] {
    observing = adopt_observers(*outer);
  } else if (global || set_observer_) [[unlikely]] {
    if (!(flags_ & watched)) {  // (observers alone: no context)
      context_ = nullptr;
      flags_ |= watched;
    }
    observers_.begin(slot_->name, global, set_observer_, slot_->trace_values);
    observing = true;
  }
  const hook_list* const list = list_;
  // (The rest of an intercepted dispatch runs the hooks past the interceptors.)
  const bool intercepting = list && list->any_interceptor() && !outer;
  try {
    if (list && list->any_time_limit && !context) [[unlikely]] {
      begin_time_limits();
      context = context_;
    }
    // The code of the watched parts (events.hpp): the observers' (begin, adopt_observers), else
    // the context's, else that of a hook that always needs it. (None: nothing is watched.)
    if (!observing) observers_.code = context ? context->watched() : list ? list->watched : nullptr;
    if (context) context->begin(scoped_context(), slot_->name);
    bool done;
    if (intercepting) [[unlikely]]
      done = steps.start_interceptors(*this);
    else if (observing && !context && !observers_.hook_events && steps.start_plain && list &&
             list->all_plain)
      // Observers alone, told only the dispatch's begin and end: the hooks run as an unwatched
      // dispatch's (nothing in the loop has anything to tell or to stop).
      done = steps.start_plain(*this);
    else done = steps.start_rules(*this);
    if (!done) {
      if (context) context->arm_deadline();
      return false;  // (its driver ends it: end_watching)
    }
  } catch (...) {
    if (flags_ & watched) end_watching(std::current_exception(), steps.report_result);
    throw;
  }
  // Complete, here: the end as end_watching tells it, with what is known here (no error, no
  // driver).
  if (context && end_context()) return true;  // the rest of an intercepted dispatch
  if (observing) [[unlikely]] {
    if (observers_.values) steps.report_result(*this);
    observers_.end(slot_->name, next_, no_error);
    if (!context) flags_ &= static_cast<std::uint8_t>(~watched);  // (as end_watching)
  }
  return true;
}

HOOKSET_NOINLINE HOOKSET_DECL bool dispatch_frame::run_hooks_with_bookkeeping(
    const hook_steps& steps) {
  // Plain hooks of a dispatch that reports hook events and has no context run in stretches, as
  // the watched code's run_observed_hooks runs them. (A pipeline reports a hook's end with its
  // decision: bookkept.)
  const bool observed_plain = !steps.told_with_decision && hook_events() && !context_;
  while (next_ != count_) {
    const hook_entry& hook = hooks_[next_];
    progress after;
    if (observed_plain && hook.plain) {
      after = observers_.code->run_observed_hooks(*this, steps);
    } else {
      // The first hook that suspends a concurrent slot's dispatch: it and every later one run
      // concurrently, driven by the driver, which then finishes the dispatch.
      if (steps.run_concurrently && !hook.sync) {
        steps.run_concurrently(*this, hook);
        return false;
      }
      ++next_;
      const hook_step step = run_one_hook(hook, steps);
      if (step == hook_step::skipped) continue;
      if (step == hook_step::suspended) return false;
      after = steps.take ? steps.take(*this) : progress::more;
    }
    if (after == progress::stop) return steps.finish(*this, true);
    if (after == progress::suspended) return false;
  }
  return steps.finish(*this, false);
}

// (Reached through the watched code's table, events.hpp: only a dispatch that reports hook
// events runs it.)
HOOKSET_NOINLINE HOOKSET_DECL progress run_observed_hooks(dispatch_frame& dispatch,
                                                          const hook_steps& steps) {
  dispatch_frame& f = dispatch;
  const hook_entry* const hooks = f.hooks_;
  // What each hook calls, read once: the stretch changes none of it. (No current_: a plain hook
  // never suspends. The hook's position and begin go to the frame only for a failure's end.)
  dispatch_observers& observers = f.observers_;
  const watched_functions& code = *observers.code;
  const auto produce = steps.produce;
  const auto take = steps.take;
  std::size_t i = f.next_;
  // One HookEvent for the stretch, one clock reading per hook boundary.
  HookEvent event = code.hook_event(observers, f.slot_->name, hooks[i], i);
  do {
    const hook_entry& hook = hooks[i];
    f.next_ = i + 1;  // (hooks_run counts a hook that throws)
    event.hook = hook.id();
    event.name = hook.record->name;
    event.position = i;
    event.duration = {};
    const hook_clock::ticks started = code.tell_hook_begin(observers, event);
    try {
      produce(dispatch, hook);
    } catch (...) {
      f.hook_position_ = i;
      f.hook_started_ = started;
      f.report_hook_end(hook, HookOutcome::failed, std::current_exception());
      throw;
    }
    code.tell_hook_end(observers, event, started);
    if (take) {
      const progress after = take(dispatch);
      if (after != progress::more) return after;
    }
  } while (++i != f.count_ && hooks[i].plain);
  return progress::more;
}

HOOKSET_DECL hook_step dispatch_frame::run_one_hook(const hook_entry& hook,
                                                    const hook_steps& steps) {
  if (!bookkept() && hook.quiet) {
    // Nothing watches the dispatch and the hook's failures propagate: the call alone.
    current_ = &hook;  // (what the driver concludes, when the hook is asynchronous)
    if (!hook.sync) {
      steps.start(*this, hook);
      return hook_step::suspended;
    }
    steps.call(*this, hook);
    steps.settle(*this, hook, hook_step::produced, true, no_error);
    return hook_step::produced;
  }
  return observers_.code->run_bookkept_hook(*this, hook, steps);
}

// (Reached through the watched code's table, events.hpp: a file that names no watched code does
// not contain it.)
HOOKSET_NOINLINE HOOKSET_DECL hook_step run_bookkept_hook(dispatch_frame& dispatch,
                                                          const hook_entry& hook,
                                                          const hook_steps& steps) {
  dispatch_frame& f = dispatch;
  f.current_ = &hook;
  f.hook_position_ = f.next_ - 1;
  const bool watched = f.bookkept();
  if (watched) f.hook_started_ = begin_bookkept_hook(f.bookkept(hook));
  std::exception_ptr error;
  {
    // The hook's synchronous part sees the dispatch's stop token and executor.
    const bool with_context = f.has_context();
    await_context_scope scope(with_context ? f.context_->link() : scoped_context());
    // Only the hook's own code is inside the try: the hook is concluded exactly once, below,
    // also when concluding throws (a fail-closed hook, a stopped dispatch).
    try {
      if (!hook.sync) {
        steps.start(dispatch, hook);
        return hook_step::suspended;  // (concluded when it ends: the engine's after_hook)
      }
      steps.call(dispatch, hook);
    } catch (...) {
      error = std::current_exception();
    }
  }
  const bool returned = !error;
  hook_step step = hook_step::produced;
  if (watched || error) {
    try {
      step = conclude_bookkept_hook(f.bookkept(hook), f.hook_started_, error, false,
                                    steps.substitutes, steps.told_with_decision);
    } catch (...) {
      if (returned) steps.settle(dispatch, hook, hook_step::skipped, true, error);  // (drops it)
      throw;
    }
  }
  steps.settle(dispatch, hook, step, returned, error);
  return step;
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::begin_time_limits() {
  set_context(list_->make_context(CallOptions{}));
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::end_watching(const std::exception_ptr& error,
                                                                report_values_fn report) noexcept {
  const std::string_view slot = slot_->name;
  if (context_) {
    if (end_context()) return;  // the rest of an intercepted dispatch: that one reports
  }
  if (observers_.watching()) [[unlikely]] {
    // An intercepting dispatch's driver awaited its first interceptor, a coroutine: the
    // dispatch's outcome is that interceptor's, told first.
    if (observers_.hook_events && (flags_ & driving) && pending_ == pending_kind::intercepted)
        [[unlikely]]
      interceptor_done(0, hook_started_, error);
    if (!error && observers_.values) report(*this);
    // (next_: the hooks run, by this dispatch or, intercepted, inside its next() - the rest
    // writes it through its intercept_link.)
    observers_.end(slot, next_, error);
    // Observers are done with it; a context is released with the dispatch (release_frame).
    if (!context_) flags_ &= static_cast<std::uint8_t>(~watched);
  }
}

HOOKSET_NOINLINE HOOKSET_DECL bool dispatch_frame::end_context() noexcept {
  context_->end();
  intercept_link* const outer = context_->intercepted_by();
  if (outer) *outer->hooks_run = next_;
  return outer != nullptr;
}

HOOKSET_NOINLINE HOOKSET_DECL bool dispatch_frame::adopt_observers(
    const intercept_link& outer) noexcept {
  if (!outer.observers) return false;
  observers_ = *outer.observers;  // (a context is set: watched)
  observers_.forget_boundary();
  return true;
}

HOOKSET_NOINLINE HOOKSET_DECL void copy_producer_name(std::string& to, const hook_entry& from) {
  to = from.record->name;
}

}  // namespace hookset::detail
