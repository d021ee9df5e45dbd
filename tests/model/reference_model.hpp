// The reference model of the model-based tests (tests/model/randomized.cpp), written plainly
// from docs/semantics.md: a slot is a list of hooks in arrival order, dispatched in a stable sort
// by priority; Predictor walks the dispatch table (docs/semantics.md) over such a snapshot and says
// what a dispatch does - its result, every call in order with its input, the hooks it runs, where
// hooks perform operations on the pool or park.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "catalog.hpp"
#include "operations.hpp"  // OpList: what a hook performs, opaque to the model

namespace hookset_model {

// What a hook does when it runs: outputs a value computed with k (fold_value, plain_value), or
// throws; a coroutine hook may first park until released.
struct Behaviour {
  int k = 0;
  bool throws = false;
  bool suspend = false;
};

struct ModelHook {
  int token;  // the registration's number; copies and extends carry it
  int priority;
  bool async;  // a coroutine hook (same behaviour, reached through a Task)
  Behaviour behaviour;
  OpList mutations;  // operations it performs on the pool each time it runs (may be null)
  int policy = 0;    // Op::policy: 0 none given (Propagate), 1 Propagate, 2 FailOpen, 3 FailClosed
  int limit = 0;     // Op::limit: 0 none, 1 expires before the hook returns, 2 never expires
  int selector = 0;  // keyed slots: which keys it is for (Selects, catalog.hpp)
  int pattern = 0;
  std::string name{};             // with options: "h<token>" or a shared one ("a", "b", "c")
  std::string before{}, after{};  // named order: one name, or none
};

// An interceptor (intercept<S>, or intercept_all: then the same token in every slot).
struct ModelInterceptor {
  int token;
  int priority;
  bool async;
  int does;  // Intercepts
  int k;
  std::string name{};
  std::string before{}, after{};
};
inline std::string interceptor_throws(int token) {
  return "interceptor " + std::to_string(token) + " throws";
}
// What an interceptor answers alone, and its change of next's result (Intercepts), spelled as
// the executor renders results.
inline std::string interceptor_answer(SlotKind kind, int k, int x) {
  if (kind.has(kVoid)) return "void";
  if (kind.mode == Mode::Pipeline)
    return "complete:" + std::to_string(k) + " input=" + std::to_string(x);
  if (kind.has(kOutput)) return "i" + std::to_string(k);
  return std::to_string(k);
}
inline std::string interceptor_change(SlotKind kind, const std::string& result, int k) {
  if (kind.int_result()) return std::to_string(std::stoi(result) + k);
  if (kind.has(kOutput)) return result + "+" + std::to_string(k);
  return result;
}

// The name a registration with options gets (failures name it); the model's spelling of the
// errors a dispatch ends with (the executor renders the real ones the same way).
inline std::string hook_name(int token) { return "h" + std::to_string(token); }
inline std::string hook_throws(int token) { return "hook " + std::to_string(token) + " throws"; }

struct ModelSlotState {
  std::vector<ModelHook> hooks;  // arrival order; dispatch order is a stable sort by priority
  std::vector<ModelInterceptor> interceptors;     // the same, the first outermost
  std::optional<int> chain, aggregate, finalize;  // configured companions' parameters
};
using ModelSet = std::array<ModelSlotState, slot_count>;

inline std::size_t total_hooks(const ModelSet& set) {
  std::size_t n = 0;
  for (const ModelSlotState& slot : set) n += slot.hooks.size();
  return n;
}

// Hooks and interceptors alike (the first interceptor is the outermost): docs/semantics.md,
// section 13 - by priority, then registration (a stable sort of the arrival order), then the
// named order: a stable topological sort, each step taking the earliest registration whose
// before/after constraints allow it; a constraint names every other registration (every other
// entry: a set extended with itself holds each twice) of that name. Nothing when the new
// registration `checked` (a token; 0: none) names a name nobody has, or when the constraints
// form a cycle (OrderingError).
template <class Registration>
std::optional<std::vector<Registration>> named_order(std::vector<Registration> registrations,
                                                     int checked = 0) {
  std::stable_sort(
      registrations.begin(), registrations.end(),
      [](const Registration& a, const Registration& b) { return a.priority < b.priority; });
  if (std::all_of(registrations.begin(), registrations.end(),
                  [](const Registration& r) { return r.before.empty() && r.after.empty(); }))
    return registrations;
  const std::size_t n = registrations.size();
  std::vector<std::vector<std::size_t>> later(n);  // later[i]: must run after i
  std::vector<std::size_t> waits(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (const bool before : {true, false}) {
      const std::string& name = before ? registrations[i].before : registrations[i].after;
      if (name.empty()) continue;
      bool found = false;
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i || registrations[j].name != name) continue;
        found = true;
        later[before ? i : j].push_back(before ? j : i);
        ++waits[before ? j : i];
      }
      if (!found && registrations[i].token == checked) return std::nullopt;
    }
  }
  std::vector<Registration> ordered;
  std::vector<bool> placed(n, false);
  while (ordered.size() < n) {
    std::size_t next = 0;
    while (next < n && (placed[next] || waits[next] != 0)) ++next;
    if (next == n) return std::nullopt;  // a cycle
    placed[next] = true;
    ordered.push_back(registrations[next]);
    for (std::size_t to : later[next]) --waits[to];
  }
  return ordered;
}
template <class Registration>
std::vector<Registration> dispatch_order(const std::vector<Registration>& registrations) {
  std::optional<std::vector<Registration>> ordered = named_order(registrations);
  return ordered ? std::move(*ordered) : registrations;  // (the model never keeps a cycle)
}

