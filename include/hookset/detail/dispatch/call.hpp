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

  // Runs it to completion on the calling thread: hookset::sync_wait's path. What runs right
  // here, before any state is made: a dispatch that is its synchronous default alone (no hook,
  // no option, nobody watching), called inline where the call site knows it; and one whose
  // hooks are all plain and that nobody watches, of a fold whose `last` fits in registers or a
  // void slot (inline: plain_loops::fold_with_known_default, call_void_hooks) or of an Always
  // chain (out of line: chain_hooks). Every other dispatch makes the engine's awaitable here and
  // runs it, told the default and the snapshot read here (the engine does not read or test them
  // again) - but not a fold's or a void slot's default: their plain hooks ran above, and the
  // engine's start would inline its copy of the fold loop a second time. With no hook and
  // options, an observer or an asynchronous default, the engine's start is out of line
  // (run_without_hooks, one function per kind). (The default is read first, where the compilers
  // know which it is: after the atomic load of the process-wide observer, GCC no longer does.
  // The snapshot is tested before the observers: tested with the set's observer, GCC merges the
  // two tests.)
  HOOKSET_ALWAYS_INLINE result_type run_to_completion() && {
    const typename Kind::default_sync_fn default_sync = slot_->default_sync;
    const hook_list* list = owner_->current();
    if constexpr (plain_loops<engine>::default_alone) {
      if (!list) {
        if (default_sync && nobody_watching()) return this->call_with_args(default_sync, nullptr);
        engine started(std::move(*this));
        return run_without_hooks(started);
      }
    }
    if constexpr (runs_plain_hooks_here) {
      if (runs_chain_here ? default_sync != nullptr
                          : HOOKSET_KNOWN_CONSTANT(default_sync != nullptr) && default_sync) {
        if (list && list->all_plain && nobody_watching()) {
          // (The hooks get the arguments' address: a copy's, made on this path alone - this
          // object's would make the caller write all of it out on every path. Made before the
          // scope: kept in registers across its call, they took Clang two more on every path.)
          std::tuple<bound_t<A>...> args = this->args_;
          sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
          if constexpr (runs_chain_here)
            return plain_loops<engine>::chain_hooks(*list, default_sync, args);
          else if constexpr (Kind::is_void)
            return plain_loops<engine>::call_void_hooks(*list, default_sync, args);
          else return plain_loops<engine>::fold_with_known_default(*list, default_sync, args);
        }
      }
      if constexpr (!runs_chain_here) return std::move(*this).run_started(nullptr, list);
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

  // The kinds whose plain hooks run_to_completion runs itself (a keyed slot's hooks are the
  // key's, which the engine looks up).
  static constexpr bool runs_chain_here = plain_loops<engine>::chain_loop &&
                                          plain_loops<engine>::chain_judges_synchronously &&
                                          engine::companions_constructible;
  static constexpr bool runs_plain_hooks_here =
      (plain_loops<engine>::fold_loop || plain_loops<engine>::void_loop || runs_chain_here) &&
      !Kind::is_keyed;

  // No option, and neither the set's observer nor a process-wide one.
  HOOKSET_ALWAYS_INLINE bool nobody_watching() const noexcept {
    return !context_ && !observer_installed() && !set_observer_;
  }
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
