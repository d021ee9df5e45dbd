#pragma once
// The interceptor layer of a dispatch (interceptor.hpp). A dispatch whose slot has interceptors
// runs the first one; each one's next() runs the one after it, and the last one's runs the rest:
// a dispatch of the same slot over the same snapshot, past the interceptors (intercepted_by),
// with this dispatch's stop token, deadline and executor, reporting its hooks under this
// dispatch's id.
//   Two layers. A dispatch nobody observes and given no options runs its interceptors through
// next_call - the next interceptor as a plain call, or the hooks over the dispatch's snapshot -
// in await_ready (start_intercepted_unwatched). Any other runs them from Tasks (run_rest) over
// an intercept_state of its own (start_intercepted), each called as next_call calls it.

#include <coroutine>
#include <cstddef>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>

namespace hookset::detail {

template <class Kind, class... A>
HOOKSET_NOINLINE void dispatch<Kind, mp::mp_list<A...>>::start_intercepted() {
  // A keyed slot's rest runs over the slot's whole snapshot and looks its hooks up for the key
  // the last interceptor passes to next() (an interceptor may canonicalise the key); the
  // interceptors are the slot's, whatever the key.
  const hook_list* rest_snapshot = list_;
  if constexpr (Kind::is_keyed) rest_snapshot = owner_->current();
  intercept_ = new intercept_state{hook_list_owner(rest_snapshot), {}, 0};
  next_ = next_call::watched_layer;  // (it runs no hook itself)
  if (flags_ & observed) intercept_->link.observers = &observers_;
  // The arguments move on: from here on, the dispatch itself never reads them (and a
  // move-only argument could not be copied).
  pending_intercepted_.emplace([&]<std::size_t... I>(std::index_sequence<I...>) {
    return run_rest(next_handle{this, 0}, static_cast<bound_t<A>&&>(std::get<I>(args_))...);
  }(indices{}));
  suspend_into(pending_kind::intercepted, &dispatch::finish_intercepted);
}

// The interceptor layer of a dispatch nobody watches and given no options: no intercept_state,
// no context, no second frame. This dispatch calls its first interceptor - a synchronous one
// as a plain call, a coroutine's Task awaited by await_suspend - and each next() returns a
// next_call that runs the next interceptor, or past the last the dispatch of the hooks over
// this dispatch's snapshot, when it is awaited. next_ counts the next() calls (this dispatch
// runs no hook itself); the arguments stay in args_, where the interceptors' references point.
template <class Kind, class... A>
HOOKSET_NOINLINE bool dispatch<Kind, mp::mp_list<A...>>::start_intercepted_unwatched() {
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
  intercept_ = nullptr;  // (release() tells the layers apart by it once the list is held)
  pending_intercepted_.emplace(
      call_interceptor(reinterpret_cast<interceptor_async_fn>(first.async), first, next, args_));
  hold_list();  // suspending: as start_watched (taken while the scope still protects it)
  pending_ = pending_kind::intercepted;  // (no step: await_suspend awaits the Task itself)
  flags_ |= suspended;
  return false;
}

template <class Kind, class... A>
inline auto dispatch<Kind, mp::mp_list<A...>>::run_rest_once(next_handle handle, bool again,
                                                             bound_t<A>... args) -> Task<output> {
  dispatch& self = *static_cast<dispatch*>(handle.dispatch);
  intercept_state& state = *self.intercept_;
  if (again)
    throw std::logic_error("hookset: slot " + std::string(self.slot_->name) +
                           ": an interceptor called next() more than once");
  const std::vector<entry>& interceptors = self.list_->interceptors;
  if (handle.index < interceptors.size()) {
    if (self.flags_ & hook_events)
      co_return co_await self.run_interceptor(interceptors[handle.index], handle.index, args...);
    // Called as the unobserved layer calls it.
    co_return co_await next_call(typename next_call::counted{}, handle,
                                 static_cast<bound_t<A>&&>(args)...);
  } else {
    // (The set's observer too: its hooks' warnings, a fail-open skip say, are the set's.)
    dispatch rest(state.snapshot, *self.slot_, self.set_observer_,
                  static_cast<bound_t<A>&&>(args)...);
    rest.set_context(new dispatch_context(
        (self.flags_ & has_context) ? self.context_->inherited_options() : CallOptions{}));
    rest.context_->continue_intercepted(&state.link);
    // (A tripwire watching the dispatch watches its hooks' outputs, past the interceptors.)
    if (self.flags_ & has_context) rest.context_->watch(self.context_->watch());
    if constexpr (std::is_void_v<output>) co_await std::move(rest);
    else co_return co_await std::move(rest);
  }
}

// One interceptor's run, reported to observers that want hook events (HookEvent::interceptor).
template <class Kind, class... A>
inline auto dispatch<Kind, mp::mp_list<A...>>::run_interceptor(const entry& interceptor,
                                                               std::size_t index,
                                                               arg_ref_t<A>... args)
    -> Task<output> {
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

template <class Kind, class... A>
class [[nodiscard]] dispatch<Kind, mp::mp_list<A...>>::next_call {
  // again: a second next() of one interceptor; armed: not run yet (args_); called: a
  // synchronous interceptor runs, or threw (args_); produced: its output or the hooks' is in
  // produced_ (and args_); from here on out of line: task: run_rest's; interceptor: a coroutine
  // interceptor's Task (and args_); rest: the dispatch of the hooks (which took the arguments).
  enum class state : unsigned char { again, armed, called, produced, task, interceptor, rest };

 public:
  static constexpr std::size_t watched_layer = ~std::size_t{0};  // start_intercepted's next_

  // The next interceptor and the hooks may run in await_ready: in the awaiting Task's context.
  using runs_code_in_await_ready = void;

  next_call(next_handle handle, bound_t<A>... args)
      : self_(static_cast<dispatch*>(handle.dispatch)), index_(handle.index) {
    if (index_ >= self_->next_) [[likely]] {  // (never in the watched layer)
      self_->next_ = index_ + 1;
      args_.emplace(static_cast<bound_t<A>&&>(args)...);
      state_ = state::armed;
    } else {
      not_armed(handle, static_cast<bound_t<A>&&>(args)...);
    }
  }
  // run_rest_once's: the interceptor at handle.index, its next() counted already.
  struct counted {};
  next_call(counted, next_handle handle, bound_t<A>... args)
      : self_(static_cast<dispatch*>(handle.dispatch)), index_(handle.index), state_(state::armed) {
    args_.emplace(static_cast<bound_t<A>&&>(args)...);
  }
  next_call(next_call&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : self_(other.self_), index_(other.index_), state_(other.state_) {
    if (state_ == state::task) task_.emplace(std::move(other.task_.get()));
    else if (state_ == state::armed) args_.emplace(std::move(other.args_.get()));
  }
  next_call& operator=(next_call&&) = delete;
  ~next_call() {
    if (state_ >= state::task) [[unlikely]] {
      destroy_owned();
    } else {
      if constexpr (!std::is_void_v<output>)
        if (state_ == state::produced) produced_.destroy();
      if (state_ != state::again) args_.destroy();
    }
  }

  HOOKSET_ALWAYS_INLINE bool await_ready() {
    if (state_ == state::task) return get_awaiter(std::move(task_.get())).await_ready();
    if (state_ == state::armed) return run();
    return true;  // again: await_resume throws
  }
  template <class Promise>
  auto await_suspend(std::coroutine_handle<Promise> waiting) {
    if (state_ == state::rest) return rest_.get().await_suspend(waiting);
    return get_awaiter(std::move(task_.get())).await_suspend(waiting);
  }
  HOOKSET_ALWAYS_INLINE output await_resume() {
    if (state_ == state::produced) [[likely]] {
      if constexpr (!std::is_void_v<output>) return std::move(produced_.get());
      else return;
    }
    return resume_otherwise();
  }

  // As a Task (a Task awaits it when run).
  operator Task<output>() && {
    if (state_ == state::task) return std::move(task_.get());
    return as_task<output>(std::move(*this));
  }

 private:
  // Out of line, as what follows: a watched dispatch's next() (run_rest's Task), or a second.
  HOOKSET_NOINLINE void not_armed(next_handle handle, bound_t<A>... args) {
    if (self_->next_ != watched_layer) return void(state_ = state::again);
    task_.emplace(run_rest(handle, static_cast<bound_t<A>&&>(args)...));
    state_ = state::task;
  }
  HOOKSET_NOINLINE void destroy_owned() noexcept {
    if (state_ == state::rest) return rest_.destroy();
    task_.destroy();  // task, interceptor (whose frame refers to args_)
    if (state_ == state::interceptor) args_.destroy();
  }

  HOOKSET_NOINLINE output resume_otherwise() {
    if (state_ == state::rest) return rest_.get().await_resume();
    if (state_ == state::again)
      throw std::logic_error("hookset: slot " + std::string(self_->slot_->name) +
                             ": an interceptor called next() more than once");
    return get_awaiter(std::move(task_.get())).await_resume();
  }

  // The next interceptor, or past the last the dispatch of the hooks: true when it completed.
  bool run() {
    const dispatch& self = *self_;
    const list_type& list = *self.list_;
    if (list.interceptors.data() + index_ != std::to_address(list.interceptors.end()))
      return run_interceptor();
    if constexpr (plain_fold_loop && companions_constructible) {
      // Every hook plain (interceptors aside): the hand-written loop, as run_plain_fold.
      if (list.hooks_plain && plain_fold_runs(list, self.default_sync_)) [[likely]] {
        produced_.emplace(plain_fold(list, self.default_sync_, args_.get()));
        state_ = state::produced;
        return true;
      }
    }
    return start_rest();
  }
  // The interceptor at index_ (a synchronous one called, a coroutine's Task started); the hooks.
  HOOKSET_NOINLINE bool run_interceptor() {
    const entry& interceptor = self_->list_->interceptors[index_];
    const next_handle next{self_, index_ + 1};
    if (interceptor.sync) {
      state_ = state::called;
      const auto sync = reinterpret_cast<interceptor_sync_fn>(interceptor.sync);
      if constexpr (std::is_void_v<output>) call_interceptor(sync, interceptor, next, args_.get());
      else produced_.emplace(call_interceptor(sync, interceptor, next, args_.get()));
      state_ = state::produced;
      return true;
    }
    task_.emplace(call_interceptor(reinterpret_cast<interceptor_async_fn>(interceptor.async),
                                   interceptor, next, args_.get()));
    state_ = state::interceptor;
    return get_awaiter(std::move(task_.get())).await_ready();
  }
  HOOKSET_NOINLINE bool start_rest() {
    dispatch& self = *self_;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      rest_.emplace(*self.owner_, *self.slot_, nullptr,
                    static_cast<bound_t<A>&&>(std::get<I>(args_.get()))...);
    }
    (indices{});
    args_.destroy();
    state_ = state::rest;
    return rest_.get().start_as_rest(self.list_, &link_.emplace());
  }

  dispatch* self_;
  std::size_t index_;
  state state_;
  late<Task<output>> task_;               // task, interceptor
  late<std::tuple<bound_t<A>...>> args_;  // armed, called, produced, interceptor
  [[no_unique_address]] std::conditional_t<std::is_void_v<output>, no_value, late<output>>
      produced_;         // produced
  late<dispatch> rest_;  // rest
  // What rest_ leaves for this: the hooks it ran (read by nobody: this dispatch is unobserved).
  late<intercept_link> link_;
};

}  // namespace hookset::detail
