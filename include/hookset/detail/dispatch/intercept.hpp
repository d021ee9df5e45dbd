#pragma once
// The interceptor layer of a dispatch (interceptor.hpp). A dispatch whose slot has interceptors
// calls the first one; each one's next() is a next_call that calls the one after it, and the
// last one's runs the rest: a dispatch of the same slot over the same snapshot, past the
// interceptors (intercepted_by), with this dispatch's stop token, deadline and executor,
// reporting its hooks under this dispatch's id. One mechanism, watched or not: a synchronous
// interceptor is a plain call, a coroutine's Task is awaited by whatever awaits its next_call
// (or, the first one's, by await_suspend, or by the driver when there is something to report
// or stop). Observers that want hook events see each interceptor's run.
//
// Why a class of its own: the dispatch's class is the awaitable and its state, and each feature a
// layer over it. Of this one the dispatch keeps what its own code does - it calls the entry
// points through the snapshot's pointer (start_now, watched_policy::start) and awaits the first
// interceptor's Task itself (await_suspend) - and the layer is the rest: a friend of the
// dispatch, whose functions are static and take it as `self` (the same calls as members, the
// same code).

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

template <class Kind, class... A>
struct interceptor_layer<dispatch<Kind, mp::mp_list<A...>>> {
  // (Its declarations name the dispatch's types only through Kind and A: the dispatch names
  // next_call while it is itself being defined.)
  using Dispatch = dispatch<Kind, mp::mp_list<A...>>;
  using output = typename Kind::output;
  using arguments = std::tuple<bound_t<A>...>;
  using indices = std::index_sequence_for<A...>;
  using sync_fn = output (*)(void*, next_handle, arg_ref_t<A>...);
  using async_fn = Task<output> (*)(void*, next_handle, arg_ref_t<A>...);

  // The layer's entry points, reached through the pointer an interceptor's registration leaves
  // in the snapshot (hook_list::interceptor_code, interceptor_code_for): a file that registers
  // no interceptor for a slot kind does not contain them.
  struct code {
    bool (*start)(Dispatch& self);             // nobody watching, no options
    bool (*start_in_context)(Dispatch& self);  // watched (watched_policy::start)
  };
  static const code entry_points;
  // The snapshot's entry points (it has interceptors).
  static const code& code_of(const hook_list& list) noexcept {
    return *static_cast<const code*>(list.interceptor_code);
  }

  // What next() returns: the rest of an intercepted dispatch from one interceptor on, run when
  // awaited (co_await, hookset::sync_wait), or made a Task<output> by conversion. Counted when
  // made: the second next() of one interceptor fails when awaited. Movable until awaited. It
  // runs the next interceptor in await_ready - a synchronous one as a plain call - or the
  // dispatch of the hooks, which lives in it.
  class next_call;  // (defined after the layer: it holds a dispatch)

  // An intercepting dispatch runs no hook itself: next_ is the hooks its next() ran (the rest
  // writes it through its intercept_link), produced_ the interceptors whose next() was called.
  static std::size_t& interceptors_started(Dispatch& self) noexcept { return self.produced_; }

  // The interceptor layer starts: the first interceptor (next_call and interceptors_started:
  // above). Synchronous, it completes the dispatch here; a coroutine's Task is left pending,
  // awaited by await_suspend when nothing is to be reported or stopped, else by the driver.
  // (`watched`: observers may want its events, or be told the hooks run. false: the entry
  // point `start`.)
  template <bool watched>
  HOOKSET_NOINLINE static bool start_intercepted(Dispatch& self) {
    if constexpr (watched) self.next_ = 0;
    interceptors_started(self) = 1;  // interceptor 0 runs now
    lean_sync_dispatch_scope scope;  // hooks may change the set (out of line: hook_list.hpp)
    const auto store = [&]<class Produced>(Produced&& produced) {
      store_output(self, std::forward<Produced>(produced));
    };
    if (watched ? call_interceptor(self, 0, self.args_, store, self.pending_intercepted_,
                                   self.hook_started_)
                : invoke_interceptor(self, 0, self.args_, store, self.pending_intercepted_))
      return true;
    self.hold_list();  // suspending: as watched_policy::start (taken while the scope still protects
                       // it)
    self.pending_ = Dispatch::pending_kind::intercepted;
    // (For the driver, which stored the output: nothing is left to do. await_suspend may await
    // the Task itself.)
    self.resume_ = &Dispatch::rules::complete;
    self.driver_code_ =
        Dispatch::driver_code_from(self.list_->interceptors.front().record->suspended_driver);
    self.flags_ |= Dispatch::suspended;
    return false;
  }
  static bool start_in_context(Dispatch& self);

