#pragma once
// The identity of a logical call chain, for telling a Stateful hook's re-entry from contention.
//
// Every coroutine of the library (hookset::Task, the dispatch driver, sync_wait's driver)
// carries the context of the chain it runs in, in its promise (`context_carrier`):
//  - a Task inherits the context of the coroutine that awaits it, when that is one of ours;
//    awaited from any other coroutine type it starts a new, empty chain;
//  - sync_wait's driver takes the thread's *scoped* context: the library sets it only around
//    synchronous calls it makes on behalf of a chain (a Stateful hook's synchronous body, the
//    synchronous hooks a dispatch runs), and sync_wait blocks inside that call, so the pointer
//    it takes never outlives what it points to.
// A Stateful hook, once it holds its lock, links itself onto the chain; whatever it awaits -
// hooks, dispatches, their hooks - runs in that extended chain, so reaching the same Stateful
// again is recognised as re-entry, while an independent dispatch is not on the chain and waits.

#include <concepts>
#include <coroutine>

namespace hookset::detail {

struct execution_context {
  const void* holder = nullptr;                // the Stateful state held by this link
  const execution_context* parent = nullptr;

  bool holds(const void* state) const noexcept {
    for (const execution_context* link = this; link; link = link->parent)
      if (link->holder == state) return true;
    return false;
  }
};

// Base of every library promise: the chain the coroutine runs in (null: a chain of its own).
struct context_carrier {
  const execution_context* context_ = nullptr;
};

// The context a coroutine started by `awaiting` inherits.
template <class Promise>
const execution_context* context_of(std::coroutine_handle<Promise> awaiting) noexcept {
  if constexpr (std::derived_from<Promise, context_carrier>)
    return awaiting.promise().context_;
  else
    return nullptr;
}

inline thread_local const execution_context* scoped_execution_context = nullptr;

// Makes `context` the thread's scoped context for the lifetime of this object. Never keep one
// across a suspension point: the coroutine may resume on another thread.
class execution_context_scope {
 public:
  explicit execution_context_scope(const execution_context* context) noexcept
      : previous_(scoped_execution_context) {
    scoped_execution_context = context;
  }
  ~execution_context_scope() { scoped_execution_context = previous_; }
  execution_context_scope(const execution_context_scope&) = delete;
  execution_context_scope& operator=(const execution_context_scope&) = delete;

 private:
  const execution_context* previous_;
};

// `co_await exchange_execution_context{c}` inside a library coroutine: makes `c` the context of
// that coroutine (and so of everything it awaits from then on) and returns the previous one.
// Never suspends. With `keep = true` it only reads the current context.
struct exchange_execution_context {
  const execution_context* replacement = nullptr;
  bool keep = false;
  const execution_context* previous = nullptr;

  bool await_ready() const noexcept { return false; }
  template <std::derived_from<context_carrier> Promise>
  bool await_suspend(std::coroutine_handle<Promise> self) noexcept {
    previous = self.promise().context_;
    if (!keep) self.promise().context_ = replacement;
    return false;
  }
  const execution_context* await_resume() const noexcept { return previous; }
};
inline exchange_execution_context current_execution_context() noexcept { return {nullptr, true}; }

// Awaitables that run user code synchronously inside await_ready (a dispatch runs its
// synchronous hooks there) declare `using runs_code_in_await_ready = void;`: a Task awaiting
// one makes its context the scoped one around that call.
template <class Awaitable>
concept runs_code_in_await_ready = requires { typename Awaitable::runs_code_in_await_ready; };

}  // namespace hookset::detail
