#pragma once
// What a dispatch tells its observers (observer.hpp): dispatch_observers, the observers watching
// one dispatch and every event told to them - the dispatch's begin, end and result, each hook's
// begin and end (with a pipeline hook's decision) - and the rendering of values for them.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <hookset/coro/config.hpp>
#include <hookset/detail/hook_clock.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/detail/type_name.hpp>
#include <hookset/format.hpp>
#include <hookset/pipeline.hpp>

namespace hookset::detail {

template <class T>
inline constexpr bool is_rewrite = false;
template <class T>
inline constexpr bool is_rewrite<Rewrite<T>> = true;
template <class T>
inline constexpr bool is_complete = false;
template <class T>
inline constexpr bool is_complete<Complete<T>> = true;

// "<kind>(<carried>)". (Not a template, out of line: every decision's text is joined by this one
// copy; <hookset/impl/events.ipp>.)
std::string decision_text(std::string_view kind, std::string_view carried);

// A pipeline decision as text: its kind, and what it carries ("complete(<output>)",
// "reject(<reason>)", "rewrite(<input>)", "pass", or a custom kind's type name).
template <class Decided>
std::string render_decision(const Decided& decided) {
  if constexpr (std::is_same_v<Decided, Pass>) return "pass";
  else if constexpr (is_rewrite<Decided>)
    return decision_text("rewrite", render_value(decided.input));
  else if constexpr (is_complete<Decided>)
    return decision_text("complete", render_value(decided.output));
  else if constexpr (std::is_same_v<Decided, Reject>)
    return decision_text("reject", decided.reason);
  else if constexpr (formattable<Decided>)
    return decision_text(unqualified(type_name<Decided>), render_value(decided));
  else return std::string(unqualified(type_name<Decided>));
}

struct dispatch_observers;
struct bookkept_hook;                  // (hook_outcome.hpp)
enum class hook_step : unsigned char;  // (hook_outcome.hpp)
class dispatch_frame;                  // (frame.hpp)
struct hook_steps;                     // (frame.hpp)
enum class progress : unsigned char;   // (frame.hpp)

// The code of a watched dispatch that does not depend on the slot - what observers are told (the
// functions of dispatch_observers), a bookkept hook's begin and conclusion (hook_outcome.hpp) -
// reached through this table (watched_code, <hookset/impl/hook_outcome.ipp>). Only what turns
// watching on names the table: an observer (its constructor), a dispatch's context (its
// constructor) and a registration with a time limit or a failure policy (its record). So a file
// whose dispatches nothing watches does not contain that code: the events, the failure
// policies, the errors they raise and their messages.
struct watched_functions {
  void (*begin)(dispatch_observers&, std::string_view slot, Observer* process_wide,
                Observer* set_observer, bool slot_values) noexcept;
  void (*result)(dispatch_observers&, std::string_view slot, std::string_view value,
                 std::string_view input) noexcept;
  void (*end)(dispatch_observers&, std::string_view slot, std::size_t hooks_run,
              const std::exception_ptr& error) noexcept;
  HookEvent (*hook_event)(const dispatch_observers&, std::string_view slot, const hook_entry& hook,
                          std::size_t position) noexcept;
  hook_clock::ticks (*tell_hook_begin)(dispatch_observers&, const HookEvent& event) noexcept;
  void (*tell_hook_end)(dispatch_observers&, HookEvent& event,
                        hook_clock::ticks hook_start) noexcept;
  hook_clock::ticks (*hook_begin)(dispatch_observers&, std::string_view slot,
                                  const hook_entry& hook, std::size_t position) noexcept;
  void (*hook_end)(dispatch_observers&, std::string_view slot, const hook_entry& hook,
                   std::size_t position, hook_clock::ticks hook_start, HookOutcome outcome,
                   std::exception_ptr error, std::string_view decision, std::string_view reason,
                   bool rewritten) noexcept;
  hook_clock::ticks (*interceptor_begin)(dispatch_observers&, std::string_view slot,
                                         const hook_entry& interceptor,
                                         std::size_t position) noexcept;
  void (*interceptor_end)(dispatch_observers&, std::string_view slot, const hook_entry& interceptor,
                          std::size_t position, hook_clock::ticks started,
                          std::exception_ptr error) noexcept;
  hook_clock::ticks (*begin_bookkept_hook)(const bookkept_hook& run);
  hook_step (*conclude_bookkept_hook)(const bookkept_hook& run, hook_clock::ticks started,
                                      std::exception_ptr& error, bool own_limit_expired,
                                      bool substitutes, bool told_with_decision);
  std::exception_ptr (*hook_time_limit_expired)(std::string_view slot, HookId hook,
                                                const std::string& name);
  hook_step (*run_bookkept_hook)(dispatch_frame& dispatch, const hook_entry& hook,
                                 const hook_steps& steps);
  progress (*run_observed_hooks)(dispatch_frame& dispatch, const hook_steps& steps);
};

// The observers watching one dispatch, and what they asked for. Empty (all null) for the
// common unobserved dispatch. Every call into an observer goes through notify: what an
// observer throws is dropped. Its functions run the code of the table `code` (the observers'
// own, from begin(); else set by the dispatch from its context or its hooks' records).
struct dispatch_observers {
  // Set by begin(); a dispatch nobody observes never writes them.
  Observer* global;  // the process-wide observer that saw the begin
  Observer* set;     // the set's own
  std::uint64_t id;
  bool global_hook_events;  // what each asked for, once, at the begin (a sampling observer
  bool set_hook_events;     // answers differently from one dispatch to the next)
  bool hook_events;
  bool values;  // render values for the events (the slot or an observer asked: format.hpp)
  // One clock reading per hook boundary: the end of a hook is the begin of the next one when
  // the next one starts right after it (has_boundary), without suspending in between.
  bool has_boundary;
  hook_clock::ticks boundary;
  // The code a watched dispatch runs (null: nothing watches it - and then nothing calls it).
  const watched_functions* code;

