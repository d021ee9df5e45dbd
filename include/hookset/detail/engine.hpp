#pragma once
// The dispatch engine: the awaitable `HookSet::call<S>(args...)` returns.
//
// One engine serves every mode x companion combination, instantiated per slot kind
// (result, parameters, mode, companions), never per slot: a slot contributes only its
// descriptor (name, default, failure policy) at run time.
//
// The rules. Each is stated once, in the function named after it:
//   start       Always: the default runs first and its output is taken like a hook's;
//               Fallback, Singleton: nothing runs before the hooks.
//   take_output what happens to each output (the default's under Always, then each hook's):
//               a fold slot keeps it as the next `last`; a chain companion judges it (Break ends
//               the hooks); an aggregate collects it.
//   finish      when the hooks are done: a Fallback or Singleton slot whose hooks produced no
//               output runs its default alone (run_sole_default); a Fallback + Chain slot whose
//               hooks all said Continue has the default's last word; then the result is
//               produced (produce_result: aggregate, finalize, or the last output).
//
// How they run. Every step is a member function that returns true when the dispatch is complete
// and false when it left an awaitable pending (an asynchronous default, hook or companion),
// naming in `resume_` the step that takes its value. await_ready() runs the steps synchronously
// - the whole dispatch when nothing suspends: no frame, no allocation, no suspension - and a
// dispatch that must wait suspends into a small driver coroutine that awaits the pending
// awaitable, stores its value and calls `resume_`, until done. The synchronous run and the
// driver call the very same steps: no rule exists twice.

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <hookset/call_options.hpp>
#include <hookset/companions.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch_context.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_clock.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/detail/type_name.hpp>
#include <hookset/errors.hpp>
#include <hookset/format.hpp>
#include <hookset/observer.hpp>
#include <hookset/pipeline.hpp>

namespace hookset::detail {

struct no_value {};

template <class T>
inline constexpr bool is_rewrite = false;
template <class T>
inline constexpr bool is_rewrite<Rewrite<T>> = true;
template <class T>
inline constexpr bool is_complete = false;
template <class T>
inline constexpr bool is_complete<Complete<T>> = true;

// Where a dispatch keeps one value of type T (nothing for void).
template <class T>
using value_holder = std::conditional_t<std::is_void_v<T>, no_value, std::optional<T>>;

// The instance of companion C a dispatch calls: the one configured on the set if any (called
// as const, it is shared), else one default-constructed for this dispatch - only then.
template <class C>
class companion_instance {
  static constexpr bool constructible = std::is_default_constructible_v<C>;
  struct none {};

 public:
  void bind(const std::shared_ptr<const void>& configured) noexcept {
    configured_ = static_cast<const C*>(configured.get());
  }
  bool usable() const noexcept { return constructible || configured_ != nullptr; }

  template <class F>
  decltype(auto) visit(F&& f) {
    if constexpr (!constructible) {
      return std::forward<F>(f)(*configured_);  // usable() was checked when the dispatch began
    } else {
      if constexpr (std::is_invocable_v<F, const C&>)
        if (configured_) return std::forward<F>(f)(*configured_);
      if (!local_) local_.emplace();
      return std::forward<F>(f)(*local_);
    }
  }

 private:
  const C* configured_ = nullptr;
  [[no_unique_address]] std::conditional_t<constructible, std::optional<C>, none> local_;
};
template <>
class companion_instance<void> {
 public:
  void bind(const std::shared_ptr<const void>&) noexcept {}
  bool usable() const noexcept { return true; }
};

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
             bool slot_values = false) noexcept {
    global = process_wide;
    set = set_observer;
    id = next_dispatch_id.fetch_add(1, std::memory_order_relaxed);
    global_hook_events = global && global->wants_hook_events();
    set_hook_events = set && set->wants_hook_events();
    hook_events = global_hook_events || set_hook_events;
    values = slot_values || (global && global->wants_values()) || (set && set->wants_values());
    has_boundary = false;
    notify(global, &Observer::on_dispatch_begin, slot, id);
    notify(set, &Observer::on_dispatch_begin, slot, id);
  }

  // A successful dispatch's result, rendered (when `values`), told before its end.
  void result(std::string_view slot, std::string_view value, std::string_view input) noexcept {
    if (global && current_observer() == global)
      tell_observer([&] { global->on_dispatch_result(slot, id, value, input); });
    if (set) tell_observer([&] { set->on_dispatch_result(slot, id, value, input); });
  }

  void end(std::string_view slot, std::size_t hooks_run, const std::exception_ptr& error) noexcept {
    if (global && current_observer() == global)
      notify(global, &Observer::on_dispatch_end, slot, id, hooks_run, error);
    notify(set, &Observer::on_dispatch_end, slot, id, hooks_run, error);
  }

  HookEvent hook_event(std::string_view slot, const hook_entry& hook,
                       std::size_t position) const noexcept {
    HookEvent event;
    event.slot = slot;
    event.dispatch_id = id;
    event.hook = hook.id();
    event.name = hook.record->name;
    event.position = position;
    return event;
  }

  // Tells a hook's begin; returns its start, for its end event.
  hook_clock::ticks tell_hook_begin(const HookEvent& event) noexcept {
    const hook_clock::ticks hook_start = has_boundary ? boundary : hook_clock::now();
    has_boundary = false;
    each_wanting(&Observer::on_hook_begin, event);
    return hook_start;
  }
  // Tells a hook's end (event: everything but the duration, which this measures).
  void tell_hook_end(HookEvent& event, hook_clock::ticks hook_start) noexcept {
    const hook_clock::ticks hook_stop = hook_clock::now();
    event.duration = hook_clock::between(hook_start, hook_stop);
    each_wanting(&Observer::on_hook_end, event);
    boundary = hook_stop;
    has_boundary = true;
  }

  hook_clock::ticks hook_begin(std::string_view slot, const hook_entry& hook,
                               std::size_t position) noexcept {
    return tell_hook_begin(hook_event(slot, hook, position));
  }
  void hook_end(std::string_view slot, const hook_entry& hook, std::size_t position,
                hook_clock::ticks hook_start, HookOutcome outcome, std::exception_ptr error,
                std::string_view decision = {}, std::string_view reason = {},
                bool rewritten = false) noexcept {
    HookEvent event = hook_event(slot, hook, position);
    event.outcome = outcome;
    event.error = std::move(error);
    event.decision = decision;
    event.reason = reason;
    event.rewritten = rewritten;
    tell_hook_end(event, hook_start);
  }
  // The dispatch suspends (or runs something that is not a hook): the next hook's begin is a
  // reading of its own.
  void forget_boundary() noexcept { has_boundary = false; }

 private:
  void each_wanting(void (Observer::*event)(const HookEvent&), const HookEvent& e) noexcept {
    if (global_hook_events && current_observer() == global) notify(global, event, e);
    if (set_hook_events) notify(set, event, e);
  }
};

// An intercepted dispatch's own state: the snapshot the rest of it runs over (whatever the set
// does meanwhile), how far its interceptors got, and what the dispatch of its hooks shares.
struct intercept_state {
  hook_list_owner snapshot;
  intercept_link link;
  std::size_t started = 0;  // interceptors started, counting the dispatch of the hooks as one more
};

// What an interceptor's Next holds: the dispatch it belongs to, and what next() starts - the
// interceptor at `index`, or the dispatch of the hooks once past the last.
struct next_handle {
  void* dispatch;
  std::size_t index;
};

template <class Kind, class Params = typename Kind::parameters>
class dispatch;

template <class Kind, class... A>
class [[nodiscard]] dispatch<Kind, mp::mp_list<A...>> {
  using result = typename Kind::result;
  using output = typename Kind::output;
  using list_type = hook_list;
  using entry = hook_entry;
  using descriptor = slot_descriptor<Kind>;
  using indices = std::index_sequence_for<A...>;

  static constexpr bool is_void = Kind::is_void;
  static constexpr bool companions_constructible =
      (std::is_void_v<typename Kind::chain> ||
       std::is_default_constructible_v<
           typename Kind::chain>)&&(std::is_void_v<typename Kind::aggregate> ||
                                    std::is_default_constructible_v<
                                        typename Kind::
                                            aggregate>)&&(std::is_void_v<typename Kind::finalize> ||
                                                          std::is_default_constructible_v<
                                                              typename Kind::finalize>);
  // Whether an output needs more than being kept as the newest one.
  static constexpr bool judges_outputs =
      Kind::has_chain || Kind::has_aggregate || Kind::is_pipeline;
  // Kinds where an output never ends the hook loop nor suspends it (take_output is collect()):
  // the driver may run their quiet hooks back to back.
  static constexpr bool quiet_hooks_back_to_back =
      !Kind::has_chain && !Kind::is_pipeline && !Kind::is_concurrent;

  // What the step after an output does.
  enum class next : unsigned char { more, stop, suspended };
  // What an asynchronous step left pending.
  enum class pending_kind : unsigned char { value, flow, output, concurrent, intercepted };
  using step = bool (dispatch::*)();

  // flags_
  static constexpr std::uint8_t holds_list = 1;  // owns a reference to list_
  static constexpr std::uint8_t suspended =
      2;  // await_ready returned false: a pending awaitable exists
  static constexpr std::uint8_t driving = 4;   // the driver exists (it owns the pending awaitables)
  static constexpr std::uint8_t observed = 8;  // observers_ is set
  static constexpr std::uint8_t hook_events = 16;  // an observer wants per-hook events
  static constexpr std::uint8_t broke = 32;        // a chain companion said Break
  static constexpr std::uint8_t has_context = 64;  // context_ is set (owned)
  static constexpr std::uint8_t keeps_owner =
      128;  // owner_kept_ holds what the hook lists belong to

