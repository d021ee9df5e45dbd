#pragma once
// The plain policy's lean loops: a dispatch whose hooks are all plain (synchronous, no time
// limit, failures propagate), that nobody watches and that has no options runs as the loop one
// writes by hand - a fold with `last` in registers, an Always chain judged after each output, a
// Singleton's one call - with no per-step state written back. The general rules over the
// snapshot (start_snapshot) serve every other plain dispatch; they give the same result.

#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <hookset/companions.hpp>
#include <hookset/coro/config.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>
#include <hookset/detail/hook_list.hpp>

namespace hookset::detail {

template <class Kind, class... A>  // (the dispatch grants the layer its friendship)
class plain_loops<dispatch<Kind, mp::mp_list<A...>>> {
  using Dispatch = dispatch<Kind, mp::mp_list<A...>>;
  using result = typename Kind::result;
  using arguments = std::tuple<bound_t<A>...>;
  using default_fn = typename Kind::default_sync_fn;
  static constexpr bool attributes_result = is_attributing<Kind>;

 public:
  // A fold whose `last` fits in registers, with no companion and one hook at a time: the
  // default, then each hook on the previous output. An asynchronous default takes the general
  // path.
  static constexpr bool fold_loop =
      Kind::is_fold && !Kind::has_finalize && !Kind::is_concurrent && last_in_registers<result>;
  // The same for an Always chain whose companion judges synchronously: the default, then each
  // hook, each output judged.
  static constexpr bool chain_loop = Kind::has_chain && Kind::is_always && !Kind::has_aggregate &&
                                     !Kind::has_finalize && !Kind::is_concurrent &&
                                     std::is_move_assignable_v<result>;
  // A Singleton slot without companions: its one hook's output is the result.
  static constexpr bool singleton_call =
      Kind::is_singleton && !Kind::has_chain && !Kind::has_producer && !Kind::is_concurrent;
  // Whether the chain companion's verdict is a Flow (not an awaitable), however it is called.
  static constexpr bool chain_judges_synchronously = [] {
    if constexpr (!Kind::has_chain) {
      return false;
    } else {
      using chain = typename Kind::chain;
      constexpr bool local =
          classify_result<std::invoke_result_t<chain&, const result&>, Flow>() == call_kind::sync;
      if constexpr (std::is_invocable_v<const chain&, const result&>)
        return local &&
               classify_result<std::invoke_result_t<const chain&, const result&>, Flow>() ==
                   call_kind::sync;
      else return local;
    }
  }();

  // A kind whose result, with no hook, is its default's output as it is: no companion judges or
  // makes it.
  static constexpr bool default_alone =
      !Kind::has_chain && !Kind::has_producer && Dispatch::companions_constructible;
  // No hook, a synchronous default, nobody watching, no options: the default's call (read by
  // start_now, before anything that makes the compiler forget which it is: inlined).
  HOOKSET_ALWAYS_INLINE static bool run_default_alone(Dispatch& self, default_fn default_sync) {
    self.produced_by(nullptr);
    if constexpr (Kind::is_void) self.call_with_args(default_sync, nullptr);
    else if constexpr (std::is_trivially_copyable_v<result>)
      self.value_ = self.call_with_args(default_sync, nullptr);
    else self.value_.emplace(self.call_with_args(default_sync, nullptr));
    return true;
  }

  // Every hook plain, nobody watching, no options: the leanest loop the kind has. A fold runs
  // inline where the compiler knows its default (`known_default`, read by start_now: at the call
  // site of a slot's dispatch), which it then inlines too; elsewhere (an awaiter reaching the
  // dispatch through a pointer) out of line: inlined there, it would only take registers from
  // every path of the caller.
  HOOKSET_ALWAYS_INLINE static bool start(Dispatch& self, default_fn known_default = nullptr) {
    if constexpr (fold_loop) {
      // (Asked of the test, not the pointer: compilers never take a function's address for a
      // constant there, but fold a test of it.)
      if (HOOKSET_KNOWN_CONSTANT(known_default != nullptr) && known_default)
        return run_fold_here(self, known_default);
      return run_fold(self);
    } else if constexpr (chain_loop) return run_chain(self);
    else if constexpr (singleton_call) return run_singleton(self);
    else return Dispatch::rules::start_snapshot(self);
  }

