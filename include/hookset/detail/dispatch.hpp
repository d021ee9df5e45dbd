#pragma once
// The dispatch of one slot: the awaitable `HookSet::call<S>(args...)` returns.
//
// One state machine serves every mode x companion combination. `advance()` runs it
// synchronously for as long as every default, hook and companion answers at once; that is
// the whole dispatch when nothing is asynchronous (no coroutine frame, no allocation, no
// suspension, all inside await_ready). When something hands back an awaitable, `advance()`
// leaves it in `pending_` and the dispatch suspends into a small driver coroutine that awaits
// it, stores the value and calls `advance()` again.

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <hookset/companions.hpp>
#include <hookset/detail/awaitable.hpp>
#include <hookset/detail/hook_shape.hpp>
#include <hookset/detail/slot_state.hpp>
#include <hookset/observer.hpp>
#include <hookset/slot.hpp>
#include <hookset/task.hpp>

namespace hookset::detail {

struct no_value {};

template <class T>
using value_slot = std::conditional_t<std::is_void_v<T>, no_value, std::optional<T>>;

// The instance of companion C a dispatch calls: the one configured on the set if any (called
// as const, it is shared), else one default-constructed for this dispatch - only then.
template <class C>
class companion_instance {
  static constexpr bool constructible = std::is_default_constructible_v<C>;
  struct none {};

 public:
  void bind(const configured_companion<C>& configured) noexcept { configured_ = configured.instance.get(); }
  bool usable() const noexcept { return constructible || configured_ != nullptr; }

  template <class F>
  decltype(auto) visit(F&& f) {
    if constexpr (!constructible) {
      return std::forward<F>(f)(*configured_);  // usable() was checked when the dispatch began
    } else {
      if constexpr (std::is_invocable_v<F, const C&>)
        if (configured_) return std::forward<F>(f)(*configured_);
      if (!local_) local_.emplace();
      return std::forward<F>(f)(*local_);
    }
  }

 private:
  const C* configured_ = nullptr;
  [[no_unique_address]] std::conditional_t<constructible, std::optional<C>, none> local_;
};
template <>
class companion_instance<void> {
 public:
  void bind(const configured_companion<void>&) noexcept {}
  bool usable() const noexcept { return true; }
};

template <class S, class Params = typename slot_traits<S>::parameters>
class dispatch;

template <class S, class... A>
class [[nodiscard]] dispatch<S, mp::mp_list<A...>> {
  using traits = slot_traits<S>;
  using result = typename traits::result;
  using output = typename traits::output;
  using state_type = slot_state<S>;
  using entry = hook_entry<S>;

  static constexpr bool is_void = traits::is_void;
  // Slots whose hooks only feed the next hook (or the result): no per-output companion work.
  static constexpr bool plain = !traits::has_chain && !traits::has_aggregate;
  static constexpr bool separate_output = traits::has_aggregate || traits::has_finalize;

  enum class stage : unsigned char { begin, after_head, hooks, after_hook, after_flow, exhausted,
                                     after_sole, complete, done };
  enum class awaiting : unsigned char { nothing, value, flow, output };

 public:
  // Synchronous hooks run inside await_ready: a Task awaiting a dispatch makes its chain the
  // scoped one around it (execution_context.hpp).
  using runs_code_in_await_ready = void;

  template <class... Args>
  explicit dispatch(const slot_storage<S>& storage, Args&&... args)
      : args_(std::forward<Args>(args)...), storage_(&storage) {}

  dispatch(dispatch&&) = default;  // movable until it starts (compilers may move awaiters)
  dispatch& operator=(dispatch&&) = delete;
  ~dispatch() {
    if (holds_state_) state_type::release_ref(state_);
  }

  // Takes the snapshot and runs everything that completes synchronously.
  bool await_ready() {
    if constexpr (fast_path) {
      if (!current_observer()) [[likely]] return run_plain();
    } else if constexpr (fast_chain) {
      if (!current_observer()) [[likely]] return run_chain();
    } else if constexpr (fast_aggregate) {
      if (!current_observer()) [[likely]] return run_aggregate();
    }
    return run_general();
  }