// docs/semantics.md, keyed slots: a dispatch for `key` runs the registrations that select it,
// in the slot's order; a keyed Singleton the last of them.
inline std::vector<ModelHook> hooks_for_key(SlotKind kind, const std::vector<ModelHook>& hooks,
                                            int key) {
  std::vector<ModelHook> ordered = dispatch_order(hooks);
  if (!kind.keyed()) return ordered;
  std::erase_if(ordered, [&](const ModelHook& h) { return !selects(h.selector, h.pattern, key); });
  if (kind.mode == Mode::Singleton && ordered.size() > 1)
    ordered.erase(ordered.begin(), ordered.end() - 1);
  return ordered;
}

// What happens during a dispatch besides its calls: hooks performing operations, hooks parking.
struct Step {
  enum Kind { Mutate, Suspend, Warn } kind;  // Warn: a fail-open hook failed and was skipped
  int token;
  OpList ops;
  int begun = 0;  // hooks begun by the dispatch so far (a stop requested now stops it at this hook)
};

// A per-hook observer event of the dispatch (docs/semantics.md, sections 19 and 21): hooks by
// their position in the dispatch's order; interceptors by position, registration and name, and
// whether they ended failed.
struct HookMark {
  bool interceptor = false;
  bool end = false;
  int position = 0;
  int token = 0;  // interceptors (the executor compares their HookIds)
  std::string name{};
  bool failed = false;
  friend bool operator==(const HookMark&, const HookMark&) = default;
};
inline std::string show(const HookMark& m) {
  std::string text = std::string(m.interceptor ? "I" : "H") + std::to_string(m.position) +
                     (m.end ? (m.failed ? ".end(failed)" : ".end") : ".begin");
  if (m.interceptor && !m.end) text += "(#" + std::to_string(m.token) + " '" + m.name + "')";
  return text;
}

struct Prediction {
  std::vector<HookMark> marks;
  std::vector<Event> events;
  std::vector<Step> steps;
  std::string result;
  std::size_t hooks_run = 0;
  bool failed = false;
  int decided_by = 0;  // pipelines: the deciding hook's token (0: the default completed)
};

struct ModelThrow {
  std::string what;
};

