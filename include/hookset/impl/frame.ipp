#pragma once
// A watched dispatch's begin and end (detail/dispatch/frame.hpp): not templates, the same for
// every slot kind: compiled once with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <exception>
#include <string_view>

#include <hookset/call_options.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/frame.hpp>
#include <hookset/detail/observer_types.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::begin_watching() {
  const std::string_view slot = slot_->name;
  next_ = 0;  // (what the end reports, when the start fails; the rules' start sets the rest)
  Observer* const global = current_observer();
  if (intercept_link* const outer = intercepted_by()) [[unlikely]] {
    adopt_observers(*outer);
  } else if (global || set_observer_) [[unlikely]] {
    observers_.begin(slot, global, set_observer_, slot_->trace_values);
    flags_ |= observed;
    if (observers_.hook_events) flags_ |= hook_events;
  }
  try {
    if (list_ && list_->any_time_limit && !(flags_ & has_context)) [[unlikely]]
      begin_time_limits();
    // The code of the watched parts (events.hpp): the observers' (begin, adopt_observers), else
    // the context's, else that of a hook that always needs it. (None: nothing is watched.)
    if (!(flags_ & observed))
      observers_.code = (flags_ & has_context) ? context_->watched()
                        : list_                ? list_->watched
                                               : nullptr;
    if (flags_ & has_context) context_->begin(scoped_context(), slot);
  } catch (...) {
    end_watching(std::current_exception(), nullptr);  // (no result to report)
    throw;
  }
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::begin_time_limits() {
  set_context(list_->make_context(CallOptions{}));
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::end_watching(const std::exception_ptr& error,
                                                                report_values_fn report) noexcept {
  const std::string_view slot = slot_->name;
  if (flags_ & has_context) {
    if (end_context()) return;  // the rest of an intercepted dispatch: that one reports
  }
  if (flags_ & observed) [[unlikely]] {
    // An intercepting dispatch's driver awaited its first interceptor, a coroutine: the
    // dispatch's outcome is that interceptor's, told first.
    if ((flags_ & (hook_events | driving)) == (hook_events | driving) &&
        pending_ == pending_kind::intercepted) [[unlikely]]
      interceptor_done(0, hook_started_, error);
    if (!error && observers_.values) report(*this);
    // (next_: the hooks run, by this dispatch or, intercepted, inside its next() - the rest
    // writes it through its intercept_link.)
    observers_.end(slot, next_, error);
  }
}

HOOKSET_NOINLINE HOOKSET_DECL bool dispatch_frame::end_context() noexcept {
  context_->end();
  intercept_link* const outer = context_->intercepted_by();
  if (outer) *outer->hooks_run = next_;
  return outer != nullptr;
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_frame::adopt_observers(
    const intercept_link& outer) noexcept {
  if (!outer.observers) return;
  observers_ = *outer.observers;
  observers_.forget_boundary();
  flags_ |= observed;
  if (observers_.hook_events) flags_ |= hook_events;
}

}  // namespace hookset::detail
