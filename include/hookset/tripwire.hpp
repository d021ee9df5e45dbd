#pragma once
// Guarded execution: a verdict slot's hooks (guards) run alongside a piece of work; the first
// guard whose verdict is above the lattice's bottom (for Permission: ask or deny) trips - the
// work is asked to stop at once, and the result says which registration tripped and why. If
// none trips, the work's result comes back once every guard has settled (docs/semantics.md,
// "Tripwires").
//
//   struct WatchTool : hookset::VerdictSlot<hookset::Verdict<>(const ToolCall&),
//                                           hookset::Always, hookset::Concurrent> {
//     static hookset::Verdict<> default_impl(const ToolCall&) { return {}; }  // allow
//   };
//   auto guarded = hookset::tripwire(hooks.call<WatchTool>(call))
//                      .around([&](hookset::Admission& admission) -> hookset::Task<Reply> {
//                        Reply reply = co_await run_tool(call);  // stopped on a trip
//                        if (!co_await admission.admit()) co_return reply;  // tripped: no write
//                        commit(reply);                          // every guard allowed
//                        co_return reply;
//                      });
//   hookset::Guarded<Reply> outcome = co_await std::move(guarded);
//   if (outcome.tripped()) refuse(outcome.trip->name, outcome.trip->value.reason);
//
// The work is an awaitable (a hookset::Task, an asio::awaitable with <hookset/asio.hpp>, ...)
// or a callable taking the Admission and returning one. It sees its own stop token
// (hookset::current_stop_token(), an asio::awaitable's cancellation), triggered by a trip, by
// a failure of the guards, or by the tripwire's own stop token.

#include <coroutine>
#include <cstddef>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <hookset/attributed.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/launched.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/holders.hpp>
#include <hookset/errors.hpp>
#include <hookset/guard.hpp>

namespace hookset {

// The outcome of guarded work.
template <class T, class D = Permission>
struct Guarded {
  // The work's result; empty when a guard tripped (std::monostate for work of no result).
  std::optional<std::conditional_t<std::is_void_v<T>, std::monostate, T>> value{};
  // The guard that tripped, with its verdict (and reason); empty when none did.
  std::optional<Attributed<Verdict<D>>> trip{};
  // When none tripped: every guard's verdict (their join is the lattice's bottom). When one
  // did: its decision alone, with no contribution (the others were asked to stop).
  Verdicts<D> verdicts{};

  bool tripped() const noexcept { return trip.has_value(); }
};

namespace detail {
template <class D, class L>
class tripwire_state;
}  // namespace detail

// What guarded work awaits before a side effect: admit() completes once every guard has
// settled, true when none tripped (the side effect may happen: no guard can trip any more),
// false when one did or the guards failed (it must not). Later calls answer at once.
class Admission {
 public:
  auto admit() noexcept {
    struct awaiter {
      Admission& self;
      bool await_ready() const noexcept { return false; }
      bool await_suspend(std::coroutine_handle<> waiting) {
        std::lock_guard lock(self.mutex_);
        if (self.state_ != state::pending) return false;
        self.waiting_.push_back(waiting);
        return true;
      }
      bool await_resume() const noexcept {
        std::lock_guard lock(self.mutex_);
        return self.state_ == state::admitted;
      }
    };
    return awaiter{*this};
  }

 private:
  template <class D, class L>
  friend class detail::tripwire_state;
  enum class state : unsigned char { pending, admitted, refused };

  // The guards have settled: wakes whoever waits.
  void settle(bool admitted) {
    std::vector<std::coroutine_handle<>> waiting;
    {
      std::lock_guard lock(mutex_);
      state_ = admitted ? state::admitted : state::refused;
      waiting.swap(waiting_);
    }
    for (std::coroutine_handle<> work : waiting) work.resume();
  }

