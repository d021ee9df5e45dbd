#pragma once
// hookset::Stateful<T>: a hook with mutable state, its calls serialised by a FIFO async mutex;
// hookset::ReentrancyError: what a Stateful hook reaching itself raises.
//
//   struct Counter {
//     int next = 0;
//     int operator()(std::string_view request) { return ++next; }   // non-const: state
//   };
//   set.add<AssignId>(hookset::Stateful{Counter{}});
//
// Independent dispatches reaching the same Stateful take turns, in arrival order: a call that
// finds it busy suspends until the holder is done (never blocking a thread, never failing).
// A *re-entry* - the hook, directly or through dispatches it awaits, reaching itself while it
// holds its lock - would wait for itself forever; it is detected instead, because every
// library coroutine carries the identity of its stack of awaiting calls
// (coro/await_context.hpp), and it calls `value.on_reentrancy(ReentrancyError)` if T has
// one (its result becomes the hook's output), else throws ReentrancyError.
//
// Detection follows the await stack through co_await on hookset::Task and on dispatches, and
// through sync_wait called from the hook's synchronous code or from synchronous hooks. A coroutine
// type of your own starts a new await stack: awaiting the same Stateful from inside one that its
// holder awaits is not recognised (and waits forever, as it would without detection).

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <hookset/coro/async_mutex.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/awaitable_traits.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/detail/type_name.hpp>
#include <hookset/slot.hpp>

namespace hookset {

// A Stateful hook was re-entered: `slot` is the slot being dispatched when it happened (or
// "(called directly)"), `hook_type` the type of the state T.
class ReentrancyError : public std::logic_error {
 public:
  ReentrancyError(std::string slot_name, std::string hook_type_name)
      : std::logic_error("hookset: slot " + slot_name + ": stateful hook " + hook_type_name +
                         " was re-entered (directly or through a dispatch it awaits) while it "
                         "held its lock"),
        slot(std::move(slot_name)),
        hook_type(std::move(hook_type_name)) {}

  std::string slot;
  std::string hook_type;
};

namespace detail {

// What a call returning Res produces once awaited, as a value.
template <class Res, bool = is_awaitable_v<Res>>
struct produced {
  using type = std::remove_cvref_t<Res>;
};
template <class Res>
struct produced<Res, true> {
  using type = std::remove_cvref_t<await_result_t<Res>>;
};
template <class Res>
using produced_t = typename produced<Res>::type;

// How a Stateful keeps an argument until its turn comes: references as references (the
// dispatch, or the caller, keeps the object alive until the call completes), anything else by
// value (a tag, a `last`, a temporary).
template <class Arg>
using kept_argument_t =
    std::conditional_t<std::is_lvalue_reference_v<Arg>, Arg, std::remove_cvref_t<Arg>>;

template <class... Args>
struct kept_call {
  std::tuple<kept_argument_t<Args>...> arguments;

  template <class T>
  decltype(auto) operator()(T& value) {
    return std::apply(
        [&](auto&&... a) -> decltype(auto) { return value(std::forward<decltype(a)>(a)...); },
        std::move(arguments));
  }
};

template <class T>
concept has_on_reentrancy = requires(T& value, ReentrancyError error) {
  value.on_reentrancy(std::move(error));
};

struct unlock_on_exit {
  async_mutex& mutex;
  ~unlock_on_exit() { mutex.unlock(); }
};

}  // namespace detail

template <class T>
class Stateful {
  static_assert(std::is_object_v<T> && !std::is_const_v<T> && !std::is_array_v<T>,
                "hookset::Stateful<T>: T must be a non-const object type (the mutable state)");

  struct state {
    template <class... As>
    explicit state(As&&... as) : value(std::forward<As>(as)...) {}
    detail::async_mutex mutex;
    T value;
  };

 public:
  using value_type = T;

  explicit Stateful(T value) : state_(std::make_shared<state>(std::move(value))) {}
  template <class... As>
  requires std::constructible_from<T, As...>
  explicit Stateful(std::in_place_t, As&&... as)
      : state_(std::make_shared<state>(std::forward<As>(as)...)) {}

  // Copies share the state (and its lock): registering a copy registers the same hook state.
  Stateful(const Stateful&) = default;
  Stateful& operator=(const Stateful&) = default;

  // The hook: waits for the lock, then calls `value(args...)`, which may return a result or
  // an awaitable of it. Always a Task.
  template <class... Args>
  requires std::invocable<T&, Args...> Task<detail::produced_t<std::invoke_result_t<T&, Args...>>>
  operator()(Args&&... args) const {
    using result = detail::produced_t<std::invoke_result_t<T&, Args...>>;
    return locked<result, void>(state_, "(called directly)", detail::type_name<T>,
                                detail::kept_call<Args...>{{std::forward<Args>(args)...}});
  }

  // Runs `f(value)` under the lock (e.g. to read the state from outside a dispatch), in turn
  // with the hook's calls. `f` must be synchronous.
  template <class F>
  requires std::invocable<F&, T&> &&(!detail::is_awaitable_v<std::invoke_result_t<F&, T&>>)
      Task<std::invoke_result_t<F&, T&>> with_lock(F f) const {
    return locked<std::invoke_result_t<F&, T&>, void, F, false>(state_, "(with_lock)",
                                                                detail::type_name<T>, std::move(f));
  }

  // What a HookSet calls for slot S (so that a re-entry can name the slot). Returns what a
  // hook of S returns: the slot's result, or for a Pipeline slot its decision.
  template <class S, class... Args>
  Task<typename detail::kind_of<S>::result> call_for(Args&&... args) const {
    return locked<typename detail::kind_of<S>::result, S>(
        state_, slot_name<S>, detail::type_name<T>,
        detail::kept_call<Args...>{{std::forward<Args>(args)...}});
  }

 private:
  template <class R, class Slot, class Body, bool Handled = true>
  static Task<R> locked(std::shared_ptr<state> st, std::string_view slot,
                        std::string_view hook_type, Body body) {
    const detail::await_context* context = co_await detail::current_await_context();
    if (context && context->holds(st.get())) [[unlikely]] {
      ReentrancyError error{std::string(slot), std::string(hook_type)};
      if constexpr (Handled && detail::has_on_reentrancy<T>) {
        using returned = decltype(st->value.on_reentrancy(std::move(error)));
        if constexpr (detail::classify_result<returned, R>() == detail::call_kind::invalid) {
          [[maybe_unused]] constexpr bool reported =
              detail::report_on_reentrancy_result<Slot, T, R, returned>();
        } else {
          co_return co_await run_in<R>(context,
                                       [&] { return st->value.on_reentrancy(std::move(error)); });
        }
      } else {
        throw error;
      }
    }
    co_await st->mutex.lock();
    detail::unlock_on_exit unlock{st->mutex};
    const detail::await_context link{context, st.get()};
    co_return co_await run_in<R>(&link, [&] { return body(st->value); });
  }

  // Calls f() in `context` (the scoped one for its synchronous part, the coroutine's own for
  // what it returns to await) and produces its result.
  template <class R, class F>
  static Task<R> run_in(const detail::await_context* context, F f) {
    using returned = std::invoke_result_t<F&>;
    if constexpr (detail::is_awaitable_v<returned>) {
      auto awaitable = [&]() -> returned {
        detail::await_context_scope scope(context);
        return f();
      }();
      co_await detail::exchange_await_context{context};
      co_return co_await std::move(awaitable);
    } else {
      detail::await_context_scope scope(context);
      co_return f();
    }
  }

  std::shared_ptr<state> state_;
};

template <class T>
Stateful(T) -> Stateful<T>;

}  // namespace hookset
