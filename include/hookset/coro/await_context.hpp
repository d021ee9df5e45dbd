#pragma once
// The context a library coroutine runs in: its *await stack* (who awaits whom, for telling a
// Stateful hook's re-entry from contention) and what the dispatch it serves offers its hooks
// (a stop token, an executor).
//
// Every coroutine of the library (hookset::Task, the dispatch driver, sync_wait's driver)
// carries a pointer to its context in its promise (`await_context_carrier`):
//  - a Task inherits the context of the coroutine that awaits it, when that is one of ours;
//    awaited from any other coroutine type it starts with an empty context;
//  - sync_wait's driver takes the thread's *scoped* context: the library sets it only around
//    synchronous calls it makes on behalf of a coroutine (a Stateful hook's synchronous body, the
//    synchronous hooks a dispatch runs), and sync_wait blocks inside that call, so the pointer
//    it takes never outlives what it points to.
// A context is a linked list of links, innermost first. A Stateful hook, once it holds its
// lock, pushes a link naming its state; a dispatch with a stop token or an executor pushes a
// link carrying them for its hooks. Whatever runs under a link - hooks, dispatches, their
// hooks - sees it, so reaching the same Stateful again is recognised as re-entry, while an
// independent dispatch is not on the stack and waits its turn; and a hook finds the stop token
// of the nearest dispatch that has one.

#include <concepts>
#include <coroutine>

#include <hookset/coro/config.hpp>
#include <hookset/coro/stop_token.hpp>

namespace hookset {
class Executor;
}  // namespace hookset

namespace hookset::detail {

struct await_context {
  const await_context* parent = nullptr;
  const void* held_state = nullptr;           // the Stateful state held by this link, if any
  const hookset::stop_token* stop = nullptr;  // the stop token the hooks under this link obey
  const Executor* executor = nullptr;         // the executor the dispatch runs on

  bool holds(const void* state) const noexcept {
    for (const await_context* link = this; link; link = link->parent)
      if (link->held_state == state) return true;
    return false;
  }
  const hookset::stop_token* nearest_stop() const noexcept {
    for (const await_context* link = this; link; link = link->parent)
      if (link->stop) return link->stop;
    return nullptr;
  }
  const Executor* nearest_executor() const noexcept {
    for (const await_context* link = this; link; link = link->parent)
      if (link->executor) return link->executor;
    return nullptr;
  }
};

// Base of every library promise: the context the coroutine runs in (null: an empty one).
struct await_context_carrier {
  const await_context* context_ = nullptr;
};

// The context a coroutine started by `awaiting` inherits.
template <class Promise>
const await_context* context_of(std::coroutine_handle<Promise> awaiting) noexcept {
  if constexpr (std::derived_from<Promise, await_context_carrier>)
    return awaiting.promise().context_;
  else return nullptr;
}

// The thread's scoped context (config.hpp: read and written only through these two).
inline thread_local constinit const await_context* scoped_await_context = nullptr;
HOOKSET_THREAD_LOCAL_ACCESS const await_context* scoped_context() noexcept {
  return scoped_await_context;
}
HOOKSET_THREAD_LOCAL_ACCESS const await_context* exchange_scoped_context(
    const await_context* context) noexcept {
  const await_context* previous = scoped_await_context;
  scoped_await_context = context;
  return previous;
}

// Makes `context` the thread's scoped context for the lifetime of this object. Never keep one
// across a suspension point: the coroutine may resume on another thread.
class await_context_scope {
 public:
  explicit await_context_scope(const await_context* context) noexcept
      : previous_(exchange_scoped_context(context)) {}
  ~await_context_scope() { exchange_scoped_context(previous_); }
  await_context_scope(const await_context_scope&) = delete;
  await_context_scope& operator=(const await_context_scope&) = delete;

 private:
  const await_context* previous_;
};

// The same scope reaching the thread_local inline: only in a function marked
// HOOKSET_THREAD_LOCAL_ACCESS (kept out of line under Clang, and no coroutine), where the
// address is computed on the thread that makes the call (config.hpp) - it saves Clang two calls.
class await_context_scope_here {
 public:
  HOOKSET_ALWAYS_INLINE explicit await_context_scope_here(const await_context* context) noexcept
      : previous_(scoped_await_context) {
    scoped_await_context = context;
  }
  HOOKSET_ALWAYS_INLINE ~await_context_scope_here() { scoped_await_context = previous_; }
  await_context_scope_here(const await_context_scope_here&) = delete;
  await_context_scope_here& operator=(const await_context_scope_here&) = delete;

 private:
  const await_context* previous_;
};

// `co_await exchange_await_context{c}` inside a library coroutine: makes `c` the context of
// that coroutine (and so of everything it awaits from then on) and returns the previous one.
// Never suspends. With `keep = true` it only reads the current context.
struct exchange_await_context {
  const await_context* replacement = nullptr;
  bool keep = false;
  const await_context* previous = nullptr;

  bool await_ready() const noexcept { return false; }
  template <std::derived_from<await_context_carrier> Promise>
  bool await_suspend(std::coroutine_handle<Promise> self) noexcept {
    previous = self.promise().context_;
    if (!keep) self.promise().context_ = replacement;
    return false;
  }
  const await_context* await_resume() const noexcept { return previous; }
};
inline exchange_await_context current_await_context() noexcept { return {nullptr, true}; }

// `co_await own_await_context{}` inside a library coroutine: that coroutine's context itself (in
// its promise), to read and replace from then on without awaiting again. Replaced, it is the
// context of what the coroutine awaits next.
struct own_await_context {
  const await_context** context = nullptr;

  bool await_ready() const noexcept { return false; }
  template <std::derived_from<await_context_carrier> Promise>
  bool await_suspend(std::coroutine_handle<Promise> self) noexcept {
    context = &self.promise().context_;
    return false;
  }
  const await_context*& await_resume() const noexcept { return *context; }
};

// Awaitables that run user code synchronously inside await_ready (a dispatch runs its
// synchronous hooks there) declare `using runs_code_in_await_ready = void;`: a Task awaiting
// one makes its context the scoped one around that call.
template <class Awaitable>
concept runs_code_in_await_ready = requires {
  typename Awaitable::runs_code_in_await_ready;
};

}  // namespace hookset::detail