// One dispatch of the dispatch table, over a snapshot.
class Predictor {
 public:
  // `stop_at`: the dispatch is stopped when its stop_at-th hook begins (0: before it starts);
  // `deadline_passed`: its deadline is already over when it starts.
  Predictor(SlotKind kind, const ModelSlotState& state, Call call, int key = 0,
            std::optional<int> stop_at = std::nullopt, bool deadline_passed = false)
      : kind_(kind),
        all_hooks_(&state.hooks),
        hooks_(hooks_for_key(kind, state.hooks, key)),  // the key looked up at the start
        interceptors_(dispatch_order(state.interceptors)),
        limit_(state.chain.value_or(default_limit)),
        weight_(state.aggregate.value_or(default_weight)),
        offset_(state.finalize.value_or(default_offset)),
        call_(call),
        key_(key),
        input_(call.x),
        stop_at_(stop_at),
        deadline_passed_(deadline_passed) {}

  Prediction run() {
    try {
      // A dispatch stopped or late before it starts runs nothing, interceptors included.
      if (deadline_passed_) throw ModelThrow{"timeout[]"};
      if (stop_at_ && *stop_at_ == 0) throw ModelThrow{"cancelled"};
      p_.result = intercepted(0, call_.x, key_);
    } catch (const ModelThrow& error) {
      p_.result = "throw:" + error.what;
      p_.failed = true;
    }
    return std::move(p_);
  }

 private:
  int run_default() {
    if (kind_.keyed()) p_.events.push_back({by_default, kKey, key_});
    p_.events.push_back({by_default, kBegin, input_});
    if (input_ == default_throws_on) throw ModelThrow{"default rejects 13"};
    return input_;
  }
  // A hook's output, or nothing when it failed open (docs/semantics.md, failure policies: the
  // dispatch goes on as if it had not run).
  std::optional<int> run_hook(const ModelHook& hook, std::optional<int> last = std::nullopt) {
    const int begun = static_cast<int>(++p_.hooks_run);
    const int position = static_cast<int>(&hook - hooks_.data());
    p_.marks.push_back({false, false, position});
    struct End {  // the hook's end event, however it ends
      Prediction& p;
      int position;
      ~End() { p.marks.push_back({false, true, position}); }
    } end{p_, position};
    if (kind_.keyed()) p_.events.push_back({hook.token, kKey, key_});
    p_.events.push_back({hook.token, kBegin, kind_.fold() ? encode(last) : input_});
    if (hook.mutations) p_.steps.push_back({Step::Mutate, hook.token, hook.mutations, begun});
    if (hook.behaviour.suspend) {
      p_.steps.push_back({Step::Suspend, hook.token, nullptr, begun});
      p_.events.push_back({hook.token, kResumed, 0});
    }
    // Stopped while this hook ran: the dispatch ends cancelled, whatever the hook did.
    if (stop_at_ && begun >= *stop_at_) throw ModelThrow{"cancelled"};
    std::optional<std::string> failure;
    if (hook.limit == 1) failure = "timeout[" + hook.name + "]";  // the limit wins over a throw
    else if (hook.behaviour.throws) failure = hook_throws(hook.token);
    if (failure) {
      if (hook.policy == 2) {
        p_.steps.push_back({Step::Warn, hook.token, nullptr, begun});
        return std::nullopt;
      }
      if (hook.policy == 3) throw ModelThrow{"failclosed[" + hook.name + "]:" + *failure};
      throw ModelThrow{*failure};
    }
    if (kind_.mode == Mode::Pipeline) return hook.behaviour.k;
    return kind_.fold() ? fold_value(last, hook.behaviour.k) : plain_value(call_, hook.behaviour.k);
  }
  bool breaks(int v) {
    p_.events.push_back({by_chain, kBegin, v});
    if (v == chain_throws_on) throw ModelThrow{"chain rejects 42"};
    return v < limit_;
  }
  std::string aggregate(const std::vector<int>& outputs) {
    p_.events.push_back({by_aggregate, kBegin, static_cast<long long>(outputs.size())});
    if (outputs.size() == aggregate_throws_on) throw ModelThrow{"aggregate rejects 6 outputs"};
    return kind_.has(kOutput) ? join(weight_, outputs) : std::to_string(hash(weight_, outputs));
  }
  // The result of the rows above "... + Finalize", finalized when the slot has Finalize.
  std::string finish(int result) {
    if (!kind_.has(kFinalize)) return std::to_string(result);
    p_.events.push_back({by_finalize, kBegin, result});
    if (result == finalize_throws_on) throw ModelThrow{"finalize rejects 7"};
    if (kind_.has(kOutput)) return "o" + std::to_string(offset_) + ":" + std::to_string(result);
    return std::to_string(result + offset_);
  }

