#pragma once
// hookset with Boost.Asio (>= 1.81): the optional adapter. The core never includes Asio.
//
//  - A dispatch is an Asio asynchronous operation: `co_await hooks.call<S>(args...)` inside an
//    asio::awaitable, or hookset::asio::async_call(hooks.call<S>(args...), token) with any
//    completion token (use_awaitable, deferred, use_future, a callback). It completes on the
//    handler's associated executor; the handler's cancellation slot reaches the running hooks.
//  - Defaults and hooks may be asio::awaitable<R> functions: they run on the dispatch's executor,
//    and a cancellation (or a deadline, or a hook's time limit) cancels them the Asio way
//    (terminal cancellation: their pending operation ends with operation_aborted).
//  - Deadlines and hook time limits use timers of the dispatch's executor.
//
// Lifetime: the operation owns the dispatch (its arguments bound by value) until it
// completes, and it completes only after every hook it started has finished - also when
// cancelled. Arguments bound by reference (slot parameters declared as references) must stay
// valid until then, as any Asio operation's.

#include <boost/version.hpp>
#if BOOST_VERSION < 108100
#error \
    "<hookset/asio.hpp> needs Boost >= 1.81 (C++20 coroutines in Asio); the core works with >= 1.74"
#endif

#include <atomic>
#include <chrono>
#include <concepts>
#include <coroutine>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/execution/executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/system_executor.hpp>

#include <hookset/call_options.hpp>
#include <hookset/coro/await_context.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/frame_pool.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/coro/sync_wait.hpp>
#include <hookset/coro/task.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/holders.hpp>

#if BOOST_VERSION == 108100
namespace boost::asio::detail {
// Boost 1.81 cannot co_await an operation completing with (std::exception_ptr, T) - a dispatch -
// inside an asio::awaitable: awaitable_async_op_handler<R(std::exception_ptr, T)>::resume tests
// `*result` (a struct) where it means `*result.ex_`, and does not compile. This more
// specialised form (R = void, the only R such operations have) is the same handler with that
// test written as intended. Later Boost releases do not need it.
template <typename T, typename Executor>
class awaitable_async_op_handler<void(std::exception_ptr, T), Executor>
    : public awaitable_thread<Executor> {
 public:
  struct result_type {
    std::exception_ptr* ex_;
    T* value_;
  };

  awaitable_async_op_handler(awaitable_thread<Executor>* h, result_type& result)
      : awaitable_thread<Executor>(std::move(*h)), result_(result) {}

  void operator()(std::exception_ptr ex, T value) {
    result_.ex_ = &ex;
    result_.value_ = &value;
    this->entry_point()->top_of_stack_->attach_thread(this);
    this->entry_point()->top_of_stack_->clear_cancellation_slot();
    this->pump();
  }

  static T resume(result_type& result) {
    if (*result.ex_) {
      std::exception_ptr ex = std::exchange(*result.ex_, nullptr);
      std::rethrow_exception(ex);
    }
    return std::move(*result.value_);
  }

 private:
  result_type& result_;
};
}  // namespace boost::asio::detail
#endif

namespace hookset {
class Admission;  // <hookset/tripwire.hpp>
}  // namespace hookset

namespace hookset::asio {

namespace net = boost::asio;

// A hookset::Executor over an Asio executor: the timers of deadlines and hook time limits, and
// where asio::awaitable hooks run.
class executor_binding final : public Executor {
 public:
  explicit executor_binding(net::any_io_executor executor) : executor_(std::move(executor)) {}

  const net::any_io_executor& get() const noexcept { return executor_; }

  std::unique_ptr<Timer> start_timer(clock::time_point when, Callback expire) override {
    // The timer lives on a strand of its own: its wait and its cancel never race.
    auto state = std::make_shared<timer_state>(net::make_strand(executor_));
    state->timer.expires_at(when);
    net::post(state->strand, [state, expire = std::move(expire)]() mutable {
      state->timer.async_wait(
          [state, expire = std::move(expire)](const boost::system::error_code& error) mutable {
        if (!error && !state->cancelled) expire();
      });
    });
    return std::make_unique<timer_handle>(std::move(state));
  }