 public:
  // Synchronous hooks run inside await_ready: a Task awaiting a dispatch makes its context the
  // scoped one around it (await_context.hpp).
  using runs_code_in_await_ready = void;

  template <class... Args>
  dispatch(const hook_list_owner& owner, const descriptor& slot, Observer* set_observer,
           Args&&... args)
      : args_(std::forward<Args>(args)...),
        owner_(&owner),
        slot_(&slot),
        set_observer_(set_observer),
        default_sync_(slot.default_sync),
        default_async_(slot.default_async) {}

  // Movable until it starts (compilers may move awaiters): the inputs and the options move.
  dispatch(dispatch&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : args_(std::move(other.args_)),
        owner_(other.owner_),
        slot_(other.slot_),
        set_observer_(other.set_observer_),
        default_sync_(other.default_sync_),
        default_async_(other.default_async_),
        flags_(other.flags_ & (has_context | keeps_owner)) {
    if (flags_ & has_context) {
      context_ = other.context_;
      other.flags_ &= static_cast<std::uint8_t>(~has_context);
    }
    if (flags_ & keeps_owner) {
      owner_kept_.emplace(other.owner_kept_.take());
      other.flags_ &= static_cast<std::uint8_t>(~keeps_owner);
    }
  }
  dispatch& operator=(dispatch&&) = delete;
  HOOKSET_ALWAYS_INLINE ~dispatch() {
    if (flags_ & (holds_list | suspended | driving | has_context | keeps_owner)) [[unlikely]]
      release();
  }

  // ---- options (before the dispatch starts) -------------------------------------------------

  // Gives this dispatch a stop token, a deadline and an executor (call_options.hpp).
  dispatch&& with(CallOptions options) && {
    if (flags_ & has_context) context_->options() = std::move(options);
    else set_context(new dispatch_context(std::move(options)));
    return std::move(*this);
  }
  dispatch&& with_stop_token(stop_token token) && {
    context().options().stop_token = std::move(token);
    return std::move(*this);
  }
  dispatch&& with_deadline(std::chrono::steady_clock::time_point deadline) && {
    context().options().deadline = deadline;
    return std::move(*this);
  }
  template <class Rep, class Period>
  dispatch&& with_timeout(std::chrono::duration<Rep, Period> timeout) && {
    context().options().timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    return std::move(*this);
  }
  dispatch&& on(Executor& executor) && {
    context().options().executor = &executor;
    return std::move(*this);
  }
  // Keeps `owner` (what the hook list owner belongs to: a shared set's version) alive for as
  // long as the dispatch.
  dispatch&& keeping(std::shared_ptr<const void> owner) && {
    if (flags_ & keeps_owner) owner_kept_.destroy();
    owner_kept_.emplace(std::move(owner));
    flags_ |= keeps_owner;
    return std::move(*this);
  }

  // The options given so far (creating empty ones), for adapters that add their own.
  CallOptions& options() & { return context().options(); }

  // Runs this dispatch under `context`, which the caller (an adapter's operation, keeping it
  // beside the dispatch) owns and keeps alive until the dispatch is destroyed: the options given
  // so far move into it, and the dispatch allocates no context of its own.
  void run_under(dispatch_context& context) & noexcept {
    if (flags_ & has_context) {
      context.options() = std::move(context_->options());
      if (!context_->lent()) delete context_;
    }
    context.lend();
    set_context(&context);
  }

  // ---- as an asynchronous operation (with <hookset/asio.hpp>) --------------------------------

  // `std::move(dispatch)(token)` with any Asio completion token; what makes `co_await
  // set.call<S>(...)` work inside an asio::awaitable. Found through hookset_async_call, which
  // <hookset/asio.hpp> declares: without it, a dispatch is no Asio operation.
  using result_type = output;
  template <class CompletionToken>
  auto operator()(CompletionToken&& token) && -> decltype(hookset_async_call(
      std::declval<dispatch&&>(), std::forward<CompletionToken>(token))) {
    return hookset_async_call(std::move(*this), std::forward<CompletionToken>(token));
  }

  // Takes the snapshot and runs everything that completes synchronously.
  HOOKSET_ALWAYS_INLINE bool await_ready() {
    list_ = owner_->current();
    if constexpr (Kind::is_keyed) {
      // A keyed slot: the hooks of this dispatch's key, looked up once, now (a list filtered
      // for the key is this dispatch's own, released with it, on every path).
      if (list_ && list_->list_for_key) take_list_for_key();
    }
    if constexpr (companions_constructible) {
      if (!set_observer_ && !(flags_ & has_context) && !observer_installed()) [[likely]] {
        // Nobody watching, no options: a dispatch with nothing to report and nothing to stop.
        // Inlined (the default called directly) for slots without companions; with
        // companions, one out-of-line copy per kind.
        if (!list_) {
          // No hook, no configured companion: nothing can change under the default, and no
          // snapshot needs protecting.
          if constexpr (Kind::has_chain || Kind::has_producer)
            return start_without_hooks_outlined();
          else return start_without_hooks();
        }
        if (list_->all_plain) return start_all_plain();
        if constexpr (!Kind::is_keyed)
          if (list_->any_interceptor) return start_intercepted_unwatched();
      }
    }
    return start_watched();
  }

  // For an Asio operation (<hookset/asio.hpp>): runs the dispatch now when it cannot suspend
  // and has nothing to stop or report - nobody watching, no options, no interceptor, every hook
  // plain, a synchronous default - and returns true, its result for await_resume. An operation
  // with nothing to cancel needs no context and no coroutine frame. Otherwise starts nothing
  // and returns false (the operation then runs it under its own context, from await_ready).
  // (The fold kinds of the lean loop; the others take the operation's general path.)
  bool run_if_synchronous() {
    if constexpr (Kind::is_keyed || !plain_fold_loop) {
      return false;
    } else {
      if (set_observer_ || (flags_ & has_context) || observer_installed()) return false;
      list_ = owner_->current();
      if (!list_) {
        if (!default_sync_ && Kind::is_always) return false;
        return start_without_hooks();
      }
      if (!list_->all_plain || !plain_fold_runs(*list_, default_sync_)) return false;
      return run_plain_fold();
    }
  }

  // Hands over to the driver exactly as awaiting a Task would (same return form, so the same
  // stack-depth guarantees hold for a dispatch as for a Task). The driver runs in the await
  // context of the coroutine awaiting the dispatch.
  template <class Promise>
  auto await_suspend(std::coroutine_handle<Promise> waiting) {
    // The unwatched interceptor layer's first interceptor, a coroutine: awaited directly (the
    // driver has nothing to do for it), its result taken by await_resume.
    if (awaits_interceptor_directly()) {
      flags_ |= driving;  // (handed over: await_resume and release() know to what)
      return get_awaiter(std::move(pending_intercepted_.get())).await_suspend(waiting);
    }
    // (Before the driver starts the pending awaitable: nothing of this dispatch runs yet.)
    if constexpr (!std::derived_from<Promise, await_context_carrier>)
      if (flags_ & has_context) context_->forget_parent();
    driver_.emplace(drive(this));
    flags_ |= driving;
    return get_awaiter(std::move(driver_.get())).await_suspend(waiting);
  }

  HOOKSET_ALWAYS_INLINE output await_resume() {
    if (flags_ & driving) [[unlikely]] {
      if (awaits_interceptor_directly()) [[unlikely]]
        return resume_interceptor();
      get_awaiter(std::move(driver_.get())).await_resume();  // rethrows the driver's error
    }
    if constexpr (Kind::has_producer) return std::move(*output_);
    else if constexpr (!std::is_void_v<output>) return std::move(*value_);
  }

 private:
  // await_resume after await_suspend handed over to the first interceptor.
  HOOKSET_NOINLINE output resume_interceptor() {
    return get_awaiter(std::move(pending_intercepted_.get())).await_resume();
  }

  // The general start: hooks, configured companions or observers.
  HOOKSET_NOINLINE bool start_watched() {
    next_ = count_ = produced_ = plain_end_ = 0;
    // (What release() deletes when intercepting() - which a list filtered for a key, held from
    // the start, makes true - even if the dispatch ends before its interceptors start: stopped
    // or late already, say.)
    intercept_ = nullptr;
    Observer* const global = current_observer();
    if (intercept_link* const outer = intercepted_by()) [[unlikely]] {
      adopt_observers(*outer);
    } else if (global || set_observer_) [[unlikely]] {
      observers_.begin(slot_->name, global, set_observer_, slot_->trace_values);
      flags_ |= observed;
      if (observers_.hook_events) flags_ |= hook_events;
    }
    try {
      if (list_ && list_->any_time_limit && !(flags_ & has_context))
        set_context(new dispatch_context(CallOptions{}));
      if (flags_ & has_context) context_->begin(scoped_await_context, slot_->name);
      if (list_ && list_->any_interceptor && !intercepted_by()) [[unlikely]] {
        hold_list();  // as any dispatch that suspends (below)
        start_intercepted();
        if (flags_ & has_context) context_->arm_deadline();
        return false;
      }
      if (list_) {
        hooks_ = list_->hooks.data();
        count_ = list_->hooks.size();
        plain_end_ = list_->leading_plain;
        if constexpr (Kind::has_chain) chain_.bind(list_->chain);
        if constexpr (Kind::has_aggregate) aggregate_.bind(list_->aggregate);
        if constexpr (Kind::has_finalize) finalize_.bind(list_->finalize);
      }
      if (!chain_.usable() || !aggregate_.usable() || !finalize_.usable()) [[unlikely]]
        throw std::logic_error("hookset: slot " + std::string(slot_->name) +
                               ": a companion type that cannot be default-constructed must be "
                               "configured with configure<Slot>(instance) before dispatching");
      if constexpr (Kind::has_aggregate)
        outputs_.reserve(count_ + 1);  // the vector the aggregate receives
      sync_dispatch_scope scope;       // hooks may change the set: keep this snapshot alive
      if (start()) {
        complete(nullptr);
        return true;
      }
      // Suspending: from here on the dispatch owns a reference to its snapshot. Taken while the
      // synchronous scope still protects it (it may already be parked).
      if (list_) hold_list();
      if (flags_ & has_context) context_->arm_deadline();
      return false;
    } catch (...) {
      complete(std::current_exception());
      throw;
    }
  }

  // The dispatch is over (with `error`, or not): tells the observers, stops its timers.
  HOOKSET_ALWAYS_INLINE void complete(const std::exception_ptr& error) noexcept {
    if (flags_ & has_context) {
      if (end_context()) return;  // the rest of an intercepted dispatch: that one reports
    }
    if (flags_ & observed) [[unlikely]] {
      if (!error && observers_.values) report_result();
      observers_.end(slot_->name, (flags_ & holds_list) ? hooks_run_reported() : next_, error);
    }
  }
  // (Out of line, as the rest of what only some dispatches need: complete() is on every
  // observed dispatch's path.)
  HOOKSET_NOINLINE bool end_context() noexcept {
    context_->end();
    intercept_link* const outer = context_->intercepted_by();
    if (outer) outer->hooks_run = next_;
    return outer != nullptr;
  }
  HOOKSET_NOINLINE std::size_t hooks_run_reported() const noexcept {
    return intercepting() && intercept_ ? intercept_->link.hooks_run : next_;
  }

  // ---- interceptors -------------------------------------------------------------------------
  // A dispatch whose slot has interceptors runs the first one, through the driver; each one's
  // next() runs the one after it, and the last one's runs the rest: a dispatch of the same slot
  // over the same snapshot, past the interceptors (intercepted_by), with this dispatch's stop
  // token, deadline and executor, reporting its hooks under this dispatch's id.

  // The hooks of an intercepted dispatch are reported as that dispatch's.
  HOOKSET_NOINLINE void adopt_observers(const intercept_link& outer) noexcept {
    if (!outer.observers) return;
    observers_ = *outer.observers;
    observers_.forget_boundary();
    flags_ |= observed;
    if (observers_.hook_events) flags_ |= hook_events;
  }

  // From here on the dispatch owns a reference to its snapshot (a list filtered for a key was
  // its own from the start).
  void hold_list() noexcept {
    if (flags_ & holds_list) return;
    list_->acquire();
    flags_ |= holds_list;
  }

  // A keyed slot's dispatch: list_ becomes the list of its key - a list filtered for the key
  // is held by this dispatch alone (holds_list).
  void take_list_for_key() {
    bool owned = false;
    const auto& key = std::get<sizeof...(A) - 1>(args_);
    list_ = list_->list_for_key(*list_, &key, owned);
    if (owned) flags_ |= holds_list;
  }

  // Whether this dispatch is the rest of an intercepted one.
  intercept_link* intercepted_by() const noexcept {
    return (flags_ & has_context) ? context_->intercepted_by() : nullptr;
  }

  // Whether this dispatch runs interceptors (intercept_ is then set, and owned). Told by its
  // snapshot rather than a flag of its own: the flags have no bit to spare, and a wider field
  // costs every dispatch. Started with interceptors, it holds its snapshot (holds_list), and
  // whenever that snapshot has interceptors and the dispatch is not the rest of another, it
  // took the intercepted path.
  bool intercepting() const noexcept {
    return (flags_ & holds_list) && list_->any_interceptor && !intercepted_by();
  }

  HOOKSET_NOINLINE void start_intercepted() {
    // A keyed slot's rest runs over the slot's whole snapshot and looks its hooks up for the key
    // the last interceptor passes to next() (an interceptor may canonicalise the key); the
    // interceptors are the slot's, whatever the key.
    const hook_list* rest_snapshot = list_;
    if constexpr (Kind::is_keyed) rest_snapshot = owner_->current();
    intercept_ = new intercept_state{hook_list_owner(rest_snapshot), {}, 0};
    if (flags_ & observed) intercept_->link.observers = &observers_;
    // The arguments move on: from here on, the dispatch itself never reads them (and a
    // move-only argument could not be copied).
    pending_intercepted_.emplace([&]<std::size_t... I>(std::index_sequence<I...>) {
      return run_rest(next_handle{this, 0}, static_cast<bound_t<A>&&>(std::get<I>(args_))...);
    }(indices{}));
    suspend_into(pending_kind::intercepted, &dispatch::finish_intercepted);
  }

  bool finish_intercepted() noexcept { return true; }  // (the driver stored the output)

  // Whether the pending awaitable is the unwatched layer's first interceptor's Task, which
  // await_suspend awaits itself (no driver).
  bool awaits_interceptor_directly() const noexcept {
    return pending_ == pending_kind::intercepted && !intercept_;
  }

  using interceptor_sync_fn = output (*)(void*, next_handle, arg_ref_t<A>...);
  using interceptor_async_fn = Task<output> (*)(void*, next_handle, arg_ref_t<A>...);

  // Calls an interceptor's erased call `fn` with `next` and `args` as the slot declares them.
  template <class Fn>
  static decltype(auto) call_interceptor(Fn fn, const entry& interceptor, next_handle next,
                                         std::tuple<bound_t<A>...>& args) {
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      return fn(interceptor.object, next, static_cast<arg_ref_t<A>>(std::get<I>(args))...);
    }
    (indices{});
  }