  // docs/semantics.md, interceptors: the i-th interceptor around the rest (the later ones, then
  // the slot's dispatch), which runs with the argument `x` and key it is given (a keyed
  // dispatch's hooks are those of the key the last interceptor passes on, from the snapshot
  // taken at the start). Each interceptor's run is a
  // hook event (interceptor set) around the events of what its next() ran; it ends failed when
  // it throws. Depth: one level per interceptor, whose number the executor bounds.
  std::string intercepted(std::size_t i, int x, int key) {
    if (i == interceptors_.size()) {
      call_.x = input_ = x;
      if (kind_.keyed() && key != key_) hooks_ = hooks_for_key(kind_, *all_hooks_, key);
      key_ = key;
      return dispatch();
    }
    const ModelInterceptor& ic = interceptors_[i];
    const int position = static_cast<int>(i);
    p_.marks.push_back({true, false, position, ic.token, ic.name});
    std::string result;
    try {
      result = intercept(ic, i, x, key);
    } catch (const ModelThrow&) {
      p_.marks.push_back({true, true, position, 0, {}, true});
      throw;
    }
    p_.marks.push_back({true, true, position});
    return result;
  }
  std::string intercept(const ModelInterceptor& ic, std::size_t i, int x, int key) {
    p_.events.push_back({ic.token, kIntercepted, x});
    const auto rest = [&](int argument, int with_key) {
      std::string result = intercepted(i + 1, argument, with_key);
      p_.events.push_back({ic.token, kNextReturned, kind_.int_result() ? std::stoll(result) : 0});
      return result;
    };
    switch (ic.does) {
      case kReplaceArgument:
        return rest(x + ic.k, kind_.keyed() ? (key + 1) % key_count : key);
      case kChangeResult:
        return interceptor_change(kind_, rest(x, key), ic.k);
      case kAnswer:
        p_.decided_by = 0;
        return interceptor_answer(kind_, ic.k, x);
      case kThrow:
        throw ModelThrow{interceptor_throws(ic.token)};
      case kCatch:
        try {
          return rest(x, key);
        } catch (const ModelThrow&) {
          p_.events.push_back({ic.token, kCaught, 0});
          p_.decided_by = 0;
          return interceptor_answer(kind_, ic.k, x);
        }
      case kNextTwice: {  // the second next() runs nothing: std::logic_error
        std::string result = rest(x, key);
        p_.events.push_back({ic.token, kSecondNext, 1});
        if (ic.k % 2 != 0) throw ModelThrow{"next twice"};
        return result;
      }
      default:
        return rest(x, key);
    }
  }