  // Hands over to the driver exactly as awaiting a Task would (same return form, so the same
  // stack-depth guarantees hold for a dispatch as for a Task).
  // The driver runs in the chain of the coroutine awaiting the dispatch (a Stateful's re-entry
  // detection follows it).
  template <class Promise>
  auto await_suspend(std::coroutine_handle<Promise> waiting) {
    driver_.emplace(drive(this));
    driver_awaiter_.emplace(get_awaiter(*driver_));
    return driver_awaiter_->await_suspend(waiting);
  }

  output await_resume() {
    if (driver_awaiter_) driver_awaiter_->await_resume();  // rethrows what the driver threw
    if constexpr (!std::is_void_v<output>) {
      if constexpr (separate_output) return std::move(*output_);
      else return std::move(*value_);
    }
  }

 private:
  // Every mode and companion, observed or not: the state machine from the start.
  bool run_general() {
    start();
    sync_dispatch_scope scope;
    try {
      if (advance()) {
        trace_end(nullptr);
        return true;
      }
    } catch (...) {
      trace_end(std::current_exception());
      throw;
    }
    // Suspending: from here on the dispatch owns a reference to its hooks. Taken while the
    // synchronous scope still protects the snapshot (it may already be parked).
    if (state_) {
      state_->acquire();
      holds_state_ = true;
    }
    return false;
  }

  // ---- the fast paths ----------------------------------------------------------------------

  // Fold, void and singleton slots with a synchronous default and no companion, dispatched with
  // no observer installed: the common case, run as one tight loop over the snapshot's entries
  // with the arguments unpacked once. It hands over to the state machine at the first
  // asynchronous hook.
  static constexpr bool fast_path =
      plain && !traits::has_finalize && default_call<S>::kind == call_kind::sync;

  bool run_plain() {
    const state_type* const state = storage_->current();
    const entry* const first = state ? state->hooks.data() : nullptr;
    const entry* const last = first + (state ? state->hooks.size() : 0);
    if (first == last) {  // the default alone; the set may change under it, nothing walks it
      if constexpr (is_void) with_args([](arg_ref_t<A>... a) { S::default_impl(a...); });
      else value_ = with_args([](arg_ref_t<A>... a) -> decltype(auto) { return S::default_impl(a...); });
      stage_ = stage::done;
      return true;
    }
    state_ = state;
    hooks_ = first;
    hook_count_ = static_cast<std::size_t>(last - first);
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    const entry* hook = first;
    if constexpr (!traits::is_always && !is_void) {
      // Fallback's first `last` is empty; written whole (not just its flag) for the same
      // store-forwarding reason as below.
      value_ = value_slot<result>();
    }
    const bool finished = std::apply([&](auto&... stored) {
      if constexpr (traits::is_always) {
        // (An assignment, not emplace: Clang 14 then writes the optional in one store, which
        // the first hook's load of it can forward from; emplace's two narrow stores cost more
        // than the whole loop at N = 8.)
        if constexpr (is_void) S::default_impl(static_cast<arg_ref_t<A>>(stored)...);
        else value_ = S::default_impl(static_cast<arg_ref_t<A>>(stored)...);
      }
      for (; hook != last; ++hook) {
        if (!hook->sync) [[unlikely]] return false;
        if constexpr (is_void)
          hook->sync(hook->object, static_cast<arg_ref_t<A>>(stored)...);
        else if constexpr (traits::is_fold)
          value_ = hook->sync(hook->object, static_cast<arg_ref_t<A>>(stored)..., std::move(value_));
        else
          value_ = hook->sync(hook->object, static_cast<arg_ref_t<A>>(stored)...);
      }
      return true;
    }, args_);
    next_hook_ = static_cast<std::size_t>(hook - first);
    if (finished) {
      stage_ = stage::done;
      return true;
    }
    // An asynchronous hook: the state machine takes over from it, as a suspending dispatch.
    stage_ = stage::hooks;
    if (advance()) return true;
    state_->acquire();
    holds_state_ = true;
    return false;
  }

