#pragma once
// The per-dispatch context: what a caller gave one dispatch (CallOptions) and what the dispatch
// keeps to honour it - its own stop source (the caller's token, the deadline and the running
// hook's time limit all trigger it), the timers, and the await-context links its hooks run
// under (so that a hook finds the stop token and the executor).
//
// Only a dispatch given options, or one running a hook with a time limit, has one: a plain
// dispatch pays a null pointer for it. Not a template: every slot shares this code
// (<hookset/impl/context.ipp>: compiled once with HOOKSET_SEPARATE_COMPILATION, coro/config.hpp).

#include <atomic>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <hookset/call_options.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/errors.hpp>

namespace hookset::detail {

// Forwards a stop to `target`. The stop may end the dispatch that owns `target` (and this
// callback) inside the request - a hook that was the last to run returns, and the dispatch
// completes on this thread - so the request is made through a copy that keeps the stop state.
struct stop_forwarder {
  hookset::stop_source* target;
  void operator()() const noexcept { hookset::stop_source(*target).request_stop(); }
};

// A timer that requests stop on a source and records that it expired. Its callback owns what
// it touches, so a timer that fires after its dispatch completed does no harm.
class expiry_timer {
 public:
  void arm(Executor& executor, Executor::clock::time_point when, hookset::stop_source source);
  bool armed() const noexcept { return timer_ != nullptr; }
  bool expired() const noexcept { return expired_ && expired_->load(std::memory_order_acquire); }
  void cancel() noexcept;
  ~expiry_timer() { cancel(); }

 private:
  std::shared_ptr<std::atomic<bool>> expired_;
  std::unique_ptr<Executor::Timer> timer_;
};

struct dispatch_observers;
struct watched_functions;

// What the rest of an intercepted dispatch (the dispatch of its hooks, past its interceptors)
// shares with the dispatch the caller started: the observers to report its hooks to, under
// that dispatch's id (it reports no dispatch events of its own), and where it leaves how many
// hooks it ran (what that dispatch reports as its own hooks_run).
struct intercept_link {
  const dispatch_observers* observers;  // null: nobody observes the dispatch
  std::size_t* hooks_run;
};

// Sees the outputs of a dispatch as they are made, in completion order (a tripwire watches
// its guards' verdicts: <hookset/tripwire.hpp>). `hook` is null for the default's output;
// `output` is null for a hook failure that fails the dispatch. Called on the thread the
// output was made on, possibly more than once for one hook: it must be idempotent. Only a
// dispatch whose aggregate takes attributed outputs reports to one.
template <class Result>
class output_watch {
 public:
  virtual void seen(const hook_entry* hook, const Result* output) noexcept = 0;

 protected:
  ~output_watch() = default;
};

class dispatch_context {
  struct functions;

 public:
  using clock = Executor::clock;

  explicit dispatch_context(CallOptions options) noexcept
      : code_(&code), options_(std::move(options)) {}
  dispatch_context(const dispatch_context&) = delete;
  dispatch_context& operator=(const dispatch_context&) = delete;
  HOOKSET_DECL ~dispatch_context();
  // Deletes a context make_dispatch_context made (through code_, as the calls below).
  static void destroy(dispatch_context* context) noexcept { context->code_->destroy(context); }

  CallOptions& options() noexcept { return options_; }

  // A context lent to its dispatch (dispatch::run_under) belongs to whoever lent it: the
  // dispatch does not delete it.
  void lend() noexcept { lent_ = true; }
  bool lent() const noexcept { return lent_; }

  // Stops the dispatch as the caller's stop token would (an adapter's cancellation). A copy of
  // the source may outlive the context: a request through it after the dispatch ended is moot.
  const hookset::stop_source& source() const noexcept { return source_; }

  // The dispatch's output watch (an output_watch<R> of its result type R; null: none). Set
  // through dispatch::watch_outputs, which knows R.
  void watch(void* watch) noexcept { watch_ = watch; }
  void* watch() const noexcept { return watch_; }

  // Marks the dispatch this context belongs to as the rest of an intercepted one.
  void continue_intercepted(intercept_link* outer) noexcept { intercepted_by_ = outer; }
  intercept_link* intercepted_by() const noexcept { return intercepted_by_; }

  // After begin(): what the rest of an intercepted dispatch inherits - this dispatch's stop
  // token (the caller's, the deadline's), its deadline (absolute, so that a timeout is counted
  // from the first start) and its executor.
  CallOptions inherited_options() const { return code_->inherited_options(*this); }

  // At the dispatch's start: resolves the executor and the deadline, links the caller's stop
  // token, and fails at once if the dispatch is already cancelled or late.
  void begin(const await_context* awaiting, std::string_view slot) {
    code_->begin(*this, awaiting, slot);
  }

  // The dispatch is awaited by a coroutine that is not the library's (a coroutine type of the
  // caller's own): it starts a new chain. Its parent link belongs to whatever ran when the
  // dispatch began (say a hook of another dispatch, which may complete and free it while this
  // one is suspended), so it is dropped before anything of this dispatch resumes. (The executor
  // was resolved at begin().)
  void forget_parent() noexcept {
    link_.parent = nullptr;
    hook_link_.parent = nullptr;
  }