  // Fail-open hooks that failed count as not run: a Singleton whose hook failed runs the default,
  // a Fallback slot whose hooks all failed runs the default exactly as with no hooks.
  std::string dispatch() {
    const bool none = hooks_.empty();
    const bool always = kind_.mode == Mode::Always;
    if (kind_.mode == Mode::Pipeline) return pipeline();
    if (kind_.has(kVoid)) {
      if (always || none) run_default();
      if (kind_.mode == Mode::Singleton && !none) {
        if (!run_hook(hooks_.front())) run_default();
      } else {
        bool produced = false;
        for (const ModelHook& h : hooks_) produced = run_hook(h).has_value() || produced;
        if (!always && !none && !produced) run_default();
      }
      return "void";
    }
    if (kind_.mode == Mode::Singleton) {
      if (!none)
        if (const std::optional<int> v = run_hook(hooks_.front())) return std::to_string(*v);
      return std::to_string(run_default());
    }
    const bool chain = kind_.has(kChain), aggregates = kind_.has(kAggregate);

    if (!chain && !aggregates) {  // the fold: Always from the default, Fallback from nullopt
      if (!always && none) return finish(run_default());
      std::optional<int> last;
      if (always) last = run_default();
      for (const ModelHook& h : hooks_)
        if (const std::optional<int> v = run_hook(h, last)) last = v;
      if (!last) return finish(run_default());  // Fallback, every hook failed open
      return finish(*last);
    }
    if (chain && !aggregates) {
      if (always) {  // the default is chain-checked first; its Break returns it
        int v = run_default();
        if (breaks(v)) return finish(v);
        for (const ModelHook& h : hooks_) {
          const std::optional<int> out = run_hook(h);
          if (!out) continue;  // no verdict on a hook that failed open
          v = *out;
          if (breaks(v)) return finish(v);
        }
        return finish(v);
      }
      if (none) return finish(run_default());  // not chain-checked
      for (const ModelHook& h : hooks_) {
        const std::optional<int> v = run_hook(h);
        if (v && breaks(*v)) return finish(*v);
      }
      return finish(run_default());  // all Continue (or failed open): the default has the last word
    }
    // Aggregate, with or without Chain.
    std::vector<int> outputs;
    if (always) {
      outputs.push_back(run_default());
      if (chain && breaks(outputs.back())) return aggregate(outputs);
    } else if (none) {
      const int v = run_default();
      return kind_.has(kOutput) ? aggregate({v})
                                : std::to_string(v);  // returned directly without Output
    }
    for (const ModelHook& h : hooks_) {
      const std::optional<int> v = run_hook(h);
      if (!v) continue;  // the aggregate does not get a failed-open hook's output
      outputs.push_back(*v);
      if (chain && breaks(outputs.back())) return aggregate(outputs);
    }
    if (!always && outputs.empty()) {  // Fallback, every hook failed open: as with no hooks
      const int v = run_default();
      return kind_.has(kOutput) ? aggregate({v}) : std::to_string(v);
    }
    return aggregate(outputs);
  }

  // docs/semantics.md, pipeline slots: each hook sees the current input; the first terminal
  // decision ends the dispatch; when all pass, the default runs on the final input. A hook that
  // failed open passes the input on.
  std::string pipeline() {
    const auto result = [&](std::string decision) {
      return decision + " input=" + std::to_string(input_);
    };
    for (const ModelHook& h : hooks_) {
      const std::optional<int> k = run_hook(h);
      if (!k) continue;
      switch (pipeline_decision(*k)) {
        case Decides::Pass:
          break;
        case Decides::Rewrite:
          input_ += *k;
          break;
        case Decides::Complete:
          p_.decided_by = h.token;
          return result("complete:" + std::to_string(2 * input_ + *k));
        case Decides::Reject:
          p_.decided_by = h.token;
          return result("reject:r" + std::to_string(*k));
      }
    }
    const int v = run_default();
    return result("complete:" + std::to_string(v));
  }

  SlotKind kind_;
  const std::vector<ModelHook>* all_hooks_;     // the slot's snapshot, every key's
  std::vector<ModelHook> hooks_;                // the hooks of the dispatch's key, in order
  std::vector<ModelInterceptor> interceptors_;  // the snapshot's, in dispatch order
  int limit_, weight_, offset_;                 // the companions' parameters
  Call call_;
  int key_;    // keyed slots: the key (an index in `keys`) as the hooks get it
  int input_;  // the input as rewritten so far (pipelines; else the call's x)
  std::optional<int> stop_at_;
  bool deadline_passed_;
  Prediction p_;
};

}  // namespace hookset_model