  // Calls interceptor `index` with `args` (its next() runs index + 1): a synchronous one to its
  // end, its output stored, and returns true; a coroutine's Task, not started, into `pending`,
  // and returns false (interceptor_done reports its end). Observers that want hook events see
  // its begin (`started`) and a synchronous one's end (call_interceptor_reported).
  template <class Store>
  HOOKSET_ALWAYS_INLINE static bool call_interceptor(Dispatch& self, std::size_t index,
                                                     arguments& args, Store&& store,
                                                     late<Task<output>>& pending,
                                                     hook_clock::ticks& started) {
    if (self.hook_events()) [[unlikely]]
      return call_interceptor_reported(self, index, args, store, pending, started);
    return invoke_interceptor(self, index, args, store, pending);
  }
  template <class Store>
  HOOKSET_NOINLINE static bool call_interceptor_reported(Dispatch& self, std::size_t index,
                                                         arguments& args, Store& store,
                                                         late<Task<output>>& pending,
                                                         hook_clock::ticks& started) {
    const hook_entry& interceptor = self.list_->interceptors[index];
    started = self.observers_.interceptor_begin(self.slot_->name, interceptor, index);
    bool completed;
    try {
      completed = invoke_interceptor(self, index, args, store, pending);
    } catch (...) {
      self.observers_.interceptor_end(self.slot_->name, interceptor, index, started,
                                      std::current_exception());
      throw;
    }
    if (completed)
      self.observers_.interceptor_end(self.slot_->name, interceptor, index, started, nullptr);
    return completed;
  }
  // The call itself: the one place an interceptor is called.
  template <class Store>
  HOOKSET_ALWAYS_INLINE static bool invoke_interceptor(Dispatch& self, std::size_t index,
                                                       arguments& args, Store& store,
                                                       late<Task<output>>& pending) {
    const hook_entry& interceptor = self.list_->interceptors[index];
    const next_handle next{&self, index + 1};
    const auto call = [&]<class Fn, std::size_t... I>(Fn fn,
                                                      std::index_sequence<I...>) -> decltype(auto) {
      return fn(interceptor.object, next, static_cast<arg_ref_t<A>>(std::get<I>(args))...);
    };
    if (interceptor.sync) {
      const auto sync = reinterpret_cast<sync_fn>(interceptor.sync);
      if constexpr (std::is_void_v<output>) call(sync, indices{});
      else store(call(sync, indices{}));
      return true;
    }
    pending.emplace(call(reinterpret_cast<async_fn>(interceptor.async), indices{}));
    return false;
  }
  // The dispatch of the hooks past `outer`'s interceptors (next_call, past the last).
  static bool start_as_rest(Dispatch& self, const Dispatch& outer, intercept_link& link);

