#pragma once
// What a bookkept hook's run means for its dispatch (run_bookkept_hook; concurrent.hpp):
// its begin - a stopped or late dispatch goes no further, the hook's own time limit starts,
// observers are told - and its conclusion - its own time limit, a stop of the dispatch meanwhile,
// its failure policy, its end told, a skipped hook warned about.
//
// Why not in the engine: none of it depends on the slot's types, and the engine is instantiated
// and optimised once per slot kind, so each kind carried its own copy. Here it is ordinary code,
// one copy for every kind (<hookset/impl/hook_outcome.ipp>: compiled once with
// HOOKSET_SEPARATE_COMPILATION, coro/config.hpp), and out of line in both modes: it runs only for
// a hook that is watched (a context, hook events) or failed, which costs far more than the call.
// The engine keeps what needs the types: the hook's output, the count of outputs and their
// producer, and the output an aggregate makes of a failure.

#include <cstddef>
#include <exception>
#include <string_view>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/events.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_clock.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/hook_options.hpp>

namespace hookset::detail {

// What one hook's run came to, for the engine. substituted: the hook failed under FailClosed
// and the slot's aggregate takes an output made of the failure instead; suspended: the hook is
// asynchronous and has not finished yet (the engine's own state, never a conclusion).
enum class hook_step : unsigned char { produced, substituted, skipped, suspended };

// A bookkept hook and the dispatch it runs in, as the code below sees them.
struct bookkept_hook {
  const hook_entry& hook;
  std::string_view slot;
  std::size_t position;           // the hook's place in the slot's order, for its events
  dispatch_context* context;      // null: the dispatch has no context (no options, no time limit)
  dispatch_observers* observers;  // null: nobody asked for hook events
  Observer* set_observer;         // the set's: a skipped hook's warning goes to it too
};

// The hook starts: a stopped or late dispatch goes no further (throws DispatchCancelled or
// DispatchTimeout), the hook's own time limit starts, its begin is told. Returns when it began,
// for its end event (0 when nobody asked for hook events).
hook_clock::ticks begin_bookkept_hook(const bookkept_hook& run);

// The hook returned (`error` null) or threw (`error`): what that means for its dispatch. Its own
// time limit expired: a failure of the hook, which its policy judges. The dispatch was stopped
// meanwhile: the dispatch ends (throws DispatchCancelled or DispatchTimeout), whatever the hook
// did. Else a failure goes to the hook's policy: Propagate rethrows it; FailOpen skips the hook,
// with a warning (`skipped`); FailClosed throws HookFailed, or - when the slot's aggregate
// `substitutes` an output for a failure (a verdict slot) - returns `substituted`, `error` then
// being the failure to make that output of. The hook's end is told to observers (`started`: its
// begin), but for a success when the success is `told_with_decision` (a pipeline hook's end is
// told with its decision, once the engine has judged it).
hook_step conclude_bookkept_hook(const bookkept_hook& run, hook_clock::ticks started,
                                 std::exception_ptr& error, bool own_limit_expired,
                                 bool substitutes, bool told_with_decision);

// Runs one bookkept hook of `dispatch` (a time limit, a failure policy, an asynchronous hook, a
// context, hook events) from its begin to its conclusion, its typed parts through `steps`
// (frame.hpp; defined in <hookset/impl/frame.ipp>). Reached through the watched code's table:
// only a file that names that code contains it.
class dispatch_frame;
struct hook_steps;
enum class progress : unsigned char;
hook_step run_bookkept_hook(dispatch_frame& dispatch, const hook_entry& hook,
                            const hook_steps& steps);
// The plain hooks in a row from the dispatch's next one, of a dispatch that reports hook events
// and has no context: each one's begin, its end ok - or failed, and the exception propagates -
// and its output taken; one HookEvent for them all, one clock reading per hook boundary. Returns
// what the last output taken left (more: the stretch ended).
progress run_observed_hooks(dispatch_frame& dispatch, const hook_steps& steps);

// Whether a failure of `hook` fails its dispatch (Propagate; FailClosed unless the aggregate
// `substitutes` an output for it), as opposed to leaving an output out or in its place. (Two
// comparisons: inline, not a call.)
inline bool failure_fails_dispatch(const hook_entry& hook, bool substitutes) noexcept {
  if (hook.on_failure == FailurePolicy::fail_open) return false;
  return !(substitutes && hook.on_failure == FailurePolicy::fail_closed);
}

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/hook_outcome.ipp>
#endif
