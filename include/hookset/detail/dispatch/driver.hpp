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

template <class Kind, class... A>
const typename dispatch<Kind, mp::mp_list<A...>>::driver_code
    dispatch<Kind, mp::mp_list<A...>>::suspended_driver{
        &dispatch::drive, &detail::wait_suspended<result_type, dispatch>,
        [](dispatch& self, step then) { return self.call_default_async(then); }};

// The rest of a dispatch that had to wait: await what the steps left pending, take its
// outcome, resume the step that takes it (take_pending_outcome), repeat. One place awaits,
// whatever is pending (a hook, the default, a companion, the concurrent hooks, the first
// interceptor): the coroutine has one suspension point besides its start and end, and the
// outcome is taken by ordinary code.
template <class Kind, class... A>
inline Task<void> dispatch<Kind, mp::mp_list<A...>>::drive(dispatch* self) {
  // This coroutine's context: the awaiting one, where synchronous hooks run from here; what is
  // awaited runs under the dispatch's context (its stop token, its executor).
  const await_context*& own = co_await own_await_context{};
  const await_context* const awaiting = own;
  dispatch_context* const context = (self->flags_ & has_context) ? self->context_ : nullptr;
  try {
    erased_task pending = self->take_pending();
    bool quiet = false;  // pending is a quiet hook that take_quiet_output started
    for (;;) {
      if (context) own = context->link();
      co_await pending;
      if (context) own = awaiting;
      if constexpr (quiet_hooks_back_to_back) {
        // Quiet hooks run back to back here, each asynchronous one awaited where the last one
        // was (not a step per hook: a coroutine hook is a few hundred instructions, and the
        // step's call would add 5 % to it).
        if (quiet || (self->pending_ == pending_kind::hook && self->current_->quiet &&
                      !(self->flags_ & (hook_events | has_context)))) {
          quiet = self->take_quiet_output(pending, awaiting);
          if (quiet) continue;
          if (self->run_after_quiet_hooks(pending, awaiting)) break;
          continue;
        }
      }
      if (self->take_pending_outcome(pending, awaiting)) break;
      if (context) context->arm_deadline();
    }
  } catch (...) {
    self->complete(std::current_exception());
    throw;
  }
  self->complete(no_error);
}

// What the steps left pending, handed over to the driver.
template <class Kind, class... A>
erased_task dispatch<Kind, mp::mp_list<A...>>::take_pending() {
  flags_ &= static_cast<std::uint8_t>(~suspended);  // the driver owns the pending awaitable now
  switch (pending_) {
    case pending_kind::value:
    case pending_kind::hook:
      return erased_task(pending_value_.take());
    case pending_kind::flow:
      if constexpr (Kind::has_chain) return erased_task(pending_flow_.take());
      break;
    case pending_kind::concurrent:
      if constexpr (Kind::is_concurrent) return erased_task(run_concurrently());
      break;
    case pending_kind::output:
      if constexpr (Kind::has_producer) return erased_task(pending_output_.take());
      break;
    case pending_kind::intercepted:
      return erased_task(pending_intercepted_.take());
  }
  return {};  // (unreachable: a kind leaves pending only what it has)
}

// The pending awaitable is a quiet hook (see hook_entry::quiet) of a dispatch nobody observes,
// and it ended: its output is taken, and the quiet hooks after it run back to back, as a
// hand-written loop would - a synchronous one called, an asynchronous one left in `pending` for
// the driver to await (returns true) - with none of a bookkept hook's run. A failure propagates
// as conclude_hook would propagate it. Returns false past the quiet hooks: `pending` is empty,
// and the step after them (take_pending_outcome) follows.
template <class Kind, class... A>
HOOKSET_ALWAYS_INLINE bool dispatch<Kind, mp::mp_list<A...>>::take_quiet_output(
    erased_task& pending, const await_context* awaiting) {
  if constexpr (is_void) pending.take<void>();
  else value_ = pending.take<result>();
  for (;;) {
    ++produced_;
    produced_by(current_);
    collect();
    if (next_ == count_ || !hooks_[next_].quiet) return false;
    const entry& hook = hooks_[next_++];
    current_ = &hook;
    // The hook's synchronous part (an asynchronous one's: whatever its call runs before it
    // returns its awaitable) runs in the awaiting context.
    await_context_scope scope(awaiting);
    if (!hook.sync) {
      pending.hold(start_async_hook(hook));
      return true;
    }
    call_plain(hook);
  }
}

// Past the quiet hooks: the hooks after them, and the rest of the dispatch (as
// take_pending_outcome).
template <class Kind, class... A>
bool dispatch<Kind, mp::mp_list<A...>>::run_after_quiet_hooks(erased_task& pending,
                                                              const await_context* awaiting) {
  bool done;
  {
    await_context_scope scope(awaiting);
    done = run_hooks();
  }
  if (!done) pending = take_pending();
  return done;
}

// The pending awaitable ended: takes its outcome and runs the steps after it, in the awaiting
// context. True when the dispatch is complete; else `pending` is what a step left pending next.
template <class Kind, class... A>
bool dispatch<Kind, mp::mp_list<A...>>::take_pending_outcome(erased_task& pending,
                                                             const await_context* awaiting) {
  bool done;
  if (pending_ == pending_kind::hook) {
    // A hook's output is kept aside until its fate is known (conclude_hook).
    std::exception_ptr failure;
    value_holder<result> output;
    try {
      if constexpr (is_void) pending.take<void>();
      else output.emplace(pending.take<result>());
    } catch (...) {
      failure = std::current_exception();
    }
    await_context_scope scope(awaiting);
    done = after_hook(std::move(failure), std::move(output));
  } else {
    switch (pending_) {
      case pending_kind::value:
        if constexpr (is_void) pending.take<void>();
        else value_ = pending.take<result>();
        break;
      case pending_kind::hook:  // (above)
        break;
      case pending_kind::flow:
        if constexpr (Kind::has_chain) flow_ = pending.take<Flow>();
        break;
      case pending_kind::concurrent:
        pending.take<void>();
        break;
      case pending_kind::output:
        if constexpr (Kind::has_producer) output_.emplace(pending.take<output>());
        break;
      case pending_kind::intercepted:
        // The first interceptor, a coroutine: its output is the dispatch's (its end event is
        // told with the dispatch's end: complete()).
        if constexpr (std::is_void_v<output>) pending.take<void>();
        else interceptors::store_output(*this, pending.take<output>());
        break;
    }
    // A cancelled or late dispatch takes nothing further. (Interceptors have the last word on
    // their dispatch: what they made of a DispatchCancelled stands.)
    if (!interceptors::intercepting(*this)) check_stop();
    await_context_scope scope(awaiting);
    done = (this->*resume_)();
  }
  if (!done) pending = take_pending();
  return done;
}

}  // namespace hookset::detail
