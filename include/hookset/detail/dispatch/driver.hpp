#pragma once
// The driver of a dispatch that had to wait (dispatch.hpp: how the steps run).
#include <cstdint>
#include <exception>
#include <optional>
#include <utility>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>

namespace hookset::detail {

// The driver: a class of its own over the dispatch (a friend of it), whose code only a dispatch
// that suspends reaches - through the table its suspension leaves (suspended_driver).
template <class Dispatch>
class dispatch_driver {
  using Kind = typename Dispatch::kind;
  using result = typename Dispatch::result;
  using output = typename Dispatch::output;
  using pending_kind = typename Dispatch::pending_kind;
  static constexpr bool is_void = Dispatch::is_void;
  static constexpr auto suspended = Dispatch::suspended;

 public:
  static Task<void> drive(Dispatch* self);
  // The pending awaitable of a dispatch destroyed before its driver took it (awaited no further).
  static void destroy_pending(Dispatch& self) noexcept {
    switch (self.pending_) {
      case pending_kind::value:
      case pending_kind::hook:
        self.pending_value_.destroy();
        break;
      case pending_kind::flow:
        if constexpr (Kind::has_chain) self.pending_flow_.destroy();
        break;
      case pending_kind::output:
        if constexpr (Kind::has_producer) self.pending_output_.destroy();
        break;
      case pending_kind::concurrent:
        break;
      case pending_kind::intercepted:
        self.pending_intercepted_.destroy();
        break;
      case pending_kind::awaited:  // (handed over: no longer this dispatch's)
        break;
    }
  }