  mutable std::mutex mutex_;
  state state_ = state::pending;
  std::vector<std::coroutine_handle<>> waiting_;
};

namespace detail {

// Awaits `awaitable` where it is (a dispatch run under a context that refers to it).
template <class R, class Awaitable>
Task<R> await_in_place(Awaitable& awaitable) {
  co_return co_await std::move(awaitable);
}

// What a tripwire's guards, its work and the tripwire itself share: the stop sources of the
// guards and of the work, what ended the run early, and the admission. The guards' dispatch
// reports each verdict to it (an output_watch) as the guard finishes, on the guard's thread.
//   The first of these ends the run, and the others then count for nothing: a guard trips (its
// verdict is above the bottom), the guards' dispatch fails (a Propagate failure, a stop), the
// work fails. Each stops whatever is still running: a trip or a failure of the guards stops the
// work and the guards, a failure of the work stops the guards (there is nothing left to guard).
template <class D, class L>
class tripwire_state final : public output_watch<Verdict<D>> {
 public:
  enum class ended : unsigned char { not_yet, tripped, guards_failed, work_failed };

  hookset::stop_source guards_stop{hookset::nostopstate};  // the guards' dispatch's own
  hookset::stop_source work_stop;
  hookset::stop_token work_token = work_stop.get_token();
  Admission admission;

  void seen(const hook_entry* hook, const Verdict<D>* verdict) noexcept override {
    if (verdict && verdict->decision == L::bottom) return;  // passes
    {
      std::lock_guard lock(mutex_);
      if (ended_ != ended::not_yet) return;  // (the first one counts)
      if (verdict) {
        trip(*verdict, hook ? hook->id() : HookId{}, hook ? &hook->record->name : nullptr);
      } else {
        ended_ = ended::guards_failed;  // the guards' dispatch fails: its error is the tripwire's
      }
    }
    stop_all();
  }
  // The work failed (as it failed): the guards still running are asked to stop.
  static void work_failed(void* self) noexcept {
    auto& state = *static_cast<tripwire_state*>(self);
    {
      std::lock_guard lock(state.mutex_);
      if (state.ended_ != ended::not_yet) return;
      state.ended_ = ended::work_failed;
    }
    state.guards_stop.request_stop();
  }
  // Stops the work and the guards (a trip, a failure, the tripwire's own stop). The run may
  // end inside either request (the last thing running stops, and the tripwire completes on this
  // thread): nothing of this state is touched after the first.
  void stop_all() noexcept {
    hookset::stop_source work = work_stop, guards = guards_stop;
    work.request_stop();
    guards.request_stop();
  }
  // Once the guards' dispatch has ended (verdicts: null when it failed): trips on a join above
  // the bottom that no single verdict was seen to trip (an interceptor may change the
  // verdicts), then settles the admission - granted only when nothing ended the run.
  void guards_settled(const Verdicts<D>* verdicts) {
    bool granted;
    {
      std::lock_guard lock(mutex_);
      if (ended_ == ended::not_yet) {
        if (!verdicts) {
          ended_ = ended::guards_failed;
        } else if (!(verdicts->decision == L::bottom)) {
          if (const Attributed<Verdict<D>>* by = verdicts->decided_by())
            trip(by->value, by->hook, &by->name);
          else trip(Verdict<D>{verdicts->decision, {}}, HookId{}, nullptr);
        }
      }
      granted = ended_ == ended::not_yet;
    }
    if (!granted) work_stop.request_stop();
    admission.settle(granted);
  }
  ended how_ended() const {
    std::lock_guard lock(mutex_);
    return ended_;
  }
  // After the guards settled and the work finished (no more writers).
  std::optional<Attributed<Verdict<D>>>& trip() noexcept { return trip_; }

 private:
  // (Under the mutex.) Without memory for the reason or the name, the trip still trips.
  void trip(const Verdict<D>& verdict, HookId hook, const std::string* name) noexcept {
    ended_ = ended::tripped;
    try {
      trip_.emplace(Attributed<Verdict<D>>{verdict, hook, name ? *name : std::string()});
    } catch (...) {
      trip_.emplace(Attributed<Verdict<D>>{Verdict<D>{verdict.decision, {}}, hook, {}});
    }
  }

