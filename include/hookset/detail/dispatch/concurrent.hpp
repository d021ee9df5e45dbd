#pragma once
// The concurrent runner of Concurrent / MaxConcurrent slots: from the first hook that suspends
// on, hooks start without waiting for the earlier ones to finish, up to the slot's limit;
// synchronous ones still run at their turn. Their outcomes are taken in registration order, by
// the same rules as one after another (conclude_hook, take_output). A Break (FirstSuccess), a
// failure or a stop stops the starting and asks the running hooks to stop; the dispatch goes on
// (or fails) only when every hook it started has finished - its coroutine frame destroyed, its
// by-value parameters with it (run_detached reports a hook only then). The driver (driver.hpp)
// runs it (concurrent_runner::run) from the first hook that suspends (the frame's hook loop with
// bookkeeping: suspend_concurrent).

#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/launched.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/hook_clock.hpp>

namespace hookset::detail {

// One started hook of a concurrent dispatch.
template <class Result>
struct concurrent_slot {
  bool done = false;       // guarded by the state's mutex until taken
  bool concluded = false;  // its outcome taken (before its turn: a failure, when it happened)
  bool shown = false;      // its outcome shown to the dispatch's output watch
  value_holder<Result> value;
  std::exception_ptr error;
  std::chrono::steady_clock::time_point started{};  // for its time limit
  hook_clock::ticks event_started = 0;              // for its hook events
  stop_source stop;  // this hook's: the dispatch's stop, a loser's cancellation
  stop_token token;
  std::optional<stop_callback<stop_forwarder>> from_dispatch;
  await_context link;
  expiry_timer own_limit;
};

// What a concurrent dispatch's driver and the runners of its hooks share.
template <class Result>
struct concurrent_state {
  explicit concurrent_state(std::size_t n) : slots(n) {}
  std::mutex mutex;
  std::vector<concurrent_slot<Result>> slots;
  std::size_t in_flight = 0;
  std::size_t finished_unseen = 0;
  std::size_t failures = 0;  // hooks that finished with an exception so far
  std::coroutine_handle<> waiting;

  // A runner's hook finished - its frame destroyed - with the outcome stored in its slot:
  // counts it, wakes the driver if it waits.
  void finish(std::size_t i) noexcept {
    std::coroutine_handle<> wake;
    {
      std::lock_guard lock(mutex);
      slots[i].done = true;
      if (slots[i].error) ++failures;
      --in_flight;
      ++finished_unseen;
      wake = std::exchange(waiting, nullptr);
    }
    if (wake) wake.resume();
  }
  // run_detached's sink for hook i: the outcome goes into its slot (read by the driver only
  // once the slot is done, under the mutex), then finish.
  struct into_slot {
    concurrent_state* state;
    std::size_t i;
    template <class... V>
    void value(V&&... value) {
      if constexpr (sizeof...(V) != 0) state->slots[i].value.emplace(std::forward<V>(value)...);
    }
    void error(std::exception_ptr error) noexcept { state->slots[i].error = std::move(error); }
    void finished() noexcept { state->finish(i); }
  };
  bool is_done(std::size_t i) {
    std::lock_guard lock(mutex);
    return slots[i].done;
  }
  std::size_t running() {
    std::lock_guard lock(mutex);
    return in_flight;
  }
  std::size_t failed() {
    std::lock_guard lock(mutex);
    return failures;
  }
  // Waits until some hook finishes (at once if one did since the last wait).
  auto next_finish() noexcept {
    struct awaiter {
      concurrent_state& state;
      bool await_ready() const noexcept { return false; }
      bool await_suspend(std::coroutine_handle<> driver) noexcept {
        std::lock_guard lock(state.mutex);
        if (state.finished_unseen != 0) {
          state.finished_unseen = 0;
          return false;
        }
        state.waiting = driver;
        return true;
      }
      void await_resume() noexcept {
        std::lock_guard lock(state.mutex);
        state.finished_unseen = 0;
      }
    };
    return awaiter{*this};
  }
};

// The runner: a class of its own over the dispatch (a friend of it), reached from the driver.
template <class Dispatch>
class concurrent_runner {
  using Kind = typename Dispatch::kind;
  using result = typename Dispatch::result;
  using next = progress;
  static constexpr bool is_void = Dispatch::is_void;
  static constexpr bool attributed = Dispatch::attributed;
  static constexpr bool substitutes = Dispatch::substitutes;

