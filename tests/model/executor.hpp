// The executor of the model-based tests: runs operations on a pool of real HookSets and on the
// reference model (reference_model.hpp) in lockstep, and checks every dispatch - its result, every
// call it makes, hooks_run, warnings - against the model's prediction. run_sequence() runs one
// sequence and says where it first went wrong; shrink() cuts a failing sequence down. Used by
// tests/model/randomized.cpp (random sequences) and tests/fuzz/ (sequences decoded from bytes).
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/hookset.hpp>

#include "test_support.hpp"

#include "catalog.hpp"
#include "operations.hpp"
#include "reference_model.hpp"

namespace hookset_model {

// ---- the executor: runs operations on the real pool and the model in lockstep
// ---------------------

class Executor;

// A concrete operation: picks resolved against the model when it runs (so the real side, which
// may run it later - inside a hook - does exactly what the model did).
struct Flight;

struct Action {
  Op::Kind kind = Op::Add;
  int set = 0;
  int other = -1;
  int slot = 0;
  int token = 0;  // add: the new registration; remove: its target, 0 = the null id
  int priority = 0;
  int value = 0;
  int variant = 0;
  int policy = 0;
  int limit = 0;
  int own = 0;
  bool multi = false;  // add: tokens token .. token + slot_count - 1, one per slot
  bool async = false;
  Behaviour behaviour;
  OpList mutations;
  std::vector<Action> fresh;      // extend-fresh: the fresh set's actions
  bool skip = false;              // a no-op (pool too small, lists too long)
  Flight* flight = nullptr;       // call (made by a running hook): the dispatch, already predicted
  bool expect = false;            // remove: what it must return
  int selector = 0, pattern = 0;  // add to a keyed slot: which keys
  int name = 0, order = 0;        // add, intercept: named order (Op::name, Op::order)
  bool refused = false;           // add, intercept, extend: the model says it throws OrderingError
};

// A registration's options, as the model names them (reference_model.hpp): with options, its
// name is "h<token>" or a shared one; its before/after constraint names one of those.
inline std::string registration_name(int token, int name) {
  return name ? order_name(name) : hook_name(token);
}
inline void add_order(hookset::HookOptions& options, int order) {
  if (order >= 1 && order <= 3) options.before.push_back(order_name(order));
  if (order >= 4 && order <= 6) options.after.push_back(order_name(order - 3));
}

struct HookCore {
  int token;
  Behaviour behaviour;
  bool mutates;
  Executor* executor;
  void begin(const Call& c, long long seen) const;
  Task<void> park(const Call& c) const;
  void end() const {
    if (behaviour.throws) throw std::runtime_error("hook " + std::to_string(token) + " throws");
  }
};

enum class Shape { Fold, Plain, Void, Pipeline };

using PipelineDecision = hookset::Decision<Call, int>;
inline PipelineDecision decide(const Call& c, int k) {
  switch (pipeline_decision(k)) {
    case Decides::Rewrite:
      return hookset::rewrite(Call{c.x + k, c.id});
    case Decides::Complete:
      return hookset::complete(2 * c.x + k);
    case Decides::Reject:
      return hookset::reject("r" + std::to_string(k));
    case Decides::Pass:
      break;
  }
  return hookset::pass();
}

template <Shape, bool Async>
struct Hook;
template <>
struct Hook<Shape::Fold, false> {
  HookCore core;
  int operator()(const Call& c, std::optional<int> last) const {
    core.begin(c, encode(last));
    core.end();
    return fold_value(last, core.behaviour.k);
  }
};
template <>
struct Hook<Shape::Fold, true> {
  HookCore core;
  Task<int> operator()(Call c, std::optional<int> last) const {
    core.begin(c, encode(last));
    if (core.behaviour.suspend) co_await core.park(c);
    core.end();
    co_return fold_value(last, core.behaviour.k);
  }
};
template <>
struct Hook<Shape::Plain, false> {
  HookCore core;
  int operator()(const Call& c) const {
    core.begin(c, c.x);
    core.end();
    return plain_value(c, core.behaviour.k);
  }
};
template <>
struct Hook<Shape::Plain, true> {
  HookCore core;
  Task<int> operator()(Call c) const {
    core.begin(c, c.x);
    if (core.behaviour.suspend) co_await core.park(c);
    core.end();
    co_return plain_value(c, core.behaviour.k);
  }
};
template <>
struct Hook<Shape::Void, false> {
  HookCore core;
  void operator()(const Call& c) const {
    core.begin(c, c.x);
    core.end();
  }
};
template <>
struct Hook<Shape::Void, true> {
  HookCore core;
  Task<void> operator()(Call c) const {
    core.begin(c, c.x);
    if (core.behaviour.suspend) co_await core.park(c);
    core.end();
  }
};

template <>
struct Hook<Shape::Pipeline, false> {
  HookCore core;
  PipelineDecision operator()(const Call& c) const {
    core.begin(c, c.x);
    core.end();
    return decide(c, core.behaviour.k);
  }
};
template <>
struct Hook<Shape::Pipeline, true> {
  HookCore core;
  Task<PipelineDecision> operator()(Call c) const {
    core.begin(c, c.x);
    if (core.behaviour.suspend) co_await core.park(c);
    core.end();
    co_return decide(c, core.behaviour.k);
  }
};

template <class S>
constexpr Shape shape_of = S::kind.mode == Mode::Pipeline ? Shape::Pipeline
                           : S::kind.has(kVoid)           ? Shape::Void
                           : S::kind.fold()               ? Shape::Fold
                                                          : Shape::Plain;

template <Shape Sh>
using output_of =
    std::conditional_t<Sh == Shape::Void, void,
                       std::conditional_t<Sh == Shape::Pipeline, PipelineDecision, int>>;

// A coroutine hook run from a frame that owns it (a temporary's coroutine would outlive it).
template <Shape Sh, class... Last>
Task<output_of<Sh>> owning_frame(Hook<Sh, true> hook, Call c, Last... last) {
  if constexpr (std::is_void_v<output_of<Sh>>) co_await hook(c, last...);
  else co_return co_await hook(c, last...);
}

// A hook of a keyed slot: the same hook, given the key too (recorded, kKey). It holds the hook,
// so a coroutine hook's frame refers to the registered object.
template <class H, bool Fold>
struct KeyedHook;
template <class H>
struct KeyedHook<H, true> {
  H hook;
  auto operator()(const Call& c, std::string_view key, std::optional<int> last) const {
    record_key(c.id, hook.core.token, key);
    return hook(c, last);
  }
};
template <class H>
struct KeyedHook<H, false> {
  H hook;
  auto operator()(const Call& c, std::string_view key) const {
    record_key(c.id, hook.core.token, key);
    return hook(c);
  }
};

// One object for every slot of the set (add_hooks): called with the slot first, then the slot's
// hook shape. Its adapter for the i-th slot behaves as a hook with token `core.token + i`.
template <bool Async>
struct MultiHook {
  HookCore core;
  template <class S>
  HookCore adapter() const {
    return {core.token + static_cast<int>(mp::mp_find<Slots, S>::value), core.behaviour,
            core.mutates, core.executor};
  }
  template <class S>
  requires(S::kind.keyed() && shape_of<S> == Shape::Fold) auto operator()(
      S, const Call& c, std::string_view key, std::optional<int> last) const {
    record_key(c.id, adapter<S>().token, key);
    return (*this)(S{}, c, last);
  }
  template <class S>
  requires(S::kind.keyed() && shape_of<S> != Shape::Fold) auto operator()(
      S, const Call& c, std::string_view key) const {
    record_key(c.id, adapter<S>().token, key);
    return (*this)(S{}, c);
  }
  template <class S>
  requires(shape_of<S> == Shape::Fold) auto operator()(S, const Call& c,
                                                       std::optional<int> last) const {
    if constexpr (Async)
      return owning_frame<Shape::Fold>(Hook<Shape::Fold, true>{adapter<S>()}, c, last);
    else return Hook<Shape::Fold, false>{adapter<S>()}(c, last);
  }
  template <class S>
  requires(shape_of<S> != Shape::Fold) auto operator()(S, const Call& c) const {
    if constexpr (Async) return owning_frame<shape_of<S>>(Hook<shape_of<S>, true>{adapter<S>()}, c);
    else return Hook<shape_of<S>, false>{adapter<S>()}(c);
  }
};

// The model's interceptors (reference_model.hpp, Intercepts): one generic object, for any slot
// (intercept<S>) or every slot at once (intercept_all). It records under the dispatch's id (kept
// when it replaces x), so its calls are checked with the hooks' in one list.
template <class S>
using result_of = hookset::call_result_t<S>;

template <class S>
result_of<S> interceptor_answer_value(int k, const Call& c) {
  using R = result_of<S>;
  if constexpr (std::is_void_v<R>) return;
  else if constexpr (S::kind.mode == Mode::Pipeline)
    return R{hookset::Complete<int>{k}, c, hookset::HookId{}};
  else if constexpr (S::kind.has(kOutput)) return "i" + std::to_string(k);
  else return k;
}

// After next returned `r`: recorded (int results by value), and changed if the interceptor does.
template <class S>
result_of<S> interceptor_after(int token, int does, int k, const Call& c, result_of<S> r) {
  if constexpr (S::kind.int_result()) {
    recorder.record(c.id, token, kNextReturned, r);
    return does == kChangeResult ? r + k : r;
  } else {
    recorder.record(c.id, token, kNextReturned, 0);
    if constexpr (S::kind.has(kOutput))
      if (does == kChangeResult) r += "+" + std::to_string(k);
    return r;
  }
}
inline void interceptor_after_void(int token, const Call& c) {
  recorder.record(c.id, token, kNextReturned, 0);
}
inline void interceptor_begins(int token, int does, const Call& c) {
  recorder.record(c.id, token, kIntercepted, c.x);
  if (does == kThrow) throw std::runtime_error(interceptor_throws(token));
}
inline Call interceptor_argument(int does, int k, const Call& c) {
  return does == kReplaceArgument ? Call{c.x + k, c.id} : c;
}
// A keyed slot's key as the interceptor passes it on (replaced along with x).
inline std::string_view interceptor_key(int does, std::string_view key) {
  if (does != kReplaceArgument) return key;
  return keys[static_cast<std::size_t>((key_index(key) + 1) % key_count)];
}
// kNextTwice: next() called again once the first returned; it must fail with std::logic_error
// when awaited (recorded), which an odd k lets through. (sync_wait even in a coroutine
// interceptor: it fails before anything runs.)
template <class Awaitable>  // (what next() returns)
void second_next(int token, int k, const Call& c, Awaitable again) {
  try {
    hookset::sync_wait(std::move(again));
    recorder.record(c.id, token, kSecondNext, 0);
  } catch (const std::logic_error&) {
    recorder.record(c.id, token, kSecondNext, 1);
    if (k % 2 != 0) throw;
  } catch (...) {
    recorder.record(c.id, token, kSecondNext, 2);
  }
}

template <class S, class... Key>
result_of<S> run_interceptor_sync(int token, int does, int k, hookset::Next<S> next, const Call& c,
                                  Key... key) {
  interceptor_begins(token, does, c);
  if (does == kAnswer) return interceptor_answer_value<S>(k, c);
  const Call argument = interceptor_argument(does, k, c);
  try {
    if constexpr (std::is_void_v<result_of<S>>) {
      hookset::sync_wait(next(argument, interceptor_key(does, key)...));
      interceptor_after_void(token, c);
      if (does == kNextTwice) second_next(token, k, c, next(argument, key...));
    } else {
      result_of<S> r = interceptor_after<S>(
          token, does, k, c, hookset::sync_wait(next(argument, interceptor_key(does, key)...)));
      if (does == kNextTwice) second_next(token, k, c, next(argument, key...));
      return r;
    }
  } catch (...) {
    if (does != kCatch) throw;
    recorder.record(c.id, token, kCaught, 0);
    return interceptor_answer_value<S>(k, c);
  }
}

template <class S, class... Key>
Task<result_of<S>> run_interceptor_async(int token, int does, int k, hookset::Next<S> next, Call c,
                                         Key... key) {
  interceptor_begins(token, does, c);
  if (does == kAnswer) co_return interceptor_answer_value<S>(k, c);
  const Call argument = interceptor_argument(does, k, c);
  bool caught = false;  // (no co_return from a handler's co_await-free body is needed then)
  std::optional<std::conditional_t<std::is_void_v<result_of<S>>, bool, result_of<S>>> result;
  try {
    if constexpr (std::is_void_v<result_of<S>>) {
      co_await next(argument, interceptor_key(does, key)...);
      interceptor_after_void(token, c);
      result = true;
    } else {
      result.emplace(interceptor_after<S>(token, does, k, c,
                                          co_await next(argument, interceptor_key(does, key)...)));
    }
    if (does == kNextTwice) second_next(token, k, c, next(argument, key...));
  } catch (...) {
    if (does != kCatch) throw;
    caught = true;
  }
  if (caught) {
    recorder.record(c.id, token, kCaught, 0);
    co_return interceptor_answer_value<S>(k, c);
  }
  if constexpr (!std::is_void_v<result_of<S>>) co_return std::move(*result);
}

template <bool Async>
struct Interceptor {
  int token;
  int does;
  int k;
  template <class Next, class... Key>  // (keyed slots: the key, a std::string_view)
  auto operator()(Next next, const Call& c, Key... key) const {
    using S = typename Next::slot;
    if constexpr (Async) return run_interceptor_async<S>(token, does, k, next, c, key...);
    else return run_interceptor_sync<S>(token, does, k, next, c, key...);
  }
};

inline std::string render(int v) { return std::to_string(v); }
inline std::string render(std::string v) { return v; }
// A pipeline's result as the model spells it, and its deciding registration as "by#<id>".
inline std::string render(const hookset::PipelineResult<Call, int>& r) {
  std::string text =
      r.completed() ? "complete:" + std::to_string(r.output()) : "reject:" + r.reason();
  text += " input=" + std::to_string(r.input.x);
  return text + (r.decided_by ? " by#" + std::to_string(r.decided_by.value()) : " by=default");
}

// An error a dispatch ended with, spelled as the model spells it (reference_model.hpp).
inline std::string render_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const hookset::HookFailed& e) {
    return "failclosed[" + e.hook_name + "]:" + render_error(e.cause);
  } catch (const hookset::DispatchTimeout& e) {
    return "timeout[" + (e.per_hook ? e.hook_name : std::string()) + "]";
  } catch (const hookset::DispatchCancelled&) {
    return "cancelled";
  } catch (const std::logic_error& e) {
    const std::string what = e.what();
    return what.ends_with("an interceptor called next() more than once") ? "next twice" : what;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// How often the features beyond add/remove/configure/copy/extend/call were exercised.
struct Features {
  std::size_t stopped = 0;         // dispatches stopped (before the start, in a hook, while parked)
  std::size_t stopped_parked = 0;  //   of which while parked
  std::size_t deadline = 0;        // dispatches whose deadline had passed
  std::size_t failed_open = 0;     // hook failures a FailOpen policy skipped
  std::size_t pipelines = 0;       // pipeline dispatches
  std::size_t borrowed = 0, shared = 0, stateful = 0, multi = 0;  // registrations: std::ref,
                                                                  // shared_ptr, Stateful, add_hooks
  std::size_t frozen_calls = 0, shared_calls = 0;   // dispatches through freeze() / a SharedHookSet
  std::size_t nested = 0;                           // dispatches made by running hooks
  std::size_t interceptors = 0, intercept_all = 0;  // registrations: intercept<S>, intercept_all
  std::size_t intercepted = 0;  // dispatches with interceptors (each checked as the others)
  std::size_t keyed_calls = 0, keyed_selectors = 0;  // keyed dispatches; registrations with a
                                                     // key, prefix, glob or predicate
  std::size_t named = 0, refused = 0;  // registrations with a constraint; OrderingErrors (add,
                                       // intercept, extend)
  std::size_t next_twice = 0;          // interceptors registered to call next() twice
  std::size_t hook_marks = 0;          // per-hook observer events checked (interceptors' included)
  Features& operator+=(const Features& o) {
    keyed_calls += o.keyed_calls;
    keyed_selectors += o.keyed_selectors;
    named += o.named;
    refused += o.refused;
    next_twice += o.next_twice;
    hook_marks += o.hook_marks;
    stopped += o.stopped;
    stopped_parked += o.stopped_parked;
    deadline += o.deadline;
    failed_open += o.failed_open;
    pipelines += o.pipelines;
    borrowed += o.borrowed;
    shared += o.shared;
    stateful += o.stateful;
    multi += o.multi;
    frozen_calls += o.frozen_calls;
    shared_calls += o.shared_calls;
    nested += o.nested;
    interceptors += o.interceptors;
    intercept_all += o.intercept_all;
    intercepted += o.intercepted;
    return *this;
  }
};

template <class>
struct shared_of;
template <class... Members>
struct shared_of<hookset::HookSet<Members...>> {
  using type = hookset::SharedHookSet<Members...>;
};
using SharedSet = shared_of<Set>::type;

// A dispatch in flight: what the model says it does, and what really happened.
struct Flight {
  int call = 0;
  int slot = 0;
  Call argument{};
  int key = 0;                 // keyed slots: an index in `keys`
  std::size_t pool_index = 0;  // the dispatched set's index in the pool (when it starts)
  int variant = 0;             // Op::variant of the call
  ModelSlotState snapshot;     // what the model dispatches (kept to predict again when stopped)
  bool has_token = false;      // dispatched with the stop token of `stop`
  bool deadline_passed = false;
  hookset::stop_source stop;
  int stop_at = 0;            // > 0: the hook that requests the stop when it begins
  int begun = 0;              // hooks of it begun so far (real side)
  bool stopped = false;       // the model's: a stop was requested
  const void* set = nullptr;  // the dispatched set (only compared: it may be gone)
  Prediction prediction;
  std::size_t next_step = 0;
  bool model_done = false;
  std::uint64_t dispatch_id = 0;  // the observer's id
  std::string real;
  bool real_done = false;
  // The lifetime oracle: Call copies the dispatch made that are alive once it has completed.
  std::vector<std::string> outlived;
};

// The flight's call options on a dispatch (before it starts).
template <class Dispatch>
Dispatch&& with_options(Dispatch&& dispatch, const Flight& flight) {
  if (flight.has_token) std::move(dispatch).with_stop_token(flight.stop.get_token());
  if (flight.deadline_passed)
    std::move(dispatch).with_deadline(std::chrono::steady_clock::now() - std::chrono::seconds(1));
  return std::move(dispatch);
}

// set.call<S>(c), with the key last for a keyed slot.
template <class S, class AnySet>
auto call_of(const AnySet& set, const Call& c, const Flight& flight) {
  if constexpr (S::kind.keyed())
    return set.template call<S>(c, keys[static_cast<std::size_t>(flight.key)]);
  else return set.template call<S>(c);
}

template <class S, class AnySet>
test_support::Detached await_dispatch(const AnySet& set, Call c, Flight& flight) {
  const std::uint64_t since = test_support::lifetime::mark();
  try {
    if constexpr (S::kind.has(kVoid)) {
      co_await with_options(call_of<S>(set, c, flight), flight);
      flight.real = "void";
    } else {
      flight.real = render(co_await with_options(call_of<S>(set, c, flight), flight));
    }
  } catch (...) {
    flight.real = "throw:" + render_error(std::current_exception());
  }
  flight.outlived = test_support::lifetime::alive_since(c.id, since);
  flight.real_done = true;
}

struct CountingObserver : hookset::Observer {
  bool hook_events = false;  // per-hook events, by dispatch id (HookMark, with HookId values)
  std::unordered_map<std::uint64_t, std::vector<HookMark>> marks;
  bool wants_hook_events() const noexcept override { return hook_events; }
  void on_hook_begin(const hookset::HookEvent& e) override { mark(e, false); }
  void on_hook_end(const hookset::HookEvent& e) override { mark(e, true); }
  void mark(const hookset::HookEvent& e, bool end) {
    HookMark m{e.interceptor, end, static_cast<int>(e.position)};
    if (e.interceptor && !end) {
      m.token = static_cast<int>(e.hook.value());  // compared with the model's, as ids
      m.name = std::string(e.name);
    }
    if (e.interceptor && end) m.failed = e.outcome == hookset::HookOutcome::failed;
    marks[e.dispatch_id].push_back(std::move(m));
  }
  int warnings = 0;
  std::uint64_t last_begin = 0;
  std::vector<std::uint64_t> begins;  // in order
  std::unordered_map<std::uint64_t, std::pair<std::size_t, bool>> ends;
  void on_warning(std::string_view, std::string_view) override { ++warnings; }
  void on_dispatch_begin(std::string_view, std::uint64_t id) override {
    last_begin = id;
    begins.push_back(id);
  }
  void on_dispatch_end(std::string_view, std::uint64_t id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    ends[id] = {hooks_run, error != nullptr};
  }
};

struct Gate {
  int call;
  int token;
  test_support::ManualEvent event;
};

class Executor {
 public:
  static constexpr std::size_t max_sets = 3;
  // Interceptors per slot: each one nests the rest of the dispatch (a level of the model's
  // recursion, Predictor::intercepted, and of the real dispatch; a synchronous interceptor's
  // sync_wait a level of the stack). Extends that would go beyond are skipped.
  static constexpr std::size_t max_interceptors = 8;

  explicit Executor(Config config) : config_(config) {
    recorder = Recorder{};
    model_.emplace_back();
    real_.push_back(std::make_unique<Set>());
    observer_.hook_events = config_.observe;
    if (config_.observe) previous_observer_ = hookset::set_observer(&observer_);
  }
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor() {
    tearing_down_ = true;
    // Whatever a failure left parked runs to its end now, so no coroutine frame leaks.
    for (int guard = 0; !gates_.empty() && guard < 100000; ++guard) {
      std::unique_ptr<Gate> gate = std::move(gates_.front());
      gates_.pop_front();
      gate->event.fire();
    }
    real_.clear();
    if (config_.observe) hookset::set_observer(previous_observer_);
  }

  // Runs one generated operation; returns what went wrong, if anything.
  std::optional<std::string> apply(const Op& op) {
    ++operations_;
    nested_budget_ = 32;
    if (op.kind == Op::Call) {
      call(op);
    } else if (op.kind == Op::Release) {
      release(op.value);
    } else if (op.kind == Op::Cancel) {
      cancel(op.value);
    } else {
      Action action = resolve(op);
      apply_model(action);
      apply_real(action);
    }
    check_pool();
    return failure_;
  }

  // Releases every dispatch still parked (in an order drawn from `seed`), checks the outcomes.
  std::optional<std::string> finish(std::uint64_t seed) {
    Random r(seed);
    while (!failure_ && !pending_.empty()) {
      release(r.below(1000));
      check_pool();
    }
    if (!failure_ && !flights_.empty())
      fail(std::to_string(flights_.size()) +
           " dispatches still in flight when every parked one was released");
    return failure_;
  }

  std::size_t operations() const { return operations_; }
  std::size_t hook_operations() const { return hook_operations_; }
  std::size_t dispatches_checked() const { return dispatches_checked_; }
  std::size_t hooks_run() const { return hooks_run_; }
  std::size_t dispatches_failed() const { return dispatches_failed_; }
  std::size_t max_parked() const { return max_parked_; }
  std::size_t destroyed_in_flight() const { return destroyed_in_flight_; }
  const Features& features() const { return features_; }

  // ---- what the real hooks call -----------------------------------------------------------------

  void hook_begins(const Call& c, int token, long long seen, bool mutates) {
    recorder.record(c.id, token, kBegin, seen);
    for (const auto& flight : flights_)
      if (flight->call == c.id && ++flight->begun == flight->stop_at) flight->stop.request_stop();
    if (!mutates) return;
    if (script_.empty()) {
      if (!tearing_down_)
        fail("hook#" + std::to_string(token) + " of call " + std::to_string(c.id) +
             " ran unexpectedly");
      return;
    }
    Group group = std::move(script_.front());
    script_.pop_front();
    if (group.call != c.id || group.token != token) {
      fail("hook#" + std::to_string(token) + " of call " + std::to_string(c.id) +
           " ran where the model expected hook#" + std::to_string(group.token) + " of call " +
           std::to_string(group.call));
      return;
    }
    for (const Action& action : group.actions) apply_real(action);
    recorder.current_call =
        c.id;  // companions still to run are this dispatch's, not a nested one's
  }

  test_support::ManualEvent& park(const Call& c, int token) {
    gates_.push_back(std::make_unique<Gate>(Gate{c.id, token, {}}));
    max_parked_ = std::max(max_parked_, gates_.size());
    return gates_.back()->event;
  }

 private:
  // The operations one running hook performs, resolved by the model when it predicted them.
  struct Group {
    int call;
    int token;
    std::vector<Action> actions;
  };

  void fail(std::string message) {
    if (!failure_) failure_ = std::move(message);
  }

  // ---- resolution: picks -> concrete sets, registrations, companions
  // ------------------------------

  Action resolve(const Op& op) {
    Action a;
    a.kind = op.kind;
    a.set = op.set % static_cast<int>(model_.size());
    a.slot = op.slot;
    a.priority = op.priority;
    a.value = op.value;
    a.variant = op.variant;
    a.policy = op.policy;
    a.limit = op.limit;
    a.own = op.own;
    a.multi = op.multi;
    a.async = op.async;
    a.behaviour = {op.value, op.throws, op.suspend};
    a.mutations = op.nested;
    a.selector = op.selector;
    a.pattern = op.pattern;
    a.name = op.name;
    a.order = op.order;
    const ModelSet& target = model_[static_cast<std::size_t>(a.set)];
    switch (op.kind) {
      case Op::Add:
        a.skip = op.multi ? std::any_of(
                                target.begin(), target.end(),
                                [](const ModelSlotState& slot) { return slot.hooks.size() >= 24; })
                          : target[static_cast<std::size_t>(op.slot)].hooks.size() >= 24;
        if (!a.skip) a.token = take_tokens(op);
        if (!a.skip && op.variant)
          for (int i = 0; i < (op.multi ? slot_count : 1); ++i) anonymous_.push_back(a.token + i);
        break;
      case Op::Intercept:
        a.skip = op.multi
                     ? std::any_of(
                           target.begin(), target.end(),
                           [](const ModelSlotState& slot) { return slot.interceptors.size() >= 4; })
                     : target[static_cast<std::size_t>(op.slot)].interceptors.size() >= 4;
        if (!a.skip) a.token = ++tokens_;  // one registration, also for every slot
        break;
      case Op::Remove:
        if (op.variant == 0) {
          std::vector<int> live;
          for (const ModelSlotState& slot : target) {
            for (const ModelHook& h : slot.hooks) live.push_back(h.token);
            for (const ModelInterceptor& i : slot.interceptors)
              if (std::find(live.begin(), live.end(), i.token) == live.end())
                live.push_back(i.token);
          }
          a.token = live.empty() ? 0 : live[static_cast<std::size_t>(op.value) % live.size()];
        } else if (op.variant == 1) {
          a.token = tokens_ == 0 ? 0 : 1 + op.value % tokens_;
        }
        // A registration made through with<S> has no id to remove it by.
        if (std::find(anonymous_.begin(), anonymous_.end(), a.token) != anonymous_.end())
          a.token = 0;
        break;
      case Op::Configure:
        a.skip = !companion_of(op.slot, op.variant, a.variant);
        break;
      case Op::Copy:
        a.other = model_.size() < max_sets ? -1 : op.other % static_cast<int>(model_.size());
        break;
      case Op::Extend:
        a.other = op.other % static_cast<int>(model_.size());
        a.skip =
            total_hooks(target) + total_hooks(model_[static_cast<std::size_t>(a.other)]) > 240 ||
            most_interceptors(target) +
                    most_interceptors(model_[static_cast<std::size_t>(a.other)]) >
                max_interceptors;
        break;
      case Op::ExtendFresh:
        a.skip = total_hooks(target) > 200 || most_interceptors(target) + 4 > max_interceptors;
        if (!a.skip)
          for (const Op& sub : *op.nested) {
            Action f = resolve_fresh(sub);
            if (!f.skip) a.fresh.push_back(std::move(f));
          }
        break;
      case Op::Drop:
        a.skip = model_.size() == 1;
        break;
      case Op::Call:
      case Op::Release:
      case Op::Cancel:
        break;
    }
    return a;
  }

  Action resolve_fresh(const Op& op) {
    Action a;
    a.kind = op.kind;
    a.selector = op.selector;
    a.pattern = op.pattern;
    a.name = op.name;
    a.order = op.order;
    a.slot = op.slot;
    a.priority = op.priority;
    a.value = op.value;
    a.policy = op.policy;
    a.limit = op.limit;
    a.own = op.own;
    a.multi = op.multi;
    a.async = op.async;
    a.behaviour = {op.value, op.throws, op.suspend};
    a.variant = op.kind == Op::Intercept ? op.variant : 0;
    if (op.kind == Op::Add)
      a.token = take_tokens(op);  // a fresh set is built with add<S> / add_hooks
    else if (op.kind == Op::Intercept) a.token = ++tokens_;
    else a.skip = !companion_of(op.slot, op.variant, a.variant);
    return a;
  }

  // A new registration's token (add_hooks: one per slot, consecutive).
  int take_tokens(const Op& op) {
    const int first = tokens_ + 1;
    tokens_ += op.multi ? slot_count : 1;
    return first;
  }

  // Which companion (0 chain, 1 aggregate, 2 finalize) `pick` names for a slot, if it has any.
  static bool companion_of(int slot, int pick, int& which) {
    const SlotKind kind = slot_kinds[static_cast<std::size_t>(slot)];
    const bool has[3] = {kind.has(kChain), kind.has(kAggregate), kind.has(kFinalize)};
    for (int i = 0; i < 3; ++i) {
      const int candidate = (pick + i) % 3;
      if (has[candidate]) {
        which = candidate;
        return true;
      }
    }
    return false;
  }

  // ---- the model side ---------------------------------------------------------------------------

  // The model's registrations. Each returns false when the library refuses it with
  // OrderingError (docs/semantics.md, section 13: a name nobody has, or a cycle): nothing
  // changes then.
  bool model_add(ModelSet& set, const Action& a) {
    if (a.multi) {  // add_hooks: an adapter for every slot, in the set's slot order (no names)
      for (int i = 0; i < slot_count; ++i) {
        Action one = a;
        one.multi = false;
        one.slot = i;
        one.token = a.token + i;
        model_add(set, one);
      }
      return true;
    }
    ModelSlotState& slot = set[static_cast<std::size_t>(a.slot)];
    ModelHook hook{a.token,  a.priority, a.async,    a.behaviour, a.mutations,
                   a.policy, a.limit,    a.selector, a.pattern};
    if (a.policy || a.limit || a.name || a.order) hook.name = registration_name(a.token, a.name);
    if (a.order >= 1 && a.order <= 3) hook.before = order_name(a.order);
    if (a.order >= 4) hook.after = order_name(a.order - 3);
    const SlotKind kind = slot_kinds[static_cast<std::size_t>(a.slot)];
    if (kind.mode == Mode::Singleton && !kind.keyed()) {
      if (!slot.hooks.empty()) ++expected_warnings_;  // "singleton hook replaced"
      slot.hooks = {hook};
      return true;
    }
    // A keyed Singleton: the new registration replaces those with the same selector.
    std::vector<ModelHook> hooks = slot.hooks;
    const bool replaced = kind.mode == Mode::Singleton && std::erase_if(hooks,
                                                                        [&](const ModelHook& h) {
      return same_selector(h.selector, h.pattern, hook.selector, hook.pattern);
                                                          }) != 0;
    hooks.push_back(hook);
    if (!named_order(hooks, hook.token)) return false;
    if (replaced) ++expected_warnings_;  // "... keeps only the newest hook per selector"
    slot.hooks = std::move(hooks);
    return true;
  }
  // An intercept_all registers in every slot, all or nothing.
  static bool model_intercept(ModelSet& set, const Action& a) {
    if (a.policy >= 2)
      return true;  // refused: an interceptor takes no time limit nor failure policy
    ModelInterceptor interceptor{a.token, a.priority, a.async, a.variant, a.value};
    if (a.policy == 1 || a.name || a.order) interceptor.name = registration_name(a.token, a.name);
    if (a.order >= 1 && a.order <= 3) interceptor.before = order_name(a.order);
    if (a.order >= 4) interceptor.after = order_name(a.order - 3);
    ModelSet updated = set;
    for (int i = 0; i < slot_count; ++i) {
      if (!a.multi && i != a.slot) continue;
      std::vector<ModelInterceptor>& list = updated[static_cast<std::size_t>(i)].interceptors;
      list.push_back(interceptor);
      if (!named_order(list, a.token)) return false;
    }
    set = std::move(updated);
    return true;
  }
  static void model_configure(ModelSet& set, const Action& a) {
    ModelSlotState& slot = set[static_cast<std::size_t>(a.slot)];
    (a.variant == 0 ? slot.chain : a.variant == 1 ? slot.aggregate : slot.finalize) = a.value;
  }
  // docs/semantics.md, extend: merged by priority, after mine on equal priority (appending to the
  // arrival order says exactly that), then the named order again; a singleton hook or configured
  // companion of theirs replaces mine (a keyed Singleton slot keeps both sides' registrations).
  // A cycle in some slot throws OrderingError and leaves the set as it was; the slots merged
  // before it (in the set's slot order) have warned already. False then.
  bool model_extend(ModelSet& mine, ModelSet theirs) {  // by value: `theirs` may be `mine`
    ModelSet merged = mine;
    int warnings = 0;
    for (std::size_t i = 0; i < merged.size(); ++i) {
      ModelSlotState& a = merged[i];
      const ModelSlotState& b = theirs[i];
      int slot_warnings = 0;
      if (slot_kinds[i].mode == Mode::Singleton && !slot_kinds[i].keyed()) {
        if (!b.hooks.empty()) {
          if (!a.hooks.empty()) ++slot_warnings;
          a.hooks = b.hooks;
        }
      } else {
        a.hooks.insert(a.hooks.end(), b.hooks.begin(), b.hooks.end());
      }
      // Interceptors merge as hooks do, also in a singleton slot (none replaces another).
      a.interceptors.insert(a.interceptors.end(), b.interceptors.begin(), b.interceptors.end());
      if (!named_order(a.hooks) || !named_order(a.interceptors)) {
        expected_warnings_ += warnings;
        return false;
      }
      if ((a.chain && b.chain) || (a.aggregate && b.aggregate) || (a.finalize && b.finalize))
        ++slot_warnings;
      if (b.chain) a.chain = b.chain;
      if (b.aggregate) a.aggregate = b.aggregate;
      if (b.finalize) a.finalize = b.finalize;
      warnings += slot_warnings;
    }
    expected_warnings_ += warnings;
    mine = std::move(merged);
    return true;
  }
  static std::size_t most_interceptors(const ModelSet& set) {
    std::size_t most = 0;
    for (const ModelSlotState& slot : set) most = std::max(most, slot.interceptors.size());
    return most;
  }

  void apply_model(Action& a) {
    if (a.skip) return;
    ModelSet& target = model_[static_cast<std::size_t>(a.set)];
    switch (a.kind) {
      case Op::Add:
        a.refused = !model_add(target, a);
        break;
      case Op::Intercept:
        a.refused = !model_intercept(target, a);
        break;
      case Op::Remove:  // a hook from its slot, an interceptor from every slot it is in
        a.expect = false;
        if (a.token != 0)
          for (ModelSlotState& slot : target) {
            const std::size_t hooks =
                std::erase_if(slot.hooks, [&](const ModelHook& h) { return h.token == a.token; });
            const std::size_t interceptors = std::erase_if(
                slot.interceptors, [&](const ModelInterceptor& i) { return i.token == a.token; });
            if (hooks + interceptors != 0) a.expect = true;
          }
        break;
      case Op::Configure:
        model_configure(target, a);
        break;
      case Op::Copy:
        if (a.other < 0) model_.push_back(target);
        else model_[static_cast<std::size_t>(a.other)] = ModelSet(target);
        break;
      case Op::Extend:
        a.refused = !model_extend(target, model_[static_cast<std::size_t>(a.other)]);
        break;
      case Op::ExtendFresh: {
        ModelSet fresh{};
        for (Action& f : a.fresh) {
          if (f.kind == Op::Add) f.refused = !model_add(fresh, f);
          else if (f.kind == Op::Intercept) f.refused = !model_intercept(fresh, f);
          else model_configure(fresh, f);
        }
        a.refused = !model_extend(target, fresh);
        break;
      }
      case Op::Drop:
        model_.erase(model_.begin() + a.set);
        break;
      case Op::Call:
      case Op::Release:
      case Op::Cancel:
        break;
    }
  }

  // ---- the real side ----------------------------------------------------------------------------

  // Runs `registration`, which must throw OrderingError exactly when the model refused it.
  // (Not a template: the check and its message are compiled once.)
  template <class F>
  void expect_refusal(const Action& a, const char* what, F&& registration) {
    check_refusal(a, what, &registration,
                  [](void* f) { (*static_cast<std::remove_reference_t<F>*>(f))(); });
  }
  void check_refusal(const Action& a, const char* what, void* registration, void (*run)(void*)) {
    bool refused = false;
    try {
      run(registration);
    } catch (const hookset::OrderingError&) {
      refused = true;
    }
    features_.refused += refused;
    if (refused != a.refused)
      fail(std::string(what) + "(hook#" + std::to_string(a.token) + ")" +
           (refused ? " threw OrderingError" : " did not throw OrderingError") +
           ", the model expects " + (a.refused ? "OrderingError" : "it to succeed"));
  }

  template <class S>
  void real_add(std::unique_ptr<Set>& holder, const Action& a) {
    // A keyed slot's registration with a selector (none: add<S>(hook), every key).
    auto add = [&](auto hook, auto options) {
      if constexpr (S::kind.keyed()) {
        const auto p = static_cast<std::size_t>(a.pattern);
        switch (a.selector) {
          case kAnyKey:
            return holder->template add<S>(hookset::any_key, std::move(hook), options);
          case kExactKey:
            return holder->template add<S>(hookset::key(keys[p]), std::move(hook), options);
          case kPrefix:
            return holder->template add<S>(hookset::prefix(prefixes[p]), std::move(hook), options);
          case kGlob:
            return holder->template add<S>(hookset::glob(globs[p]), std::move(hook), options);
          case kMatching:
            return holder->template add<S>(
                hookset::matching(
                    [which = a.pattern](std::string_view key) { return predicate(which, key); }),
                std::move(hook), options);
          default:
            break;
        }
      }
      return holder->template add<S>(std::move(hook), options);
    };
    auto registration = [&](auto hook) {
      const hookset::Priority priority{a.priority};
      if (a.policy == 0 && a.limit == 0 && a.name == 0 && a.order == 0) {  // the short form
        if (a.variant)
          holder =
              std::make_unique<Set>(std::move(*holder).template with<S>(std::move(hook), priority));
        else ids_[a.token] = add(std::move(hook), priority);
        return;
      }
      hookset::HookOptions options{.name = registration_name(a.token, a.name),
                                   .priority = priority};
      if (a.limit)
        options.timeout = a.limit == 1 ? std::chrono::nanoseconds(1) : std::chrono::hours(1);
      if (a.policy)
        options.on_failure = a.policy == 1   ? hookset::Propagate
                             : a.policy == 2 ? hookset::FailOpen
                                             : hookset::FailClosed;
      add_order(options, a.order);
      features_.named += a.order != 0;
      expect_refusal(a, "add", [&] {
        if (a.variant)
          holder =
              std::make_unique<Set>(std::move(*holder).template with<S>(std::move(hook), options));
        else ids_[a.token] = add(std::move(hook), options);
      });
    };
    const HookCore core{a.token, a.behaviour, a.mutations != nullptr, this};
    constexpr bool stateful_ok = S::kind.mode != Mode::Pipeline;
    features_.keyed_selectors += S::kind.keyed() && a.selector >= kExactKey;
    if constexpr (S::kind.keyed()) {
      constexpr bool fold = shape_of<S> == Shape::Fold;
      if (a.async)
        register_form(registration,
                      owned_as(a.own, KeyedHook<Hook<shape_of<S>, true>, fold>{{core}}));
      else
        register_form(registration,
                      owned_as(a.own, KeyedHook<Hook<shape_of<S>, false>, fold>{{core}}));
    } else if (a.async) {
      register_form<stateful_ok>(registration, owned_as(a.own, Hook<shape_of<S>, true>{core}));
    } else {
      register_form<stateful_ok>(registration, owned_as(a.own, Hook<shape_of<S>, false>{core}));
    }
  }

  // The hook as registered: itself (moved in), std::ref to a copy the executor keeps until the
  // end (borrowed), a std::shared_ptr (shared), or wrapped in a Stateful (copies of the set share
  // it and its lock). One type per call: the forms are variants.
  template <class H>
  auto owned_as(int own, H hook) {
    struct Form {
      int own;
      H hook;
      std::shared_ptr<H> kept;
    };
    Form form{own, std::move(hook), nullptr};
    features_.borrowed += own == 1;
    features_.shared += own == 2;
    features_.stateful += own == 3;
    if (own == 1 || own == 2) {
      form.kept = std::make_shared<H>(form.hook);
      if (own == 1) borrowed_.push_back(form.kept);
    }
    return form;
  }
  // (Stateful: not for pipeline slots nor add_hooks objects, see normalise() in operations.hpp.)
  template <bool AllowStateful = false, class Register, class Form>
  static void register_form(Register&& registration, Form&& form) {
    if (form.own == 1) registration(std::ref(*form.kept));
    else if (form.own == 2) registration(std::move(form.kept));
    else if constexpr (AllowStateful) {
      if (form.own == 3) registration(hookset::Stateful(std::move(form.hook)));
      else registration(std::move(form.hook));
    } else {
      registration(std::move(form.hook));
    }
  }

  // add_hooks / with_hooks of one MultiHook.
  void real_add_multi(std::unique_ptr<Set>& holder, const Action& a) {
    const hookset::Priority priority{a.priority};
    auto registration = [&](auto object) {
      if (a.variant) {
        holder = std::make_unique<Set>(std::move(*holder).with_hooks(std::move(object), priority));
        return;
      }
      const std::vector<hookset::HookId> ids = holder->add_hooks(std::move(object), priority);
      if (ids.size() != static_cast<std::size_t>(slot_count))
        return fail("add_hooks returned " + std::to_string(ids.size()) + " ids for " +
                    std::to_string(slot_count) + " slots");
      for (int i = 0; i < slot_count; ++i) ids_[a.token + i] = ids[static_cast<std::size_t>(i)];
    };
    ++features_.multi;
    const HookCore core{a.token, a.behaviour, a.mutations != nullptr, this};
    auto each = [&](auto form) { register_form(registration, std::move(form)); };
    if (a.async) each(owned_as(a.own, MultiHook<true>{core}));
    else each(owned_as(a.own, MultiHook<false>{core}));
  }

  void real_add_any(std::unique_ptr<Set>& holder, const Action& a) {
    if (a.multi) return real_add_multi(holder, a);
    with_slot(a.slot, [&](auto slot) { real_add<typename decltype(slot)::type>(holder, a); });
  }

  // intercept<S> / intercept_all, with a Priority or HookOptions (Op::policy, see operations.hpp);
  // options with a time limit or a failure policy are refused, and nothing is registered.
  void real_intercept(Set& set, const Action& a) {
    const hookset::Priority priority{a.priority};
    hookset::HookOptions options{.name = registration_name(a.token, a.name), .priority = priority};
    add_order(options, a.order);
    if (a.policy == 2) options.on_failure = hookset::FailOpen;
    if (a.policy == 3) options.timeout = std::chrono::hours(1);
    auto registration = [&](auto interceptor) {
      auto intercept = [&](auto&& with) {
        if (a.multi) return set.intercept_all(std::move(interceptor), with);
        return with_slot(a.slot, [&](auto slot) {
          return set.template intercept<typename decltype(slot)::type>(std::move(interceptor),
                                                                       with);
        });
      };
      if (a.policy >= 2) {
        try {
          intercept(options);
          fail("intercept(hook#" + std::to_string(a.token) + ") with " +
               (a.policy == 2 ? "a failure policy" : "a time limit") + " was accepted");
        } catch (const std::invalid_argument&) {
        }
        return;
      }
      features_.named += a.order != 0;
      features_.next_twice += a.variant == kNextTwice;
      expect_refusal(a, "intercept", [&] {
        ids_[a.token] =
            a.policy == 1 || a.name || a.order ? intercept(options) : intercept(priority);
        ++(a.multi ? features_.intercept_all : features_.interceptors);
      });
    };
    auto each = [&](auto form) { register_form(registration, std::move(form)); };
    if (a.async) each(owned_as(a.own, Interceptor<true>{a.token, a.variant, a.value}));
    else each(owned_as(a.own, Interceptor<false>{a.token, a.variant, a.value}));
  }

  template <class S>
  static void real_configure(Set& set, const Action& a) {
    constexpr SlotKind kind = S::kind;
    if constexpr (kind.has(kChain))
      if (a.variant == 0) set.configure<S>(chain_t<kind.flags>{a.value});
    if constexpr (kind.has(kAggregate))
      if (a.variant == 1) set.configure<S>(aggregate_t<kind.flags>{a.value});
    if constexpr (kind.has(kFinalize))
      if (a.variant == 2) set.configure<S>(finalize_t<kind.flags>{a.value});
  }

  void apply_real(const Action& a) {
    if (a.skip) return;
    std::unique_ptr<Set>& target = real_[static_cast<std::size_t>(a.set)];
    switch (a.kind) {
      case Op::Add:
        real_add_any(target, a);
        break;
      case Op::Remove: {
        const auto id = ids_.find(a.token);
        const bool removed =
            target->remove(a.token != 0 && id != ids_.end() ? id->second : hookset::HookId{});
        if (removed != a.expect)
          fail("remove(hook#" + std::to_string(a.token) + ") returned " +
               (removed ? "true" : "false"));
        break;
      }
      case Op::Configure:
        with_slot(a.slot,
                  [&](auto slot) { real_configure<typename decltype(slot)::type>(*target, a); });
        break;
      case Op::Copy: {
        auto copy = std::make_unique<Set>(*target);
        if (a.other < 0) {
          real_.push_back(std::move(copy));
        } else {
          note_destroyed(real_[static_cast<std::size_t>(a.other)].get());
          real_[static_cast<std::size_t>(a.other)] = std::move(copy);  // destroys that set
        }
        break;
      }
      case Op::Extend: {
        Set& source = *real_[static_cast<std::size_t>(a.other)];
        expect_refusal(a, "extend", [&] {
          if (a.variant) target = std::make_unique<Set>(std::move(*target).with_extended(source));
          else target->extend(source);
        });
        break;
      }
      case Op::ExtendFresh: {
        auto fresh = std::make_unique<Set>();
        for (const Action& f : a.fresh) {
          if (f.kind == Op::Add) real_add_any(fresh, f);
          else if (f.kind == Op::Intercept) real_intercept(*fresh, f);
          else
            with_slot(f.slot,
                      [&](auto slot) { real_configure<typename decltype(slot)::type>(*fresh, f); });
        }
        expect_refusal(a, "extend", [&] { target->extend(*fresh); });
        break;  // the fresh set goes away; its hooks live on in `target`
      }
      case Op::Drop:
        note_destroyed(target.get());
        real_.erase(real_.begin() + a.set);
        break;
      case Op::Intercept:
        real_intercept(*target, a);
        break;
      case Op::Call:  // by a running hook
        call_real(*a.flight);
        settle(*a.flight);
        break;
      case Op::Release:
      case Op::Cancel:
        break;
    }
  }

  // Counts sets destroyed while a dispatch of theirs runs or is parked (for the statistics).
  void note_destroyed(const Set* set) {
    for (const auto& flight : flights_)
      if (flight->set == set && !flight->real_done) {
        ++destroyed_in_flight_;
        return;
      }
  }

  // After every operation: same sets, same counts, same warnings, nothing left unrun.
  void check_pool() {
    if (failure_) return;
    if (real_.size() != model_.size())
      return fail("the pool has " + std::to_string(real_.size()) + " sets, the model " +
                  std::to_string(model_.size()));
    for (std::size_t i = 0; i < real_.size(); ++i)
      mp::mp_for_each<mp::mp_iota_c<slot_count>>([&](auto s) {
        using S = mp::mp_at_c<Slots, s>;
        const std::size_t expected = model_[i][s].hooks.size();
        const std::size_t actual = real_[i]->template count<S>();
        if (actual != expected)
          fail("set " + std::to_string(i) + " slot " + std::to_string(s) + ": count " +
               std::to_string(actual) + ", model " + std::to_string(expected));
        if constexpr (S::kind.keyed()) check_keys<S>(*real_[i], model_[i][s], i);
      });
    if (!script_.empty()) fail("hooks the model expected to run (and mutate) did not run");
    if (config_.observe && observer_.warnings != expected_warnings_)
      fail(std::to_string(observer_.warnings) + " warnings, the model expects " +
           std::to_string(expected_warnings_));
  }

  // A keyed slot's queries (docs/semantics.md, keyed slots): keys<S>() lists the keys with an
  // exact registration, sorted; has_hooks<S>(key) says whether a dispatch for it runs a hook.
  template <class S>
  void check_keys(const Set& set, const ModelSlotState& slot, std::size_t index) {
    std::vector<std::string> expected;
    for (const ModelHook& h : slot.hooks)
      if (h.selector == kExactKey) expected.emplace_back(keys[static_cast<std::size_t>(h.pattern)]);
    std::sort(expected.begin(), expected.end());
    expected.erase(std::unique(expected.begin(), expected.end()), expected.end());
    const std::string where =
        "set " + std::to_string(index) + " slot " + std::to_string(mp::mp_find<Slots, S>::value);
    if (set.template keys<S>() != expected)
      return fail(where + ": keys() differs from the model's " + std::to_string(expected.size()) +
                  " exact keys");
    for (int k = 0; k < key_count; ++k) {
      const bool expect =
          std::any_of(slot.hooks.begin(), slot.hooks.end(),
                      [&](const ModelHook& h) { return selects(h.selector, h.pattern, k); });
      if (set.template has_hooks<S>(keys[static_cast<std::size_t>(k)]) != expect)
        return fail(where + ": has_hooks(\"" + std::string(keys[static_cast<std::size_t>(k)]) +
                    "\") is " + (expect ? "false" : "true") + ", the model expects the opposite");
    }
  }

  // ---- dispatch ---------------------------------------------------------------------------------

  void call(const Op& op) {
    Flight& flight = call_model(op);
    call_real(flight);
    settle(flight);
  }

  // The model's side of a dispatch: its prediction, run up to its first parking point (the
  // operations its hooks perform applied to the model, and queued for the real hooks).
  Flight& call_model(const Op& op) {
    const std::size_t index = static_cast<std::size_t>(op.set) % model_.size();
    const Call c{op.value, ++calls_};
    flights_.push_back(std::make_unique<Flight>());
    Flight& flight = *flights_.back();
    flight.call = c.id;
    flight.slot = op.slot;
    flight.pool_index = index;
    flight.variant = op.variant;
    flight.argument = c;
    flight.key = op.key % key_count;
    flight.snapshot = model_[index][static_cast<std::size_t>(op.slot)];
    int cancel = op.cancel;
    flight.has_token = (op.variant & 2) != 0 || cancel == -1 || cancel > 0;
    flight.deadline_passed = cancel == -2;
    flight.stop_at = std::max(cancel, 0);
    std::optional<int> stop_at;
    if (cancel == -1) {
      flight.stop.request_stop();
      stop_at = 0;
    } else if (cancel > 0) {
      stop_at = cancel;
    }
    flight.stopped = stop_at.has_value();
    flight.prediction = Predictor(slot_kinds[static_cast<std::size_t>(op.slot)], flight.snapshot, c,
                                  flight.key, stop_at, flight.deadline_passed)
                            .run();
    ++call_depth_;
    advance_model(flight);
    --call_depth_;
    return flight;
  }

  // The real side: starts the dispatch (on the pool's set at the same index as the model's), and
  // runs it to its end or its first parking point.
  void call_real(Flight& flight) {
    const bool parks = std::any_of(flight.prediction.steps.begin(), flight.prediction.steps.end(),
                                   [](const Step& step) { return step.kind == Step::Suspend; });
    const Call c = flight.argument;
    // The set may be destroyed by the hooks of this very dispatch: nothing touches it after the
    // start.
    const Set& set = *real_[flight.pool_index];
    flight.set = &set;
    auto dispatch = [&](const auto& through) {
      with_slot(flight.slot, [&](auto slot) {
        using S = typename decltype(slot)::type;
        if ((flight.variant & 1) != 0 || parks)
          return static_cast<void>(await_dispatch<S>(through, c, flight));
        const std::uint64_t since = test_support::lifetime::mark();
        try {
          if constexpr (S::kind.has(kVoid)) {
            hookset::sync_wait(with_options(call_of<S>(through, c, flight), flight));
            flight.real = "void";
          } else {
            flight.real =
                render(hookset::sync_wait(with_options(call_of<S>(through, c, flight), flight)));
          }
        } catch (...) {
          flight.real = "throw:" + render_error(std::current_exception());
        }
        flight.outlived = test_support::lifetime::alive_since(c.id, since);
        flight.real_done = true;
      });
    };
    // A frozen copy or a shared holder dispatches exactly as the set; each is gone once the
    // dispatch has started (a parked dispatch keeps what it runs on).
    const int through = (flight.variant >> 2) & 3;
    features_.frozen_calls += through == 1;
    features_.shared_calls += through == 2;
    features_.stopped += flight.stopped;
    features_.deadline += flight.deadline_passed;
    features_.pipelines += slot_kinds[static_cast<std::size_t>(flight.slot)].mode == Mode::Pipeline;
    features_.intercepted += !flight.snapshot.interceptors.empty();
    features_.keyed_calls += slot_kinds[static_cast<std::size_t>(flight.slot)].keyed();
    // Its observer id: the first dispatch to begin from now on (dispatches its hooks make begin
    // later).
    const std::size_t begun_before = observer_.begins.size();
    if (through == 1) {
      dispatch(set.freeze());
    } else if (through == 2) {
      const SharedSet shared{Set(set)};
      dispatch(shared);
    } else {
      dispatch(set);
    }
    if (observer_.begins.size() > begun_before) flight.dispatch_id = observer_.begins[begun_before];
  }

  void release(int pick) {
    if (pending_.empty()) return;
    const std::size_t i = static_cast<std::size_t>(pick) % pending_.size();
    Flight& flight = *pending_[i];
    pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(i));
    if (i >= gates_.size()) return fail("the model has a parked dispatch the library does not");
    std::unique_ptr<Gate> gate = std::move(gates_[i]);
    gates_.erase(gates_.begin() + static_cast<std::ptrdiff_t>(i));
    const int token = flight.prediction.steps[flight.next_step - 1].token;
    if (gate->call != flight.call || gate->token != token) {
      fail("parked: hook#" + std::to_string(gate->token) + " of call " +
           std::to_string(gate->call) + ", the model expects hook#" + std::to_string(token) +
           " of call " + std::to_string(flight.call));
      gates_.push_front(std::move(gate));  // released at teardown
      return;
    }
    advance_model(flight);
    gate->event.fire();
    settle(flight);
  }

  // Stops a parked dispatch that has a stop token: the model predicts it again, stopped at the
  // hook it is parked in (what happened so far is the same), and the real one is asked to stop.
  void cancel(int pick) {
    if (pending_.empty()) return;
    Flight& flight = *pending_[static_cast<std::size_t>(pick) % pending_.size()];
    if (!flight.has_token || flight.stopped) return;
    const Step& parked = flight.prediction.steps[flight.next_step - 1];
    flight.stopped = true;
    ++features_.stopped;
    ++features_.stopped_parked;
    flight.prediction =
        Predictor(slot_kinds[static_cast<std::size_t>(flight.slot)], flight.snapshot,
                  flight.argument, flight.key, parked.begun, flight.deadline_passed)
            .run();
    flight.stop.request_stop();
  }

  // Runs the model's side of a dispatch up to its next parking point: the operations its hooks
  // perform are resolved and applied to the model now, and queued for the real hooks.
  void advance_model(Flight& flight) {
    const std::vector<Step>& steps = flight.prediction.steps;
    while (flight.next_step < steps.size()) {
      const Step& step = steps[flight.next_step++];
      if (step.kind == Step::Suspend) {
        pending_.push_back(&flight);
        return;
      }
      if (step.kind == Step::Warn) {  // "hook ... failed and was skipped (fail-open)"
        ++expected_warnings_;
        ++features_.failed_open;
        continue;
      }
      // Queued before the operations are resolved: a dispatch among them queues the operations
      // of its own hooks, which run after (inside) this hook's.
      script_.push_back(Group{flight.call, step.token, {}});
      Group& group = script_.back();  // (a deque: later push_backs keep it in place)
      for (const Op& sub : *step.ops) {
        ++hook_operations_;
        if (sub.kind == Op::Call) {  // a dispatch made by the hook (nested; at most 3 deep)
          Action action;
          action.kind = Op::Call;
          // Bounded: hooks dispatching slots whose hooks dispatch ... would grow exponentially.
          action.skip = call_depth_ >= 3 || nested_budget_ == 0;
          if (!action.skip) --nested_budget_;
          if (!action.skip) {
            action.flight = &call_model(sub);
            ++features_.nested;
          }
          group.actions.push_back(std::move(action));
          continue;
        }
        Action action = resolve(sub);
        apply_model(action);
        group.actions.push_back(std::move(action));
      }
    }
    flight.model_done = true;
  }

  void settle(Flight& flight) {
    if (!flight.model_done) {
      if (flight.real_done)
        fail("call " + std::to_string(flight.call) + " completed; the model expects it parked");
      return;
    }
    if (!flight.real_done) return fail("call " + std::to_string(flight.call) + " did not complete");
    check_flight(flight);
    recorder.by_call.erase(flight.call);
    std::erase_if(flights_, [&](const std::unique_ptr<Flight>& f) { return f.get() == &flight; });
  }

  void check_flight(const Flight& flight) {
    const Prediction& p = flight.prediction;
    ++dispatches_checked_;
    hooks_run_ += p.hooks_run;
    dispatches_failed_ += p.failed ? 1 : 0;
    const std::vector<Event>& events = recorder.by_call[flight.call];
    std::string where =
        "call " + std::to_string(flight.call) + " (slot " + std::to_string(flight.slot) + ")";
    std::string expected = p.result;
    if (slot_kinds[static_cast<std::size_t>(flight.slot)].mode == Mode::Pipeline && !p.failed) {
      const auto id = ids_.find(p.decided_by);
      if (p.decided_by == 0) expected += " by=default";
      else if (id != ids_.end()) expected += " by#" + std::to_string(id->second.value());
      else
        expected += flight.real.substr(
            std::min(flight.real.size(), flight.real.rfind(" by")));  // via with<S>: no id
    }
    if (flight.real != expected)
      return fail(where + ": result " + flight.real + ", the model expects " + expected);
    if (!flight.outlived.empty())
      return fail(where + ": structured lifetime broken, " + flight.outlived.front());
    if (events != p.events) {
      std::string text = where + ": calls differ\n    real: ";
      for (const Event& e : events) text += show(e) + " ";
      text += "\n    model: ";
      for (const Event& e : p.events) text += show(e) + " ";
      return fail(text);
    }
    if (config_.observe) {
      const auto end = observer_.ends.find(flight.dispatch_id);
      if (end == observer_.ends.end()) return fail(where + ": the observer saw no end");
      if (end->second.first != p.hooks_run || end->second.second != p.failed)
        return fail(where + ": the observer saw hooks_run " + std::to_string(end->second.first) +
                    (end->second.second ? " failed" : " ok") + ", the model expects " +
                    std::to_string(p.hooks_run) + (p.failed ? " failed" : " ok"));
      observer_.ends.erase(end);
      // Per-hook events, interceptors' included (the model's tokens as the real HookIds).
      std::vector<HookMark> expected_marks = p.marks;
      for (HookMark& m : expected_marks)
        if (m.interceptor && !m.end) {
          const auto id = ids_.find(m.token);
          m.token = id == ids_.end() ? -1 : static_cast<int>(id->second.value());
        }
      const std::vector<HookMark>& marks = observer_.marks[flight.dispatch_id];
      features_.hook_marks += marks.size();
      if (marks != expected_marks) {
        std::string text = where + ": per-hook events differ\n    real: ";
        for (const HookMark& m : marks) text += show(m) + " ";
        text += "\n    model: ";
        for (const HookMark& m : expected_marks) text += show(m) + " ";
        return fail(text);
      }
      observer_.marks.erase(flight.dispatch_id);
    }
  }

  Config config_;
  std::vector<ModelSet> model_;             // the model's pool ...
  std::vector<std::unique_ptr<Set>> real_;  // ... and the real one, index for index
  int tokens_ = 0;
  std::vector<int> anonymous_;
  std::unordered_map<int, hookset::HookId> ids_;
  std::deque<Group> script_;
  std::vector<std::shared_ptr<const void>> borrowed_;  // what borrowed (std::ref) hooks refer to
  std::deque<std::unique_ptr<Gate>> gates_;  // the real parked dispatches, in parking order
  std::vector<Flight*> pending_;             // the model's, in the same order
  std::vector<std::unique_ptr<Flight>> flights_;
  int calls_ = 0;
  int call_depth_ = 0;      // of the model's dispatches predicted inside hooks
  int nested_budget_ = 32;  // dispatches by hooks left for this operation
  int expected_warnings_ = 0;
  std::size_t operations_ = 0;
  std::size_t hook_operations_ = 0;
  std::size_t dispatches_checked_ = 0;
  std::size_t hooks_run_ = 0;
  std::size_t dispatches_failed_ = 0;
  std::size_t max_parked_ = 0;
  std::size_t destroyed_in_flight_ = 0;
  Features features_;
  CountingObserver observer_;
  hookset::Observer* previous_observer_ = nullptr;
  bool tearing_down_ = false;
  std::optional<std::string> failure_;
};

