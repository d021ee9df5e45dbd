#pragma once
// The per-dispatch context: what a caller gave one dispatch (CallOptions) and what the dispatch
// keeps to honour it - its own stop source (the caller's token, the deadline and the running
// hook's time limit all trigger it), the timers, and the await-context links its hooks run
// under (so that a hook finds the stop token and the executor).
//
// Only a dispatch given options, or one running a hook with a time limit, has one: a plain
// dispatch pays a null pointer for it. Not a template: every slot shares this code.

#include <atomic>
#include <chrono>
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
  void arm(Executor& executor, Executor::clock::time_point when, hookset::stop_source source) {
    expired_ = std::make_shared<std::atomic<bool>>(false);
    timer_ = executor.start_timer(when, [expired = expired_, source = std::move(source)]() mutable {
      expired->store(true, std::memory_order_release);
      source.request_stop();
    });
  }
  bool armed() const noexcept { return timer_ != nullptr; }
  bool expired() const noexcept { return expired_ && expired_->load(std::memory_order_acquire); }
  void cancel() noexcept {
    if (timer_) timer_->cancel();
    timer_.reset();
  }
  ~expiry_timer() { cancel(); }

 private:
  std::shared_ptr<std::atomic<bool>> expired_;
  std::unique_ptr<Executor::Timer> timer_;
};

struct dispatch_observers;

// What the rest of an intercepted dispatch (the dispatch of its hooks, past its interceptors)
// shares with the dispatch the caller started: the observers to report its hooks to, under
// that dispatch's id (it reports no dispatch events of its own), and where it leaves how many
// hooks it ran.
struct intercept_link {
  const dispatch_observers* observers = nullptr;  // null: nobody observes the dispatch
  std::size_t hooks_run = 0;
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
 public:
  using clock = Executor::clock;

  explicit dispatch_context(CallOptions options) noexcept : options_(std::move(options)) {}
  dispatch_context(const dispatch_context&) = delete;
  dispatch_context& operator=(const dispatch_context&) = delete;

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
  CallOptions inherited_options() const {
    CallOptions inherited;
    inherited.stop_token = token_;
    inherited.deadline = deadline_;
    inherited.executor = executor_;
    return inherited;
  }

  // At the dispatch's start: resolves the executor and the deadline, links the caller's stop
  // token, and fails at once if the dispatch is already cancelled or late.
  void begin(const await_context* awaiting, std::string_view slot) {
    executor_ = options_.executor;
    if (!executor_ && awaiting) executor_ = const_cast<Executor*>(awaiting->nearest_executor());
    if (options_.timeout) {
      const auto by_timeout = clock::now() + *options_.timeout;
      deadline_ = options_.deadline ? std::min(*options_.deadline, by_timeout) : by_timeout;
    } else {
      deadline_ = options_.deadline;
    }
    token_ = source_.get_token();
    if (options_.stop_token.stop_possible())
      from_caller_.emplace(options_.stop_token, stop_forwarder{&source_});
    link_ = await_context{awaiting, nullptr, &token_, executor_};
    // The hooks see the dispatch's token first: it must not hide the stop token of whatever
    // awaits the dispatch (a hook of another, a tripwire's work), which they would see without
    // it. They get a token that either stops; the enclosing one does not cancel the dispatch.
    if (const hookset::stop_token* enclosing = awaiting ? awaiting->nearest_stop() : nullptr)
      if (enclosing->stop_possible() && !(*enclosing == options_.stop_token)) {
        hooks_stop_.emplace();
        hooks_token_ = hooks_stop_->get_token();
        hooks_from_dispatch_.emplace(token_, stop_forwarder{&*hooks_stop_});
        hooks_from_enclosing_.emplace(*enclosing, stop_forwarder{&*hooks_stop_});
        link_.stop = &hooks_token_;
      }
    if (deadline_ && clock::now() >= *deadline_) deadline_passed_ = true;
    check(slot, nullptr);
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

  Executor& executor() noexcept { return executor_ ? *executor_ : default_executor(); }

  // Throws DispatchCancelled or DispatchTimeout when the dispatch was asked to stop (naming
  // `hook` for a deadline that expired while it ran).
  void check(std::string_view slot, const hook_entry* hook) const {
    if (!source_.stop_requested() && !deadline_passed_ &&
        !(deadline_ && clock::now() >= *deadline_))
      return;
    if (deadline_passed_ || deadline_timer_.expired() || (deadline_ && clock::now() >= *deadline_))
      throw DispatchTimeout(std::string(slot), hook ? hook->id() : HookId{},
                            hook ? hook->record->name : std::string(), false);
    throw DispatchCancelled(std::string(slot));
  }
  bool stop_requested() const noexcept { return source_.stop_requested(); }

  // Before the dispatch suspends: the deadline needs a timer now (a synchronous stretch checks
  // the clock between steps instead).
  void arm_deadline() {
    if (deadline_ && !deadline_timer_.armed()) deadline_timer_.arm(executor(), *deadline_, source_);
  }

  // A hook starts. With a time limit it runs under a stop source of its own (triggered by the
  // dispatch's too); `arm` starts the timer now (a hook that may observe its token or suspend).
  void begin_hook(const hook_entry& hook, bool arm) {
    hook_running_ = false;
    if (!hook.record->timeout) return;
    hook_running_ = true;
    hook_source_ = hookset::stop_source();
    hook_token_ = hook_source_.get_token();
    hook_from_dispatch_.emplace(*link_.stop, stop_forwarder{&hook_source_});
    hook_link_ = await_context{link_.parent, nullptr, &hook_token_, executor_};
    hook_started_ = clock::now();
    hook_limit_ = *hook.record->timeout;
    if (arm) arm_hook_timer();
  }
  void arm_hook_timer() {
    if (hook_running_ && !hook_timer_.armed())
      hook_timer_.arm(executor(), hook_started_ + hook_limit_, hook_source_);
  }
  // A hook finished: whether its own time limit expired meanwhile.
  bool end_hook() noexcept {
    if (!hook_running_) return false;
    hook_running_ = false;
    const bool expired = hook_timer_.expired() || clock::now() - hook_started_ > hook_limit_;
    hook_timer_.cancel();
    hook_from_dispatch_.reset();
    return expired && !source_.stop_requested();
  }

  // The dispatch is over: no timer of it may keep an event loop busy.
  void end() noexcept {
    deadline_timer_.cancel();
    hook_timer_.cancel();
  }

 private:
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