  // Chain slots (with neither Aggregate nor Finalize) whose default and chain companion answer
  // synchronously: the same tight loop, checking each output as it comes.
  template <class C>
  static constexpr bool chain_is_sync = [] {
    if constexpr (std::is_void_v<C>) return false;
    else return classify_result<std::invoke_result_t<C&, const result&>, Flow>() == call_kind::sync &&
                (!std::is_invocable_v<const C&, const result&> ||
                 classify_result<std::invoke_result_t<const C&, const result&>, Flow>() == call_kind::sync);
  }();
  static constexpr bool fast_chain = traits::has_chain && !traits::has_aggregate && !traits::has_finalize &&
                                     default_call<S>::kind == call_kind::sync &&
                                     chain_is_sync<typename traits::chain>;

  bool run_chain() {
    const state_type* const state = storage_->current();
    if (state) chain_.bind(state->chain);
    if (!chain_.usable()) [[unlikely]] return run_general();  // reports the missing companion
    const entry* const first = state ? state->hooks.data() : nullptr;
    const entry* const last = first + (state ? state->hooks.size() : 0);
    state_ = state;
    hooks_ = first;
    hook_count_ = static_cast<std::size_t>(last - first);
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    const entry* hook = first;
    const bool finished = chain_.visit([&](auto& chain) {
      return std::apply([&](auto&... stored) {
        const auto run_default = [&] { value_ = S::default_impl(static_cast<arg_ref_t<A>>(stored)...); };
        if constexpr (traits::is_always) {
          run_default();
          // Checked even without hooks (the verdict then changes nothing); Break: no hook runs.
          if (chain(std::as_const(*value_)) == Flow::Break) return true;
        } else if (first == last) {
          run_default();  // Fallback without hooks: the default, not chain-checked
          return true;
        }
        for (; hook != last; ++hook) {
          if (!hook->sync) [[unlikely]] return false;
          value_ = hook->sync(hook->object, static_cast<arg_ref_t<A>>(stored)...);
          if (chain(std::as_const(*value_)) == Flow::Break) {
            ++hook;
            return true;
          }
        }
        if constexpr (traits::is_fallback) run_default();  // every hook said Continue
        return true;
      }, args_);
    });
    next_hook_ = static_cast<std::size_t>(hook - first);
    if (finished) {
      stage_ = stage::done;
      return true;
    }
    // An asynchronous hook: the state machine takes over from it, as a suspending dispatch.
    stage_ = stage::hooks;
    if (advance()) return true;
    state_->acquire();
    holds_state_ = true;
    return false;
  }

  // Aggregate slots without Chain whose default and aggregate answer synchronously: collect
  // the outputs in one loop, then aggregate them.
  template <class C>
  static constexpr bool aggregate_is_sync = [] {
    if constexpr (std::is_void_v<C>) return false;
    else return classify_result<std::invoke_result_t<C&, std::vector<result>&&>, output>() == call_kind::sync &&
                (!std::is_invocable_v<const C&, std::vector<result>&&> ||
                 classify_result<std::invoke_result_t<const C&, std::vector<result>&&>, output>() == call_kind::sync);
  }();
  static constexpr bool fast_aggregate = traits::has_aggregate && !traits::has_chain &&
                                         default_call<S>::kind == call_kind::sync &&
                                         aggregate_is_sync<typename traits::aggregate>;