 private:
  struct timer_state {
    explicit timer_state(net::strand<net::any_io_executor> s)
        : strand(std::move(s)), timer(strand) {}
    net::strand<net::any_io_executor> strand;
    net::steady_timer timer;
    bool cancelled = false;  // touched on the strand only
  };
  class timer_handle final : public Timer {
   public:
    explicit timer_handle(std::shared_ptr<timer_state> state) : state_(std::move(state)) {}
    ~timer_handle() override { cancel(); }
    void cancel() noexcept override {
      if (!state_) return;
      try {
        net::post(state_->strand, [state = state_] {
          state->cancelled = true;
          state->timer.cancel();
        });
      } catch (...) {
        // Out of memory: the timer then fires in its time and finds the dispatch done, which
        // is harmless (its callback owns what it touches).
      }
      state_.reset();
    }

   private:
    std::shared_ptr<timer_state> state_;
  };

  net::any_io_executor executor_;
};

namespace detail {

using hookset::detail::await_context;
using hookset::detail::await_context_carrier;

// Runs an asio::awaitable from a hookset coroutine: co_spawned on a strand of the dispatch's
// executor, its cancellation slot bound to a signal that the dispatch's stop token emits.
// Awaited as a named object through a trivially destructible awaiter (GCC 12 copies awaiters
// awaited as lvalues and may destroy temporary awaiters twice).
template <class T, class AwaitableExecutor>
class spawned_awaitable {
  struct state {
    explicit state(net::strand<net::any_io_executor> s) : strand(std::move(s)) {}
    net::strand<net::any_io_executor> strand;
    net::cancellation_signal signal;  // emitted on the strand only
    bool stopped = false;             // on the strand only: a stop arrived (maybe before the spawn)
    std::exception_ptr error;
    std::optional<std::conditional_t<std::is_void_v<T>, int, T>> value;
    std::coroutine_handle<> waiting;
  };
  struct emit_on_stop {
    std::shared_ptr<state> target;
    void operator()() const noexcept {
      try {
        net::post(target->strand, [target = target] {
          target->stopped = true;
          target->signal.emit(net::cancellation_type::terminal);
        });
      } catch (...) {
      }
    }
  };

 public:
  spawned_awaitable(net::awaitable<T, AwaitableExecutor> awaitable, net::any_io_executor executor,
                    hookset::stop_token stop)
      : awaitable_(std::move(awaitable)), executor_(std::move(executor)), stop_(std::move(stop)) {}

  auto operator co_await() & noexcept {
    struct awaiter {
      spawned_awaitable& self;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> waiting) { self.start(waiting); }
      T await_resume() { return self.finish(); }
    };
    return awaiter{*this};
  }

 private:
  void start(std::coroutine_handle<> waiting) {
    shared_ = std::make_shared<state>(net::make_strand(executor_));
    shared_->waiting = waiting;
    auto target = shared_;
    if (stop_.stop_possible())
      on_stop_ =
          std::make_unique<hookset::stop_callback<emit_on_stop>>(stop_, emit_on_stop{target});
    auto done = [target](std::exception_ptr error, auto... value) {
      target->error = error;
      if constexpr (sizeof...(value) > 0) {
        if (!error) target->value.emplace(std::move(value)...);
      }
      target->waiting.resume();
    };
    // co_spawn from the strand itself: Boost 1.81's co_spawn entry point first awaits a
    // dispatch onto its executor outside its try block, so a cancellation emitted before the
    // coroutine got there escaped io_context::run() ("co_await: Operation canceled") and the
    // dispatch never completed. On the strand that dispatch completes at once; a stop that came
    // earlier (its emit found no coroutine to cancel) is emitted again after the spawn.
    net::dispatch(shared_->strand,
                  [target, awaitable = std::move(awaitable_), done = std::move(done)]() mutable {
      net::co_spawn(target->strand, std::move(awaitable),
                    net::bind_cancellation_slot(target->signal.slot(), std::move(done)));
      if (target->stopped) target->signal.emit(net::cancellation_type::terminal);
    });
  }
  T finish() {
    on_stop_.reset();  // waits for an emit in progress elsewhere
    if (shared_->error) std::rethrow_exception(shared_->error);
    if constexpr (!std::is_void_v<T>) return std::move(*shared_->value);
  }