 private:
  static erased_task take_pending(Dispatch& self);
  static bool take_quiet_output(Dispatch& self, erased_task& pending,
                                const await_context* awaiting);
  static bool run_after_quiet_hooks(Dispatch& self, erased_task& pending,
                                    const await_context* awaiting);
  static bool take_pending_outcome(Dispatch& self, erased_task& pending,
                                   const await_context* awaiting);
};

// What runs a dispatch on after it suspended: its driver (await_suspend) and the wait of a
// synchronous caller (hookset::sync_wait). Every suspension leaves a pointer to it
// (suspend_into), taken from what suspends: the record of a coroutine hook or of an
// interceptor, the slot's descriptor (an asynchronous default), or - a companion or the
// concurrent hooks, which this kind may suspend on - this table itself. Only those name it, so
// a file whose dispatches cannot suspend does not contain this code.
template <class Kind, class... A>
struct dispatch<Kind, mp::mp_list<A...>>::driver_code {
  Task<void> (*drive)(dispatch* self);
  result_type (*wait)(dispatch& self);
  // Starts the asynchronous default (call_default_async), `then` the step that takes it.
  bool (*call_default)(dispatch& self, step then);
};

// The driver code a registration for S names: that of S's kind when the registered callable may
// suspend a dispatch (a coroutine), else none.
template <class S, bool Suspends>
constexpr const void* suspended_driver_for() noexcept {
  if constexpr (Suspends) return &dispatch<kind_of<S>>::suspended_driver;
  else return nullptr;
}

template <class Kind, class... A>
const typename dispatch<Kind, mp::mp_list<A...>>::driver_code
    dispatch<Kind, mp::mp_list<A...>>::suspended_driver{
        &dispatch_driver<dispatch>::drive, &detail::wait_suspended<result_type, dispatch>,
        &rules::call_default_async};

// The rest of a dispatch that had to wait: await what the steps left pending, take its
// outcome, resume the step that takes it (take_pending_outcome), repeat. One place awaits,
// whatever is pending (a hook, the default, a companion, the concurrent hooks, the first
// interceptor): the coroutine has one suspension point besides its start and end, and the
// outcome is taken by ordinary code.
template <class Dispatch>
inline Task<void> dispatch_driver<Dispatch>::drive(Dispatch* self) {
  // This coroutine's context: the awaiting one, where synchronous hooks run from here; what is
  // awaited runs under the dispatch's context (its stop token, its executor).
  const await_context*& own = co_await own_await_context{};
  const await_context* const awaiting = own;
  dispatch_context* const context = self->context_if_any();
  try {
    erased_task pending = take_pending(*self);
    bool quiet = false;  // pending is a quiet hook that take_quiet_output started
    for (;;) {
      if (context) own = context->link();  // (the hook's own link while one runs)
      co_await pending;
      if (context) own = awaiting;
      if constexpr (Dispatch::quiet_hooks_back_to_back) {
        // Quiet hooks run back to back here, each asynchronous one awaited where the last one
        // was (not a step per hook: a coroutine hook is a few hundred instructions, and the
        // step's call would add 5 % to it). Only when nothing watches the dispatch: a watched one
        // takes each outcome as a step.
        if (quiet || (self->pending_ == pending_kind::hook && self->current_->quiet &&
                      !(self->flags_ & Dispatch::watched))) {
          quiet = take_quiet_output(*self, pending, awaiting);
          if (quiet) continue;
          if (run_after_quiet_hooks(*self, pending, awaiting)) break;
          continue;
        }
      }
      if (take_pending_outcome(*self, pending, awaiting)) break;
      if (context) context->arm_deadline();
    }
  } catch (...) {
    watched_policy<Dispatch>::complete(*self, std::current_exception());
    throw;
  }
  watched_policy<Dispatch>::complete(*self, Dispatch::no_error);
}

// What the steps left pending, handed over to the driver.
template <class Dispatch>
erased_task dispatch_driver<Dispatch>::take_pending(Dispatch& self) {
  self.flags_ &=
      static_cast<std::uint8_t>(~suspended);  // the driver owns the pending awaitable now
  switch (self.pending_) {
    case pending_kind::value:
    case pending_kind::hook:
      return erased_task(self.pending_value_.take());
    case pending_kind::flow:
      if constexpr (Kind::has_chain) return erased_task(self.pending_flow_.take());
      break;
    case pending_kind::concurrent:
      if constexpr (Kind::is_concurrent) return erased_task(concurrent_runner<Dispatch>::run(self));
      break;
    case pending_kind::output:
      if constexpr (Kind::has_producer) return erased_task(self.pending_output_.take());
      break;
    case pending_kind::intercepted:
      return erased_task(self.pending_intercepted_.take());
    case pending_kind::awaited:  // (never with a driver)
      break;
  }
  return {};  // (unreachable: a kind leaves pending only what it has)
}

// The pending awaitable is a quiet hook (see hook_entry::quiet) of a dispatch nobody observes,
// and it ended: its output is taken, and the quiet hooks after it run back to back, as a
// hand-written loop would - a synchronous one called, an asynchronous one left in `pending` for
// the driver to await (returns true) - with none of a bookkept hook's run. A failure propagates
// as conclude_hook would propagate it. Returns false past the quiet hooks: `pending` is empty,
// and the step after them (take_pending_outcome) follows.
template <class Dispatch>
HOOKSET_ALWAYS_INLINE bool dispatch_driver<Dispatch>::take_quiet_output(
    Dispatch& self, erased_task& pending, const await_context* awaiting) {
  if constexpr (is_void) pending.take<void>();
  else self.value_ = pending.take<result>();
  for (;;) {
    ++self.produced_;
    self.produced_by(self.current_);
    Dispatch::rules::collect(self);
    if (self.next_ == self.count_ || !self.hooks_[self.next_].quiet) return false;
    const hook_entry& hook = self.hooks_[self.next_++];
    self.current_ = &hook;
    // The hook's synchronous part (an asynchronous one's: whatever its call runs before it
    // returns its awaitable) runs in the awaiting context.
    await_context_scope scope(awaiting);
    if (!hook.sync) {
      pending.hold(Dispatch::loop::start_async_hook(self, hook));
      return true;
    }
    Dispatch::loop::call_plain(self, hook);
  }
}

// Past the quiet hooks: the hooks after them, and the rest of the dispatch (as
// take_pending_outcome).
template <class Dispatch>
bool dispatch_driver<Dispatch>::run_after_quiet_hooks(Dispatch& self, erased_task& pending,
                                                      const await_context* awaiting) {
  bool done;
  {
    await_context_scope scope(awaiting);
    done = Dispatch::loop::run_hooks(self);
  }
  if (!done) pending = take_pending(self);
  return done;
}

// The pending awaitable ended: takes its outcome and runs the steps after it, in the awaiting
// context. True when the dispatch is complete; else `pending` is what a step left pending next.
template <class Dispatch>
bool dispatch_driver<Dispatch>::take_pending_outcome(Dispatch& self, erased_task& pending,
                                                     const await_context* awaiting) {
  bool done;
  if (self.pending_ == pending_kind::hook) {
    // A hook's output is kept aside until its fate is known (conclude_hook).
    std::exception_ptr failure;
    value_holder<result> produced;
    try {
      if constexpr (is_void) pending.take<void>();
      else produced.emplace(pending.take<result>());
    } catch (...) {
      failure = std::current_exception();
    }
    await_context_scope scope(awaiting);
    done = Dispatch::loop::after_hook(self, std::move(failure), std::move(produced));
  } else {
    switch (self.pending_) {
      case pending_kind::value:
        if constexpr (is_void) pending.take<void>();
        else self.value_ = pending.take<result>();
        break;
      case pending_kind::hook:     // (above)
      case pending_kind::awaited:  // (never with a driver)
        break;
      case pending_kind::flow:
        if constexpr (Kind::has_chain) self.flow_ = pending.take<Flow>();
        break;
      case pending_kind::concurrent:
        pending.take<void>();
        break;
      case pending_kind::output:
        if constexpr (Kind::has_producer) self.output_.emplace(pending.take<output>());
        break;
      case pending_kind::intercepted:
        // The first interceptor, a coroutine: its output is the dispatch's (its end event is
        // told with the dispatch's end: complete()).
        if constexpr (std::is_void_v<output>) pending.take<void>();
        else interceptor_layer<Dispatch>::store_output(self, pending.take<output>());
        break;
    }
    // A cancelled or late dispatch takes nothing further. (Interceptors have the last word on
    // their dispatch: what they made of a DispatchCancelled stands.)
    if (!interceptor_layer<Dispatch>::intercepting(self)) self.check_stop();
    await_context_scope scope(awaiting);
    done = self.resume_(self);
  }
  if (!done) pending = take_pending(self);
  return done;
}

}  // namespace hookset::detail
