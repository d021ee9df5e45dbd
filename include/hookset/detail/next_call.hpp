#pragma once
// What an interceptor's next() returns: the rest of an intercepted dispatch from one interceptor
// on, as an awaitable. A member of the dispatch (detail/engine.hpp declares it, and includes this
// file at its end); the interceptor layer of a dispatch nobody observes runs through it - the
// next interceptor as a plain call, or the hooks over the dispatch's snapshot - in await_ready.

#include <coroutine>
#include <cstddef>
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
#include <hookset/detail/engine.hpp>

namespace hookset::detail {

template <class Kind, class... A>
class [[nodiscard]] dispatch<Kind, mp::mp_list<A...>>::next_call {
  // again: a second next() of one interceptor; task: run_rest's; armed: not run yet (args_);
  // called: a synchronous interceptor runs, or threw (args_); produced: its output or the
  // hooks' is in produced_ (and args_); interceptor: a coroutine interceptor's Task (and args_);
  // rest: the dispatch of the hooks (which took the arguments).
  enum class state : unsigned char { again, task, armed, called, produced, interceptor, rest };

 public:
  // The next interceptor and the hooks may run in await_ready: in the awaiting Task's context.
  using runs_code_in_await_ready = void;

  next_call(next_handle handle, bound_t<A>... args)
      : self_(static_cast<dispatch*>(handle.dispatch)), index_(handle.index) {
    if (self_->intercept_) {
      task_.emplace(run_rest(handle, static_cast<bound_t<A>&&>(args)...));
      state_ = state::task;
    } else if (index_ < self_->next_) {
      state_ = state::again;
    } else {
      self_->next_ = index_ + 1;
      args_.emplace(static_cast<bound_t<A>&&>(args)...);
      state_ = state::armed;
    }
  }
  next_call(next_call&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : self_(other.self_), index_(other.index_), state_(other.state_) {
    if (state_ == state::task) task_.emplace(std::move(other.task_.get()));
    else if (state_ == state::armed) args_.emplace(std::move(other.args_.get()));
  }
  next_call& operator=(next_call&&) = delete;
  ~next_call() {
    switch (state_) {
      case state::task:
        task_.destroy();
        break;
      case state::interceptor:
        task_.destroy();  // (its frame refers to args_)
        args_.destroy();
        break;
      case state::produced:
        if constexpr (!std::is_void_v<output>) produced_.destroy();
        args_.destroy();
        break;
      case state::armed:
      case state::called:
        args_.destroy();
        break;
      case state::rest:
        rest_.destroy();
        break;
      case state::again:
        break;
    }
  }

  bool await_ready() {
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
  HOOKSET_NOINLINE output resume_otherwise() {
    if (state_ == state::rest) return rest_.get().await_resume();
    if (state_ == state::again)
      throw std::logic_error("hookset: slot " + std::string(self_->slot_->name) +
                             ": an interceptor called next() more than once");
    return get_awaiter(std::move(task_.get())).await_resume();
  }

  // The next interceptor, or past the last the dispatch of the hooks: true when it completed.
  bool run() {
    dispatch& self = *self_;
    const std::vector<entry>& interceptors = self.list_->interceptors;
    const next_handle next{self_, index_ + 1};
    if (const entry* const at = interceptors.data() + index_;
        at < interceptors.data() + interceptors.size()) {
      const entry& interceptor = *at;
      if (interceptor.sync) {
        state_ = state::called;
        const auto sync = reinterpret_cast<interceptor_sync_fn>(interceptor.sync);
        if constexpr (std::is_void_v<output>)
          call_interceptor(sync, interceptor, next, args_.get());
        else produced_.emplace(call_interceptor(sync, interceptor, next, args_.get()));
        state_ = state::produced;
        return true;
      }
      task_.emplace(call_interceptor(reinterpret_cast<interceptor_async_fn>(interceptor.async),
                                     interceptor, next, args_.get()));
      state_ = state::interceptor;
      return get_awaiter(std::move(task_.get())).await_ready();
    }
    if constexpr (plain_fold_loop && companions_constructible) {
      // Every hook plain (interceptors aside): the hand-written loop, as run_plain_fold.
      const list_type& list = *self.list_;
      if (list.hooks_plain && plain_fold_runs(list, self.default_sync_)) {
        state_ = state::called;
        produced_.emplace(plain_fold(list, self.default_sync_, args_.get()));
        state_ = state::produced;
        return true;
      }
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      rest_.emplace(*self.owner_, *self.slot_, nullptr,
                    static_cast<bound_t<A>&&>(std::get<I>(args_.get()))...);
    }
    (indices{});
    args_.destroy();
    state_ = state::rest;
    return rest_.get().start_as_rest(self.list_, &link_);
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
  intercept_link link_;
};

}  // namespace hookset::detail