  // The first interceptor's output is the dispatch's.
  template <class Produced>
  static void store_output(Dispatch& self, Produced&& produced) {
    if constexpr (Kind::has_producer) self.output_.emplace(std::forward<Produced>(produced));
    else if constexpr (!std::is_void_v<output>) self.value_ = std::forward<Produced>(produced);
  }
  // Whether `self` runs interceptors: its snapshot has some and it is not the rest of another.
  // Told by its snapshot rather than a flag of its own (the flags hold the dispatch's lifetime and
  // whether anything watches it, nothing a snapshot can say): only while the snapshot is valid -
  // held (a suspended dispatch) or inside the synchronous run.
  static bool intercepting(const Dispatch& self) noexcept {
    return self.list_ && self.list_->any_interceptor() && !self.intercepted_by();
  }
  // Nothing to report and nothing to stop: the first interceptor's Task is awaited by the
  // dispatch's await_suspend itself (no driver), its result taken by its await_resume.
  static bool can_be_awaited_directly(const Dispatch& self) noexcept {
    return self.pending_ == Dispatch::pending_kind::intercepted &&
           !(self.flags_ & Dispatch::watched);
  }
  // (After await_suspend, which records it.)
  static bool awaited_directly(const Dispatch& self) noexcept {
    return self.pending_ == Dispatch::pending_kind::awaited;
  }
  // await_resume after await_suspend handed over to the first interceptor.
  HOOKSET_NOINLINE static output resume_interceptor(Dispatch& self) {
    return get_awaiter(std::move(self.pending_intercepted_.get())).await_resume();
  }
};

// (The entry points themselves: no thunk between the snapshot's pointer and the layer.)
template <class Kind, class... A>
const typename interceptor_layer<dispatch<Kind, mp::mp_list<A...>>>::code
    interceptor_layer<dispatch<Kind, mp::mp_list<A...>>>::entry_points{
        &interceptor_layer::template start_intercepted<false>,
        &interceptor_layer::start_in_context};

// start_intercepted, for a dispatch with a context or observers: what the first interceptor
// runs synchronously sees the dispatch's stop token and executor.
template <class Kind, class... A>
bool interceptor_layer<dispatch<Kind, mp::mp_list<A...>>>::start_in_context(Dispatch& self) {
  await_context_scope scope(self.has_context() ? self.context_->link() : scoped_context());
  return start_intercepted<true>(self);
}

// The dispatch of the hooks past `outer`'s interceptors, over its snapshot (a keyed slot's:
// the hooks of the key the last interceptor passed to next()). Past an unwatched dispatch's
// interceptors, the lean loops when every hook is plain; else the general start as the rest of
// an intercepted dispatch: a context linked to `outer` (its options inherited: a timeout
// counts from the dispatch's start), which runs no interceptor and reports its hooks as
// `outer`'s.
template <class Kind, class... A>
bool interceptor_layer<dispatch<Kind, mp::mp_list<A...>>>::start_as_rest(Dispatch& self,
                                                                         const Dispatch& outer,
                                                                         intercept_link& link) {
  self.list_ = outer.list_;
  if constexpr (Kind::is_keyed)
    if (self.list_->list_for_key) self.take_list_for_key();
  const bool outer_watched = outer.flags_ & Dispatch::watched;
  if constexpr (Dispatch::companions_constructible) {
    if (!outer_watched) {
      if (!self.list_) return Dispatch::rules::start_without_hooks_outlined(self);
      if (self.list_->hooks_plain) return plain_loops<Dispatch>::start(self);
    }
  }
  // (Through the snapshot's pointer, which its interceptors set: a file whose registrations
  // need no context does not contain the context's code.)
  self.set_context(outer.list_->make_context(
      outer.has_context() ? outer.context_->inherited_options() : CallOptions{}));
  self.context_->continue_intercepted(&link);
  // (A tripwire watching the dispatch watches its hooks' outputs, past the interceptors.)
  if (outer.has_context()) self.context_->watch(outer.context_->watch());
  return watched_policy<Dispatch>::start(self);
}

template <class Kind, class... A>
class [[nodiscard]] interceptor_layer<dispatch<Kind, mp::mp_list<A...>>>::next_call {
  // again: a second next() of one interceptor; armed: not run yet (args_); called: a
  // synchronous interceptor runs, or threw (args_); produced: its output or the hooks' is in
  // produced_ (and args_); from here on out of line: interceptor: a coroutine interceptor's
  // Task (and args_); rest: the dispatch of the hooks (which took the arguments).
  enum class state : unsigned char { again, armed, called, produced, interceptor, rest };