  // run_fold for a dispatch that observers alone watch and that asks nothing of its hooks (the
  // frame's watched start, hook_steps::start_plain): its observers are told the hooks run at its
  // end, so next_ counts them - the hook that threw included, none when the default threw.
  HOOKSET_NOINLINE static bool run_fold_counted(Dispatch& self) {
    const hook_list& list = *self.list_;
    const default_fn default_sync = self.slot().default_sync;
    if (!fold_runs(list, default_sync)) [[unlikely]]
      return Dispatch::rules::start_snapshot(self);
    lean_sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    const hook_entry* const first = list.hooks.data();
    const hook_entry* const end = first + list.hooks.size();
    const hook_entry* hook = first;
    const bool has_last = Kind::is_always || hook == end;
    self.next_ = 0;
    const result last = has_last ? self.call_with_args(default_sync, nullptr) : result{};
    try {
      self.value_ =
          fold_hooks(hook, end, last, has_last, self.args_, std::index_sequence_for<A...>{});
    } catch (...) {
      self.next_ = static_cast<std::size_t>(hook - first) + 1;
      throw;
    }
    self.next_ = list.hooks.size();
    if constexpr (attributes_result) self.producer_ = first == end ? nullptr : end - 1;
    return true;
  }
  // Dispatch::run_if_synchronous: the dispatch of an Asio operation, run now when it cannot
  // suspend and has nothing to stop or report (the kinds of the fold and chain loops; keyed
  // slots and the others take the operation's general path).
  static bool run_if_synchronous(Dispatch& self) {
    if constexpr (Kind::is_keyed || !Dispatch::companions_constructible || attributes_result ||
                  !(fold_loop || (chain_loop && chain_judges_synchronously))) {
      return false;
    } else {
      if (!self.unwatched()) return false;
      self.list_ = self.owner_->current();
      if constexpr (fold_loop) {
        if (!self.list_) {
          if (!self.slot().default_sync && Kind::is_always) return false;
          return Dispatch::rules::start_without_hooks(self);
        }
        if (!self.list_->all_plain || !fold_runs(*self.list_, self.slot().default_sync))
          return false;
        return run_fold(self);
      } else {
        if (!self.slot().default_sync || (self.list_ && !self.list_->all_plain)) return false;
        return self.list_ ? run_chain(self) : Dispatch::rules::start_without_hooks_outlined(self);
      }
    }
  }

  // Whether fold can run the dispatch: a default it calls runs synchronously.
  static bool fold_runs(const hook_list& list, default_fn default_sync) noexcept {
    return default_sync || !(Kind::is_always || list.hooks.empty());
  }
  // The default, then each plain hook of `list` on the previous output, with `args`.
  // (Index sequences as parameters, not lambdas: GCC may leave a lambda's loop out of line.)
  HOOKSET_ALWAYS_INLINE static result fold(const hook_list& list, default_fn default_sync,
                                           arguments& args) {
    return fold(list, default_sync, args, std::index_sequence_for<A...>{});
  }
  // The fold loop: each plain hook from `hook` to `end` on the previous output, `last` in
  // registers from hook to hook. `hook` is left at the hook that threw, when one does (the
  // caller's count of hooks run). (A template: `result` is void in kinds that never call it.)
  template <class Last, std::size_t... I>
  HOOKSET_ALWAYS_INLINE static Last fold_hooks(const hook_entry*& hook, const hook_entry* const end,
                                               Last last, bool has_last, arguments& args,
                                               std::index_sequence<I...>) {
    for (; hook != end; ++hook) {
      last = sync_call_of<Kind>(*hook)(
          hook->object, static_cast<arg_ref_t<A>>(std::get<I>(args))..., last, has_last);
      has_last = true;
    }
    return last;
  }

 private:
  template <std::size_t... I>
  HOOKSET_ALWAYS_INLINE static result fold(const hook_list& list, default_fn default_sync,
                                           arguments& args, std::index_sequence<I...> each) {
    // (The end as the vector's own, not data() + size(): Clang divides by an entry's size for
    // size() and multiplies back.)
    const hook_entry* hook = list.hooks.data();
    const hook_entry* const end = std::to_address(list.hooks.end());
    const bool has_last = Kind::is_always || hook == end;
    return fold_hooks(hook, end,
                      has_last
                          ? default_sync(nullptr, static_cast<arg_ref_t<A>>(std::get<I>(args))...)
                          : result{},
                      has_last, args, each);
  }