  mutable std::mutex mutex_;
  std::optional<Attributed<Verdict<D>>> trip_;
  ended ended_ = ended::not_yet;
};

// What the work is: T, from an awaitable or from a callable taking the Admission.
template <class Work>
struct work_traits;
template <class Awaitable>
requires adapted_awaitable<Awaitable> || is_awaitable_v<Awaitable>
struct work_traits<Awaitable> {
  using result = std::remove_cvref_t<typename decltype([] {
    if constexpr (adapted_awaitable<Awaitable>)
      return std::type_identity<
          typename foreign_awaitable<std::remove_cvref_t<Awaitable>>::result_type>{};
    else return std::type_identity<await_result_t<Awaitable>>{};
  }())::type>;
  static Task<result> start(Awaitable& work, Admission&) {
    return to_task<result>(std::move(work));
  }
};
template <class Work>
requires std::is_invocable_v<Work&, Admission&>
struct work_traits<Work> : work_traits<std::invoke_result_t<Work&, Admission&>> {
  static Task<typename work_traits<std::invoke_result_t<Work&, Admission&>>::result> start(
      Work& work, Admission& admission) {
    using awaitable = std::invoke_result_t<Work&, Admission&>;
    return to_task<typename work_traits<awaitable>::result>(work(admission));
  }
};

template <class Work>
concept guarded_work = requires {
  typename work_traits<std::remove_cvref_t<Work>>::result;
};

// A dispatch of a verdict slot (its aggregate joins verdicts in a lattice).
template <class Dispatch>
concept verdict_dispatch = requires {
  typename Dispatch::aggregate_type::lattice;
  typename Dispatch::aggregate_type::verdicts_type;
};

template <class GuardDispatch, class Work, class D, class L>
Task<Guarded<typename work_traits<Work>::result, D>> run_tripwire(GuardDispatch guards, Work work,
                                                                  hookset::stop_token stop,
                                                                  Executor* executor,
                                                                  bool guards_first) {
  using T = typename work_traits<Work>::result;
  using ended = typename tripwire_state<D, L>::ended;
  tripwire_state<D, L> state;
  const await_context* parent = co_await current_await_context();

  // The guards' dispatch runs under a context in this frame (no allocation), whose stop source
  // stops it (a stop token given to the dispatch itself stops the guards alone, as for any
  // dispatch). Everything stops with the tripwire's own token, and with the stop token of
  // whatever awaits it (a hook's, a dispatch's).
  dispatch_context guards_context{CallOptions{}};
  GuardDispatch guards_dispatch(std::move(guards));  // (after its context: goes first)
  guards_dispatch.run_under(guards_context);
  guards_dispatch.watch_outputs(state);
  state.guards_stop = guards_context.source();
  struct stop_everything {
    tripwire_state<D, L>* state;
    void operator()() const noexcept { state->stop_all(); }
  };
  std::optional<stop_callback<stop_everything>> everything_own, everything_parent;
  if (stop.stop_possible()) everything_own.emplace(stop, stop_everything{&state});
  if (const hookset::stop_token* token = parent ? parent->nearest_stop() : nullptr)
    if (token->stop_possible()) everything_parent.emplace(*token, stop_everything{&state});

  // The guards run under the awaiting coroutine's context (its executor), the work under a link
  // with its own stop token. The guards start first; the work starts unless the run has ended
  // already - the guards finished (guards_first: waited for), or the tripwire was stopped.
  const await_context work_link{parent, nullptr, &state.work_token, executor};
  launched<Verdicts<D>> guards_run;
  launched<T> work_run;
  work_run.on_failure(&tripwire_state<D, L>::work_failed, &state);
  std::optional<Verdicts<D>> verdicts;
  bool settled = false;
  auto settle = [&] {
    if (!guards_run.error()) verdicts.emplace(guards_run.take());
    state.guards_settled(verdicts ? &*verdicts : nullptr);
    settled = true;
  };
  launch(
      guards_run, [&] { return await_in_place<Verdicts<D>>(guards_dispatch); }, parent);
  if (guards_first || guards_run.done()) {
    co_await guards_run.finished();
    settle();
  }
  if (state.how_ended() == ended::not_yet && !state.work_token.stop_requested())
    launch(
        work_run, [&] { return work_traits<Work>::start(work, state.admission); }, &work_link);
  if (!settled) {
    co_await guards_run.finished();
    settle();
  }
  if (work_run.started()) co_await work_run.finished();

  everything_own.reset();
  everything_parent.reset();
  Guarded<T, D> outcome;
  switch (state.how_ended()) {
    case ended::tripped:
      outcome.trip = std::move(state.trip());
      outcome.verdicts.decision = outcome.trip->value.decision;
      co_return outcome;
    case ended::guards_failed:
      if (guards_run.error()) std::rethrow_exception(guards_run.error());
      // (A guard's failure was seen, and stopped the work, but an interceptor on the guards'
      // slot answered for it: the run still ended there.)
      throw DispatchCancelled(std::string(guards_dispatch.slot_name()));
    case ended::work_failed:
      std::rethrow_exception(work_run.error());
    case ended::not_yet:
      break;
  }
  if (!work_run.started())  // (the tripwire was stopped after the guards had settled)
    throw DispatchCancelled(std::string(guards_dispatch.slot_name()));
  outcome.verdicts = std::move(*verdicts);
  if constexpr (std::is_void_v<T>) {
    work_run.take();
    outcome.value.emplace();
  } else {
    outcome.value.emplace(work_run.take());
  }
  co_return outcome;
}

}  // namespace detail

// A tripwire over a guards' dispatch (what set.call<S>(args...) returns for a verdict slot S,
// with its own options: a timeout for the guards, say). around(work) makes the guarded run.
template <class GuardDispatch>
class Tripwire {
 public:
  explicit Tripwire(GuardDispatch guards) : guards_(std::move(guards)) {}

