#pragma once
// The dispatch engine's awaitable, which runs a dispatch of `HookSet::call<S>(args...)` (what
// call returns holds the inputs alone until the dispatch starts: call.hpp). One engine serves
// every mode x companion combination, instantiated per slot kind (result, parameters, mode,
// companions), never per slot: a slot contributes its descriptor (name, default, failure policy)
// at run time. This class reads the run-time facts once, when the dispatch starts (start_now:
// nobody watching and every hook plain, quiet, watched, intercepted), and holds the state; what
// runs it are layers over it, each a class of its own and a friend of it (detail/engine.hpp maps
// them, and how a dispatch steps and suspends).

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/attributed.hpp>
#include <hookset/companions.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/coro/sync_wait.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/dispatch/frame.hpp>
#include <hookset/detail/dispatch/holders.hpp>
#include <hookset/detail/dispatch/options.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/slot_traits.hpp>

namespace hookset::detail {

template <class Kind, class... A>
class [[nodiscard]] dispatch<Kind, mp::mp_list<A...>>
    : bound_arguments<A...>,
      dispatch_frame,
      public dispatch_options<dispatch<Kind, mp::mp_list<A...>>> {
  using bound_arguments<A...>::args_;
  using bound_arguments<A...>::call_with_args;
  using kind = Kind;
  using result = typename Kind::result;
  using output = typename Kind::output;
  using entry = hook_entry;
  using descriptor = slot_descriptor<typename plain_kind<Kind>::type>;
  using indices = std::index_sequence_for<A...>;

  static constexpr bool is_void = Kind::is_void;
  static constexpr bool companions_constructible =
      companion_instance<typename Kind::chain>::constructible &&
      companion_instance<typename Kind::aggregate>::constructible &&
      companion_instance<typename Kind::finalize>::constructible;
  // Whether an output needs more than being kept as the newest one.
  static constexpr bool judges_outputs =
      Kind::has_chain || Kind::has_aggregate || Kind::is_pipeline;
  // Kinds where an output never ends the hook loop nor suspends it (take_output is collect()):
  // the driver may run their quiet hooks back to back.
  static constexpr bool quiet_hooks_back_to_back =
      !Kind::has_chain && !Kind::is_pipeline && !Kind::is_concurrent;
  // An aggregate that takes each output with the registration that produced it (producer_).
  static constexpr bool attributed = collects_attributed<Kind>;
  // A dispatch whose result says which registration produced it (attributing<Kind>).
  static constexpr bool attributes_result = is_attributing<Kind>;
  // Whether producer_ follows what produced value_.
  static constexpr bool tracks_producer = attributed || attributes_result;
  // An aggregate that turns a FailClosed hook's failure into an output of that hook.
  static constexpr bool substitutes = substitutes_failures<Kind>;
  using collected = std::conditional_t<attributed, Attributed<result>, result>;
  // A step of the rules that a suspension resumes (resume_).
  using step = bool (*)(dispatch& self);

  template <class, class>
  friend class dispatch;  // (the same dispatch with or without attribution)
  // The layers that run it (detail/engine.hpp maps them), each a friend. The dispatch calls the
  // first interceptor through the snapshot's pointer (start_now, watched_policy::start) and
  // awaits that one's Task itself (await_suspend); the rest is the interceptor layer's.
  friend class dispatch_options<dispatch>;
  friend class dispatch_rules<dispatch>;
  friend class aggregate_collection<dispatch>;
  friend class hook_loop<dispatch>;
  friend class plain_loops<dispatch>;
  friend class pipeline_rules<dispatch>;
  friend class watched_policy<dispatch>;
  friend class dispatch_driver<dispatch>;
  friend class concurrent_runner<dispatch>;
  friend struct interceptor_layer<dispatch>;
  friend class attribution<dispatch>;
  friend class dispatch_call<Kind, mp::mp_list<A...>>;
  using rules = dispatch_rules<dispatch>;
  using loop = hook_loop<dispatch>;
  using interceptors = interceptor_layer<dispatch>;

 public:
  // What its hooks return, and its slot's Aggregate companion (void: none) - for the
  // combinators that run a dispatch (a tripwire: <hookset/tripwire.hpp>).
  using hook_result_type = result;
  using aggregate_type = typename Kind::aggregate;
  std::string_view slot_name() const noexcept { return slot_->name; }
  // The slot's descriptor (the frame holds the part of it every kind has).
  const descriptor& slot() const noexcept { return static_cast<const descriptor&>(*slot_); }

  // Synchronous hooks run inside await_ready: a Task awaiting a dispatch makes its context the
  // scoped one around it (await_context.hpp).
  using runs_code_in_await_ready = void;

  template <class... Args>
  dispatch(const hook_list_owner& owner, const descriptor& slot, Observer* set_observer,
           Args&&... args)
      : bound_arguments<A...>{{std::forward<Args>(args)...}},
        dispatch_frame(&owner, &slot, set_observer) {}

  // The dispatch set.call<S>(...) made (dispatch_call::start): its inputs move in, element by
  // element (the compilers then keep the call's arguments in registers).
  HOOKSET_ALWAYS_INLINE explicit dispatch(dispatch_call<Kind, mp::mp_list<A...>>&& call)
      : dispatch(std::move(call), indices{}) {}
  template <std::size_t... I>
  HOOKSET_ALWAYS_INLINE dispatch(dispatch_call<Kind, mp::mp_list<A...>>&& call,
                                 std::index_sequence<I...>)
      : bound_arguments<A...>{{std::forward<bound_t<A>>(std::get<I>(call.args_))...}},
        dispatch_frame(call.owner_, call.slot_, call.set_observer_) {
    if (call.context_) [[unlikely]]  // options
      set_context(std::exchange(call.context_, nullptr));
  }

  // The same dispatch, not started, of the kind with or without attribution (with_attribution(),
  // start_delegated()): the inputs and the options move.
  template <class Other>
  HOOKSET_ALWAYS_INLINE dispatch(converting_dispatch, dispatch<Other, mp::mp_list<A...>>&& other)
      : bound_arguments<A...>{std::move(other.args_)},
        dispatch_frame(other.owner_, other.slot_, other.set_observer_,
                       other.flags_ & (watched | keeps_owner)) {
    // (Not started: only options watch it - a context.)
    if (flags_ & watched) {
      context_ = other.context_;
      observers_.watch_nothing();
      other.flags_ &= static_cast<std::uint8_t>(~watched);
    }
    if (flags_ & keeps_owner) {
      owner_kept_.emplace(other.owner_kept_.take());
      other.flags_ &= static_cast<std::uint8_t>(~keeps_owner);
    }
  }

  // Movable until it starts (compilers may move awaiters): the inputs and the options move.
  HOOKSET_ALWAYS_INLINE dispatch(dispatch&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : dispatch(converting_dispatch{}, std::move(other)) {}
  dispatch& operator=(dispatch&&) = delete;
  HOOKSET_ALWAYS_INLINE ~dispatch() {
    if constexpr (attributes_result)
      if (delegation_.started) delegation_.plain.destroy();
    if (flags_ & (holds_list | suspended | driving | watched | keeps_owner)) [[unlikely]]
      release();
  }

  // ---- as an asynchronous operation (with <hookset/asio.hpp>) --------------------------------

  // `std::move(dispatch)(token)` with any Asio completion token; what makes `co_await
  // set.call<S>(...)` work inside an asio::awaitable. Found through hookset_async_call, which
  // <hookset/asio.hpp> declares: without it, a dispatch is no Asio operation.
  using result_type = std::conditional_t<attributes_result, Attributed<output>, output>;

  template <class CompletionToken>
  auto operator()(CompletionToken&& token) && -> decltype(hookset_async_call(
      std::declval<dispatch&&>(), std::forward<CompletionToken>(token))) {
    return hookset_async_call(std::move(*this), std::forward<CompletionToken>(token));
  }

  // ---- code reached through pointers -------------------------------------------------------

  // What runs a dispatch on after it suspended (driver.hpp): every suspension leaves a pointer
  // to it, so a file whose dispatches cannot suspend does not contain that code.
  struct driver_code;
  static const driver_code suspended_driver;
  // (The interceptor layer's entry points are reached the same way, through the pointer an
  // interceptor's registration leaves in the snapshot: interceptor_layer::entry_points.)

  // Takes the snapshot and runs everything that completes synchronously.
  HOOKSET_ALWAYS_INLINE bool await_ready() {
    // (The default is read first: GCC takes unwatched()'s atomic load for a write to this
    // dispatch, and calls a default read after it through the pointer, not inline.)
    const auto default_sync = slot().default_sync;
    return ready_with(default_sync, owner_->current());
  }

 private:
  // await_ready, told what it reads first (the default, the snapshot) by run_to_completion,
  // which has tested them: the compilers then need not test them twice (call.hpp).
  HOOKSET_ALWAYS_INLINE bool ready_with(typename Kind::default_sync_fn default_sync,
                                        const hook_list* list) {
    const bool done = start_now(default_sync, list);
    // Only await_suspend makes a driver: await_resume after a synchronous run need not look for
    // one (its test and branch, on every dispatch, told to the optimiser).
    if (done) HOOKSET_ASSUME(!(flags_ & driving));
    return done;
  }
  HOOKSET_ALWAYS_INLINE bool start_now([[maybe_unused]] typename Kind::default_sync_fn default_sync,
                                       const hook_list* list) {
    list_ = list;
    if constexpr (plain_loops<dispatch>::default_alone) {
      if (!list_) {  // no hook: the default's output is the result
        if (!unwatched()) return watched_policy<dispatch>::start(*this);
        if (default_sync) [[likely]]
          return plain_loops<dispatch>::run_default_alone(*this, default_sync);
        return rules::start_without_hooks(*this);
      }
    }
    if constexpr (Kind::is_keyed) {
      // A keyed slot: the hooks of this dispatch's key, looked up once, now (a list filtered
      // for the key is this dispatch's own, released with it, on every path). With
      // interceptors, the key the last one passes to next() is looked up
      // (interceptor_layer::start_as_rest).
      if (list_ && list_->list_for_key && !list_->any_interceptor()) take_list_for_key();
    }
    if constexpr (attributes_result) {
      if (list_) {
        // Interceptors have the last word (start_delegated). Else the snapshot is held to the
        // end: await_resume reads the producer's registration, which a hook may have removed.
        if (list_->any_interceptor()) return attribution<dispatch>::start_delegated(*this);
        hold_list();
      }
    }
    if (unwatched()) [[likely]] {
      if constexpr (companions_constructible) {
        // Inlined (the default called directly) for slots without companions; with
        // companions, one out-of-line copy per kind.
        if (!list_) {
          // No hook, no configured companion, a companion's kind (the others: above): nothing
          // can change under the default, and no snapshot needs protecting. (A Pipeline with
          // no hook runs its default alone: the general copy of the rules serves it, one
          // function fewer per kind.)
          if constexpr (Kind::is_pipeline) return rules::start_snapshot(*this);
          else return rules::start_without_hooks_outlined(*this);
        }
        if (list_->all_plain) return plain_loops<dispatch>::start(*this, default_sync);
        if constexpr (!attributes_result)
          if (list_->any_interceptor()) return interceptors::code_of(*list_).start(*this);
      }
      if (!list_ || !list_->needs_watching()) return watched_policy<dispatch>::start_quiet(*this);
    }
    return watched_policy<dispatch>::start(*this);
  }

 public:
  // For an Asio operation (<hookset/asio.hpp>): runs the dispatch now, and returns true, when it
  // cannot suspend and has nothing to stop or report (plain_loops.hpp); else starts nothing.
  bool run_if_synchronous() { return plain_loops<dispatch>::run_if_synchronous(*this); }

  // Hands over to the driver exactly as awaiting a Task would (same return form, so the same
  // stack-depth guarantees hold for a dispatch as for a Task). The driver runs in the await
  // context of the coroutine awaiting the dispatch.
  template <class Promise>
  auto await_suspend(std::coroutine_handle<Promise> waiting) {
    if constexpr (attributes_result)
      if (delegation_.started) return delegation_.plain.get().await_suspend(waiting);
    // The unwatched interceptor layer's first interceptor, a coroutine: awaited directly (the
    // driver has nothing to do for it), its result taken by await_resume.
    if (interceptors::can_be_awaited_directly(*this)) {
      pending_ = pending_kind::awaited;  // (handed over: await_resume and release() know to what)
      flags_ |= driving;
      return get_awaiter(std::move(pending_intercepted_.get())).await_suspend(waiting);
    }
    // (Before the driver starts the pending awaitable: nothing of this dispatch runs yet.)
    if constexpr (!std::derived_from<Promise, await_context_carrier>)
      if (has_context()) context_->forget_parent();
    driver_.emplace(driver_code_->drive(this));
    flags_ |= driving;
    return get_awaiter(std::move(driver_.get())).await_suspend(waiting);
  }

  // hookset::sync_wait, after await_ready returned false: waits for the rest of the dispatch on
  // the calling thread, through the code the suspension left.
  result_type wait_suspended() {
    if constexpr (attributes_result) {
      if (delegation_.started) return detail::wait_suspended<result_type>(*this);
    }
    return driver_code_->wait(*this);
  }

  HOOKSET_ALWAYS_INLINE result_type await_resume() {
    if constexpr (attributes_result) {
      return attribution<dispatch>::resume(*this);
    } else {
      if (flags_ & driving) [[unlikely]] {
        if (interceptors::awaited_directly(*this)) [[unlikely]]
          return interceptors::resume_interceptor(*this);
        get_awaiter(std::move(driver_.get())).await_resume();  // rethrows the driver's error
      }
      if constexpr (Kind::has_producer) return std::move(*output_);
      else if constexpr (!std::is_void_v<output>) return std::move(*value_);
    }
  }

 private:
  // A keyed slot's dispatch: list_ becomes the list of its key - a list filtered for the key
  // is held by this dispatch alone (holds_list).
  void take_list_for_key() {
    bool owned = false;
    const auto& key = std::get<sizeof...(A) - 1>(args_);
    list_ = list_->list_for_key(*list_, &key, owned);
    if (owned) flags_ |= holds_list;
  }

  // Out of line: the cold path of the destructor. (Inlined into a caller that destroys a
  // moved-from dispatch - hookset::asio's initiation - GCC 12 at -O2 cannot tell that the
  // flags rule out a pending awaitable and warns it "may be used uninitialized".)
  HOOKSET_NOINLINE void release() noexcept {
    if ((flags_ & suspended) && !(flags_ & driving))
      dispatch_driver<dispatch>::destroy_pending(*this);  // awaited no further
    if (flags_ & driving) {
      if (interceptors::awaited_directly(*this)) pending_intercepted_.destroy();
      else driver_.destroy();
    }
    release_frame();
    if (flags_ & keeps_owner) owner_kept_.destroy();
  }

  void suspend_into(pending_kind kind, step then, const void* code) noexcept {
    if (hook_events()) observers_.forget_boundary();
    pending_ = kind;
    resume_ = then;
    driver_code_ = driver_code_from(code);
    flags_ |= suspended;
  }
  // The driver code a suspension left (`code`: a record's or the descriptor's, for this kind
  // without attribution). An attributing dispatch names its own: a registration names the code
  // of the kind without.
  static const driver_code* driver_code_from(const void* code) noexcept {
    if constexpr (attributes_result) return &suspended_driver;
    else return static_cast<const driver_code*>(code);
  }

  // Who produced the newest output (null: the default), for an attributed aggregate or result.
  HOOKSET_ALWAYS_INLINE void produced_by([[maybe_unused]] const entry* hook) noexcept {
    if constexpr (tracks_producer) producer_ = hook;
  }
  // The entry points of the frame's hook loop with bookkeeping and of its watched run of one
  // hook: what of them needs this kind's types (steps.hpp).
  static const hook_steps bookkept_steps;

  // ---- interceptors (intercept.hpp) --------------------------------------------------------
  // The interceptor layer (interceptor_layer): this dispatch calls its first interceptor; each
  // next() is a next_call, which calls the interceptor after it or, past the last, runs the
  // dispatch of the hooks (interceptor_layer::start_as_rest). What next() returns, by the name
  // interceptor.hpp's Next uses:
 public:
  using next_call = typename interceptors::next_call;

 private:
  // ---- data ---------------------------------------------------------------------------------
  // (The inputs are the first base, the state that does not depend on the slot's types the
  // second: frame.hpp.) Written on every dispatch: value_'s flag. The rest is written only on
  // the paths that read it.

  Flow flow_;  // a pending chain verdict, once it arrived

  [[no_unique_address]] value_holder<result>
      value_;  // `last` of fold slots, else the newest output
  [[no_unique_address]] std::conditional_t<Kind::has_aggregate, std::vector<collected>, no_value>
      outputs_;
  // How many elements of outputs_ hold an output, where the list is made with one for each
  // output the dispatch can have (dispatch_rules::presized: attributed outputs).
  [[no_unique_address]] std::conditional_t<attributed, std::size_t, no_value> collected_{};
  // What produced value_, for an attributed aggregate or result (null: the default).
  [[no_unique_address]] std::conditional_t<tracks_producer, const entry*, no_value> producer_;
  // An attributing dispatch run by its interceptors (start_delegated).
  [[no_unique_address]] std::conditional_t<
      attributes_result, delegated_dispatch<dispatch<typename plain_kind<Kind>::type>>,
      no_delegation>
      delegation_;
  [[no_unique_address]] std::conditional_t<Kind::has_producer, std::optional<output>, no_value>
      output_;
  [[no_unique_address]] companion_instance<typename Kind::chain> chain_;
  [[no_unique_address]] companion_instance<typename Kind::aggregate> aggregate_;
  [[no_unique_address]] companion_instance<typename Kind::finalize> finalize_;
  late<std::shared_ptr<const void>> owner_kept_;  // valid when flags_ has `keeps_owner`

  // Suspension: the step that takes the pending value, the hook that produces it.
  step resume_;
  const driver_code* driver_code_;  // what the suspension left (suspend_into)
  late<Task<result>> pending_value_;
  // A bookkept synchronous hook's output, kept aside until its fate is known (steps.hpp).
  [[no_unique_address]] std::conditional_t<is_void, no_value, late<result>> staged_;
  [[no_unique_address]] std::conditional_t<Kind::has_chain, late<Task<Flow>>, no_value>
      pending_flow_;
  [[no_unique_address]] std::conditional_t<Kind::has_producer, late<Task<output>>, no_value>
      pending_output_;
  late<Task<void>> driver_;
  // An intercepted dispatch: its first interceptor's Task while nothing awaits it yet.
  late<Task<output>> pending_intercepted_;
};

}  // namespace hookset::detail