  net::awaitable<T, AwaitableExecutor> awaitable_;
  net::any_io_executor executor_;
  hookset::stop_token stop_;
  std::shared_ptr<state> shared_;
  std::unique_ptr<hookset::stop_callback<emit_on_stop>> on_stop_;
};

inline const executor_binding* binding_of(const await_context* context) noexcept {
  return context ? dynamic_cast<const executor_binding*>(context->nearest_executor()) : nullptr;
}

template <class T, class AwaitableExecutor>
Task<T> run_awaitable(net::awaitable<T, AwaitableExecutor> awaitable) {
  const await_context* context = co_await hookset::detail::current_await_context();
  const executor_binding* binding = binding_of(context);
  if (!binding)
    throw std::logic_error(
        "hookset: an asio::awaitable hook or default needs an Asio executor: dispatch through "
        "hookset::asio::async_call, co_await the dispatch inside an asio::awaitable, or give the "
        "dispatch .on(binding) with a hookset::asio::executor_binding");
  const hookset::stop_token* stop = context->nearest_stop();
  spawned_awaitable<T, AwaitableExecutor> spawned(std::move(awaitable), binding->get(),
                                                  stop ? *stop : hookset::stop_token());
  if constexpr (std::is_void_v<T>) co_await spawned;
  else co_return co_await spawned;
}

// Keeps `executor`'s execution context from running out of work (its run() returning) while
// the returned object lives: a tracked copy of a standard executor, a work guard of a legacy one.
template <class AnyExecutor>
auto track_work(const AnyExecutor& executor) {
  if constexpr (net::execution::is_executor<AnyExecutor>::value)
    return net::prefer(executor, net::execution::outstanding_work.tracked);
  else return net::make_work_guard(executor);
}

// The handler's call with the dispatch's outcome, run on the handler's executor. The slot is
// cleared there, where the caller emits its cancellations (a cancellation slot is not
// thread-safe: clearing it from the thread the dispatch finished on could race an emit).
template <class Handler, class Result>
struct completion {
  Handler handler;
  net::cancellation_slot slot;
  std::exception_ptr error;
  std::optional<std::conditional_t<std::is_void_v<Result>, int, Result>> value;

  void operator()() {
    if (slot.is_connected()) slot.clear();
    if constexpr (std::is_void_v<Result>) {
      std::move(handler)(error);
    } else {
      if (!value) value.emplace();  // (an error: the value is ignored)
      std::move(handler)(error, std::move(*value));
    }
  }
};

// Hands a completion to the handler's executor: never inside the initiating function (Asio's
// rule), so a dispatch that completed at once is posted; one that suspended completes on the
// handler's executor. A dispatch that suspended may finish on any thread: that thread keeps the
// work on the handler's executor (`held`) until its post has returned - the handler may run, and
// the context's run() return, on another thread meanwhile, and the context must outlive the post
// (it stops when the last work goes, under its own lock). One that completed at once posts from
// inside the caller's initiating call, and holds no work.
template <class Completion, class HandlerExecutor, class Work>
struct delivery {
  Completion complete;
  HandlerExecutor executor;
  bool completed_inline;
  std::optional<Work> held;

  void operator()() {
    if (completed_inline) net::post(executor, std::move(complete));
    else net::dispatch(executor, std::move(complete));
  }
};

// The last step of run_operation, awaited as a named variable: destroys the coroutine's frame -
// the dispatch, its arguments and everything else the operation owned - and then hands the
// result on (Asio's rule: an operation releases its state before its handler is invoked). The
// awaiter lives in the frame, so the delivery is moved out before the frame goes.
template <class Delivery>
struct destroy_frame_then {
  Delivery deliver;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> frame) noexcept {
    Delivery then = std::move(deliver);
    frame.destroy();
    then();  // (noexcept: a post that cannot allocate terminates, as it did inside the frame)
  }
  void await_resume() const noexcept {}
};

// The coroutine an Asio operation runs a dispatch in: owns the dispatch and the handler until
// the dispatch completes, then hands the result to the handler on its associated executor.
// While the dispatch is pending it holds work on both executors (a hook may wait on something
// outside Asio: the io_context's run() must not return before the handler ran).
struct operation {
  struct promise_type : hookset::detail::pooled_frame, await_context_carrier {
    operation get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }  // run_operation catches everything
  };
};