  // Whether observers watch the dispatch (begin() or an adopted copy; else watch_nothing()).
  bool watching() const noexcept { return global || set; }
  // No observer watches the dispatch (something else does: a context).
  void watch_nothing() noexcept {
    global = set = nullptr;
    hook_events = false;
  }

  // (At least one of the two observers is set: its code becomes this dispatch's.)
  void begin(std::string_view slot, Observer* process_wide, Observer* set_observer,
             bool slot_values = false) noexcept {
    code = (process_wide ? process_wide : set_observer)->watched_;
    code->begin(*this, slot, process_wide, set_observer, slot_values);
  }

  // A successful dispatch's result, rendered (when `values`), told before its end.
  void result(std::string_view slot, std::string_view value, std::string_view input) noexcept {
    code->result(*this, slot, value, input);
  }

  // A dispatch's result, rendered for observers that asked for values (a pipeline's: its
  // decision and its final input). What rendering throws is dropped, as an observer's would be.
  template <bool pipeline, class Produced>
  void tell_result(std::string_view slot, const Produced& produced) noexcept {
    tell_observer([&] {
      if constexpr (pipeline) {
        const std::string value = std::visit(
            [&](const auto& decided) { return render_decision(decided); }, produced.decision);
        result(slot, value, render_value(produced.input));
      } else {
        result(slot, render_value(produced), {});
      }
    });
  }

  void end(std::string_view slot, std::size_t hooks_run, const std::exception_ptr& error) noexcept {
    code->end(*this, slot, hooks_run, error);
  }

  HookEvent hook_event(std::string_view slot, const hook_entry& hook,
                       std::size_t position) const noexcept {
    return code->hook_event(*this, slot, hook, position);
  }

  // Tells a hook's begin; returns its start, for its end event.
  hook_clock::ticks tell_hook_begin(const HookEvent& event) noexcept {
    return code->tell_hook_begin(*this, event);
  }
  // Tells a hook's end (event: everything but the duration, which this measures).
  void tell_hook_end(HookEvent& event, hook_clock::ticks hook_start) noexcept {
    code->tell_hook_end(*this, event, hook_start);
  }

  hook_clock::ticks hook_begin(std::string_view slot, const hook_entry& hook,
                               std::size_t position) noexcept {
    return code->hook_begin(*this, slot, hook, position);
  }
  void hook_end(std::string_view slot, const hook_entry& hook, std::size_t position,
                hook_clock::ticks hook_start, HookOutcome outcome, std::exception_ptr error,
                std::string_view decision = {}, std::string_view reason = {},
                bool rewritten = false) noexcept {
    code->hook_end(*this, slot, hook, position, hook_start, outcome, std::move(error), decision,
                   reason, rewritten);
  }
  // An interceptor's run (HookEvent::interceptor, `position` its place among the slot's
  // interceptors): its begin; its end, failed when `error` is set. Its duration includes what
  // its next() ran, whose hooks' events nest inside it.
  hook_clock::ticks interceptor_begin(std::string_view slot, const hook_entry& interceptor,
                                      std::size_t position) noexcept {
    return code->interceptor_begin(*this, slot, interceptor, position);
  }
  void interceptor_end(std::string_view slot, const hook_entry& interceptor, std::size_t position,
                       hook_clock::ticks started, std::exception_ptr error) noexcept {
    code->interceptor_end(*this, slot, interceptor, position, started, std::move(error));
  }
  // The dispatch suspends (or runs something that is not a hook): the next hook's begin is a
  // reading of its own.
  void forget_boundary() noexcept { has_boundary = false; }

