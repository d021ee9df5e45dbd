#pragma once
// What a bookkept hook's run means for its dispatch (detail/dispatch/hook_outcome.hpp): not
// templates, the same for every slot kind: compiled once with HOOKSET_SEPARATE_COMPILATION
// (coro/config.hpp).

#include <cstddef>
#include <exception>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/hook_outcome.hpp>
#include <hookset/errors.hpp>
#include <hookset/hook_options.hpp>
#include <hookset/observer.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL hook_clock::ticks begin_bookkept_hook(const bookkept_hook& run) {
  if (run.context) {
    run.context->check(run.slot, &run.hook);
    run.context->begin_hook(run.hook, true);
  }
  if (!run.observers) return 0;
  return run.observers->hook_begin(run.slot, run.hook, run.position);
}

HOOKSET_NOINLINE HOOKSET_DECL hook_step conclude_bookkept_hook(
    const bookkept_hook& run, hook_clock::ticks started, std::exception_ptr& error,
    bool own_limit_expired, bool substitutes, bool told_with_decision) {
  const hook_entry& hook = run.hook;
  auto tell_end = [&](HookOutcome outcome, std::exception_ptr why) noexcept {
    if (run.observers)
      run.observers->hook_end(run.slot, hook, run.position, started, outcome, std::move(why));
  };
  // A failure (the hook's exception, or its own time running out): its policy decides.
  auto judge_failure = [&](HookOutcome outcome) -> hook_step {
    switch (hook.on_failure) {
      case FailurePolicy::fail_open:
        tell_end(HookOutcome::skipped, error);
        warn_hook_skipped(run.slot, hook, error, run.set_observer);
        return hook_step::skipped;
      case FailurePolicy::fail_closed:
        tell_end(outcome, error);
        // (A verdict slot: the lattice's failed verdict, which the engine makes of `error`.)
        if (substitutes) return hook_step::substituted;
        throw_hook_failed(run.slot, hook.id(), hook.record->name, error);
      case FailurePolicy::propagate:
        break;
    }
    tell_end(outcome, error);
    std::rethrow_exception(error);
  };

  if (run.context && run.context->end_hook()) own_limit_expired = true;
  const bool dispatch_stopped = run.context && run.context->stop_requested();
  if (own_limit_expired && !dispatch_stopped) {
    error = hook_time_limit_expired(run.slot, hook.id(), hook.record->name);
    return judge_failure(HookOutcome::timed_out);
  }
  if (dispatch_stopped) {
    try {
      run.context->check(run.slot, &hook);
    } catch (const DispatchTimeout&) {
      tell_end(HookOutcome::timed_out, std::current_exception());
      throw;
    } catch (...) {
      tell_end(HookOutcome::cancelled, std::current_exception());
      throw;
    }
  }
  if (error) return judge_failure(HookOutcome::failed);
  if (!told_with_decision) tell_end(HookOutcome::ok, nullptr);
  return hook_step::produced;
}

}  // namespace hookset::detail