// Forwards a cancellation slot's emission to the dispatch's stop source. (A copy of the
// source: the slot is cleared on the handler's executor, after the operation's frame is gone.)
struct stop_on_cancel {
  hookset::stop_source source;
  void operator()(net::cancellation_type type) {
    if ((type & (net::cancellation_type::terminal | net::cancellation_type::partial |
                 net::cancellation_type::total)) != net::cancellation_type::none)
      source.request_stop();
  }
};

// A dispatch's outcome on its way to the handler: its result, or its error.
template <class Result>
struct outcome {
  std::exception_ptr error;
  std::optional<std::conditional_t<std::is_void_v<Result>, int, Result>> value;

  // Starts the dispatch `awaiter` with `start` (true: it completed) and, if it completed, takes
  // its result - or its error, thrown by either, which completes it too. Run where synchronous
  // hooks find the executor (`link`).
  template <class Start, class Awaiter>
  bool take_if_completed(Start start, Awaiter& awaiter, const await_context& link) noexcept {
    try {
      hookset::detail::await_context_scope scope(&link);
      if (!start()) return false;
      if constexpr (std::is_void_v<Result>) awaiter.await_resume();
      else value.emplace(awaiter.await_resume());
    } catch (...) {
      error = std::current_exception();
    }
    return true;
  }
};

template <class Dispatch, class Handler>
operation run_operation(Dispatch dispatch, Handler handler, net::any_io_executor io_executor) {
  using result = typename Dispatch::result_type;
  auto handler_executor = net::get_associated_executor(handler, io_executor);
  executor_binding binding(io_executor);

  // The dispatch's context lives in this (pooled) frame rather than on the heap, and its stop
  // source is the one the cancellation slot triggers (the caller's own stop token, if the
  // dispatch had one, links to it as for any dispatch): the operation's one allocation is that
  // source's state. The dispatch moves in after it, so that it goes first.
  hookset::detail::dispatch_context context{CallOptions{}};
  Dispatch op(std::move(dispatch));
  op.run_under(context);
  if (!context.options().executor) context.options().executor = &binding;

  auto slot = net::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.template emplace<stop_on_cancel>(stop_on_cancel{context.source()});

  // Hooks find the executor (for asio::awaitable hooks) through the await context.
  const await_context link{nullptr, nullptr, nullptr, &binding};
  co_await hookset::detail::exchange_await_context{&link};

  outcome<result> out;
  std::optional<decltype(track_work(io_executor))> io_work;
  std::optional<decltype(track_work(handler_executor))> handler_work;
  bool completed_inline;
  {
    auto&& awaiter = hookset::detail::get_awaiter(std::move(op));
    completed_inline = out.take_if_completed([&] { return awaiter.await_ready(); }, awaiter, link);
    if (!completed_inline) {
      // Pending: the io_context must not run out of work until the handler ran (a hook may wait
      // on something outside Asio). Taken only now: work released before the context's run()
      // would stop it, so a dispatch that completes at once takes none.
      io_work.emplace(track_work(io_executor));
      handler_work.emplace(track_work(handler_executor));
      try {
        if constexpr (std::is_void_v<result>)
          co_await hookset::detail::already_checked_awaiter<
              std::remove_reference_t<decltype(awaiter)>>{awaiter};
        else
          out.value.emplace(co_await hookset::detail::already_checked_awaiter<
                            std::remove_reference_t<decltype(awaiter)>>{awaiter});
      } catch (...) {
        out.error = std::current_exception();
      }
    }
  }

  // The frame goes first, then the handler is called (built in place: each piece moved once
  // into the awaiter, once out of it before the frame goes).
  using handler_executor_t = decltype(handler_executor);
  using work_t = decltype(track_work(handler_executor));
  destroy_frame_then<delivery<completion<Handler, result>, handler_executor_t, work_t>> finish{
      {{std::move(handler), slot, std::move(out.error), std::move(out.value)},
       std::move(handler_executor),
       completed_inline,
       std::move(handler_work)}};
  co_await finish;
}