inline void HookCore::begin(const Call& c, long long seen) const {
  executor->hook_begins(c, token, seen, mutates);
}

inline Task<void> HookCore::park(const Call& c) const {
  co_await executor->park(c, token);
  recorder.record(c.id, token, kResumed, 0);
}

// ---- running, shrinking, reporting ------------------------------------------------------------

struct Failure {
  std::size_t
      index;  // of the operation after which the mismatch showed (size(): at the final release)
  std::string message;
};

struct Totals {
  std::size_t operations = 0;
  std::size_t hook_operations = 0;
  std::size_t dispatches = 0;
  std::size_t hooks_run = 0;
  std::size_t failed = 0;
  std::size_t max_parked = 0;
  std::size_t destroyed_in_flight = 0;
  Features features;
};

inline std::optional<Failure> run_sequence(const std::vector<Op>& ops, const Config& config,
                                           std::uint64_t seed, Totals* totals = nullptr) {
  std::optional<Failure> failure;
  {
    Executor executor(config);
    std::size_t i = 0;
    try {
      for (; i < ops.size() && !failure; ++i)
        if (auto message = executor.apply(ops[i])) failure = Failure{i, *message};
      if (!failure)
        if (auto message = executor.finish(seed)) failure = Failure{ops.size(), *message};
    } catch (const std::exception& e) {
      failure = Failure{i, std::string("unexpected exception: ") + e.what()};
    }
    if (totals) {
      totals->operations += executor.operations();
      totals->hook_operations += executor.hook_operations();
      totals->dispatches += executor.dispatches_checked();
      totals->hooks_run += executor.hooks_run();
      totals->failed += executor.dispatches_failed();
      totals->max_parked = std::max(totals->max_parked, executor.max_parked());
      totals->destroyed_in_flight += executor.destroyed_in_flight();
      totals->features += executor.features();
    }
  }
  return failure;
}

