#pragma once
// The driver of a dispatch that had to wait (dispatch.hpp: how the steps run).
#include <cstdint>
#include <exception>
#include <utility>

#include <hookset/coro/await_context.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>

namespace hookset::detail {

// The rest of a dispatch that had to wait: await what the steps left pending, store it,
// resume the step that takes it, repeat.
template <class Kind, class... A>
inline Task<void> dispatch<Kind, mp::mp_list<A...>>::drive(dispatch* self) {
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
                  self->produced_by(self->current_);
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
          // The first interceptor, a coroutine: its output is the dispatch's (its end event is
          // told with the dispatch's end: complete()).
          Task<output> pending = self->pending_intercepted_.take();
          if constexpr (std::is_void_v<output>) co_await std::move(pending);
          else self->store_output(co_await std::move(pending));
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

}  // namespace hookset::detail