// The coroutine an Asio operation runs a hookset::Task in (async_run): as run_operation, with
// the Task in place of a dispatch. The Task runs under an await context that carries the
// operation's executor and a stop token the cancellation slot triggers, so what it runs - a
// tripwire, a dispatch awaited inside it, its hooks - sees both.
template <class Result, class Handler>
operation run_task_operation(Task<Result> task, Handler handler, net::any_io_executor io_executor) {
  auto handler_executor = net::get_associated_executor(handler, io_executor);
  executor_binding binding(io_executor);
  hookset::stop_source stop;
  const hookset::stop_token token = stop.get_token();
  auto slot = net::get_associated_cancellation_slot(handler);
  if (slot.is_connected()) slot.template emplace<stop_on_cancel>(stop_on_cancel{stop});
  const await_context link{nullptr, nullptr, &token, &binding};
  co_await hookset::detail::exchange_await_context{&link};

  // Work on both executors until the handler ran (the Task may wait on something outside
  // Asio); the completion is always posted, never run inside the initiating function.
  auto io_work = track_work(io_executor);
  std::optional<decltype(track_work(handler_executor))> handler_work(track_work(handler_executor));
  outcome<Result> out;
  try {
    if constexpr (std::is_void_v<Result>) co_await std::move(task);
    else out.value.emplace(co_await std::move(task));
  } catch (...) {
    out.error = std::current_exception();
  }
  using handler_executor_t = decltype(handler_executor);
  using work_t = decltype(track_work(handler_executor));
  destroy_frame_then<delivery<completion<Handler, Result>, handler_executor_t, work_t>> finish{
      {{std::move(handler), slot, std::move(out.error), std::move(out.value)},
       std::move(handler_executor),
       true,
       std::move(handler_work)}};
  co_await finish;
}

template <class Result>
struct completion_of {
  using type = void(std::exception_ptr, Result);
};
template <>
struct completion_of<void> {
  using type = void(std::exception_ptr);
};
template <class Result>
using completion_signature = typename completion_of<Result>::type;

struct initiate_call {
  net::any_io_executor io_executor;
  template <class Handler, class Dispatch>
  void operator()(Handler&& handler, Dispatch&& dispatch) const {
    net::any_io_executor executor = io_executor;
    if (!executor) executor = net::get_associated_executor(handler, net::system_executor());
    using result = typename std::remove_cvref_t<Dispatch>::result_type;
    outcome<result> out;
    {
      // A dispatch that cannot suspend and has nothing to cancel runs here, without the
      // operation's frame and context; its synchronous hooks still find the executor.
      auto op = hookset::detail::started_dispatch(std::move(dispatch));
      bool completed;
      {
        executor_binding binding(executor);
        const await_context link{nullptr, nullptr, nullptr, &binding};
        completed = out.take_if_completed([&] { return op.run_if_synchronous(); }, op, link);
      }
      if (!completed) {
        run_operation(std::move(op), std::forward<Handler>(handler), std::move(executor));
        return;
      }
    }  // (the dispatch is gone before its handler can run: Asio's rule for an operation's state)
    // Posted, never called here (Asio's rule).
    auto handler_executor = net::get_associated_executor(handler, executor);
    net::post(std::move(handler_executor),
              completion<std::decay_t<Handler>, result>{
                  std::forward<Handler>(handler), {}, std::move(out.error), std::move(out.value)});
  }
};

struct initiate_run {
  net::any_io_executor io_executor;
  template <class Handler, class Result>
  void operator()(Handler&& handler, Task<Result> task) const {
    net::any_io_executor executor = io_executor;
    if (!executor) executor = net::get_associated_executor(handler, net::system_executor());
    run_task_operation(std::move(task), std::forward<Handler>(handler), std::move(executor));
  }
};

}  // namespace detail

