// The operations of the model-based tests (tests/model/randomized.cpp): what one step of a random
// sequence does, how it prints, and the generator. Operations name sets, slots and registrations
// by picks that are resolved when they run, so every subsequence of a sequence is valid (which is
// what lets a failing sequence be shrunk).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "catalog.hpp"

namespace hookset_model {

// ---- random numbers: splitmix64, the same sequence on every platform ----------------------------

class Random {
 public:
  explicit Random(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }
  bool chance(int percent) { return below(100) < percent; }

 private:
  std::uint64_t state_;
};

// ---- operations
// ----------------------------------------------------------------------------------

// What a model interceptor does (Op::variant of an Intercept), k being its Op::value: call
// next with the argument it got; with x + k; change next's result (int: + k, Output string:
// + "+k"; void and pipeline results stay); answer alone without next (int: k, string: "i<k>",
// pipeline: complete with k); throw before next; catch what next throws and answer instead;
// call next a second time after the first returned (docs/semantics.md, interceptors: "at most
// once" - the second fails with std::logic_error when awaited, which the interceptor catches and
// records, then answers with the first result for an even k, lets through for an odd k).
// A keyed slot's interceptor that replaces x also replaces the key by the next one of `keys`.
enum Intercepts : int {
  kPassOn,
  kReplaceArgument,
  kChangeResult,
  kAnswer,
  kThrow,
  kCatch,
  kNextTwice
};
constexpr int intercepts_count = 7;
inline const char* intercepts_name(int variant) {
  switch (variant) {
    case kReplaceArgument:
      return "replaces x by x+k";
    case kChangeResult:
      return "changes the result";
    case kAnswer:
      return "answers alone";
    case kThrow:
      return "throws";
    case kCatch:
      return "catches";
    case kNextTwice:
      return "calls next twice";
    default:
      return "passes on";
  }
}

struct Op;
using OpList = std::shared_ptr<const std::vector<Op>>;

// One generated operation. It names sets, slots and registrations indirectly (picks resolved
// against the state when it runs), so any subsequence of a sequence is itself a valid sequence.
struct Op {
  enum Kind : unsigned char {
    Add,
    Remove,
    Configure,
    Copy,
    Extend,
    ExtendFresh,
    Drop,
    Call,
    Release,
    Cancel,
    Intercept
  };
  Kind kind = Add;
  int set = 0;    // pool pick of the target
  int other = 0;  // copy: pool pick of the destination; extend: of the source
  int slot = 0;
  int priority = 0;
  int value = 0;    // add: k; configure: the parameter; call: x; remove, release: a pick
  int variant = 0;  // add/extend: via with<S>/with_extended; configure: which companion;
                    // intercept: what the interceptor does (Intercepts);
                    // remove: 0 a live hook of the set, 1 any token issued, 2 the null id;
                    // call: bit 0 co_await (else sync_wait), bit 1 with a stop token,
                    //   bits 2-3 dispatched through 1 a FrozenHookSet (freeze()), 2 a SharedHookSet
  int policy =
      0;  // add: 0 none given (the slot's: Propagate), 1 Propagate, 2 FailOpen, 3 FailClosed;
          // intercept: 0 a Priority, 1 HookOptions with a name, 2 with a failure policy, 3 with
          //   a time limit (both refused with std::invalid_argument, nothing registered)
  int limit = 0;  // add: the hook's own time limit: 0 none, 1 one nanosecond (expires), 2 an hour
  int own =
      0;  // add, intercept: 0 owned (moved in), 1 borrowed (std::ref), 2 shared (std::shared_ptr),
          // 3 wrapped in hookset::Stateful (never parks: its lock is never contended)
  bool multi = false;  // add: one object for every slot of the set (add_hooks / with_hooks);
                       // intercept: one interceptor around every slot (intercept_all)
  int cancel = 0;  // call: 0 never stopped, -1 stopped before it starts, -2 its deadline already
                   // passed, k > 0 stopped when its k-th hook begins (from inside that hook)
  bool async = false;
  bool throws = false;
  bool suspend = false;
  OpList
      nested;  // add: operations the hook performs each time it runs; extend-fresh: the fresh set
  // add to a keyed slot: the selector (Selects) and its pattern (catalog.hpp); call of a keyed
  // slot: the key (an index in `keys`)
  int selector = 0;
  int pattern = 0;
  int key = 0;
  // add, intercept: named order (docs/semantics.md, section 13). name: 0 none given ("h<token>"
  // when options are), 1-3 "a", "b", "c"; order: 0 none, 1-3 before "a".."c", 4-6 after "a".."c"
  int name = 0;
  int order = 0;
};

inline std::string order_name(int n) { return std::string(1, static_cast<char>('a' + n - 1)); }
inline std::string describe_order(const Op& op) {
  std::string text;
  if (op.name) text += " name " + order_name(op.name);
  if (op.order >= 1 && op.order <= 3) text += " before " + order_name(op.order);
  if (op.order >= 4 && op.order <= 6) text += " after " + order_name(op.order - 3);
  return text;
}
inline std::string describe_selector(const Op& op) {
  const auto p = static_cast<std::size_t>(op.pattern);
  switch (op.selector) {
    case kAnyKey:
      return " any_key";
    case kExactKey:
      return " key(\"" + std::string(keys[p]) + "\")";
    case kPrefix:
      return " prefix(\"" + std::string(prefixes[p]) + "\")";
    case kGlob:
      return " glob(\"" + std::string(globs[p]) + "\")";
    case kMatching:
      return " matching(#" + std::to_string(op.pattern) + ")";
    default:
      return "";
  }
}

inline std::string describe(const Op& op);
inline std::string describe(const std::vector<Op>& ops, const std::string& indent) {
  std::string text;
  for (const Op& op : ops) text += indent + describe(op) + "\n";
  return text;
}
inline std::string describe(const Op& op) {
  std::ostringstream out;
  switch (op.kind) {
    case Op::Add:
      out << "add set~" << op.set << " slot " << op.slot << " prio " << op.priority
          << (op.async ? " coroutine" : " sync") << " k=" << op.value
          << (op.throws ? " throws" : "") << (op.suspend ? " suspends" : "")
          << (op.variant ? " via with<S>" : "")
          << (op.policy == 1   ? " propagate"
              : op.policy == 2 ? " fail-open"
              : op.policy == 3 ? " fail-closed"
                               : "")
          << (op.limit == 1   ? " limit 1ns"
              : op.limit == 2 ? " limit 1h"
                              : "")
          << (op.own == 1   ? " borrowed"
              : op.own == 2 ? " shared_ptr"
              : op.own == 3 ? " Stateful"
                            : "")
          << (op.multi ? " add_hooks (every slot)" : "") << describe_selector(op)
          << describe_order(op);
      if (op.nested) out << " mutating {\n" << describe(*op.nested, "      ") << "    }";
      break;
    case Op::Remove:
      out << "remove set~" << op.set
          << (op.variant == 0   ? " live hook~"
              : op.variant == 1 ? " any token~"
                                : " null id")
          << (op.variant < 2 ? std::to_string(op.value) : "");
      break;
    case Op::Configure:
      out << "configure set~" << op.set << " slot " << op.slot << " companion~" << op.variant
          << " = " << op.value;
      break;
    case Op::Copy:
      out << "copy set~" << op.set << " to~" << op.other;
      break;
    case Op::Extend:
      out << "extend set~" << op.set << " from set~" << op.other
          << (op.variant ? " via with_extended" : "");
      break;
    case Op::ExtendFresh:
      out << "extend set~" << op.set << " from fresh {\n"
          << describe(*op.nested, "      ") << "    }";
      break;
    case Op::Drop:
      out << "drop set~" << op.set;
      break;
    case Op::Call:
      out << "call set~" << op.set << " slot " << op.slot << " x=" << op.value
          << ((op.variant & 1) ? " co_await" : " sync_wait")
          << ((op.variant & 2) ? " with stop token" : "")
          << (((op.variant >> 2) & 3) == 1   ? " frozen"
              : ((op.variant >> 2) & 3) == 2 ? " shared"
                                             : "");
      if (slot_kinds[static_cast<std::size_t>(op.slot)].keyed())
        out << " key \"" << keys[static_cast<std::size_t>(op.key)] << '"';
      if (op.cancel == -1) out << " stopped before start";
      else if (op.cancel == -2) out << " deadline passed";
      else if (op.cancel > 0) out << " stopped in hook " << op.cancel;
      break;
    case Op::Release:
      out << "release parked~" << op.value;
      break;
    case Op::Cancel:
      out << "stop parked~" << op.value;
      break;
    case Op::Intercept:
      out << (op.multi ? "intercept_all" : "intercept") << " set~" << op.set;
      if (!op.multi) out << " slot " << op.slot;
      out << " prio " << op.priority << (op.async ? " coroutine " : " sync ")
          << intercepts_name(op.variant) << " k=" << op.value
          << (op.policy == 1   ? " named"
              : op.policy == 2 ? " with a failure policy (refused)"
              : op.policy == 3 ? " with a time limit (refused)"
                               : "")
          << (op.own == 1   ? " borrowed"
              : op.own == 2 ? " shared_ptr"
                            : "")
          << describe_order(op);
      break;
  }
  return out.str();
}

struct Config {
  bool reentrant = false;    // hooks mutate the pool while they run
  bool suspended = false;    // coroutine hooks park; Release operations resume them
  bool observe = false;      // an observer counts warnings and checks hooks_run
  bool services = false;     // failure policies, time limits, stop tokens, deadlines
  bool forms = false;        // borrowed and shared hooks, add_hooks, frozen and shared sets
  bool nested = false;       // running hooks dispatch too (with reentrant)
  bool keyed_focus = false;  // generation only (fuzz seeds): most adds and calls on keyed slots
};

// A slot pick: with keyed_focus, a keyed slot three times in four.
inline int random_slot(Random& r, const Config& config) {
  if (config.keyed_focus && r.chance(75)) {
    std::vector<int> keyed;
    for (int i = 0; i < slot_count; ++i)
      if (slot_kinds[static_cast<std::size_t>(i)].keyed()) keyed.push_back(i);
    return keyed[static_cast<std::size_t>(r.below(static_cast<int>(keyed.size())))];
  }
  return r.below(slot_count);
}

inline Op random_add(Random& r, const Config& config, bool may_mutate);

// A name (a, b, c: shared by several registrations) and a before/after constraint, sometimes.
inline void random_order(Random& r, Op& op) {
  if (r.chance(60)) op.name = r.between(1, 3);
  if (r.chance(15)) op.order = r.between(1, 6);
}

// An interceptor registration. A synchronous interceptor runs the rest with sync_wait, which
// would block for good around a parked hook: where hooks park, interceptors are coroutines.
inline Op random_intercept(Random& r, const Config& config) {
  Op op;
  op.kind = Op::Intercept;
  op.set = r.below(8);
  op.slot = random_slot(r, config);
  op.priority = r.chance(50) ? 0 : r.between(-3, 3);
  op.async = config.suspended || r.chance(50);
  op.value = r.between(-8, 30);
  op.variant = r.below(intercepts_count);
  op.multi = r.chance(8);
  if (config.services) op.policy = r.chance(70) ? 0 : r.chance(70) ? 1 : r.between(2, 3);
  if (config.forms) op.own = r.chance(64) ? 0 : r.between(1, 2);
  random_order(r, op);
  return op;
}

// What an operation may carry, whatever produced it (the generator, the fuzzer's decoder).
inline void normalise(Op& op) {
  if (op.kind == Op::Call && !slot_kinds[static_cast<std::size_t>(op.slot)].keyed()) op.key = 0;
  if (op.kind != Op::Add && op.kind != Op::Intercept) op.name = op.order = 0;
  if (op.kind != Op::Add) op.selector = op.pattern = 0;
  if (op.kind != Op::Add) return;
  const SlotKind kind = slot_kinds[static_cast<std::size_t>(op.slot)];
  // add_hooks, and with<S> (which takes no selector): every key
  if (op.multi || op.variant || !kind.keyed()) op.selector = 0;
  if (op.selector >= selects_count) op.selector %= selects_count;
  op.pattern = op.selector ? op.pattern % pattern_count(op.selector) : 0;
  // A Singleton slot that is not keyed keeps one hook, and does not check names (the library
  // accepts unknown names there: see regressions.cpp); add_hooks gives every adapter one name.
  if (op.multi || (kind.mode == Mode::Singleton && !kind.keyed())) op.name = op.order = 0;
  if (kind.keyed() && op.own == 3) op.own = 0;  // (no Stateful keyed hooks: compile time)
  if (!op.async) op.suspend = false;            // only a coroutine hook can park
  // A Stateful hook parked while holding its lock would make other dispatches wait their turn,
  // which the model does not follow.
  if (op.own == 3) op.suspend = false;
  // Nor may it dispatch: reaching itself would be a re-entry (ReentrancyError, or a wait for its
  // turn when started from a coroutine of another type), which the model does not follow either.
  if (op.own == 3 && op.nested &&
      std::any_of(op.nested->begin(), op.nested->end(),
                  [](const Op& sub) { return sub.kind == Op::Call; })) {
    std::vector<Op> kept;
    for (const Op& sub : *op.nested)
      if (sub.kind != Op::Call) kept.push_back(sub);
    op.nested = std::make_shared<const std::vector<Op>>(std::move(kept));
  }
  if (op.multi) op.policy = op.limit = 0;  // add_hooks: one name and policy for every adapter
}
inline void normalise(Op& op, const Config& config) {
  normalise(op);
  if (op.kind == Op::Add && !config.suspended) op.suspend = false;  // hooks park only then
  if (op.kind != Op::Intercept) return;
  if (config.suspended) op.async = true;  // see random_intercept
  if (op.own == 3) op.own = 0;            // (Stateful: hooks only)
}

inline OpList random_fresh_set(Random& r, const Config& config) {
  std::vector<Op> ops;
  for (int n = r.below(5); n > 0; --n)
    ops.push_back(r.chance(6) ? random_intercept(r, config) : random_add(r, config, false));
  if (r.chance(30)) {
    Op op;
    op.kind = Op::Configure;
    op.slot = r.below(slot_count);
    op.variant = r.below(3);
    op.value = r.between(-3, 12);
    ops.push_back(op);
  }
  return std::make_shared<const std::vector<Op>>(std::move(ops));
}

inline Op random_mutation(Random& r, const Config& config) {
  Op op;
  op.set = r.below(8);
  op.other = r.below(8);
  const int roll = r.below(100);
  if (config.nested && r.chance(20)) {  // a dispatch made by the running hook
    op.kind = Op::Call;
    op.slot = random_slot(r, config);
    op.value = r.between(-3, 40);
    op.variant = r.below(2);
    op.key = r.below(key_count);
    if (config.forms && r.chance(30)) op.variant |= r.between(1, 2) << 2;
    if (config.services && r.chance(20)) op.cancel = r.chance(50) ? -1 : r.between(1, 3);
    normalise(op);
  } else if (roll < 35) {
    op = r.chance(6) ? random_intercept(r, config) : random_add(r, config, false);
  } else if (roll < 65) {
    op.kind = Op::Remove;
    op.variant = r.chance(80) ? 0 : r.below(3);
    op.value = r.below(1000);
  } else if (roll < 72) {
    op.kind = Op::Configure;
    op.slot = r.below(slot_count);
    op.variant = r.below(3);
    op.value = r.between(-3, 12);
  } else if (roll < 80) {
    op.kind = Op::Copy;
  } else if (roll < 88) {
    op.kind = Op::Extend;
  } else if (roll < 95) {
    op.kind = Op::ExtendFresh;
    op.nested = random_fresh_set(r, config);
  } else {
    op.kind = Op::Drop;
  }
  return op;
}

inline Op random_add(Random& r, const Config& config, bool may_mutate) {
  Op op;
  op.kind = Op::Add;
  op.set = r.below(8);
  op.slot = random_slot(r, config);
  op.priority = r.chance(50) ? 0 : r.between(-3, 3);
  op.async = r.chance(40);
  op.value = r.between(-8, 30);
  op.throws = r.chance(3);
  op.suspend = config.suspended && op.async && r.chance(35);
  op.variant = r.chance(8) ? 1 : 0;
  if (config.services) {
    if (r.chance(12)) op.throws = true;
    op.policy = r.chance(50) ? 0 : r.between(1, 3);
    op.limit = r.chance(88) ? 0 : r.chance(60) ? 1 : 2;
  }
  if (config.forms) {
    op.own = r.chance(64) ? 0 : r.between(1, 3);
    op.multi = r.chance(4);
  }
  if (slot_kinds[static_cast<std::size_t>(op.slot)].keyed()) {
    op.selector = r.below(selects_count);
    op.pattern = r.below(pattern_count(op.selector));
  }
  random_order(r, op);
  normalise(op);
  if (may_mutate && config.reentrant && r.chance(15)) {
    std::vector<Op> mutations;
    for (int n = r.between(1, 3); n > 0; --n) mutations.push_back(random_mutation(r, config));
    op.nested = std::make_shared<const std::vector<Op>>(std::move(mutations));
    normalise(op);
  }
  return op;
}

inline std::vector<Op> random_sequence(Random& r, const Config& config, int length) {
  std::vector<Op> ops;
  ops.reserve(static_cast<std::size_t>(length));
  const int release_weight = config.suspended ? 9 : 0;
  const int cancel_weight = config.suspended && config.services ? 4 : 0;
  while (static_cast<int>(ops.size()) < length) {
    const int roll = r.below(100 + release_weight + cancel_weight);
    if (roll < 28) {
      ops.push_back(r.chance(6) ? random_intercept(r, config) : random_add(r, config, true));
      continue;
    }
    Op op;
    op.set = r.below(8);
    op.other = r.below(8);
    if (roll < 38) {
      op.kind = Op::Remove;
      op.variant = r.chance(70) ? 0 : r.below(3);
      op.value = r.below(1000);
    } else if (roll < 42) {
      op.kind = Op::Configure;
      op.slot = r.below(slot_count);
      op.variant = r.below(3);
      op.value = r.between(-3, 12);
    } else if (roll < 46) {
      op.kind = Op::Copy;
    } else if (roll < 50) {
      op.kind = Op::Extend;
      op.variant = r.chance(20) ? 1 : 0;
    } else if (roll < 54) {
      op.kind = Op::ExtendFresh;
      op.nested = random_fresh_set(r, config);
    } else if (roll < 56) {
      op.kind = Op::Drop;
    } else if (roll < 100) {
      op.kind = Op::Call;
      op.slot = random_slot(r, config);
      op.value = r.between(-3, 40);
      op.variant = r.below(2);
      op.key = r.below(key_count);
      normalise(op);
      if (config.forms && r.chance(30)) op.variant |= r.between(1, 2) << 2;
      if (config.services) {
        if (r.chance(30)) op.variant |= 2;
        const int stop = r.below(100);
        op.cancel = stop < 6 ? -1 : stop < 9 ? -2 : stop < 24 ? r.between(1, 4) : 0;
      }
    } else if (roll < 100 + release_weight) {
      op.kind = Op::Release;
      op.value = r.below(1000);
    } else {
      op.kind = Op::Cancel;
      op.value = r.below(1000);
    }
    ops.push_back(op);
  }
  return ops;
}

}  // namespace hookset_model
