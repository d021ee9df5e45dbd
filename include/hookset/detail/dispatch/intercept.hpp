#pragma once
// The interceptor layer of a dispatch (interceptor.hpp). A dispatch whose slot has interceptors
// calls the first one; each one's next() is a next_call that calls the one after it, and the
// last one's runs the rest: a dispatch of the same slot over the same snapshot, past the
// interceptors (intercepted_by), with this dispatch's stop token, deadline and executor,
// reporting its hooks under this dispatch's id. One mechanism, watched or not: a synchronous
// interceptor is a plain call, a coroutine's Task is awaited by whatever awaits its next_call
// (or, the first one's, by await_suspend, or by the driver when there is something to report
// or stop). Observers that want hook events see each interceptor's run.

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

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/manual_lifetime.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/hook_clock.hpp>
#include <hookset/errors.hpp>

namespace hookset::detail {

// The interceptor layer starts: the first interceptor (next_ and interceptors_started():
// dispatch.hpp). Synchronous, it completes the dispatch here; a coroutine's Task is left
// pending, awaited by await_suspend when nothing is to be reported or stopped, else by the
// driver. (`watched`: observers may want its events, or be told the hooks run.)
template <class Kind, class... A>
template <bool watched>
HOOKSET_NOINLINE bool dispatch<Kind, mp::mp_list<A...>>::start_intercepted() {
  if constexpr (watched) next_ = 0;
  interceptors_started() = 1;  // interceptor 0 runs now
  sync_dispatch_scope scope;   // interceptors and hooks may change the set: keep this snapshot
  const auto store = [&]<class Produced>(Produced&& produced) {
    store_output(std::forward<Produced>(produced));
  };
  if (watched ? call_interceptor(0, args_, store, pending_intercepted_, hook_started_)
              : invoke_interceptor(0, args_, store, pending_intercepted_))
    return true;
  hold_list();  // suspending: as start_watched (taken while the scope still protects it)
  pending_ = pending_kind::intercepted;
  resume_ = &dispatch::finish_intercepted;  // (for the driver; await_suspend may await it itself)
  driver_code_ = driver_code_from(list_->interceptors.front().record->suspended_driver);
  flags_ |= suspended;
  return false;
}

// start_intercepted, for a dispatch with a context or observers: what the first interceptor
// runs synchronously sees the dispatch's stop token and executor.
template <class Kind, class... A>
const typename dispatch<Kind, mp::mp_list<A...>>::interceptor_code
    dispatch<Kind, mp::mp_list<A...>>::interceptor_layer{
        [](dispatch& self) { return self.template start_intercepted<false>(); },
        [](dispatch& self) { return self.start_intercepted_in_context(); }};

template <class Kind, class... A>
bool dispatch<Kind, mp::mp_list<A...>>::start_intercepted_in_context() {
  await_context_scope scope((flags_ & has_context) ? context_->link() : scoped_context());
  return start_intercepted<true>();
}

template <class Kind, class... A>
template <class Store>
HOOKSET_ALWAYS_INLINE bool dispatch<Kind, mp::mp_list<A...>>::call_interceptor(
    std::size_t index, std::tuple<bound_t<A>...>& args, Store&& store, late<Task<output>>& pending,
    hook_clock::ticks& started) {
  if (flags_ & hook_events) [[unlikely]]
    return call_interceptor_reported(index, args, store, pending, started);
  return invoke_interceptor(index, args, store, pending);
}
template <class Kind, class... A>
template <class Store>
HOOKSET_NOINLINE bool dispatch<Kind, mp::mp_list<A...>>::call_interceptor_reported(
    std::size_t index, std::tuple<bound_t<A>...>& args, Store& store, late<Task<output>>& pending,
    hook_clock::ticks& started) {
  const entry& interceptor = list_->interceptors[index];
  started = observers_.interceptor_begin(slot_->name, interceptor, index);
  bool completed;
  try {
    completed = invoke_interceptor(index, args, store, pending);
  } catch (...) {
    observers_.interceptor_end(slot_->name, interceptor, index, started, std::current_exception());
    throw;
  }
  if (completed) observers_.interceptor_end(slot_->name, interceptor, index, started, nullptr);
  return completed;
}
// The call itself: the one place an interceptor is called.
template <class Kind, class... A>
template <class Store>
HOOKSET_ALWAYS_INLINE bool dispatch<Kind, mp::mp_list<A...>>::invoke_interceptor(
    std::size_t index, std::tuple<bound_t<A>...>& args, Store& store, late<Task<output>>& pending) {
  const entry& interceptor = list_->interceptors[index];
  const next_handle next{this, index + 1};
  const auto call = [&]<class Fn, std::size_t... I>(Fn fn,
                                                    std::index_sequence<I...>) -> decltype(auto) {
    return fn(interceptor.object, next, static_cast<arg_ref_t<A>>(std::get<I>(args))...);
  };
  if (interceptor.sync) {
    const auto sync = reinterpret_cast<interceptor_sync_fn>(interceptor.sync);
    if constexpr (std::is_void_v<output>) call(sync, indices{});
    else store(call(sync, indices{}));
    return true;
  }
  pending.emplace(call(reinterpret_cast<interceptor_async_fn>(interceptor.async), indices{}));
  return false;
}

// The dispatch of the hooks past `outer`'s interceptors, over its snapshot (a keyed slot's:
// the hooks of the key the last interceptor passed to next()). Past an unwatched dispatch's
// interceptors, the lean loops when every hook is plain; else the general start as the rest of
// an intercepted dispatch: a context linked to `outer` (its options inherited: a timeout
// counts from the dispatch's start), which runs no interceptor and reports its hooks as
// `outer`'s.
template <class Kind, class... A>
bool dispatch<Kind, mp::mp_list<A...>>::start_as_rest(const dispatch& outer, intercept_link& link) {
  list_ = outer.list_;
  if constexpr (Kind::is_keyed)
    if (list_->list_for_key) take_list_for_key();
  const bool outer_watched = outer.flags_ & (has_context | observed);
  if constexpr (companions_constructible) {
    if (!outer_watched) {
      if (!list_) return start_without_hooks_outlined();
      if (list_->hooks_plain) return start_all_plain();
    }
  }
  // (Through the snapshot's pointer, which its interceptors set: a file whose registrations
  // need no context does not contain the context's code.)
  set_context(outer.list_->make_context(
      (outer.flags_ & has_context) ? outer.context_->inherited_options() : CallOptions{}));
  context_->continue_intercepted(&link);
  // (A tripwire watching the dispatch watches its hooks' outputs, past the interceptors.)
  if (outer.flags_ & has_context) context_->watch(outer.context_->watch());
  return start_watched();
}

template <class Kind, class... A>
class [[nodiscard]] dispatch<Kind, mp::mp_list<A...>>::next_call {
  // again: a second next() of one interceptor; armed: not run yet (args_); called: a
  // synchronous interceptor runs, or threw (args_); produced: its output or the hooks' is in
  // produced_ (and args_); from here on out of line: interceptor: a coroutine interceptor's
  // Task (and args_); rest: the dispatch of the hooks (which took the arguments).
  enum class state : unsigned char { again, armed, called, produced, interceptor, rest };

