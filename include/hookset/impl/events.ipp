#pragma once
// What a dispatch tells its observers (detail/dispatch/events.hpp), the part that does not depend
// on the slot: compiled once with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <atomic>
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/events.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/errors.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL std::string decision_text(std::string_view kind,
                                                        std::string_view carried) {
  // (Sized once and copied into: the appends took 1.3 KB of code.)
  std::string text(kind.size() + carried.size() + 2, '(');
  using chars = std::char_traits<char>;
  chars::copy(text.data(), kind.data(), kind.size());  // (then the '(' it was filled with)
  chars::copy(text.data() + kind.size() + 1, carried.data(), carried.size());
  text.back() = ')';
  return text;
}

HOOKSET_DECL void dispatch_observers::do_begin(dispatch_observers& self, std::string_view slot,
                                               Observer* process_wide, Observer* set_observer,
                                               bool slot_values) noexcept {
  self.global = process_wide;
  self.set = set_observer;
  self.id = next_dispatch_id.fetch_add(1, std::memory_order_relaxed);
  self.global_hook_events = self.global && self.global->wants_hook_events();
  self.set_hook_events = self.set && self.set->wants_hook_events();
  self.hook_events = self.global_hook_events || self.set_hook_events;
  self.values = slot_values || (self.global && self.global->wants_values()) ||
                (self.set && self.set->wants_values());
  self.has_boundary = false;
  notify(self.global, &Observer::on_dispatch_begin, slot, self.id);
  notify(self.set, &Observer::on_dispatch_begin, slot, self.id);
}

HOOKSET_DECL void dispatch_observers::do_result(dispatch_observers& self, std::string_view slot,
                                                std::string_view value,
                                                std::string_view input) noexcept {
  if (self.global && current_observer() == self.global)
    tell_observer([&] { self.global->on_dispatch_result(slot, self.id, value, input); });
  if (self.set) tell_observer([&] { self.set->on_dispatch_result(slot, self.id, value, input); });
}

HOOKSET_DECL void dispatch_observers::do_end(dispatch_observers& self, std::string_view slot,
                                             std::size_t hooks_run,
                                             const std::exception_ptr& error) noexcept {
  if (self.global && current_observer() == self.global)
    notify(self.global, &Observer::on_dispatch_end, slot, self.id, hooks_run, error);
  notify(self.set, &Observer::on_dispatch_end, slot, self.id, hooks_run, error);
}

HOOKSET_NOINLINE HOOKSET_DECL HookEvent
dispatch_observers::do_hook_event(const dispatch_observers& self, std::string_view slot,
                                  const hook_entry& hook, std::size_t position) noexcept {
  HookEvent event;
  event.slot = slot;
  event.dispatch_id = self.id;
  event.hook = hook.id();
  event.name = hook.record->name;
  event.position = position;
  return event;
}

HOOKSET_NOINLINE HOOKSET_DECL hook_clock::ticks dispatch_observers::do_tell_hook_begin(
    dispatch_observers& self, const HookEvent& event) noexcept {
  const hook_clock::ticks hook_start = self.has_boundary ? self.boundary : hook_clock::now();
  self.has_boundary = false;
  self.each_wanting(&Observer::on_hook_begin, event);
  return hook_start;
}

HOOKSET_NOINLINE HOOKSET_DECL void dispatch_observers::do_tell_hook_end(
    dispatch_observers& self, HookEvent& event, hook_clock::ticks hook_start) noexcept {
  const hook_clock::ticks hook_stop = hook_clock::now();
  event.duration = hook_clock::between(hook_start, hook_stop);
  self.each_wanting(&Observer::on_hook_end, event);
  self.boundary = hook_stop;
  self.has_boundary = true;
}

HOOKSET_DECL hook_clock::ticks dispatch_observers::do_hook_begin(dispatch_observers& self,
                                                                 std::string_view slot,
                                                                 const hook_entry& hook,
                                                                 std::size_t position) noexcept {
  return do_tell_hook_begin(self, do_hook_event(self, slot, hook, position));
}

HOOKSET_DECL void dispatch_observers::do_hook_end(
    dispatch_observers& self, std::string_view slot, const hook_entry& hook, std::size_t position,
    hook_clock::ticks hook_start, HookOutcome outcome, std::exception_ptr error,
    std::string_view decision, std::string_view reason, bool rewritten) noexcept {
  HookEvent event = do_hook_event(self, slot, hook, position);
  event.outcome = outcome;
  event.error = std::move(error);
  event.decision = decision;
  event.reason = reason;
  event.rewritten = rewritten;
  do_tell_hook_end(self, event, hook_start);
}

HOOKSET_DECL hook_clock::ticks dispatch_observers::do_interceptor_begin(
    dispatch_observers& self, std::string_view slot, const hook_entry& interceptor,
    std::size_t position) noexcept {
  HookEvent event = do_hook_event(self, slot, interceptor, position);
  event.interceptor = true;
  return do_tell_hook_begin(self, event);
}

HOOKSET_DECL void dispatch_observers::do_interceptor_end(
    dispatch_observers& self, std::string_view slot, const hook_entry& interceptor,
    std::size_t position, hook_clock::ticks started, std::exception_ptr error) noexcept {
  HookEvent event = do_hook_event(self, slot, interceptor, position);
  event.interceptor = true;
  if (error) {
    event.outcome = HookOutcome::failed;
    event.error = std::move(error);
  }
  do_tell_hook_end(self, event, started);
  self.forget_boundary();  // (an enclosing interceptor's end is a reading of its own)
}

HOOKSET_DECL void dispatch_observers::each_wanting(void (Observer::*event)(const HookEvent&),
                                                   const HookEvent& e) noexcept {
  if (global_hook_events && current_observer() == global) notify(global, event, e);
  if (set_hook_events) notify(set, event, e);
}

HOOKSET_NOINLINE HOOKSET_DECL void warn_hook_skipped(std::string_view slot, const hook_entry& hook,
                                                     const std::exception_ptr& error,
                                                     Observer* set_observer) noexcept {
  try {
    std::string message =
        "hook " + hook_label(hook.id(), hook.record->name) + " failed and was skipped (fail-open)";
    if (auto what = exception_what(error)) message += ": " + *what;
    warn(slot, message, set_observer);
  } catch (...) {
  }
}

}  // namespace hookset::detail
