#pragma once
// What a bookkept hook's run means for its dispatch (detail/dispatch/hook_outcome.hpp): not
// templates, the same for every slot kind: compiled once with HOOKSET_SEPARATE_COMPILATION
// (coro/config.hpp).

#include <cstddef>
#include <exception>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/frame.hpp>  // (run_bookkept_hook and run_observed_hooks, the table's)
#include <hookset/detail/dispatch/hook_outcome.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/errors.hpp>
#include <hookset/hook_options.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL hook_clock::ticks begin_bookkept_hook(const bookkept_hook& run) {
  if (run.context) {
    run.context->check(run.slot, &run.hook);
    run.context->begin_hook(run.hook, true);
  }
  if (!run.observers) return 0;
  return run.observers->hook_begin(run.slot, run.hook, run.position);
}

// A failure and a stop are concluded by functions of their own, out of the way of a success -
// what a watched hook concludes with nearly always - which then pays for none of their set-up.

// Tells the hook's end, when someone asked for hook events.
HOOKSET_DECL void tell_bookkept_hook_end(const bookkept_hook& run, hook_clock::ticks started,
                                         HookOutcome outcome, std::exception_ptr error) noexcept {
  if (run.observers)
    run.observers->hook_end(run.slot, run.hook, run.position, started, outcome, std::move(error));
}

// A failure (the hook's exception, or its own time running out): the hook's policy decides.
HOOKSET_NOINLINE HOOKSET_DECL hook_step judge_bookkept_hook_failure(const bookkept_hook& run,
                                                                    hook_clock::ticks started,
                                                                    const std::exception_ptr& error,
                                                                    HookOutcome outcome,
                                                                    bool substitutes) {
  switch (run.hook.on_failure) {
    case FailurePolicy::fail_open:
      tell_bookkept_hook_end(run, started, HookOutcome::skipped, error);
      warn_hook_skipped(run.slot, run.hook, error, run.set_observer);
      return hook_step::skipped;
    case FailurePolicy::fail_closed:
      tell_bookkept_hook_end(run, started, outcome, error);
      // (A verdict slot: the lattice's failed verdict, which the engine makes of `error`.)
      if (substitutes) return hook_step::substituted;
      throw_hook_failed(run.slot, run.hook.id(), run.hook.record->name, error);
    case FailurePolicy::propagate:
      break;
  }
  tell_bookkept_hook_end(run, started, outcome, error);
  std::rethrow_exception(error);
}

// The dispatch was stopped while the hook ran: the dispatch ends (check throws), whatever the
// hook did.
HOOKSET_NOINLINE HOOKSET_DECL void end_bookkept_hook_stopped(const bookkept_hook& run,
                                                             hook_clock::ticks started) {
  try {
    run.context->check(run.slot, &run.hook);
  } catch (const DispatchTimeout&) {
    tell_bookkept_hook_end(run, started, HookOutcome::timed_out, std::current_exception());
    throw;
  } catch (...) {
    tell_bookkept_hook_end(run, started, HookOutcome::cancelled, std::current_exception());
    throw;
  }
}

HOOKSET_NOINLINE HOOKSET_DECL hook_step conclude_bookkept_hook(
    const bookkept_hook& run, hook_clock::ticks started, std::exception_ptr& error,
    bool own_limit_expired, bool substitutes, bool told_with_decision) {
  if (run.context && run.context->end_hook()) own_limit_expired = true;
  const bool dispatch_stopped = run.context && run.context->stop_requested();
  if (own_limit_expired && !dispatch_stopped) {
    error = hook_time_limit_expired(run.slot, run.hook.id(), run.hook.record->name);
    return judge_bookkept_hook_failure(run, started, error, HookOutcome::timed_out, substitutes);
  }
  if (dispatch_stopped) end_bookkept_hook_stopped(run, started);
  if (error)
    return judge_bookkept_hook_failure(run, started, error, HookOutcome::failed, substitutes);
  if (!told_with_decision) tell_bookkept_hook_end(run, started, HookOutcome::ok, nullptr);
  return hook_step::produced;
}

// The table a watched dispatch reaches all of the above through (events.hpp): what names it
// (an observer, a context, a watched registration) brings that code into the file.
// (Each entry is the function of the same name.)
struct watched_code_of {
  static constexpr watched_functions table() noexcept {
    return {
        &dispatch_observers::do_begin,
        &dispatch_observers::do_result,
        &dispatch_observers::do_end,
        &dispatch_observers::do_hook_event,
        &dispatch_observers::do_tell_hook_begin,
        &dispatch_observers::do_tell_hook_end,
        &dispatch_observers::do_hook_begin,
        &dispatch_observers::do_hook_end,
        &dispatch_observers::do_interceptor_begin,
        &dispatch_observers::do_interceptor_end,
        &begin_bookkept_hook,
        &conclude_bookkept_hook,
        &hook_time_limit_expired,
        &run_bookkept_hook,
        &run_observed_hooks,
    };
  }
};

HOOKSET_DECL const watched_functions watched_code = watched_code_of::table();

}  // namespace hookset::detail