  // Runs the guards to the end before the work starts (the work runs only if none tripped).
  Tripwire&& guards_first() && {
    guards_first_ = true;
    return std::move(*this);
  }
  // Stops the guards and the work (as the stop token of a coroutine awaiting it also does).
  Tripwire&& with_stop_token(hookset::stop_token token) && {
    stop_ = std::move(token);
    return std::move(*this);
  }
  // The executor the work runs under (an asio::awaitable work's: a hookset::asio
  // executor_binding); default: the awaiting coroutine's. (The guards' is their dispatch's.)
  Tripwire&& on(Executor& executor) && {
    executor_ = &executor;
    return std::move(*this);
  }

  // The guarded run (a lazy Task): `work` is an awaitable of T, or a callable taking
  // hookset::Admission& and returning one.
  template <class Work>
  auto around(Work&& work) && {
    static_assert(detail::guarded_work<Work>,
                  "hookset: a tripwire's work is an awaitable (a hookset::Task<T>, ...), or a "
                  "callable taking hookset::Admission& and returning one");
    if constexpr (detail::verdict_dispatch<GuardDispatch> && detail::guarded_work<Work>) {
      using join = typename GuardDispatch::aggregate_type;  // JoinVerdicts<D, L>
      using decision = decltype(join::verdicts_type::decision);
      return detail::run_tripwire<GuardDispatch, std::remove_cvref_t<Work>, decision,
                                  typename join::lattice>(
          std::move(guards_), std::forward<Work>(work), std::move(stop_), executor_, guards_first_);
    } else {
      return Task<void>{};  // (said above; awaitable, so that no follow-on error hides it)
    }
  }

 private:
  GuardDispatch guards_;
  hookset::stop_token stop_{};
  Executor* executor_ = nullptr;
  bool guards_first_ = false;
};

// tripwire(set.call<S>(args...)): S must be a verdict slot (an Aggregate<JoinVerdicts<D, L>>).
template <class GuardDispatch>
auto tripwire(GuardDispatch&& guards) {
  static_assert(detail::verdict_dispatch<std::remove_cvref_t<GuardDispatch>>,
                "hookset: a tripwire's guards are a verdict slot's dispatch "
                "(Aggregate<JoinVerdicts<D, L>>, as VerdictSlot declares)");
  // (It holds the engine's awaitable, made from the dispatch: detail/dispatch/call.hpp.)
  using started = detail::started_dispatch_t<GuardDispatch>;
  return Tripwire<started>(detail::started_dispatch(std::forward<GuardDispatch>(guards)));
}

}  // namespace hookset