  // A pipeline hook's end, with its decision (and, when values are asked for, the input as the
  // hook saw it - not yet rewritten - and what the decision carries).
  template <class Decision, class Input>
  void hook_decision(std::string_view slot, const hook_entry& hook, std::size_t position,
                     hook_clock::ticks started, const Decision& decision, bool rewritten,
                     const Input& hook_input) noexcept {
    std::string_view kind, reason;
    std::visit(
        [&](const auto& d) {
      using T = std::remove_cvref_t<decltype(d)>;
      if constexpr (std::is_same_v<T, Pass>) kind = "pass";
      else if constexpr (is_rewrite<T>) kind = "rewrite";
      else if constexpr (std::is_same_v<T, Reject>) kind = "reject", reason = d.reason;
      else if constexpr (is_complete<T>) kind = "complete";
      else {
        kind = unqualified(type_name<T>);
        if constexpr (requires { std::string_view(d.reason); }) reason = d.reason;
      }
        },
        decision);
    if (!values) [[likely]] {
      hook_end(slot, hook, position, started, HookOutcome::ok, nullptr, kind, reason, rewritten);
      return;
    }
    // Values asked for: the input as this hook saw it (not yet rewritten), and what the
    // decision carries. A rendering that throws leaves the values out.
    std::string input, value;
    tell_observer([&] {
      input = render_value(hook_input);
      std::visit(
          [&](const auto& d) {
        using T = std::remove_cvref_t<decltype(d)>;
        if constexpr (is_rewrite<T>) value = render_value(d.input);
        else if constexpr (is_complete<T>) value = render_value(d.output);
        else if constexpr (!std::is_same_v<T, Pass> && !std::is_same_v<T, Reject>)
          value = render_value(d);
          },
          decision);
    });
    HookEvent event = hook_event(slot, hook, position);
    event.decision = kind;
    event.reason = reason;
    event.rewritten = rewritten;
    event.input = input;
    event.value = value;
    tell_hook_end(event, started);
  }

 private:
  friend struct watched_code_of;  // (impl/hook_outcome.ipp: the table)

  // The code behind the functions above (<hookset/impl/events.ipp>).
  // (Static, taking the observers as `self`: the table's entries themselves, no call in
  // between.)
  static void do_begin(dispatch_observers& self, std::string_view slot, Observer* process_wide,
                       Observer* set_observer, bool slot_values) noexcept;
  static void do_result(dispatch_observers& self, std::string_view slot, std::string_view value,
                        std::string_view input) noexcept;
  static void do_end(dispatch_observers& self, std::string_view slot, std::size_t hooks_run,
                     const std::exception_ptr& error) noexcept;
  static HookEvent do_hook_event(const dispatch_observers& self, std::string_view slot,
                                 const hook_entry& hook, std::size_t position) noexcept;
  static hook_clock::ticks do_tell_hook_begin(dispatch_observers& self,
                                              const HookEvent& event) noexcept;
  static void do_tell_hook_end(dispatch_observers& self, HookEvent& event,
                               hook_clock::ticks hook_start) noexcept;
  static hook_clock::ticks do_hook_begin(dispatch_observers& self, std::string_view slot,
                                         const hook_entry& hook, std::size_t position) noexcept;
  static void do_hook_end(dispatch_observers& self, std::string_view slot, const hook_entry& hook,
                          std::size_t position, hook_clock::ticks hook_start, HookOutcome outcome,
                          std::exception_ptr error, std::string_view decision,
                          std::string_view reason, bool rewritten) noexcept;
  static hook_clock::ticks do_interceptor_begin(dispatch_observers& self, std::string_view slot,
                                                const hook_entry& interceptor,
                                                std::size_t position) noexcept;
  static void do_interceptor_end(dispatch_observers& self, std::string_view slot,
                                 const hook_entry& interceptor, std::size_t position,
                                 hook_clock::ticks started, std::exception_ptr error) noexcept;
  // (Inlined into the two that tell a hook's begin and end, where `event` is a constant.)
  HOOKSET_DECL void each_wanting(void (Observer::*event)(const HookEvent&),
                                 const HookEvent& e) noexcept;
};

// Every failure a FailOpen policy absorbs is reported: silently skipped security hooks are how
// fail-open goes wrong.
void warn_hook_skipped(std::string_view slot, const hook_entry& hook,
                       const std::exception_ptr& error, Observer* set_observer) noexcept;

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/events.ipp>
#endif