// Runs a hookset::Task - a tripwire's run, a coroutine awaiting several dispatches - as an Asio
// asynchronous operation completing with (std::exception_ptr, T) (or (std::exception_ptr)) on
// the handler's associated executor: `co_await hookset::asio::async_run(std::move(task),
// asio::use_awaitable)` inside an asio::awaitable. The Task runs on `executor` (default: the
// handler's associated executor), which asio::awaitable hooks and work inside it find; the
// handler's cancellation slot triggers the stop token the Task sees
// (hookset::current_stop_token()), as a dispatch's stop token would.
template <class Result, class CompletionToken>
auto async_run(Task<Result> task, CompletionToken&& token) {
  static_assert(std::is_void_v<Result> || std::is_default_constructible_v<Result>,
                "hookset::asio: a Task completing an Asio operation needs a default-constructible "
                "result (Asio passes one along with an error)");
  return net::async_initiate<CompletionToken, detail::completion_signature<Result>>(
      detail::initiate_run{}, token, std::move(task));
}
template <class Result, class CompletionToken>
auto async_run(net::any_io_executor executor, Task<Result> task, CompletionToken&& token) {
  return net::async_initiate<CompletionToken, detail::completion_signature<Result>>(
      detail::initiate_run{std::move(executor)}, token, std::move(task));
}

// Runs the dispatch `dispatch` (what set.call<S>(args...) returns, options included) as an Asio
// asynchronous operation completing with (std::exception_ptr, R) - or (std::exception_ptr) for
// void slots - on the handler's associated executor. Hooks run on `executor` (default: the
// handler's associated executor).
template <class Dispatch, class CompletionToken>
requires requires { typename std::remove_cvref_t<Dispatch>::result_type; }
auto async_call(Dispatch&& dispatch, CompletionToken&& token) {
  using result = typename std::remove_cvref_t<Dispatch>::result_type;
  static_assert(
      std::is_void_v<result> || std::is_default_constructible_v<result>,
      "hookset::asio: a dispatch completing an Asio operation needs a default-constructible "
      "result (Asio passes one along with an error)");
  return net::async_initiate<CompletionToken, detail::completion_signature<result>>(
      detail::initiate_call{}, token, std::forward<Dispatch>(dispatch));
}
template <class Dispatch, class CompletionToken>
requires requires { typename std::remove_cvref_t<Dispatch>::result_type; }
auto async_call(net::any_io_executor executor, Dispatch&& dispatch, CompletionToken&& token) {
  using result = typename std::remove_cvref_t<Dispatch>::result_type;
  return net::async_initiate<CompletionToken, detail::completion_signature<result>>(
      detail::initiate_call{std::move(executor)}, token, std::forward<Dispatch>(dispatch));
}

namespace detail {
template <class Admission>
Task<bool> admitted(Admission& admission) {
  co_return co_await admission.admit();
}
}  // namespace detail

// A tripwire's admission (<hookset/tripwire.hpp>) for work that is an asio::awaitable, which
// cannot await hookset::Admission::admit() itself: completes with (std::exception_ptr, bool) as
// admit() does, once every guard has settled - `if (co_await hookset::asio::async_admit(
// admission, asio::use_awaitable)) commit();`.
template <std::same_as<hookset::Admission> Admission, class CompletionToken>
auto async_admit(Admission& admission, CompletionToken&& token) {
  return async_run(detail::admitted(admission), std::forward<CompletionToken>(token));
}

}  // namespace hookset::asio

namespace hookset::detail {

// A dispatch as an Asio operation (dispatch::operator()(token)).
template <class Dispatch, class CompletionToken>
requires requires { typename std::remove_cvref_t<Dispatch>::result_type; }
auto hookset_async_call(Dispatch&& dispatch, CompletionToken&& token)
    -> decltype(boost::asio::async_initiate<
                CompletionToken, hookset::asio::detail::completion_signature<
                                     typename std::remove_cvref_t<Dispatch>::result_type>>(
        hookset::asio::detail::initiate_call{}, token, std::forward<Dispatch>(dispatch))) {
  return hookset::asio::async_call(std::forward<Dispatch>(dispatch),
                                   std::forward<CompletionToken>(token));
}

// asio::awaitable<T> as a default or a hook.
template <class T, class Executor>
struct foreign_awaitable<boost::asio::awaitable<T, Executor>> {
  using result_type = T;
  static Task<T> to_task(boost::asio::awaitable<T, Executor>&& awaitable) {
    return hookset::asio::detail::run_awaitable(std::move(awaitable));
  }
};

}  // namespace hookset::detail
