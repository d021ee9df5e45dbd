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
#include <hookset/detail/type_name.hpp>
#include <hookset/format.hpp>
#include <hookset/observer.hpp>
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

// A pipeline decision as text: its kind, and what it carries ("complete(<output>)",
// "reject(<reason>)", "rewrite(<input>)", "pass", or a custom kind's type name).
template <class Decided>
std::string render_decision(const Decided& decided) {
  if constexpr (std::is_same_v<Decided, Pass>) return "pass";
  else if constexpr (is_rewrite<Decided>) return "rewrite(" + render_value(decided.input) + ")";
  else if constexpr (is_complete<Decided>) return "complete(" + render_value(decided.output) + ")";
  else if constexpr (std::is_same_v<Decided, Reject>) return "reject(" + decided.reason + ")";
  else if constexpr (formattable<Decided>)
    return std::string(unqualified(type_name<Decided>)) + "(" + render_value(decided) + ")";
  else return std::string(unqualified(type_name<Decided>));
}

// The observers watching one dispatch, and what they asked for. Empty (all null) for the
// common unobserved dispatch. Every call into an observer goes through notify: what an
// observer throws is dropped.
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

  void begin(std::string_view slot, Observer* process_wide, Observer* set_observer,
             bool slot_values = false) noexcept;

  // A successful dispatch's result, rendered (when `values`), told before its end.
  void result(std::string_view slot, std::string_view value, std::string_view input) noexcept;

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

  void end(std::string_view slot, std::size_t hooks_run, const std::exception_ptr& error) noexcept;

  HookEvent hook_event(std::string_view slot, const hook_entry& hook,
                       std::size_t position) const noexcept;

  // Tells a hook's begin; returns its start, for its end event.
  hook_clock::ticks tell_hook_begin(const HookEvent& event) noexcept;
  // Tells a hook's end (event: everything but the duration, which this measures).
  void tell_hook_end(HookEvent& event, hook_clock::ticks hook_start) noexcept;

  hook_clock::ticks hook_begin(std::string_view slot, const hook_entry& hook,
                               std::size_t position) noexcept;
  void hook_end(std::string_view slot, const hook_entry& hook, std::size_t position,
                hook_clock::ticks hook_start, HookOutcome outcome, std::exception_ptr error,
                std::string_view decision = {}, std::string_view reason = {},
                bool rewritten = false) noexcept;
  // An interceptor's run (HookEvent::interceptor, `position` its place among the slot's
  // interceptors): its begin; its end, failed when `error` is set. Its duration includes what
  // its next() ran, whose hooks' events nest inside it.
  hook_clock::ticks interceptor_begin(std::string_view slot, const hook_entry& interceptor,
                                      std::size_t position) noexcept;
  void interceptor_end(std::string_view slot, const hook_entry& interceptor, std::size_t position,
                       hook_clock::ticks started, std::exception_ptr error) noexcept;
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
  // (Inlined into the two above, where `event` is a constant: the rest of this class is out of
  // line in both modes, coro/config.hpp.)
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
