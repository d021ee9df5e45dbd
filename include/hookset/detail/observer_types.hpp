#pragma once
// The observer types of <hookset/observer.hpp> (which includes this header): where warnings,
// dispatch tracing and per-hook events go. One may be installed process-wide (set_observer) and
// one per set (HookSet::set_observer); a dispatch reports to both. The library's own headers
// include this one: <hookset/observer.hpp> also brings the code an observer names, which
// includes them.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/hook_id.hpp>

namespace hookset {

namespace detail {
struct dispatch_observers;
struct watched_functions;
// The code of a watched dispatch (detail/dispatch/events.hpp), defined in
// <hookset/impl/hook_outcome.ipp>.
extern const watched_functions watched_code;
}  // namespace detail

// How one hook's run ended.
enum class HookOutcome : unsigned char {
  ok,         // produced its output
  failed,     // threw, and the dispatch failed with it (Propagate or FailClosed)
  timed_out,  // its time limit or the dispatch's deadline expired while it ran
  cancelled,  // it was told to stop (the dispatch was cancelled, or its answer no longer mattered)
  skipped,    // it failed (threw, timed out) and its FailOpen policy let the dispatch go on
};

constexpr std::string_view to_string(HookOutcome outcome) noexcept {
  switch (outcome) {
    case HookOutcome::ok:
      return "ok";
    case HookOutcome::failed:
      return "failed";
    case HookOutcome::timed_out:
      return "timed_out";
    case HookOutcome::cancelled:
      return "cancelled";
    case HookOutcome::skipped:
      return "skipped";
  }
  return "?";
}

// One hook's run within a dispatch, as on_hook_begin / on_hook_end see it.
struct HookEvent {
  std::string_view slot;
  std::uint64_t dispatch_id = 0;
  HookId hook;
  std::string_view name;     // the registration's name, empty if it has none
  std::size_t position = 0;  // its place in the dispatch order (0 = first hook)
  // on_hook_end only:
  std::chrono::nanoseconds duration{0};  // from its start until its output (or failure) arrived
  HookOutcome outcome = HookOutcome::ok;
  std::exception_ptr error;  // what it threw, or the DispatchTimeout / DispatchCancelled
  // Pipeline slots (on_hook_end of a hook that produced a decision): the decision's kind -
  // "pass", "rewrite", "complete", "reject" or the type name of the slot's own terminal kind -
  // its reason (a Reject's, or a custom kind's `reason` member), and whether the input was
  // rewritten. Empty for other slots.
  std::string_view decision;
  std::string_view reason;
  bool rewritten = false;
  // Values, for a dispatch whose values were asked for (Observer::wants_values, or the slot's
  // trace_values), rendered through hookset::value_format (format.hpp); empty otherwise, and for
  // types without a rendering. Pipeline slots: the input as this hook saw it, and what its
  // decision carries - the rewritten input, or the completed output.
  std::string_view input;
  std::string_view value;
  // An interceptor's run (position: its place among the slot's interceptors, outermost first;
  // its duration includes everything its next() ran), not a hook's.
  bool interceptor = false;
};

struct Observer {
  virtual ~Observer() = default;
  virtual void on_warning(std::string_view /*slot*/, std::string_view /*message*/) {}
  virtual void on_dispatch_begin(std::string_view /*slot*/, std::uint64_t /*dispatch_id*/) {}
  virtual void on_dispatch_end(std::string_view /*slot*/, std::uint64_t /*dispatch_id*/,
                               std::size_t /*hooks_run*/, std::exception_ptr /*error*/) {}
  // Per-hook events cost a clock reading per hook boundary and two calls per hook: a dispatch
  // makes them only for observers that ask for them here. Asked once per dispatch, at its
  // begin: an observer that wants them for a sampled fraction of dispatches returns
  // HookEventSampler::sample() (below).
  virtual bool wants_hook_events() const noexcept { return false; }
  virtual void on_hook_begin(const HookEvent& /*event*/) {}
  virtual void on_hook_end(const HookEvent& /*event*/) {}
  // Values (opt-in): an observer that returns true here (asked once per dispatch, at its begin)
  // gets each dispatch's result rendered (on_dispatch_result, before on_dispatch_end, when the
  // dispatch succeeded) and, with hook events, the values of HookEvent. A slot asks for every
  // observer of its dispatches with `static constexpr bool trace_values = true;`. Rendering
  // happens only for those dispatches: see <hookset/format.hpp>.
  virtual bool wants_values() const noexcept { return false; }
  // `value`: the result (a pipeline's: its decision, e.g. "complete(...)", "reject(...)",
  // "pass"); `input`: a pipeline's input as finally rewritten, empty for other slots.
  virtual void on_dispatch_result(std::string_view /*slot*/, std::uint64_t /*dispatch_id*/,
                                  std::string_view /*value*/, std::string_view /*input*/) {}