// Drops chunks of operations (halving the chunk size down to single operations) while the
// sequence still fails, cutting it after the failing operation each time; repeats until no single
// operation can go (or the budget of re-runs is spent).
inline std::vector<Op> shrink(std::vector<Op> ops, const Config& config, std::uint64_t seed,
                              Failure& failure) {
  ops.resize(std::min(ops.size(), failure.index + 1));
  int budget = 4000;
  for (bool progress = true; progress && budget > 0;) {
    progress = false;
    for (std::size_t chunk = std::max<std::size_t>(ops.size() / 2, 1);; chunk /= 2) {
      for (std::size_t start = 0; start < ops.size() && budget > 0; --budget) {
        std::vector<Op> candidate(ops.begin(), ops.begin() + static_cast<std::ptrdiff_t>(start));
        const std::size_t end = std::min(start + chunk, ops.size());
        candidate.insert(candidate.end(), ops.begin() + static_cast<std::ptrdiff_t>(end),
                         ops.end());
        if (auto smaller = run_sequence(candidate, config, seed)) {
          candidate.resize(std::min(candidate.size(), smaller->index + 1));
          ops = std::move(candidate);
          failure = *smaller;
          progress = true;
        } else {
          start += chunk;
        }
      }
      if (chunk == 1 || budget <= 0) break;
    }
    // Then the operations a hook performs and the registrations of a fresh set, one at a time.
    for (std::size_t i = 0; i < ops.size() && budget > 0; ++i) {
      for (std::size_t j = 0; ops[i].nested && j < ops[i].nested->size() && budget > 0; --budget) {
        std::vector<Op> fewer = *ops[i].nested;
        fewer.erase(fewer.begin() + static_cast<std::ptrdiff_t>(j));
        std::vector<Op> candidate = ops;
        candidate[i].nested = fewer.empty() && candidate[i].kind == Op::Add
                                  ? nullptr
                                  : std::make_shared<const std::vector<Op>>(std::move(fewer));
        if (auto smaller = run_sequence(candidate, config, seed)) {
          candidate.resize(std::min(candidate.size(), smaller->index + 1));
          ops = std::move(candidate);
          failure = *smaller;
          progress = true;
        } else {
          ++j;
        }
      }
    }
  }
  return ops;
}

}  // namespace hookset_model