 public:
  // The next interceptor and the hooks may run in await_ready: in the awaiting Task's context.
  using runs_code_in_await_ready = void;

  next_call(next_handle handle, bound_t<A>... args)
      : self_(static_cast<dispatch*>(handle.dispatch)), index_(handle.index) {
    std::size_t& started = self_->interceptors_started();
    if (index_ >= started) [[likely]] {
      started = index_ + 1;
      args_.emplace(static_cast<bound_t<A>&&>(args)...);
      state_ = state::armed;
    } else {
      state_ = state::again;
    }
  }
  next_call(next_call&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : self_(other.self_), index_(other.index_), state_(other.state_) {
    if (state_ == state::armed) args_.emplace(std::move(other.args_.get()));
  }
  next_call& operator=(next_call&&) = delete;
  ~next_call() {
    if (state_ >= state::interceptor) [[unlikely]] {
      destroy_owned();
    } else {
      if constexpr (!std::is_void_v<output>)
        if (state_ == state::produced) produced_.destroy();
      if (state_ != state::again) args_.destroy();
    }
  }

  HOOKSET_ALWAYS_INLINE bool await_ready() {
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
  operator Task<output>() && { return as_task<output>(std::move(*this)); }

 private:
  HOOKSET_NOINLINE void destroy_owned() noexcept {
    if (state_ == state::rest) return rest_.destroy();
    task_.destroy();  // (its frame refers to args_)
    args_.destroy();
  }

  HOOKSET_NOINLINE output resume_otherwise() {
    if (state_ == state::rest) return rest_.get().await_resume();
    if (state_ == state::again) throw_next_called_again(self_->slot_->name);
    // A coroutine interceptor's end.
    try {
      if constexpr (std::is_void_v<output>) {
        get_awaiter(std::move(task_.get())).await_resume();
        self_->interceptor_done(index_, started_, nullptr);
      } else {
        output produced = get_awaiter(std::move(task_.get())).await_resume();
        self_->interceptor_done(index_, started_, nullptr);
        return produced;
      }
    } catch (...) {
      self_->interceptor_done(index_, started_, std::current_exception());
      throw;
    }
  }

  // The next interceptor, or past the last the dispatch of the hooks: true when it completed.
  bool run() {
    const dispatch& self = *self_;
    const list_type& list = *self.list_;
    if (list.interceptors.data() + index_ != std::to_address(list.interceptors.end()))
      return run_interceptor();
    if constexpr (plain_fold_loop && companions_constructible && !Kind::is_keyed) {
      // Every hook plain (interceptors aside), nothing to report or stop: the hand-written
      // loop, as run_plain_fold.
      if (!(self.flags_ & (has_context | observed)) && list.hooks_plain &&
          plain_fold_runs(list, self.slot().default_sync)) [[likely]] {
        produced_.emplace(plain_fold(list, self.slot().default_sync, args_.get()));
        state_ = state::produced;
        return true;
      }
    }
    return start_rest();
  }
  // The interceptor at index_ (a synchronous one called, a coroutine's Task started).
  HOOKSET_NOINLINE bool run_interceptor() {
    state_ = state::called;
    if (self_->call_interceptor(
            index_, args_.get(),
            [&]<class Produced>(Produced&& produced) {
      if constexpr (!std::is_void_v<output>) produced_.emplace(std::forward<Produced>(produced));
            },
            task_, started_)) {
      state_ = state::produced;
      return true;
    }
    state_ = state::interceptor;
    return get_awaiter(std::move(task_.get())).await_ready();
  }
  HOOKSET_NOINLINE bool start_rest() {
    dispatch& self = *self_;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      rest_.emplace(*self.owner_, self.slot(), self.set_observer_,
                    static_cast<bound_t<A>&&>(std::get<I>(args_.get()))...);
    }
    (indices{});
    args_.destroy();
    state_ = state::rest;
    const dispatch_observers* observers = (self.flags_ & observed) ? &self.observers_ : nullptr;
    return rest_.get().start_as_rest(self, link_.emplace(intercept_link{observers, &self.next_}));
  }

  dispatch* self_;
  std::size_t index_;
  state state_;
  hook_clock::ticks started_;             // interceptor: its begin, for its end event
  late<Task<output>> task_;               // interceptor
  late<std::tuple<bound_t<A>...>> args_;  // armed, called, produced, interceptor
  [[no_unique_address]] std::conditional_t<std::is_void_v<output>, no_value, late<output>>
      produced_;               // produced
  late<dispatch> rest_;        // rest
  late<intercept_link> link_;  // rest: what rest_ shares with the intercepted dispatch
};

}  // namespace hookset::detail