  bool run_aggregate() {
    const state_type* const state = storage_->current();
    if (state) aggregate_.bind(state->aggregate);
    if (!aggregate_.usable()) [[unlikely]] return run_general();  // reports the missing companion
    const entry* const first = state ? state->hooks.data() : nullptr;
    const entry* const last = first + (state ? state->hooks.size() : 0);
    if constexpr (!traits::is_always && !traits::has_output) {
      if (first == last) {  // Fallback without hooks: the default, returned directly
        output_.emplace(with_args([](arg_ref_t<A>... a) -> decltype(auto) { return S::default_impl(a...); }));
        stage_ = stage::done;
        return true;
      }
    }
    state_ = state;
    hooks_ = first;
    hook_count_ = static_cast<std::size_t>(last - first);
    outputs_.reserve(hook_count_ + 1);  // the one allocation: the vector the aggregate receives
    sync_dispatch_scope scope;  // hooks may change the set: keep this snapshot alive
    const entry* hook = first;
    const bool finished = std::apply([&](auto&... stored) {
      // Always: the default's output first; Fallback: only without hooks (with Output<T>).
      if (traits::is_always || first == last)
        outputs_.push_back(S::default_impl(static_cast<arg_ref_t<A>>(stored)...));
      for (; hook != last; ++hook) {
        if (!hook->sync) [[unlikely]] return false;
        outputs_.push_back(hook->sync(hook->object, static_cast<arg_ref_t<A>>(stored)...));
      }
      return true;
    }, args_);
    next_hook_ = static_cast<std::size_t>(hook - first);
    if (finished) {
      output_.emplace(aggregate_.visit([&](auto& aggregate) -> output { return aggregate(std::move(outputs_)); }));
      stage_ = stage::done;
      return true;
    }
    // An asynchronous hook: the state machine takes over from it, as a suspending dispatch.
    stage_ = stage::hooks;
    if (advance()) return true;
    state_->acquire();
    holds_state_ = true;
    return false;
  }

  // ---- the state machine ------------------------------------------------------------------

  bool advance() {
    for (;;) {
      switch (stage_) {
        case stage::begin:
          if (hook_count_ == 0 && !traits::is_always) {
            stage_ = stage::after_sole;
            if (!produce_default()) return false;
          } else if constexpr (traits::is_always) {
            stage_ = stage::after_head;
            if (!produce_default()) return false;
          } else {
            stage_ = stage::hooks;
          }
          break;

        case stage::after_head:  // an Always slot's default output is in value_
          if constexpr (traits::has_chain) {
            stage_ = stage::after_flow;
            if (!produce_flow()) return false;
          } else {
            collect();
            stage_ = stage::hooks;
          }
          break;

        case stage::hooks:
          if constexpr (plain) {
            // The hot loop: fold, void and singleton slots just run hook after hook.
            while (next_hook_ != hook_count_)
              if (!produce_hook()) return false;
            stage_ = stage::complete;
          } else if (next_hook_ == hook_count_) {
            stage_ = stage::exhausted;
          } else {
            stage_ = stage::after_hook;
            if (!produce_hook()) return false;
          }
          break;

        case stage::after_hook:
          if constexpr (traits::has_chain) {
            stage_ = stage::after_flow;
            if (!produce_flow()) return false;
          } else {
            collect();
            stage_ = stage::hooks;
          }
          break;

        case stage::after_flow:
          collect();
          stage_ = flow_ == Flow::Break ? stage::complete : stage::hooks;
          break;

        case stage::exhausted:
          stage_ = stage::complete;
          // Fallback + Chain: no hook broke, so the default has the last word.
          if constexpr (traits::is_fallback && traits::has_chain && !traits::has_aggregate) {
            if (!produce_default()) return false;
          }
          break;

        case stage::after_sole:  // Fallback/Singleton without hooks: the default's output
          if constexpr (traits::has_aggregate && !traits::has_output) {
            stage_ = stage::done;  // returned directly, not aggregated
            output_.emplace(std::move(*value_));
            return true;
          } else {
            collect();
            stage_ = stage::complete;
          }
          break;

        case stage::complete:
          stage_ = stage::done;
          if (!produce_output()) return false;
          return true;

        case stage::done:
          return true;
      }
    }
  }

  // Moves the newest output into the aggregate's list; nothing for other slots.
  void collect() {
    if constexpr (traits::has_aggregate) outputs_.push_back(std::move(*value_));
  }

