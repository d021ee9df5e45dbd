#pragma once
// The identity of a logical call chain, for telling a Stateful hook's re-entry from contention.
//
// Every hookset::Task carries the context of the chain it runs in: a Task awaited by another
// Task inherits its context, a Task started from plain code inherits the thread's *scoped*
// context (set only around synchronous calls made on behalf of a chain, so it never dangles).
// A Stateful hook, once it holds its lock, pushes itself on the chain; whatever it awaits -
// hooks, dispatches, their hooks - runs in that extended chain, so reaching the same Stateful
// again is recognised as re-entry, while an independent dispatch is not on the chain and waits.

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

inline thread_local const execution_context* scoped_execution_context = nullptr;

// Makes `context` the thread's scoped context for the lifetime of this object.
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

}  // namespace hookset::detail