 public:
  // The hooks from next_ on, concurrently; the driver awaits it, then the rules' finish runs.
  static Task<void> run(Dispatch& self);

 private:
  // Starts hook i (a synchronous one runs to its end here).
  static void start_hook(Dispatch& self, concurrent_state<result>& state, std::size_t first,
                         std::size_t i, const await_context* parent);
};

template <class Dispatch>
Task<void> concurrent_runner<Dispatch>::run(Dispatch& self) {
  const std::size_t first = self.next_;
  auto state = std::make_unique<concurrent_state<result>>(self.count_ - first);
  const bool with_context = self.has_context();
  const await_context* parent = co_await current_await_context();
  std::size_t start = first;  // the next hook to start
  std::size_t take = first;   // the next outcome to take, in registration order
  bool starting = true;
  bool answered = false;       // a chain's Break (FirstSuccess): an answer
  std::exception_ptr failure;  // what the dispatch ends with, once every hook has finished

  // Whether a hook ran past its own time limit (its timer fired, or it returned late).
  auto over_own_limit = [](const concurrent_slot<result>& slot, const hook_entry& hook) {
    return hook.record->timeout &&
           (slot.own_limit.expired() ||
            std::chrono::steady_clock::now() - slot.started > *hook.record->timeout);
  };
  auto stop_running = [&] {
    starting = false;
    for (std::size_t i = take; i < start; ++i) state->slots[i - first].stop.request_stop();
  };
  // Takes the outcome of hook i (finished) by the usual rules; a failure of the dispatch is
  // kept in `failure` and stops the hooks still running.
  auto conclude = [&](std::size_t i) {
    concurrent_slot<result>& slot = state->slots[i - first];
    const hook_entry& hook = self.hooks_[i];
    slot.concluded = true;
    try {
      self.hook_position_ = i;
      self.hook_started_ = slot.event_started;
      slot.own_limit.cancel();
      const hook_step step = Dispatch::loop::conclude_hook(self, hook, std::move(slot.error),
                                                           over_own_limit(slot, hook));
      if (step != hook_step::skipped) {
        // (substituted: value_ holds the output its aggregate made of the failure)
        if constexpr (!is_void)
          if (step == hook_step::produced) self.value_ = std::move(*slot.value);
        if (Dispatch::rules::take_output(self) == next::stop) {
          answered = true;
          stop_running();
        }
      }
    } catch (...) {
      failure = std::current_exception();
      stop_running();
      if constexpr (attributed)
        if (output_watch<result>* watch = Dispatch::rules::watched(self))
          watch->seen(&hook, nullptr);
    }
  };
  // A watched dispatch (a tripwire's guards) shows each hook's outcome to its watch when the
  // hook finishes, not at its turn: an output as it is, or under FailClosed the output its
  // aggregate makes of a failure (a failure that fails the dispatch is shown once concluded,
  // by conclude). Outputs are shown again when taken, in order: a watch is idempotent. Once
  // the dispatch is stopped, what its hooks do no longer counts.
  auto show_finished = [&] {
    if constexpr (attributed) {
      output_watch<result>* watch = Dispatch::rules::watched(self);
      if (!watch) return;
      for (std::size_t i = take; i < start && !self.context_->stop_requested(); ++i) {
        concurrent_slot<result>& slot = state->slots[i - first];
        if (slot.shown || slot.concluded || !state->is_done(i - first)) continue;
        slot.shown = true;
        const hook_entry& hook = self.hooks_[i];
        if (!slot.error && !over_own_limit(slot, hook)) {
          watch->seen(&hook, &*slot.value);
        } else if constexpr (substitutes) {
          if (hook.on_failure == FailurePolicy::fail_closed) {
            const result failed = Kind::aggregate::failed_hook_output(
                slot.error ? slot.error
                           : self.observers_.code->hook_time_limit_expired(
                                 self.slot_->name, hook.id(), hook.record->name));
            watch->seen(&hook, &failed);
          }
        }
        // (A failure that fails the dispatch is shown once concluded, just below: stopping the
        // dispatch first would make it a cancellation.)
      }
    }
  };
  std::size_t failures_seen = 0;
  for (;;) {
    while (starting && start < self.count_ && state->running() < Kind::concurrency) {
      if (with_context && self.context_->stop_requested()) {
        starting = false;  // a stopped dispatch starts nothing more (and fails below)
        break;
      }
      if (state->failed() != failures_seen) break;  // (a hook failed: see to it first)
      start_hook(self, *state, first, start++, parent);
      self.next_ = start;  // hooks_run: started so far
      show_finished();     // (a trip among the hooks started so far starts no more)
    }
    while (take < start && state->is_done(take - first)) {
      concurrent_slot<result>& slot = state->slots[take - first];
      const hook_entry& hook = self.hooks_[take];
      const std::size_t i = take++;
      if (slot.concluded) continue;  // (a failure, taken when it happened)
      if (!starting && (failure || answered)) {
        // A loser: its answer no longer matters.
        self.hook_position_ = i;
        self.hook_started_ = slot.event_started;
        if (self.hook_events()) self.report_hook_end(hook, HookOutcome::cancelled, slot.error);
        continue;
      }
      conclude(i);
    }
    show_finished();
    // A failure that fails the dispatch (Propagate, FailClosed) is acted on when it happens,
    // not at its turn: every hook still running, registered before it or after, is asked to
    // stop at once. (FailOpen failures wait for their turn: they only leave an output out; so
    // do FailClosed ones whose aggregate puts an output in their place, failed_hook_output.
    // Once a first-success chain has its answer, the hooks it stopped fail as they may.)
    if (!failure && !answered) {
      if (const std::size_t failed = state->failed(); failed != failures_seen) {
        failures_seen = failed;
        for (std::size_t i = take; i < start && !failure; ++i) {
          const concurrent_slot<result>& slot = state->slots[i - first];
          if (failure_fails_dispatch(self.hooks_[i], substitutes) && state->is_done(i - first) &&
              slot.error && !slot.concluded)
            conclude(i);
        }
      }
    }
    if (take == start && (!starting || start == self.count_)) break;
    if (starting && start < self.count_ && state->running() < Kind::concurrency) continue;
    if (self.hook_events()) self.observers_.forget_boundary();  // (waiting is no hook's time)
    co_await state->next_finish();
  }
  // (Every started hook has finished and been taken.)
  if (failure) std::rethrow_exception(failure);
  self.check_stop();
  if (answered) self.resume_ = &Dispatch::rules::finish_stopped;  // (the driver's next step)
}

template <class Dispatch>
void concurrent_runner<Dispatch>::start_hook(Dispatch& self, concurrent_state<result>& state,
                                             std::size_t first, std::size_t i,
                                             const await_context* parent) {
  const hook_entry& hook = self.hooks_[i];
  concurrent_slot<result>& slot = state.slots[i - first];
  slot.token = slot.stop.get_token();
  const bool with_context = self.has_context();
  if (with_context)
    slot.from_dispatch.emplace(*self.context_->link()->stop, stop_forwarder{&slot.stop});
  slot.link = await_context{parent, nullptr, &slot.token,
                            with_context ? &self.context_->executor() : nullptr};
  slot.started = std::chrono::steady_clock::now();
  if (self.hook_events())
    slot.event_started = self.observers_.hook_begin(self.slot_->name, hook, i);
  // (A hook with a time limit runs in a dispatch with a context: watched_policy::start makes one.)
  if (hook.record->timeout)
    self.context_->arm_timer(slot.own_limit, slot.started + *hook.record->timeout, slot.stop);
  {
    std::lock_guard lock(state.mutex);
    ++state.in_flight;
  }
  try {
    await_context_scope scope(&slot.link);
    if (hook.sync) {
      if constexpr (is_void) self.call_with_args(sync_call_of<Kind>(hook), hook.object);
      else slot.value.emplace(self.call_with_args(sync_call_of<Kind>(hook), hook.object));
    } else {
      run_detached(self.call_with_args(async_call_of<Kind>(hook), hook.object), &slot.link,
                   typename concurrent_state<result>::into_slot{&state, i - first});
      return;
    }
  } catch (...) {
    slot.error = std::current_exception();
  }
  state.finish(i - first);
}

}  // namespace hookset::detail