  // The interceptor layer of a dispatch nobody watches and given no options: no intercept_state,
  // no context, no second frame. This dispatch calls its first interceptor - a synchronous one
  // as a plain call, a coroutine's Task awaited by the driver - and each next() returns a
  // next_call that runs the next interceptor, or past the last the dispatch of the hooks over
  // this dispatch's snapshot, when it is awaited. next_ counts the next() calls (this dispatch
  // runs no hook itself); the arguments stay in args_, where the interceptors' references point.
  HOOKSET_NOINLINE bool start_intercepted_unwatched() {
    intercept_ = nullptr;       // (release() and next_call tell the two layers apart by it)
    next_ = 1;                  // interceptor 0 runs now
    sync_dispatch_scope scope;  // interceptors and hooks may change the set: keep this snapshot
    const entry& first = list_->interceptors.front();
    const next_handle next{this, 1};
    if (first.sync) {
      const auto sync = reinterpret_cast<interceptor_sync_fn>(first.sync);
      if constexpr (std::is_void_v<output>) call_interceptor(sync, first, next, args_);
      else if constexpr (Kind::has_producer)
        output_.emplace(call_interceptor(sync, first, next, args_));
      else value_ = call_interceptor(sync, first, next, args_);
      return true;
    }
    pending_intercepted_.emplace(
        call_interceptor(reinterpret_cast<interceptor_async_fn>(first.async), first, next, args_));
    hold_list();  // suspending: as start_watched (taken while the scope still protects it)
    suspend_into(pending_kind::intercepted, &dispatch::finish_intercepted);
    return false;
  }

  // The dispatch of the hooks past an unwatched dispatch's interceptors, over `snapshot`: the
  // lean loops when every hook is plain (interceptors aside), else the general start as the
  // rest of an intercepted dispatch (a context linked to `outer`: it runs no interceptor and
  // reports nothing of its own).
  bool start_as_rest(const list_type* snapshot, intercept_link* outer) {
    list_ = snapshot;
    intercept_ = nullptr;
    if constexpr (companions_constructible && !Kind::is_keyed)
      if (list_->hooks_plain) return start_all_plain();
    set_context(new dispatch_context(CallOptions{}));
    context_->continue_intercepted(outer);
    return start_watched();
  }

 public:
  // The erased calls of an interceptor of this kind of slot (interceptor.hpp makes them).
  using interceptor_calls = std::pair<interceptor_sync_fn, interceptor_async_fn>;

  // What next() returns: the rest of an intercepted dispatch from one interceptor on, run when
  // awaited (co_await, hookset::sync_wait), or made a Task<output> by conversion. Counted when
  // made: the second next() of one interceptor fails when awaited. Movable until awaited.
  //   In a dispatch nobody watches (start_intercepted_unwatched) it runs the next interceptor
  // in await_ready - a synchronous one as a plain call - or the dispatch of the hooks, which
  // lives here; in a watched one it holds run_rest's Task.
  class next_call;  // (defined after the dispatch: it holds one)

  // next(): the rest of the intercepted dispatch `handle` names, from interceptor handle.index
  // on, with `args`. Called at most once per index: the call is counted when next() is called,
  // not when its Task runs, so a second call fails (when awaited) whichever of the two Tasks is
  // awaited.
  static Task<output> run_rest(next_handle handle, bound_t<A>... args) {
    dispatch& self = *static_cast<dispatch*>(handle.dispatch);
    intercept_state& state = *self.intercept_;
    const bool again = handle.index < state.started;
    if (!again) state.started = handle.index + 1;
    return run_rest_once(handle, again, static_cast<bound_t<A>&&>(args)...);
  }