  template <std::size_t... I>
  HOOKSET_ALWAYS_INLINE static result fold_first_here(Dispatch& self, default_fn default_sync,
                                                      std::index_sequence<I...>) {
    const hook_entry* hook = self.list_->hooks.data();
    const bool has_last = Kind::is_always || hook == std::to_address(self.list_->hooks.end());
    result last = has_last
                      ? default_sync(nullptr, static_cast<arg_ref_t<A>>(std::get<I>(self.args_))...)
                      : result{};
    if (self.list_->hooks.empty()) return last;
    last = sync_call_of<Kind>(*hook)(
        hook->object, static_cast<arg_ref_t<A>>(std::get<I>(self.args_))..., last, has_last);
    // The rest read again from the snapshot (this dispatch holds it: unchanged), not kept from
    // before the hook's call: a value kept across it costs every path of the caller a saved
    // register.
    const hook_list& list = *self.list_;
    if (list.hooks.size() == 1) return last;
    return fold_rest(list.hooks.data() + 1, std::to_address(list.hooks.end()), last, self.args_);
  }
  template <class Last>  // (a template: `result` is void in kinds that never call it)
  HOOKSET_NOINLINE static Last fold_rest(const hook_entry* hook, const hook_entry* end, Last last,
                                         arguments& args) {
    return fold_hooks(hook, end, last, true, args, std::index_sequence_for<A...>{});
  }
  // run_fold inline, with its synchronous default (start). Not the lean scope: the caller may be
  // a coroutine (`co_await set.call<S>(...)` in an asio::awaitable), where Clang reaches the
  // thread-locals only through calls (config.hpp).
  // The default and the first hook inline, the rest in the kind's loop out of line (fold_rest):
  // inline, the loop took registers from every path of the caller, and Clang laid it out one
  // instruction longer a hook.
  HOOKSET_ALWAYS_INLINE static bool run_fold_here(Dispatch& self, default_fn default_sync) {
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    self.value_ = fold_first_here(self, default_sync, std::index_sequence_for<A...>{});
    if constexpr (attributes_result)
      self.producer_ = self.list_->hooks.empty() ? nullptr : &self.list_->hooks.back();
    return true;
  }
  HOOKSET_NOINLINE static bool run_fold(Dispatch& self) {
    const hook_list& list = *self.list_;
    // (An asynchronous default: the general loop, out of line - inlined here, its registers
    // cost the loop a frame of six saved ones.)
    if (!fold_runs(list, self.slot().default_sync)) [[unlikely]]
      return Dispatch::rules::start_snapshot(self);
    lean_sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    self.value_ = fold(list, self.slot().default_sync, self.args_);
    if constexpr (attributes_result)  // (plain hooks all produce, or the dispatch fails)
      self.producer_ = list.hooks.empty() ? nullptr : &list.hooks.back();
    return true;
  }
  // A singleton_call slot whose hook is plain: the call.
  HOOKSET_NOINLINE static bool run_singleton(Dispatch& self) {
    if (self.list_->hooks.size() != 1) [[unlikely]]
      return Dispatch::rules::start_snapshot(self);
    const hook_entry& hook = self.list_->hooks.front();
    lean_sync_dispatch_scope scope;  // the hook may change the set: keep this snapshot alive
    Dispatch::loop::call_plain(self, hook);
    if constexpr (attributes_result) self.producer_ = &hook;
    return true;
  }
  HOOKSET_NOINLINE static bool run_chain(Dispatch& self) {
    if (!self.slot().default_sync) [[unlikely]]
      return Dispatch::rules::start_snapshot(self);  // (as run_fold)
    self.chain_.bind(self.list_->chain);
    return self.chain_.visit([&](auto& chain) {
      using verdict = decltype(chain(std::declval<const result&>()));
      if constexpr (classify_result<verdict, Flow>() != call_kind::sync) {
        return Dispatch::rules::start_snapshot(self);  // an asynchronous judge: the general path
      } else {
        lean_sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
        result last = self.call_with_args(self.slot().default_sync, nullptr);
        self.produced_by(nullptr);
        if (chain(std::as_const(last)) != Flow::Break) {
          const hook_entry* hook = self.list_->hooks.data();
          for (const hook_entry* const end = hook + self.list_->hooks.size(); hook != end; ++hook) {
            last = self.call_with_args(sync_call_of<Kind>(*hook), hook->object);
            self.produced_by(hook);
            if (chain(std::as_const(last)) == Flow::Break) break;
          }
        }
        self.value_ = std::move(last);
        return true;
      }
    });
  }
};

}  // namespace hookset::detail