 public:
  // The next interceptor and the hooks may run in await_ready: in the awaiting Task's context.
  using runs_code_in_await_ready = void;

  next_call(next_handle handle, bound_t<A>... args)
      : self_(static_cast<Dispatch*>(handle.dispatch)), index_(handle.index) {
    std::size_t& started = interceptors_started(*self_);
    if (index_ >= started) [[likely]] {
      started = index_ + 1;
      args_.emplace(static_cast<bound_t<A>&&>(args)...);
      state_ = state::armed;
    } else {
      state_ = state::again;
    }
  }
  next_call(next_call&& other) noexcept(std::is_nothrow_move_constructible_v<arguments>)
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

  HOOKSET_ALWAYS_INLINE bool await_ready() { return await_ready_in<false>(nullptr); }
  // A Task awaiting it passes its context (coro/task.hpp), which run() makes the scoped one.
  template <bool in_context = true>
  HOOKSET_ALWAYS_INLINE bool await_ready_in(const await_context* context) {
    if (state_ == state::armed) return run<in_context>(context);
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
  // (`in_context`: in `context`, made the scoped one here - out of line under Clang: config.hpp.)
  template <bool in_context>
  HOOKSET_THREAD_LOCAL_ACCESS bool run([[maybe_unused]] const await_context* context) {
    if constexpr (in_context) {
      await_context_scope_here scope(context);
      return run_here();
    }
    return run_here();
  }
  HOOKSET_ALWAYS_INLINE bool run_here() {
    const Dispatch& self = *self_;
    const hook_list& list = *self.list_;
    if (list.interceptors.data() + index_ != std::to_address(list.interceptors.end()))
      return run_interceptor();
    if constexpr (plain_loops<Dispatch>::fold_loop && Dispatch::companions_constructible &&
                  !Kind::is_keyed) {
      // Every hook plain (interceptors aside), nothing to report or stop: the hand-written
      // loop, as plain_loops::run_fold.
      if (!(self.flags_ & Dispatch::watched) && list.hooks_plain &&
          plain_loops<Dispatch>::fold_runs(list, self.slot().default_sync)) [[likely]] {
        produced_.emplace(plain_loops<Dispatch>::fold(list, self.slot().default_sync, args_.get()));
        state_ = state::produced;
        return true;
      }
    }
    return start_rest();
  }
  // The interceptor at index_ (a synchronous one called, a coroutine's Task started).
  HOOKSET_NOINLINE bool run_interceptor() {
    state_ = state::called;
    if (call_interceptor(
            *self_, index_, args_.get(),
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
    Dispatch& self = *self_;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      rest_.emplace(*self.owner_, self.slot(), self.set_observer_,
                    static_cast<bound_t<A>&&>(std::get<I>(args_.get()))...);
    }
    (indices{});
    args_.destroy();
    state_ = state::rest;
    const dispatch_observers* observers = self.observed() ? &self.observers_ : nullptr;
    return start_as_rest(rest_.get(), self, link_.emplace(intercept_link{observers, &self.next_}));
  }

  Dispatch* self_;
  std::size_t index_;
  state state_;
  hook_clock::ticks started_;  // interceptor: its begin, for its end event
  late<Task<output>> task_;    // interceptor
  late<arguments> args_;       // armed, called, produced, interceptor
  [[no_unique_address]] std::conditional_t<std::is_void_v<output>, no_value, late<output>>
      produced_;               // produced
  late<Dispatch> rest_;        // rest
  late<intercept_link> link_;  // rest: what rest_ shares with the intercepted dispatch
};

// The interceptor layer an interceptor's registration for S names (the code of S's kind).
template <class S>
constexpr const void* interceptor_code_for() noexcept {
  return &interceptor_layer<dispatch<kind_of<S>>>::entry_points;
}

}  // namespace hookset::detail