 private:
  static Task<output> run_rest_once(next_handle handle, bool again, bound_t<A>... args) {
    dispatch& self = *static_cast<dispatch*>(handle.dispatch);
    intercept_state& state = *self.intercept_;
    if (again)
      throw std::logic_error("hookset: slot " + std::string(self.slot_->name) +
                             ": an interceptor called next() more than once");
    const std::vector<entry>& interceptors = self.list_->interceptors;
    if (handle.index < interceptors.size()) {
      const entry& interceptor = interceptors[handle.index];
      const next_handle next{&self, handle.index + 1};
      if (self.flags_ & hook_events) {
        co_return co_await self.run_interceptor(interceptor, handle.index, args...);
      } else if (interceptor.sync) {
        co_return reinterpret_cast<interceptor_sync_fn>(interceptor.sync)(interceptor.object, next,
                                                                          args...);
      } else {
        co_return co_await reinterpret_cast<interceptor_async_fn>(interceptor.async)(
            interceptor.object, next, args...);
      }
    } else {
      // (The set's observer too: its hooks' warnings, a fail-open skip say, are the set's.)
      dispatch rest(state.snapshot, *self.slot_, self.set_observer_,
                    static_cast<bound_t<A>&&>(args)...);
      rest.set_context(new dispatch_context(
          (self.flags_ & has_context) ? self.context_->inherited_options() : CallOptions{}));
      rest.context_->continue_intercepted(&state.link);
      if constexpr (std::is_void_v<output>) co_await std::move(rest);
      else co_return co_await std::move(rest);
    }
  }

  // One interceptor's run, reported to observers that want hook events (HookEvent::interceptor).
  Task<output> run_interceptor(const entry& interceptor, std::size_t index, arg_ref_t<A>... args) {
    const next_handle next{this, index + 1};
    const auto sync = reinterpret_cast<interceptor_sync_fn>(interceptor.sync);
    const auto async = reinterpret_cast<interceptor_async_fn>(interceptor.async);
    HookEvent event = observers_.hook_event(slot_->name, interceptor, index);
    event.interceptor = true;
    const hook_clock::ticks started = observers_.tell_hook_begin(event);
    std::exception_ptr failure;
    value_holder<output> produced;
    try {
      if constexpr (std::is_void_v<output>) {
        if (sync) sync(interceptor.object, next, args...);
        else co_await async(interceptor.object, next, args...);
      } else {
        if (sync) produced.emplace(sync(interceptor.object, next, args...));
        else produced.emplace(co_await async(interceptor.object, next, args...));
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (failure) {
      event.outcome = HookOutcome::failed;
      event.error = failure;
    }
    observers_.tell_hook_end(event, started);
    observers_.forget_boundary();  // (an enclosing interceptor's end is a reading of its own)
    if (failure) std::rethrow_exception(failure);
    if constexpr (!std::is_void_v<output>) co_return std::move(*produced);
  }

  // The dispatch's result, rendered for observers that asked for values (a pipeline's: its
  // decision and its final input). What rendering throws is dropped, as an observer's would be.
  void report_result() noexcept {
    if constexpr (Kind::has_producer) {
      if (output_) tell_result(*output_);
    } else if constexpr (!std::is_void_v<output>) {
      if (value_) tell_result(*value_);
    }
  }
  template <class Produced>
  void tell_result(const Produced& produced) noexcept {
    tell_observer([&] {
      if constexpr (Kind::is_pipeline) {
        const std::string value = std::visit(
            [&](const auto& decided) { return render_decision(decided); }, produced.decision);
        observers_.result(slot_->name, value, render_value(produced.input));
      } else {
        observers_.result(slot_->name, render_value(produced), {});
      }
    });
  }

  // A pipeline decision as text: its kind, and what it carries ("complete(<output>)",
  // "reject(<reason>)", "rewrite(<input>)", "pass", or a custom kind's type name).
  template <class Decided>
  static std::string render_decision(const Decided& decided) {
    if constexpr (std::is_same_v<Decided, Pass>) return "pass";
    else if constexpr (is_rewrite<Decided>) return "rewrite(" + render_value(decided.input) + ")";
    else if constexpr (is_complete<Decided>)
      return "complete(" + render_value(decided.output) + ")";
    else if constexpr (std::is_same_v<Decided, Reject>) return "reject(" + decided.reason + ")";
    else if constexpr (formattable<Decided>)
      return std::string(unqualified(type_name<Decided>)) + "(" + render_value(decided) + ")";
    else return std::string(unqualified(type_name<Decided>));
  }

  dispatch_context& context() {
    if (!(flags_ & has_context)) set_context(new dispatch_context(CallOptions{}));
    return *context_;
  }
  void set_context(dispatch_context* context) noexcept {
    context_ = context;
    flags_ |= has_context;
  }
  // Before a step that runs user code: a cancelled or late dispatch goes no further.
  void check_stop(const entry* hook = nullptr) const {
    if (flags_ & has_context) context_->check(slot_->name, hook);
  }

  // Out of line: the cold path of the destructor. (Inlined into a caller that destroys a
  // moved-from dispatch - hookset::asio's initiation - GCC 12 at -O2 cannot tell that the
  // flags rule out a pending awaitable and warns it "may be used uninitialized".)
  HOOKSET_NOINLINE void release() noexcept {
    if ((flags_ & suspended) && !(flags_ & driving)) destroy_pending();  // awaited no further
    if (flags_ & driving) {
      if (awaits_interceptor_directly()) pending_intercepted_.destroy();
      else driver_.destroy();
    }
    if (intercepting()) delete intercept_;  // (before the list: intercepting() reads it)
    if (flags_ & holds_list) list_type::release_ref(list_);
    if ((flags_ & has_context) && !context_->lent()) delete context_;
    if (flags_ & keeps_owner) owner_kept_.destroy();
  }

  // A dispatch whose hooks are all plain (hook_entry::plain), unwatched and without options:
  // the same rules as start_watched, without its bookkeeping (no observer to tell, no context
  // to begin or end, no time limit, every failure propagates).
  HOOKSET_ALWAYS_INLINE bool start_plain() {
    hooks_ = list_->hooks.data();
    count_ = plain_end_ = list_->hooks.size();
    next_ = produced_ = 0;
    if constexpr (Kind::has_chain) chain_.bind(list_->chain);
    if constexpr (Kind::has_aggregate) aggregate_.bind(list_->aggregate);
    if constexpr (Kind::has_finalize) finalize_.bind(list_->finalize);
    if constexpr (Kind::has_aggregate) outputs_.reserve(count_ + 1);
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    if (start()) return true;
    hold_list();  // suspending (an asynchronous default or companion): as start_watched
    return false;
  }

  HOOKSET_NOINLINE bool start_plain_outlined() { return start_plain(); }

  // Every hook plain, nobody watching, no options: the leanest loop the kind has.
  HOOKSET_ALWAYS_INLINE bool start_all_plain() {
    if constexpr (plain_fold_loop) return run_plain_fold();
    else if constexpr (plain_chain_loop) return run_plain_chain();
    else return start_plain_outlined();
  }

  // A fold whose `last` fits in registers, with no companion and one hook at a time: with plain
  // hooks only, the whole dispatch is the loop one writes by hand (the default, then each hook
  // on the previous output) - the rules of start_plain, with `last` kept in registers and no
  // per-step state written back. An asynchronous default takes the general path.
  static constexpr bool plain_fold_loop =
      Kind::is_fold && !Kind::has_finalize && !Kind::is_concurrent && last_in_registers<result>;

  HOOKSET_NOINLINE bool run_plain_fold() {
    if (!plain_fold_runs(*list_, default_sync_)) [[unlikely]]
      return start_plain();
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    value_ = plain_fold(*list_, default_sync_, args_);
    return true;
  }
  // Whether plain_fold can run the dispatch: a default it calls runs synchronously.
  static bool plain_fold_runs(const list_type& list,
                              typename Kind::default_sync_fn default_sync) noexcept {
    return default_sync || !(Kind::is_always || list.hooks.empty());
  }
  // The default, then each plain hook of `list` on the previous output, with `args`.
  HOOKSET_ALWAYS_INLINE static result plain_fold(const list_type& list,
                                                 typename Kind::default_sync_fn default_sync,
                                                 std::tuple<bound_t<A>...>& args) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      const entry* hook = list.hooks.data();
      const entry* const end = hook + list.hooks.size();
      bool has_last = Kind::is_always || hook == end;
      result last = has_last
                        ? default_sync(nullptr, static_cast<arg_ref_t<A>>(std::get<I>(args))...)
                        : result{};
      for (; hook != end; ++hook) {
        last = sync_call_of<Kind>(*hook)(
            hook->object, static_cast<arg_ref_t<A>>(std::get<I>(args))..., last, has_last);
        has_last = true;
      }
      return last;
    }
    (indices{});
  }

  // The same for an Always chain whose companion judges synchronously: the default, then each
  // hook, each output judged, as one writes it by hand.
  static constexpr bool plain_chain_loop =
      Kind::has_chain && Kind::is_always && !Kind::has_aggregate && !Kind::has_finalize &&
      !Kind::is_concurrent && std::is_move_assignable_v<result>;