  // The link the hooks (and companions, and the default) run under.
  const await_context* link() const noexcept { return hook_running_ ? &hook_link_ : &link_; }

  Executor& executor() noexcept { return code_->executor(*this); }
  // Arms `timer` (a concurrent hook's own time limit) on the dispatch's executor.
  void arm_timer(expiry_timer& timer, clock::time_point when, const hookset::stop_source& source) {
    code_->arm_timer(*this, timer, when, source);
  }

  // Throws DispatchCancelled or DispatchTimeout when the dispatch was asked to stop (naming
  // `hook` for a deadline that expired while it ran).
  void check(std::string_view slot, const hook_entry* hook) const {
    code_->check(*this, slot, hook);
  }
  bool stop_requested() const noexcept { return source_.stop_requested(); }

  // Before the dispatch suspends: the deadline needs a timer now (a synchronous stretch checks
  // the clock between steps instead).
  void arm_deadline() { code_->arm_deadline(*this); }

  // A hook starts. With a time limit it runs under a stop source of its own (triggered by the
  // dispatch's too); `arm` starts the timer now (a hook that may observe its token or suspend).
  void begin_hook(const hook_entry& hook, bool arm) { code_->begin_hook(*this, hook, arm); }
  void arm_hook_timer() { code_->arm_hook_timer(*this); }
  // A hook finished: whether its own time limit expired meanwhile.
  bool end_hook() noexcept { return code_->end_hook(*this); }

  // The dispatch is over: no timer of it may keep an event loop busy.
  void end() noexcept { code_->end(*this); }

  // The code of a watched dispatch (events.hpp): a dispatch with a context is watched.
  const watched_functions* watched() const noexcept { return code_->watched; }

 private:
  // The code behind the calls above (<hookset/impl/context.ipp>), reached through the table
  // code_ points to. Only the constructor names the table, so a file that makes no context -
  // its dispatches take no options, its registrations no time limit nor interceptor - does not
  // contain that code: the timers, the timer thread, the stop callbacks, the errors of a stop.
  // (Not virtual functions: GCC devirtualizes a virtual call speculatively, naming the
  // function, in every file that makes the call.)
  struct functions {
    void (*destroy)(dispatch_context*) noexcept;
    CallOptions (*inherited_options)(const dispatch_context&);
    void (*begin)(dispatch_context&, const await_context*, std::string_view);
    void (*check)(const dispatch_context&, std::string_view, const hook_entry*);
    void (*arm_deadline)(dispatch_context&);
    void (*begin_hook)(dispatch_context&, const hook_entry&, bool);
    void (*arm_hook_timer)(dispatch_context&);
    bool (*end_hook)(dispatch_context&) noexcept;
    void (*end)(dispatch_context&) noexcept;
    Executor& (*executor)(dispatch_context&) noexcept;
    void (*arm_timer)(dispatch_context&, expiry_timer&, clock::time_point,
                      const hookset::stop_source&);
    const watched_functions* watched;
  };
  static const functions code;

  CallOptions do_inherited_options() const;
  void do_begin(const await_context* awaiting, std::string_view slot);
  void do_check(std::string_view slot, const hook_entry* hook) const;
  void do_arm_deadline();
  void do_begin_hook(const hook_entry& hook, bool arm);
  void do_arm_hook_timer();
  bool do_end_hook() noexcept;
  void do_end() noexcept;
  Executor& do_executor() noexcept { return executor_ ? *executor_ : default_executor(); }

  const functions* code_;
  CallOptions options_;
  intercept_link* intercepted_by_ = nullptr;
  void* watch_ = nullptr;
  Executor* executor_ = nullptr;
  std::optional<clock::time_point> deadline_;
  bool deadline_passed_ = false;
  bool lent_ = false;
  hookset::stop_source source_;
  hookset::stop_token token_;
  std::optional<hookset::stop_callback<stop_forwarder>> from_caller_;
  // (Only under an enclosing stop token: what the hooks see.)
  std::optional<hookset::stop_source> hooks_stop_;
  hookset::stop_token hooks_token_;
  std::optional<hookset::stop_callback<stop_forwarder>> hooks_from_dispatch_;
  std::optional<hookset::stop_callback<stop_forwarder>> hooks_from_enclosing_;
  await_context link_;
  expiry_timer deadline_timer_;

  bool hook_running_ = false;
  hookset::stop_source hook_source_{hookset::nostopstate};
  hookset::stop_token hook_token_;
  std::optional<hookset::stop_callback<stop_forwarder>> hook_from_dispatch_;
  await_context hook_link_;
  clock::time_point hook_started_{};
  std::chrono::nanoseconds hook_limit_{0};
  expiry_timer hook_timer_;
};

}  // namespace hookset::detail

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/context.ipp>
#endif
