#pragma once
// What `HookSet::call<S>(args...)` returns: a dispatch not started - its inputs and nothing else
// (the bound arguments, the slot's hook lists, its descriptor, the set's observer, the options
// given to it). Awaiting it or handing it to an adapter makes the engine's awaitable
// (dispatch.hpp) from it, which builds the rest of the state.
//
// Why a separate object: everything the engine's awaitable holds is written before anything
// runs, because the object's address escapes on its other paths and no compiler sinks those
// writes into the paths that read them. This object's address never escapes (every member is
// inline and reads it by value), so where it is made and run in one function - the call site of
// `sync_wait(set.call<S>(...))` - the compilers keep it in registers: a dispatch that is its
// synchronous default alone (no hook, nobody watching) touches no memory of its own, and one
// with hooks writes the engine's state once, as before.

#include <memory>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <hookset/call_options.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/dispatch/holders.hpp>
#include <hookset/detail/dispatch/options.hpp>
#include <hookset/detail/dispatch/plain_loops.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>

namespace hookset::detail {

// Whether set.call<S>(...) returns a dispatch_call for kind K: when every bound argument is
// trivially copyable (a reference parameter, a string_view, an int), so that moving it into the
// engine's state when the dispatch starts is nothing anyone can observe. A dispatch of a value
// parameter with a copy or move of its own (a std::string) is the engine's awaitable from the
// start: its argument is copied or moved once, as section 4 of docs/semantics.md says.
template <class Kind, class Params = typename Kind::parameters>
inline constexpr bool starts_light = false;
template <class Kind, class... A>
inline constexpr bool starts_light<Kind, mp::mp_list<A...>> =
    (std::is_trivially_copyable_v<bound_t<A>> && ...);

template <class Kind, class... A>
class [[nodiscard]] dispatch_call<Kind, mp::mp_list<A...>>
    : bound_arguments<A...>, public call_option_members<dispatch_call<Kind, mp::mp_list<A...>>> {
 public:
  // The engine's awaitable that runs it.
  using engine = dispatch<Kind, mp::mp_list<A...>>;
  using hook_result_type = typename engine::hook_result_type;
  using aggregate_type = typename engine::aggregate_type;
  using result_type = typename engine::result_type;
  using descriptor = typename engine::descriptor;

  template <class... Args>
  HOOKSET_ALWAYS_INLINE dispatch_call(const hook_list_owner& owner, const descriptor& slot,
                                      Observer* set_observer, Args&&... args)
      : bound_arguments<A...>{{std::forward<Args>(args)...}},
        owner_(&owner),
        slot_(&slot),
        set_observer_(set_observer) {}

  // Movable until it starts; its options move with it.
  HOOKSET_ALWAYS_INLINE dispatch_call(dispatch_call&& other) noexcept(
      std::is_nothrow_move_constructible_v<std::tuple<bound_t<A>...>>)
      : bound_arguments<A...>{std::move(other.args_)},
        owner_(other.owner_),
        slot_(other.slot_),
        set_observer_(other.set_observer_),
        context_(std::exchange(other.context_, nullptr)) {}
  dispatch_call& operator=(dispatch_call&&) = delete;
  HOOKSET_ALWAYS_INLINE ~dispatch_call() {
    if (context_) [[unlikely]]
      dispatch_context::destroy(context_);  // never started
  }

  std::string_view slot_name() const noexcept { return slot_->name; }

  // ---- run ----------------------------------------------------------------------------------

  // The engine's awaitable, made in place (the inputs move into it).
  HOOKSET_ALWAYS_INLINE engine start() && { return engine(std::move(*this)); }
  HOOKSET_ALWAYS_INLINE engine operator co_await() && { return std::move(*this).start(); }
  // (Awaited as an lvalue, it is used up all the same: a dispatch runs once.)
  HOOKSET_ALWAYS_INLINE engine operator co_await() & { return std::move(*this).start(); }

  // As an Asio asynchronous operation, with any completion token (<hookset/asio.hpp>, which
  // makes the engine's awaitable in the operation's own state: started_dispatch).
  template <class CompletionToken>
  auto operator()(CompletionToken&& token) && -> decltype(hookset_async_call(
      std::declval<dispatch_call&&>(), std::forward<CompletionToken>(token))) {
    return hookset_async_call(std::move(*this), std::forward<CompletionToken>(token));
  }

  // Runs it to completion on the calling thread: hookset::sync_wait's path. A dispatch that is
  // its synchronous default alone - no hook, no option, nobody watching - is the default's call,
  // before any state is made; else the engine's awaitable runs it, told the default and the
  // snapshot read here. (The default is read first, where the compilers know which it is: after
  // the atomic load of the process-wide observer, GCC no longer does, and calls it through the
  // pointer rather than inline. The snapshot is tested alone: tested with the set's observer, GCC
  // merges the two tests, and the engine's start tests both again. With hooks the engine's start
  // is inline, where the call site knows the default; without, out of line. The kinds whose
  // result with no hook is not their default's output alone start the engine inline always.)
  HOOKSET_ALWAYS_INLINE result_type run_to_completion() && {
    const typename Kind::default_sync_fn default_sync = slot_->default_sync;
    const hook_list* list = owner_->current();
    if constexpr (plain_loops<engine>::default_alone) {
      if (!list) {
        if (default_sync && !context_ && !observer_installed() && !set_observer_)
          return this->call_with_args(default_sync, nullptr);
        engine started(std::move(*this));
        return run_without_hooks(started);
      }
    }
    return std::move(*this).run_started(default_sync, list);
  }

  // ---- options (<hookset/call_options.hpp>; with, with_stop_token, ...: call_option_members) ---

  // The options given so far (made empty on first use), kept in a context as the engine keeps
  // them.
  CallOptions& options() & {
    if (!context_) context_ = make_dispatch_context(CallOptions{});
    return context_->options();
  }
  // The engine's awaitable of this dispatch, keeping `owner` (what the hook list owner belongs
  // to: a shared set's version) alive for as long as it runs.
  engine keeping(std::shared_ptr<const void> owner) && {
    engine started(std::move(*this));
    std::move(started).keeping(std::move(owner));
    return started;
  }
  // This dispatch, its result attributed to the registration that produced it: an awaitable of
  // Attributed<output> (the engine's, dispatch_options::with_attribution).
  auto with_attribution() && { return std::move(*this).start().with_attribution(); }

 private:
  friend engine;

  // No hook, and options, an observer or an asynchronous default: the engine's start (watched,
  // or the default awaited) out of line - one function per slot kind, not a copy at every call
  // site; it needs no known default, only the path above calls one inline.
  HOOKSET_NOINLINE static result_type run_without_hooks(engine& started) {
    if (started.ready_with(nullptr, nullptr)) return started.await_resume();
    return started.wait_suspended();
  }
  HOOKSET_ALWAYS_INLINE result_type run_started(typename Kind::default_sync_fn default_sync,
                                                const hook_list* list) && {
    engine started(std::move(*this));
    if (started.ready_with(default_sync, list)) return started.await_resume();
    return started.wait_suspended();
  }

  const hook_list_owner* owner_;
  const descriptor* slot_;
  Observer* set_observer_;
  dispatch_context* context_ = nullptr;  // the options, once one was given (owned)
};

}  // namespace hookset::detail