  HOOKSET_NOINLINE bool run_plain_chain() {
    if (!default_sync_) [[unlikely]]
      return start_plain();
    chain_.bind(list_->chain);
    return chain_.visit([&](auto& chain) {
      using verdict = decltype(chain(std::declval<const result&>()));
      if constexpr (classify_result<verdict, Flow>() != call_kind::sync) {
        return start_plain();  // an asynchronous judge: the general path
      } else {
        sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
        result last = call_with_args(default_sync_, nullptr);
        if (chain(std::as_const(last)) != Flow::Break) {
          const entry* hook = list_->hooks.data();
          for (const entry* const end = hook + list_->hooks.size(); hook != end; ++hook) {
            last = call_with_args(sync_call_of<Kind>(*hook), hook->object);
            if (chain(std::as_const(last)) == Flow::Break) break;
          }
        }
        value_ = std::move(last);
        return true;
      }
    });
  }

  // ---- the rules --------------------------------------------------------------------------

  // start() for a slot with no hooks: the same rules, with the hook loop left out.
  HOOKSET_ALWAYS_INLINE bool start_without_hooks() {
    // (finish reads produced_; a step resumed after an asynchronous default or companion
    // reads them all)
    next_ = count_ = produced_ = plain_end_ = 0;
    if constexpr (Kind::is_always) {
      if (!call_default(&dispatch::after_head)) return false;
      if (take_output() == next::suspended) return false;
    }
    return finish();
  }

  HOOKSET_NOINLINE bool start_without_hooks_outlined() { return start_without_hooks(); }

  HOOKSET_ALWAYS_INLINE bool start() {
    if constexpr (Kind::is_always) {
      if (!call_default(&dispatch::after_head)) return false;
      return after_head();
    } else {
      return run_hooks();
    }
  }

  HOOKSET_ALWAYS_INLINE bool after_head() { return continue_after(take_output()); }

  HOOKSET_ALWAYS_INLINE next take_output() {
    if constexpr (Kind::is_pipeline) {
      return take_decision();
    } else if constexpr (Kind::has_chain) {
      return chain_.visit([&](auto& chain) {
        using verdict = decltype(chain(std::as_const(*value_)));
        if constexpr (classify_result<verdict, Flow>() == call_kind::sync) {
          return after_verdict(chain(std::as_const(*value_)));
        } else {
          pending_flow_.emplace(to_task<Flow>(chain(std::as_const(*value_))));
          suspend_into(pending_kind::flow, &dispatch::resume_after_verdict);
          return next::suspended;
        }
      });
    } else {
      collect();
      return next::more;
    }
  }

  HOOKSET_ALWAYS_INLINE next after_verdict(Flow flow) {
    collect();
    if (flow == Flow::Break) {
      flags_ |= broke;
      return next::stop;
    }
    return next::more;
  }

  // A pipeline hook's decision (in value_): pass the input on, rewritten or not, or end the
  // dispatch with it. Observers see it, with the hook's end.
  next take_decision() {
    if constexpr (Kind::is_pipeline) {
      auto& decision = value_->variant();
      const entry& hook = hooks_[next_ - 1];
      const bool rewritten = decision.index() == 1;
      if (flags_ & hook_events) report_decision(hook, decision, rewritten);
      if (decision.index() == 0) return next::more;
      if (rewritten) {
        std::get<0>(args_) = std::move(std::get<1>(decision).input);
        return next::more;
      }
      output_.emplace(std::visit(
          [&](auto& terminal) -> output {
            using T = std::remove_cvref_t<decltype(terminal)>;
            if constexpr (std::is_same_v<T, Pass> || is_rewrite<T>)
              throw std::logic_error("unreachable");  // (handled above)
            else return output{std::move(terminal), std::move(std::get<0>(args_)), hook.id()};
          },
          decision));
      flags_ |= broke;
      return next::stop;
    } else {
      return next::more;
    }
  }