  template <class F>
  decltype(auto) with_args(F&& f) {
    return std::apply([&](auto&... stored) -> decltype(auto) {
      return std::forward<F>(f)(static_cast<arg_ref_t<A>>(stored)...);
    }, args_);
  }

  template <class V>
  void store_value(V&& v) {
    value_ = std::forward<V>(v);
  }

  bool produce_default() {
    if constexpr (default_call<S>::kind == call_kind::sync) {
      if constexpr (is_void) with_args([](arg_ref_t<A>... a) { S::default_impl(a...); });
      else store_value(with_args([](arg_ref_t<A>... a) -> decltype(auto) { return S::default_impl(a...); }));
      return true;
    } else {
      pending_value_.emplace(with_args([](arg_ref_t<A>... a) {
        return to_task<result>(S::default_impl(a...));
      }));
      awaiting_ = awaiting::value;
      return false;
    }
  }

  bool produce_hook() {
    const entry& hook = hooks_[next_hook_++];
    if (hook.sync) [[likely]] {
      if constexpr (is_void) {
        with_args([&](arg_ref_t<A>... a) { hook.sync(hook.object, a...); });
      } else if constexpr (traits::is_fold) {
        value_ = with_args([&](arg_ref_t<A>... a) { return hook.sync(hook.object, a..., std::move(value_)); });
      } else {
        value_ = with_args([&](arg_ref_t<A>... a) { return hook.sync(hook.object, a...); });
      }
      return true;
    }
    if constexpr (traits::is_fold)
      pending_value_.emplace(with_args([&](arg_ref_t<A>... a) { return hook.async(hook.object, a..., std::move(value_)); }));
    else
      pending_value_.emplace(with_args([&](arg_ref_t<A>... a) { return hook.async(hook.object, a...); }));
    awaiting_ = awaiting::value;
    return false;
  }

  bool produce_flow() {
    if constexpr (traits::has_chain) {
      return chain_.visit([&](auto& chain) {
        using verdict = decltype(chain(std::as_const(*value_)));
        if constexpr (classify_result<verdict, Flow>() == call_kind::sync) {
          flow_ = chain(std::as_const(*value_));
          return true;
        } else {
          pending_flow_.emplace(to_task<Flow>(chain(std::as_const(*value_))));
          awaiting_ = awaiting::flow;
          return false;
        }
      });
    } else {
      return true;
    }
  }

  bool produce_output() {
    if constexpr (traits::has_aggregate) {
      return aggregate_.visit([&](auto& aggregate) { return produce_output_with(aggregate, std::move(outputs_)); });
    } else if constexpr (traits::has_finalize) {
      return finalize_.visit([&](auto& finalize) { return produce_output_with(finalize, std::move(*value_)); });
    } else {
      return true;  // the result is value_ itself
    }
  }

  template <class Companion, class Input>
  bool produce_output_with(Companion& companion, Input&& input) {
    using produced = decltype(companion(std::forward<Input>(input)));
    if constexpr (classify_result<produced, output>() == call_kind::sync) {
      output_.emplace(companion(std::forward<Input>(input)));
      return true;
    } else {
      pending_output_.emplace(to_task<output>(companion(std::forward<Input>(input))));
      awaiting_ = awaiting::output;
      return false;
    }
  }