 private:
  // The code a dispatch it watches runs: named by an observer's constructor, so that a file
  // contains that code only where an observer is made (events.hpp, watched_functions).
  friend struct detail::dispatch_observers;
  const detail::watched_functions* watched_ = &detail::watched_code;
};

// Picks one dispatch in `one_in` for per-hook events (counted across threads; 1: every one,
// 0 is taken as 1). An observer that wants hook events for 1 % of dispatches holds a
// HookEventSampler{100} and returns its sample() from wants_hook_events(); the other 99 % pay
// only for this counter.
class HookEventSampler {
 public:
  explicit HookEventSampler(std::uint32_t one_in) noexcept : one_in_(one_in == 0 ? 1 : one_in) {}
  bool sample() const noexcept {
    return counter_.fetch_add(1, std::memory_order_relaxed) % one_in_ == 0;
  }
  std::uint32_t one_in() const noexcept { return one_in_; }

 private:
  std::uint32_t one_in_;
  mutable std::atomic<std::uint64_t> counter_{0};
};

// hookset::ClogObserver, which writes warnings to std::clog: <hookset/clog_observer.hpp>.

namespace detail {
inline std::atomic<Observer*> installed_observer{nullptr};
inline std::atomic<std::uint64_t> next_dispatch_id{1};

inline Observer* current_observer() noexcept {
  return installed_observer.load(std::memory_order_acquire);
}

// Whether any process-wide observer is installed; the dispatch's fast check (current_observer()
// then reads it with acquire ordering).
inline bool observer_installed() noexcept {
  return installed_observer.load(std::memory_order_relaxed) != nullptr;
}

// Every call the library makes into an observer goes through notify (or, where the call also
// runs user code that renders values for it, tell_observer). An observer watches; it never
// changes an outcome: what it throws is dropped, so a registration, extend or dispatch it
// reports on succeeds or fails exactly as it would without it (and reporting after a change
// cannot break that change's strong guarantee).
template <class Call>
void tell_observer(Call&& call) noexcept {
  try {
    std::forward<Call>(call)();
  } catch (...) {
  }
}

template <class... Params, class... Args>
void notify(Observer* observer, void (Observer::*event)(Params...), Args&&... args) noexcept {
  if (observer) tell_observer([&] { (observer->*event)(std::forward<Args>(args)...); });
}

// Tells the process-wide observer and the set's a warning about `slot`.
void warn(std::string_view slot, std::string_view message,
          Observer* set_observer = nullptr) noexcept;
}  // namespace detail

// Installs `observer` (nullptr: none) and returns the previous one. The observer must stay
// alive while installed.
inline Observer* set_observer(Observer* observer) noexcept {
  return detail::installed_observer.exchange(observer, std::memory_order_acq_rel);
}

// Installs an observer for one scope and puts the previous one back at its end (also when the
// scope is left by an exception).
class ScopedObserver {
 public:
  explicit ScopedObserver(Observer* observer) noexcept : previous_(set_observer(observer)) {}
  ~ScopedObserver() { set_observer(previous_); }
  ScopedObserver(const ScopedObserver&) = delete;
  ScopedObserver& operator=(const ScopedObserver&) = delete;

 private:
  Observer* previous_;
};

}  // namespace hookset

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/observer.ipp>
#endif