  template <class Variant>
  void report_decision(const entry& hook, const Variant& decision, bool rewritten) noexcept {
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
    if (!observers_.values) [[likely]] {
      observers_.hook_end(slot_->name, hook, hook_position_, hook_started_, HookOutcome::ok,
                          nullptr, kind, reason, rewritten);
      return;
    }
    // Values asked for: the input as this hook saw it (not yet rewritten), and what the
    // decision carries. A rendering that throws leaves the values out.
    std::string input, value;
    tell_observer([&] {
      input = render_value(std::get<0>(args_));
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
    HookEvent event = observers_.hook_event(slot_->name, hook, hook_position_);
    event.decision = kind;
    event.reason = reason;
    event.rewritten = rewritten;
    event.input = input;
    event.value = value;
    observers_.tell_hook_end(event, hook_started_);
  }

  // What a pipeline's default produced, as the dispatch's result: an output completes the
  // pipeline; a deciding default's decision ends it as it is, a pass or rewrite as Pass ("run
  // normally") on the input, rewritten or not.
  template <class Produced>  // (Kind::default_result: a template, as it is void for some kinds)
  output default_outcome(Produced&& produced) {
    auto& input = std::get<0>(args_);
    if constexpr (!Kind::default_decides) {
      return output{Complete<typename Kind::default_result>{std::forward<Produced>(produced)},
                    std::move(input), HookId{}};
    } else {
      return std::visit(
          [&](auto& decided) -> output {
            using T = std::remove_cvref_t<decltype(decided)>;
            if constexpr (std::is_same_v<T, Pass>) return output{Pass{}, std::move(input), {}};
            else if constexpr (is_rewrite<T>) return output{Pass{}, std::move(decided.input), {}};
            else return output{std::move(decided), std::move(input), {}};
          },
          produced.variant());
    }
  }

  // A pipeline's asynchronous default.
  static Task<output> complete_pipeline(Task<typename Kind::default_result> default_output,
                                        dispatch* self) {
    co_return self->default_outcome(co_await std::move(default_output));
  }

  // Moves the newest output into the aggregate's list; nothing for other slots.
  HOOKSET_ALWAYS_INLINE void collect() {
    if constexpr (Kind::has_aggregate) outputs_.push_back(std::move(*value_));
  }

  HOOKSET_ALWAYS_INLINE bool finish() {
    if constexpr (Kind::is_pipeline) {
      if (flags_ & broke) return true;  // a terminal decision made the result
      if constexpr (Kind::default_decides) {
        // Hooks decided, and all passed: run normally, on the final input. (As for Fallback
        // slots, hooks that all failed open leave the decision to the default.)
        if (produced_ != 0) {
          output_.emplace(output{Pass{}, std::move(std::get<0>(args_)), HookId{}});
          return true;
        }
      }
      // No hook decided (Fallback), or every hook passed: the default, on the final input.
      return call_default(&dispatch::complete);
    }
    if constexpr (!Kind::is_always) {
      if (produced_ == 0) return run_sole_default();
    }
    if constexpr (Kind::is_fallback && Kind::has_chain && !Kind::has_aggregate) {
      if (!(flags_ & broke)) {  // every hook said Continue: the default has the last word
        if (!call_default(&dispatch::produce_result)) return false;
      }
    }
    return produce_result();
  }

  HOOKSET_ALWAYS_INLINE bool run_sole_default() {
    if (!call_default(&dispatch::after_sole_default)) return false;
    return after_sole_default();
  }

  HOOKSET_ALWAYS_INLINE bool after_sole_default() {
    if constexpr (Kind::has_aggregate && !Kind::has_output) {
      output_.emplace(std::move(*value_));  // returned directly, not aggregated
      return true;
    } else {
      collect();
      return produce_result();
    }
  }

  HOOKSET_ALWAYS_INLINE bool produce_result() {
    if constexpr (Kind::has_aggregate)
      return aggregate_.visit(
          [&](auto& aggregate) { return call_producer(aggregate, std::move(outputs_)); });
    else if constexpr (Kind::has_finalize)
      return finalize_.visit(
          [&](auto& finalize) { return call_producer(finalize, std::move(*value_)); });
    else return true;  // the result is value_ itself
  }

  // ---- running hooks ----------------------------------------------------------------------

  // The leading plain hooks in the tight loop; the rest (any hook needing bookkeeping, or a
  // dispatch that does) out of line.
  HOOKSET_ALWAYS_INLINE bool run_hooks() {
    if (!(flags_ & (hook_events | has_context))) [[likely]] {
      switch (run_plain_hooks()) {
        case next::more:
          break;
        case next::stop:
          return finish();
        case next::suspended:
          return false;
      }
      if (next_ == count_) return finish();
    }
    return run_hooks_with_bookkeeping();
  }

  HOOKSET_NOINLINE bool run_hooks_with_bookkeeping() {
    for (;;) {
      if (!(flags_ & (hook_events | has_context))) [[likely]] {
        switch (run_plain_hooks()) {
          case next::more:
            break;
          case next::stop:
            return finish();
          case next::suspended:
            return false;
        }
      } else if constexpr (!Kind::is_pipeline) {
        if ((flags_ & (hook_events | has_context)) == hook_events) {
          switch (run_plain_hooks_observed()) {
            case next::more:
              break;
            case next::stop:
              return finish();
            case next::suspended:
              return false;
          }
        }
      }
      if (next_ == count_) return finish();
      if constexpr (Kind::is_concurrent) {
        // The first hook that suspends: it and every later one run concurrently, driven by
        // the driver (run_concurrently), which then finishes the dispatch.
        if (!hooks_[next_].sync) {
          suspend_into(pending_kind::concurrent, &dispatch::finish);
          return false;
        }
      }
      const entry& hook = hooks_[next_++];
      switch (run_hook(hook)) {
        case hook_step::produced:
          break;
        case hook_step::skipped:
          continue;
        case hook_step::suspended:
          return false;
      }
      switch (take_output()) {
        case next::more:
          continue;
        case next::stop:
          return finish();
        case next::suspended:
          return false;
      }
    }
  }

  // The plain hooks from next_ on in a dispatch that reports hook events (and has no context):
  // run_hook's events and outcomes - begin, end ok, or end failed and the exception
  // propagates - without the rest of its bookkeeping, one HookEvent for the stretch and one
  // clock reading per hook boundary. (Pipelines report a hook's end with its decision:
  // run_hook.)
  HOOKSET_NOINLINE next run_plain_hooks_observed() {
    if (next_ == count_ || !hooks_[next_].plain) return next::more;
    HookEvent event = observers_.hook_event(slot_->name, hooks_[next_], next_);
    while (next_ != count_ && hooks_[next_].plain) {
      const entry& hook = hooks_[next_];
      current_ = &hook;
      hook_position_ = next_++;
      event.hook = hook.id();
      event.name = hook.record->name;
      event.position = hook_position_;
      event.duration = std::chrono::nanoseconds{0};
      hook_started_ = observers_.tell_hook_begin(event);
      try {
        call_plain(hook);
      } catch (...) {
        report_hook_end(hook, HookOutcome::failed, std::current_exception());
        throw;
      }
      ++produced_;
      observers_.tell_hook_end(event, hook_started_);
      const next after = take_output();
      if (after != next::more) return after;
    }
    return next::more;
  }

  // The plain hooks from next_ on (synchronous, no time limit, failures propagate, nobody
  // asked for per-hook events): the leading stretch of them, in one tight loop. Stops at the
  // end of that stretch, or after an output the chain companion breaks on (or suspends on).
  // hooks_run is written once, after the loop (or by the handler, when a hook throws).
  HOOKSET_ALWAYS_INLINE next run_plain_hooks() {
    const entry* const hooks = hooks_;
    const std::size_t first = next_;
    const std::size_t end = plain_end_;
    if (first >= end) return next::more;
    std::size_t i = first;
    try {
      if constexpr (Kind::is_fold && last_in_registers<result>) {
        // `last` stays in registers from hook to hook; memory sees only the final one.
        bool has_last = value_.has_value();
        result last = has_last ? *value_ : result{};
        for (; i != end; ++i) {
          last = call_with_args(sync_call_of<Kind>(hooks[i]), hooks[i].object, last, has_last);
          has_last = true;
        }
        value_ = last;
      } else {
        while (i != end) {
          if constexpr (judges_outputs) next_ = i + 1;  // (a companion may throw after the hook)
          call_plain(hooks[i]);
          ++i;
          if constexpr (judges_outputs) {
            ++produced_;
            const next after = take_output();
            if (after != next::more) return after;
          }
        }
      }
    } catch (...) {
      if constexpr (!judges_outputs) next_ = i + 1;  // hooks_run counts the hook that threw
      throw;
    }
    next_ = i;
    if constexpr (!judges_outputs) produced_ += i - first;
    return next::more;
  }

  HOOKSET_ALWAYS_INLINE bool continue_after(next n) {
    switch (n) {
      case next::more:
        return run_hooks();
      case next::stop:
        return finish();
      case next::suspended:
        return false;
    }
    return false;
  }

  // Calls fn(object, args..., extra...) with the bound arguments as the slot declares them.
  template <class Fn, class... Extra>
  decltype(auto) call_with_args(Fn fn, void* object, Extra&&... extra) {
    return [&]<std::size_t... I>(std::index_sequence<I...>)->decltype(auto) {
      return fn(object, static_cast<arg_ref_t<A>>(std::get<I>(args_))...,
                std::forward<Extra>(extra)...);
    }
    (indices{});
  }

  void call_plain(const entry& hook) {
    const auto sync = sync_call_of<Kind>(hook);
    if constexpr (is_void) call_with_args(sync, hook.object);
    else if constexpr (Kind::is_fold) value_ = call_fold(sync, hook.object, std::move(value_));
    else value_ = call_with_args(sync, hook.object);
  }

  // Calls a fold hook with `last` as the erased call takes it (last_wire).
  template <class Fn>
  decltype(auto) call_fold(Fn fn, void* object, std::optional<result>&& last) {
    if constexpr (last_in_registers<result>) {
      const bool has_last = last.has_value();
      return call_with_args(fn, object, has_last ? *last : result{}, has_last);
    } else {
      return call_with_args(fn, object, std::move(last));
    }
  }

  enum class hook_step : unsigned char { produced, skipped, suspended };

  // A hook with bookkeeping: observed, or with a time limit or a failure policy, or
  // asynchronous, or run by a dispatch with a context.
  hook_step run_hook(const entry& hook) {
    current_ = &hook;
    check_stop(&hook);
    const bool with_context = flags_ & has_context;
    if (with_context) context_->begin_hook(hook, true);
    hook_position_ = next_ - 1;
    if (flags_ & hook_events)
      hook_started_ = observers_.hook_begin(slot_->name, hook, hook_position_);
    std::exception_ptr error;
    // A synchronous hook's output, kept aside until the hook's fate is known: a hook skipped by
    // its failure policy leaves no output.
    value_holder<result> output;
    {
      // The hook's synchronous part sees the dispatch's stop token and executor.
      await_context_scope scope(with_context ? context_->link() : scoped_await_context);
      // Only the hook's own code is inside the try: the hook is concluded exactly once, below,
      // also when concluding throws (a fail-closed hook, a stopped dispatch).
      try {
        if (hook.sync) {
          const auto sync = sync_call_of<Kind>(hook);
          if constexpr (is_void) {
            call_with_args(sync, hook.object);
          } else if constexpr (Kind::is_fold) {
            output.emplace(call_fold(sync, hook.object, last_for(hook)));
          } else {
            output.emplace(call_with_args(sync, hook.object));
          }
        } else {
          pending_value_.emplace(start_async_hook(hook));
          suspend_into(pending_kind::value, &dispatch::resume_after_hook);
          return hook_step::suspended;
        }
      } catch (...) {
        error = std::current_exception();
      }
    }
    const hook_step step = conclude_hook(hook, std::move(error));
    if constexpr (!is_void)
      if (step == hook_step::produced) store_output(std::move(*output));
    return step;
  }

  // The Task of an asynchronous hook (not started: Tasks are lazy).
  Task<result> start_async_hook(const entry& hook) {
    const auto async = async_call_of<Kind>(hook);
    if constexpr (Kind::is_fold) return call_fold(async, hook.object, last_for(hook));
    else return call_with_args(async, hook.object);
  }

  void report_hook_end(const entry& hook, HookOutcome outcome, std::exception_ptr error) noexcept {
    observers_.hook_end(slot_->name, hook, hook_position_, hook_started_, outcome,
                        std::move(error));
  }

  template <class Output>
  void store_output(Output&& output) {
    value_ = std::forward<Output>(output);
  }

  // A hook returned (error null) or threw: decides what that means for the dispatch. Its own
  // time limit expired: a failure of the hook (its policy decides). The dispatch was stopped
  // meanwhile: the dispatch ends (cancelled or timed out), whatever the hook did. Else its
  // exception goes to its failure policy.
  hook_step conclude_hook(const entry& hook, std::exception_ptr error,
                          bool own_limit_expired = false) {
    const bool with_context = flags_ & has_context;
    if (with_context && context_->end_hook()) own_limit_expired = true;
    const bool dispatch_stopped = with_context && context_->stop_requested();
    if (own_limit_expired && !dispatch_stopped) {
      return hook_failed(hook,
                         std::make_exception_ptr(DispatchTimeout(
                             std::string(slot_->name), hook.id(), hook.record->name, true)),
                         HookOutcome::timed_out);
    }
    if (dispatch_stopped) {
      try {
        context_->check(slot_->name, &hook);
      } catch (const DispatchTimeout&) {
        if (flags_ & hook_events)
          report_hook_end(hook, HookOutcome::timed_out, std::current_exception());
        throw;
      } catch (...) {
        if (flags_ & hook_events)
          report_hook_end(hook, HookOutcome::cancelled, std::current_exception());
        throw;
      }
    }
    if (error) return hook_failed(hook, std::move(error), HookOutcome::failed);
    return hook_succeeded(hook);
  }

  // The `last` a fold hook receives: the current one, moved - except for a FailOpen hook,
  // which gets a copy when it can, so that a failure leaves `last` as if the hook had not run.
  std::optional<result> last_for(const entry& hook) {
    if constexpr (Kind::is_fold) {
      if constexpr (std::is_copy_constructible_v<result>)
        if (hook.on_failure == FailurePolicy::fail_open) return value_;
      return std::move(value_);
    } else {
      return std::nullopt;
    }
  }

  hook_step hook_succeeded(const entry& hook) {
    ++produced_;
    // (A pipeline hook's end is reported with its decision, when the decision is taken.)
    if constexpr (!Kind::is_pipeline)
      if (flags_ & hook_events) report_hook_end(hook, HookOutcome::ok, nullptr);
    return hook_step::produced;
  }

  // A hook threw (or its own time ran out): its failure policy decides.
  hook_step hook_failed(const entry& hook, std::exception_ptr error, HookOutcome outcome) {
    const bool events = flags_ & hook_events;
    switch (hook.on_failure) {
      case FailurePolicy::fail_open:
        if (events) report_hook_end(hook, HookOutcome::skipped, error);
        warn_skipped(hook, error);
        return hook_step::skipped;
      case FailurePolicy::fail_closed:
        if (events) report_hook_end(hook, outcome, error);
        throw HookFailed(std::string(slot_->name), hook.id(), hook.record->name, error);
      case FailurePolicy::propagate:
        break;
    }
    if (events) report_hook_end(hook, outcome, error);
    std::rethrow_exception(error);
  }

  // Every failure a FailOpen policy absorbs is reported: silently skipped security hooks are
  // how fail-open goes wrong.
  void warn_skipped(const entry& hook, const std::exception_ptr& error) noexcept {
    try {
      std::string message = "hook " + hook_label(hook.id(), hook.record->name) +
                            " failed and was skipped (fail-open)";
      if (auto what = exception_what(error)) message += ": " + *what;
      warn(slot_->name, message, set_observer_);
    } catch (...) {
    }
  }

  // (Never called: names the step that takes an asynchronous hook's outcome, which the driver
  // hands to after_hook.)
  bool resume_after_hook() { return false; }
  bool after_hook(std::exception_ptr error, value_holder<result>&& output) {
    switch (conclude_hook(*current_, std::move(error))) {
      case hook_step::skipped:
        return run_hooks();
      default:
        if constexpr (!is_void) value_ = std::move(output);
        return continue_after(take_output());
    }
  }

  bool resume_after_verdict() { return continue_after(after_verdict(flow_)); }

  // ---- defaults and producers -------------------------------------------------------------

  // Runs the default; false (with `then` as the step to resume) when it is asynchronous.
  HOOKSET_ALWAYS_INLINE bool call_default(step then) {
    if (flags_ & has_context) [[unlikely]]
      check_stop();
    if constexpr (Kind::is_pipeline) {
      // The default ends the pipeline (default_outcome), on the input as finally rewritten.
      if (default_sync_) [[likely]] {
        output_.emplace(default_outcome(call_with_args(default_sync_, nullptr)));
        return true;
      }
      pending_output_.emplace(complete_pipeline(call_with_args(default_async_, nullptr), this));
      suspend_into(pending_kind::output, then);
      return false;
    } else {
      if (default_sync_) [[likely]] {
        if constexpr (is_void) call_with_args(default_sync_, nullptr);
        else value_ = call_with_args(default_sync_, nullptr);
        return true;
      }
      return call_default_async(then);
    }
  }

  HOOKSET_NOINLINE bool call_default_async(step then) {
    pending_value_.emplace(call_with_args(default_async_, nullptr));
    suspend_into(pending_kind::value, then);
    return false;
  }

  template <class Companion, class Input>
  bool call_producer(Companion& companion, Input&& input) {
    check_stop();
    using produced = decltype(companion(std::forward<Input>(input)));
    if constexpr (classify_result<produced, output>() == call_kind::sync) {
      output_.emplace(companion(std::forward<Input>(input)));
      return true;
    } else {
      pending_output_.emplace(to_task<output>(companion(std::forward<Input>(input))));
      suspend_into(pending_kind::output, &dispatch::complete);
      return false;
    }
  }

  bool complete() { return true; }

  void suspend_into(pending_kind kind, step then) noexcept {
    if (flags_ & hook_events) observers_.forget_boundary();
    pending_ = kind;
    resume_ = then;
    flags_ |= suspended;
  }

  void destroy_pending() noexcept {
    switch (pending_) {
      case pending_kind::value:
        pending_value_.destroy();
        break;
      case pending_kind::flow:
        if constexpr (Kind::has_chain) pending_flow_.destroy();
        break;
      case pending_kind::output:
        if constexpr (Kind::has_producer) pending_output_.destroy();
        break;
      case pending_kind::concurrent:
        break;
      case pending_kind::intercepted:
        pending_intercepted_.destroy();
        break;
    }
  }

  // ---- concurrent hooks -----------------------------------------------------------------------
  // (Concurrent / MaxConcurrent slots.) From the first hook that suspends on, hooks start
  // without waiting for the earlier ones to finish, up to the slot's limit; synchronous ones
  // still run at their turn. Their outcomes are taken in registration order, by the same rules
  // as one after another (conclude_hook, take_output). A Break (FirstSuccess), a failure or a
  // stop stops the starting and asks the running hooks to stop; the dispatch goes on (or
  // fails) only when every hook it started has finished.

  struct concurrent_slot {
    bool done = false;       // guarded by the state's mutex until taken
    bool concluded = false;  // its outcome taken (before its turn: a failure, when it happened)
    value_holder<result> value;
    std::exception_ptr error;
    std::chrono::steady_clock::time_point started{};  // for its time limit
    hook_clock::ticks event_started = 0;              // for its hook events
    stop_source stop;  // this hook's: the dispatch's stop, a loser's cancellation
    stop_token token;
    std::optional<stop_callback<stop_forwarder>> from_dispatch;
    await_context link;
    expiry_timer own_limit;
  };

  struct concurrent_state {
    explicit concurrent_state(std::size_t n) : slots(n) {}
    std::mutex mutex;
    std::vector<concurrent_slot> slots;
    std::size_t in_flight = 0;
    std::size_t finished_unseen = 0;
    std::size_t failures = 0;  // hooks that finished with an exception so far
    std::coroutine_handle<> waiting;

    // A runner's hook finished: records it, wakes the driver if it waits.
    void finish(std::size_t i, value_holder<result>&& value, std::exception_ptr error) noexcept {
      std::coroutine_handle<> wake;
      {
        std::lock_guard lock(mutex);
        slots[i].value = std::move(value);
        slots[i].error = std::move(error);
        slots[i].done = true;
        if (slots[i].error) ++failures;
        --in_flight;
        ++finished_unseen;
        wake = std::exchange(waiting, nullptr);
      }
      if (wake) wake.resume();
    }
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

  // Awaits one hook's Task and reports to the state; frees itself.
  struct concurrent_runner {
    struct promise_type : pooled_frame, await_context_carrier {
      concurrent_runner get_return_object() noexcept { return {}; }
      std::suspend_never initial_suspend() noexcept { return {}; }
      std::suspend_never final_suspend() noexcept { return {}; }
      void return_void() noexcept {}
      void unhandled_exception() noexcept { std::terminate(); }  // run_one catches everything
    };
  };
  static concurrent_runner run_one(concurrent_state* state, std::size_t i, Task<result> task) {
    co_await exchange_await_context{&state->slots[i].link};  // the hook sees its own stop token
    value_holder<result> value;
    std::exception_ptr error;
    try {
      if constexpr (is_void) co_await std::move(task);
      else value.emplace(co_await std::move(task));
    } catch (...) {
      error = std::current_exception();
    }
    state->finish(i, std::move(value), std::move(error));
  }

  Task<void> run_concurrently() {
    const std::size_t first = next_;
    auto state = std::make_unique<concurrent_state>(count_ - first);
    const bool with_context = flags_ & has_context;
    const await_context* parent = co_await current_await_context();
    std::size_t start = first;  // the next hook to start
    std::size_t take = first;   // the next outcome to take, in registration order
    bool starting = true;
    std::exception_ptr failure;  // what the dispatch ends with, once every hook has finished

    auto stop_running = [&] {
      starting = false;
      for (std::size_t i = take; i < start; ++i) state->slots[i - first].stop.request_stop();
    };
    // Takes the outcome of hook i (finished) by the usual rules; a failure of the dispatch is
    // kept in `failure` and stops the hooks still running.
    auto conclude = [&](std::size_t i) {
      concurrent_slot& slot = state->slots[i - first];
      const entry& hook = hooks_[i];
      slot.concluded = true;
      try {
        hook_position_ = i;
        hook_started_ = slot.event_started;
        slot.own_limit.cancel();
        const bool own_limit =
            hook.record->timeout &&
            (slot.own_limit.expired() ||
             std::chrono::steady_clock::now() - slot.started > *hook.record->timeout);
        if (conclude_hook(hook, std::move(slot.error), own_limit) == hook_step::produced) {
          if constexpr (!is_void) value_ = std::move(*slot.value);
          if (take_output() == next::stop) stop_running();  // FirstSuccess: an answer
        }
      } catch (...) {
        failure = std::current_exception();
        stop_running();
      }
    };
    std::size_t failures_seen = 0;
    for (;;) {
      while (starting && start < count_ && state->running() < Kind::concurrency) {
        if (with_context && context_->stop_requested()) {
          starting = false;  // a stopped dispatch starts nothing more (and fails below)
          break;
        }
        if (state->failed() != failures_seen) break;  // (a hook failed: see to it first)
        start_concurrent(*state, first, start++, parent);
        next_ = start;  // hooks_run: started so far
      }
      while (take < start && state->is_done(take - first)) {
        concurrent_slot& slot = state->slots[take - first];
        const entry& hook = hooks_[take];
        const std::size_t i = take++;
        if (slot.concluded) continue;  // (a failure, taken when it happened)
        if (!starting && (failure || (flags_ & broke))) {
          // A loser: its answer no longer matters.
          hook_position_ = i;
          hook_started_ = slot.event_started;
          if (flags_ & hook_events) report_hook_end(hook, HookOutcome::cancelled, slot.error);
          continue;
        }
        conclude(i);
      }
      // A failure that fails the dispatch (Propagate, FailClosed) is acted on when it happens,
      // not at its turn: every hook still running, registered before it or after, is asked to
      // stop at once. (FailOpen failures wait for their turn: they only leave an output out.
      // Once a first-success chain has its answer, the hooks it stopped fail as they may.)
      if (!failure && !(flags_ & broke) && state->failed() != failures_seen) {
        failures_seen = state->failed();
        for (std::size_t i = take; i < start && !failure; ++i) {
          const concurrent_slot& slot = state->slots[i - first];
          if (hooks_[i].on_failure != FailurePolicy::fail_open && state->is_done(i - first) &&
              slot.error && !slot.concluded)
            conclude(i);
        }
      }
      if (take == start && (!starting || start == count_)) break;
      if (starting && start < count_ && state->running() < Kind::concurrency) continue;
      if (flags_ & hook_events) observers_.forget_boundary();  // (waiting is no hook's time)
      co_await state->next_finish();
    }
    // (Every started hook has finished and been taken.)
    if (failure) std::rethrow_exception(failure);
    check_stop();
  }

  void start_concurrent(concurrent_state& state, std::size_t first, std::size_t i,
                        const await_context* parent) {
    const entry& hook = hooks_[i];
    concurrent_slot& slot = state.slots[i - first];
    slot.token = slot.stop.get_token();
    const bool with_context = flags_ & has_context;
    if (with_context)
      slot.from_dispatch.emplace(*context_->link()->stop, stop_forwarder{&slot.stop});
    slot.link =
        await_context{parent, nullptr, &slot.token, with_context ? &context_->executor() : nullptr};
    slot.started = std::chrono::steady_clock::now();
    if (flags_ & hook_events) slot.event_started = observers_.hook_begin(slot_->name, hook, i);
    if (hook.record->timeout)
      slot.own_limit.arm(with_context ? context_->executor() : default_executor(),
                         slot.started + *hook.record->timeout, slot.stop);
    {
      std::lock_guard lock(state.mutex);
      ++state.in_flight;
    }
    value_holder<result> value;
    std::exception_ptr error;
    try {
      await_context_scope scope(&slot.link);
      if (hook.sync) {
        if constexpr (is_void) call_with_args(sync_call_of<Kind>(hook), hook.object);
        else value.emplace(call_with_args(sync_call_of<Kind>(hook), hook.object));
      } else {
        Task<result> task = call_with_args(async_call_of<Kind>(hook), hook.object);
        run_one(&state, i - first, std::move(task));
        return;
      }
    } catch (...) {
      error = std::current_exception();
    }
    state.finish(i - first, std::move(value), std::move(error));
  }

  // ---- the driver ---------------------------------------------------------------------------

  // The rest of a dispatch that had to wait: await what the steps left pending, store it,
  // resume the step that takes it, repeat.
  static Task<void> drive(dispatch* self) {
    // Synchronous hooks that the steps run from here belong to the awaiting context.
    const await_context* const awaiting = co_await current_await_context();
    const bool with_context = self->flags_ & has_context;
    try {
      for (;;) {
        self->flags_ &=
            static_cast<std::uint8_t>(~suspended);  // the driver owns the pending awaitable now
        // What is awaited runs under the dispatch's context (its stop token, its executor).
        if (with_context) co_await exchange_await_context{self->context_->link()};
        bool done = false;
        bool resumed = false;  // the step that takes the value has run
        switch (self->pending_) {
          case pending_kind::value: {
            Task<result> pending = self->pending_value_.take();
            if constexpr (quiet_hooks_back_to_back) {
              if (self->resume_ == &dispatch::resume_after_hook && self->current_->quiet &&
                  !(self->flags_ & (hook_events | has_context))) {
                // Quiet hooks (see hook_entry::quiet) in a dispatch nobody observes: run back
                // to back here, as a hand-written loop would - an asynchronous one awaited
                // directly, a synchronous one called - with none of run_hook's bookkeeping. A
                // failure propagates as conclude_hook would propagate it.
                for (bool awaiting_hook = true; awaiting_hook;) {
                  if constexpr (is_void) co_await std::move(pending);
                  else self->value_ = co_await std::move(pending);
                  awaiting_hook = false;
                  do {
                    ++self->produced_;
                    self->collect();
                    if (self->next_ == self->count_ || !self->hooks_[self->next_].quiet) break;
                    const entry& hook = self->hooks_[self->next_++];
                    self->current_ = &hook;
                    await_context_scope scope(awaiting);  // the hook's synchronous part
                    if (hook.sync) {
                      self->call_plain(hook);
                    } else {
                      pending = self->start_async_hook(hook);
                      awaiting_hook = true;
                    }
                  } while (!awaiting_hook);
                }
                await_context_scope scope(awaiting);
                done = self->run_hooks();
                resumed = true;
                break;
              }
            }
            if (self->resume_ == &dispatch::resume_after_hook) {
              // A hook's output is kept aside until its fate is known (conclude_hook).
              std::exception_ptr failure;
              value_holder<result> output;
              try {
                if constexpr (is_void) co_await std::move(pending);
                else output.emplace(co_await std::move(pending));
              } catch (...) {
                failure = std::current_exception();
              }
              if (with_context) co_await exchange_await_context{awaiting};
              await_context_scope scope(awaiting);
              done = self->after_hook(std::move(failure), std::move(output));
              resumed = true;
            } else {
              if constexpr (is_void) co_await std::move(pending);
              else self->value_ = co_await std::move(pending);
            }
            break;
          }
          case pending_kind::flow: {
            if constexpr (Kind::has_chain) {
              Task<Flow> pending = self->pending_flow_.take();
              self->flow_ = co_await std::move(pending);
            }
            break;
          }
          case pending_kind::concurrent: {
            if constexpr (Kind::is_concurrent) co_await self->run_concurrently();
            break;
          }
          case pending_kind::output: {
            if constexpr (Kind::has_producer) {
              Task<output> pending = self->pending_output_.take();
              self->output_.emplace(co_await std::move(pending));
            }
            break;
          }
          case pending_kind::intercepted: {
            Task<output> pending = self->pending_intercepted_.take();
            if constexpr (std::is_void_v<output>) co_await std::move(pending);
            else if constexpr (Kind::has_producer)
              self->output_.emplace(co_await std::move(pending));
            else self->value_ = co_await std::move(pending);
            break;
          }
        }
        if (!resumed) {
          if (with_context) co_await exchange_await_context{awaiting};
          // A cancelled or late dispatch takes nothing further. (Interceptors have the last word
          // on their dispatch: what they made of a DispatchCancelled stands.)
          if (!self->intercepting()) self->check_stop();
          await_context_scope scope(awaiting);
          done = (self->*self->resume_)();
        }
        if (done) break;
        if (with_context) self->context_->arm_deadline();
      }
    } catch (...) {
      self->complete(std::current_exception());
      throw;
    }
    self->complete(nullptr);
  }

  // ---- data ---------------------------------------------------------------------------------
  // Written on every dispatch: the inputs, flags_, value_'s flag and the counters. The rest is
  // written only on the paths that read it.

  std::tuple<bound_t<A>...> args_;
  const hook_list_owner* owner_;
  const descriptor* slot_;
  Observer* set_observer_;
  // The default, copied from the descriptor: a constant where the dispatch is inlined, so a
  // synchronous default is called directly (read through slot_, compilers load it).
  typename Kind::default_sync_fn default_sync_;
  typename Kind::default_async_fn default_async_;
  std::uint8_t flags_ = 0;
  pending_kind pending_;  // what is pending while suspended
  Flow flow_;             // a pending chain verdict, once it arrived

  const list_type* list_;
  const entry* hooks_;
  std::size_t count_;
  std::size_t plain_end_;  // the end of the leading stretch of plain hooks
  std::size_t next_;       // hooks started so far: what hooks_run reports
  std::size_t produced_;   // hooks that produced an output (not skipped by FailOpen)

  [[no_unique_address]] value_holder<result>
      value_;  // `last` of fold slots, else the newest output
  [[no_unique_address]] std::conditional_t<Kind::has_aggregate, std::vector<result>, no_value>
      outputs_;
  [[no_unique_address]] std::conditional_t<Kind::has_producer, std::optional<output>, no_value>
      output_;
  [[no_unique_address]] companion_instance<typename Kind::chain> chain_;
  [[no_unique_address]] companion_instance<typename Kind::aggregate> aggregate_;
  [[no_unique_address]] companion_instance<typename Kind::finalize> finalize_;
  dispatch_observers observers_;  // valid when flags_ has `observed`
  // The hook being concluded, for its events (valid when flags_ has `hook_events`).
  std::size_t hook_position_;
  hook_clock::ticks hook_started_;

  dispatch_context* context_;  // valid when flags_ has `has_context`; owned unless lent()
  late<std::shared_ptr<const void>> owner_kept_;  // valid when flags_ has `keeps_owner`

  // Suspension: the step that takes the pending value, the hook that produces it.
  step resume_;
  const entry* current_;
  late<Task<result>> pending_value_;
  [[no_unique_address]] std::conditional_t<Kind::has_chain, late<Task<Flow>>, no_value>
      pending_flow_;
  [[no_unique_address]] std::conditional_t<Kind::has_producer, late<Task<output>>, no_value>
      pending_output_;
  late<Task<void>> driver_;
  // An intercepted dispatch: its interceptor chain while the driver has not taken it, and what
  // the rest of it shares (valid when intercepting()).
  late<Task<output>> pending_intercepted_;
  intercept_state* intercept_;
};

}  // namespace hookset::detail

// What next() returns (the interceptor layer of unobserved dispatches).
#include <hookset/detail/next_call.hpp>  // IWYU pragma: export