  // The rest of a dispatch that had to wait: await what advance() left pending, feed it
  // back, repeat.
  static Task<void> drive(dispatch* self) {
    // Synchronous hooks that advance() runs from here belong to the awaiting chain.
    const execution_context* const context = co_await current_execution_context();
    auto advance_in_context = [self, context] {
      execution_context_scope scope(context);
      return self->advance();
    };
    try {
      do {
        switch (std::exchange(self->awaiting_, awaiting::nothing)) {
          case awaiting::value: {
            Task<result> pending = std::move(*self->pending_value_);
            self->pending_value_.reset();
            if constexpr (is_void) co_await std::move(pending);
            else self->value_ = co_await std::move(pending);
            break;
          }
          case awaiting::flow: {
            if constexpr (traits::has_chain) {
              Task<Flow> pending = std::move(*self->pending_flow_);
              self->pending_flow_.reset();
              self->flow_ = co_await std::move(pending);
            }
            break;
          }
          case awaiting::output: {
            if constexpr (separate_output) {
              Task<output> pending = std::move(*self->pending_output_);
              self->pending_output_.reset();
              self->output_.emplace(co_await std::move(pending));
            }
            break;
          }
          case awaiting::nothing:
            break;
        }
      } while (!advance_in_context());
    } catch (...) {
      self->trace_end(std::current_exception());
      throw;
    }
    self->trace_end(nullptr);
  }

  // ---- start and tracing ----------------------------------------------------------------------

  void start() {
    state_ = storage_->current();
    if (state_) {
      hooks_ = state_->hooks.data();
      hook_count_ = state_->hooks.size();
      if constexpr (traits::has_chain) chain_.bind(state_->chain);
      if constexpr (traits::has_aggregate) aggregate_.bind(state_->aggregate);
      if constexpr (traits::has_finalize) finalize_.bind(state_->finalize);
    }
    // The aggregate receives a std::vector<R> (SPEC): one allocation, sized once.
    if constexpr (traits::has_aggregate) outputs_.reserve(hook_count_ + 1);
    if (!chain_.usable() || !aggregate_.usable() || !finalize_.usable()) [[unlikely]]
      throw std::logic_error("hookset: slot " + std::string(slot_name<S>) +
                             ": a companion type that cannot be default-constructed must be "
                             "configured with configure<Slot>(instance) before dispatching");
    if (Observer* observer = current_observer()) [[unlikely]] {
      observer_ = observer;
      dispatch_id_ = next_dispatch_id.fetch_add(1, std::memory_order_relaxed);
      observer->on_dispatch_begin(slot_name<S>, dispatch_id_);
    }
  }

  void trace_end(std::exception_ptr error) noexcept {
    if (observer_ && current_observer() == observer_) [[unlikely]] {
      try {
        observer_->on_dispatch_end(slot_name<S>, dispatch_id_, next_hook_, std::move(error));
      } catch (...) {
        // An observer must not change the outcome of the dispatch it watches.
      }
    }
  }

  // ---- data ---------------------------------------------------------------------------------

  std::tuple<bound_t<A>...> args_;
  const slot_storage<S>* storage_;
  const state_type* state_ = nullptr;
  const entry* hooks_ = nullptr;
  std::size_t hook_count_ = 0;
  std::size_t next_hook_ = 0;  // also the number of hooks invoked so far
  stage stage_ = stage::begin;
  awaiting awaiting_ = awaiting::nothing;
  bool holds_state_ = false;
  Flow flow_ = Flow::Continue;

  [[no_unique_address]] value_slot<result> value_;  // `last` of fold slots, else the newest output
  [[no_unique_address]] std::conditional_t<traits::has_aggregate, std::vector<result>, no_value> outputs_;
  [[no_unique_address]] std::conditional_t<separate_output, std::optional<output>, no_value> output_;
  [[no_unique_address]] companion_instance<typename traits::chain> chain_;
  [[no_unique_address]] companion_instance<typename traits::aggregate> aggregate_;
  [[no_unique_address]] companion_instance<typename traits::finalize> finalize_;

  Observer* observer_ = nullptr;
  std::uint64_t dispatch_id_ = 0;

  std::optional<Task<result>> pending_value_;
  [[no_unique_address]] std::conditional_t<traits::has_chain, std::optional<Task<Flow>>, no_value> pending_flow_;
  [[no_unique_address]] std::conditional_t<separate_output, std::optional<Task<output>>, no_value> pending_output_;
  std::optional<Task<void>> driver_;
  std::optional<decltype(get_awaiter(std::declval<Task<void>&>()))> driver_awaiter_;
};

}  // namespace hookset::detail
