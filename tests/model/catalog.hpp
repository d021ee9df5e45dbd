// The slots the model-based tests run (tests/model/randomized.cpp): one int(Call) or void(Call)
// slot per row of the dispatch table (docs/semantics.md), with sync and async defaults and
// companions, and what every default, hook and companion call records. The behaviour here (values,
// when something throws) is shared by the real hooks and the reference model (reference_model.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/hookset.hpp>

#include "lifetime_probe.hpp"

namespace hookset_model {

namespace mp = boost::mp11;
using hookset::Flow;
using hookset::Task;

// ---- what a dispatch is given and what it records -----------------------------------------------

// The slots' one parameter: the value hooks compute with, and the id of the dispatch (so calls of
// dispatches suspended at the same time are told apart). Coroutine hooks and interceptors take
// it by value, so their frames hold copies; its lifetime probe (lifetime_probe.hpp) counts them
// for the dispatch: when the dispatch has completed, none of the copies it made is alive.
struct Call {
  int x = 0;
  int id = 0;
  test_support::lifetime::Probe probe;

  Call() = default;
  Call(int x_, int id_) : x(x_), id(id_), probe(id_) {}
};

enum Who : int {
  by_default = -1,
  by_chain = -2,
  by_aggregate = -3,
  by_finalize = -4
};  // hooks: token > 0
// Interceptors record under their token too: when they begin (with the x they got), when next
// returned (with its result, for int results; else 0), when they caught what next threw.
// Keyed slots' hooks and defaults record the key they got (kKey, its index in `keys`, -1 for
// another); an interceptor that calls next() a second time records how that ended (kSecondNext:
// 1 std::logic_error, 2 another exception, 0 it ran).
enum What : int {
  kBegin = 0,
  kResumed = 1,
  kIntercepted = 2,
  kNextReturned = 3,
  kCaught = 4,
  kKey = 5,
  kSecondNext = 6
};

struct Event {
  int who;
  int what;
  long long value;
  friend bool operator==(const Event&, const Event&) = default;
};

inline std::string show(const Event& e) {
  std::string who = e.who == by_default     ? "default"
                    : e.who == by_chain     ? "chain"
                    : e.who == by_aggregate ? "aggregate"
                    : e.who == by_finalize  ? "finalize"
                                            : "hook#" + std::to_string(e.who);
  if (e.what == kIntercepted)
    return "interceptor#" + std::to_string(e.who) + "(" + std::to_string(e.value) + ")";
  if (e.what == kNextReturned)
    return "interceptor#" + std::to_string(e.who) + " got(" + std::to_string(e.value) + ")";
  if (e.what == kCaught) return "interceptor#" + std::to_string(e.who) + " caught";
  if (e.what == kSecondNext)
    return "interceptor#" + std::to_string(e.who) + " next again(" + std::to_string(e.value) + ")";
  if (e.what == kKey) return who + " key#" + std::to_string(e.value);
  return who + (e.what == kResumed ? " resumed" : "(" + std::to_string(e.value) + ")");
}

constexpr long long no_last = -999999;
inline long long encode(std::optional<int> last) { return last ? *last : no_last; }

// Every default, hook and companion call, per dispatch. Companions do not see the Call: they are
// attributed to the dispatch whose default or hook ran (or resumed) last, which is theirs.
struct Recorder {
  std::map<int, std::vector<Event>> by_call;
  int current_call = 0;

  void record(int call, int who, int what, long long value) {
    current_call = call;
    by_call[call].push_back({who, what, value});
  }
  void companion(int who, long long value) {
    by_call[current_call].push_back({who, kBegin, value});
  }
};
inline Recorder recorder;

// ---- behaviour shared by the real hooks/companions and the model
// ----------------------------------

inline int fold_value(std::optional<int> last, int k) {
  return ((last ? *last : 1) * 3 + k) % 100003;
}

// A pipeline hook's decision, by k: pass (two in five), rewrite x to x + k, complete with
// 2x + k, reject with reason "r<k>".
enum class Decides { Pass, Rewrite, Complete, Reject };
inline Decides pipeline_decision(int k) {
  switch (((k % 5) + 5) % 5) {
    case 2:
      return Decides::Rewrite;
    case 3:
      return Decides::Complete;
    case 4:
      return Decides::Reject;
    default:
      return Decides::Pass;
  }
}
inline int plain_value(const Call& c, int k) { return c.x + k; }
constexpr int default_throws_on = 13;           // the default throws for this argument
constexpr int chain_throws_on = 42;             // the chain throws for this output
constexpr std::size_t aggregate_throws_on = 6;  // the aggregate throws for this many outputs
constexpr int finalize_throws_on = 7;           // the finalize throws for this result

inline int hash(int weight, const std::vector<int>& outputs) {
  long long h = weight;
  for (int v : outputs) h = ((h * 31 + v) % 1000003 + 1000003) % 1000003;
  return static_cast<int>(h);
}
inline std::string join(int weight, const std::vector<int>& outputs) {
  std::string text = std::to_string(weight) + ":";
  for (std::size_t i = 0; i < outputs.size(); ++i)
    text += (i ? "," : "") + std::to_string(outputs[i]);
  return text;
}

inline Flow check_chain(int limit, int v) {
  recorder.companion(by_chain, v);
  if (v == chain_throws_on) throw std::runtime_error("chain rejects 42");
  return v < limit ? Flow::Break : Flow::Continue;
}
inline void check_aggregate(const std::vector<int>& outputs) {
  recorder.companion(by_aggregate, static_cast<long long>(outputs.size()));
  if (outputs.size() == aggregate_throws_on)
    throw std::runtime_error("aggregate rejects 6 outputs");
}
inline void check_finalize(int r) {
  recorder.companion(by_finalize, r);
  if (r == finalize_throws_on) throw std::runtime_error("finalize rejects 7");
}

// Companions, each with a parameter `configure` can set (the model knows the defaults).
constexpr int default_limit = 0, default_weight = 1, default_offset = 1000;

struct BreakBelow {
  int limit = default_limit;
  Flow operator()(const int& v) const { return check_chain(limit, v); }
};
struct AsyncBreakBelow {
  int limit = default_limit;
  Task<Flow> operator()(const int& v) const { co_return check_chain(limit, v); }
};
struct Hash {
  int weight = default_weight;
  int operator()(std::vector<int> outputs) const {
    check_aggregate(outputs);
    return hash(weight, outputs);
  }
};
struct AsyncHash {
  int weight = default_weight;
  Task<int> operator()(std::vector<int> outputs) const {
    check_aggregate(outputs);
    co_return hash(weight, outputs);
  }
};
struct Join {
  int weight = default_weight;
  std::string operator()(std::vector<int> outputs) const {
    check_aggregate(outputs);
    return join(weight, outputs);
  }
};
struct AsyncJoin {
  int weight = default_weight;
  Task<std::string> operator()(std::vector<int> outputs) const {
    check_aggregate(outputs);
    co_return join(weight, outputs);
  }
};
struct Offset {
  int offset = default_offset;
  int operator()(int r) const {
    check_finalize(r);
    return r + offset;
  }
};
struct AsyncOffset {
  int offset = default_offset;
  Task<int> operator()(int r) const {
    check_finalize(r);
    co_return r + offset;
  }
};
struct Describe {
  int offset = default_offset;
  std::string operator()(int r) const {
    check_finalize(r);
    return "o" + std::to_string(offset) + ":" + std::to_string(r);
  }
};
struct AsyncDescribe {
  int offset = default_offset;
  Task<std::string> operator()(int r) const {
    check_finalize(r);
    co_return "o" + std::to_string(offset) + ":" + std::to_string(r);
  }
};

// ---- keyed slots: the keys, the selectors' patterns, and which keys a selector selects ----------

// Dispatches of keyed slots pick their key among these; registrations select keys with
// key(keys[i]), prefix(prefixes[i]), glob(globs[i]), matching(predicate i) or every key.
constexpr std::array<std::string_view, 6> keys = {"fs_read", "fs_write", "shell",
                                                  "net",     "",         "fs_read_all"};
constexpr int key_count = static_cast<int>(keys.size());
constexpr std::array<std::string_view, 4> prefixes = {"fs_", "fs_read", "", "net_"};
constexpr std::array<std::string_view, 6> globs = {"fs_*", "*read*", "?hell", "*", "f*_*e", "??"};
constexpr int predicate_count = 4;  // even length, contains 'e', empty, never
inline bool predicate(int which, std::string_view key) {
  switch (which) {
    case 0:
      return key.size() % 2 == 0;
    case 1:
      return key.find('e') != std::string_view::npos;
    case 2:
      return key.empty();
    default:
      return false;
  }
}
inline int key_index(std::string_view key) {
  for (int i = 0; i < key_count; ++i)
    if (keys[static_cast<std::size_t>(i)] == key) return i;
  return -1;
}

// A registration's selector (Op::selector): every key without one (add<S>(hook)), any_key, one
// key, a prefix, a glob, a predicate; `pattern` picks the key, prefix, glob or predicate.
enum Selects : int { kNoSelector, kAnyKey, kExactKey, kPrefix, kGlob, kMatching };
constexpr int selects_count = 6;
inline int pattern_count(int selector) {
  switch (selector) {
    case kExactKey:
      return key_count;
    case kPrefix:
      return static_cast<int>(prefixes.size());
    case kGlob:
      return static_cast<int>(globs.size());
    case kMatching:
      return predicate_count;
    default:
      return 1;
  }
}

// The model's glob: '*' any run, '?' any one character (written plainly, recursively).
inline bool model_glob(std::string_view pattern, std::string_view text) {
  if (pattern.empty()) return text.empty();
  if (pattern[0] == '*')
    return model_glob(pattern.substr(1), text) ||
           (!text.empty() && model_glob(pattern, text.substr(1)));
  if (text.empty()) return false;
  return (pattern[0] == '?' || pattern[0] == text[0]) &&
         model_glob(pattern.substr(1), text.substr(1));
}
inline bool selects(int selector, int pattern, int key) {
  const std::string_view k = keys[static_cast<std::size_t>(key)];
  switch (selector) {
    case kExactKey:
      return pattern == key;
    case kPrefix:
      return k.substr(0, prefixes[static_cast<std::size_t>(pattern)].size()) ==
             prefixes[static_cast<std::size_t>(pattern)];
    case kGlob:
      return model_glob(globs[static_cast<std::size_t>(pattern)], k);
    case kMatching:
      return predicate(pattern, k);
    default:
      return true;
  }
}
// docs/semantics.md, keyed Singleton: a registration replaces one with the same selector (no
// selector and any_key are the same; predicates never are).
inline bool same_selector(int a, int pattern_a, int b, int pattern_b) {
  const auto norm = [](int s) { return s == kNoSelector ? kAnyKey : s; };
  if (norm(a) != norm(b) || a == kMatching) return false;
  return norm(a) == kAnyKey || pattern_a == pattern_b;
}

// ---- the slots: every row of the dispatch table, sync and async defaults and companions
// --------------

enum class Mode { Always, Fallback, Singleton, Pipeline };
enum Flags : unsigned {
  kChain = 1,
  kAggregate = 2,
  kFinalize = 4,
  kOutput = 8,
  kVoid = 16,
  kAsyncDefault = 32,
  kAsyncCompanions = 64,
  kKeyed = 128,  // int(Call, std::string_view key), hookset::Keyed
};

struct SlotKind {
  Mode mode;
  unsigned flags;
  constexpr bool has(unsigned f) const { return (flags & f) != 0; }
  // What set.call yields: an int, a std::string (Output), a PipelineResult or nothing.
  constexpr bool int_result() const {
    return mode != Mode::Pipeline && !has(kVoid) && !has(kOutput);
  }
  // Fold slots hand each hook the previous output as `last` (docs/semantics.md, hook shapes).
  constexpr bool fold() const {
    return mode != Mode::Singleton && mode != Mode::Pipeline && !has(kVoid) && !has(kChain) &&
           !has(kAggregate);
  }
  constexpr bool keyed() const { return has(kKeyed); }
};

template <unsigned F>
using chain_t = std::conditional_t<(F & kAsyncCompanions) != 0, AsyncBreakBelow, BreakBelow>;
template <unsigned F>
using aggregate_t =
    std::conditional_t<(F & kOutput) != 0,
                       std::conditional_t<(F & kAsyncCompanions) != 0, AsyncJoin, Join>,
                       std::conditional_t<(F & kAsyncCompanions) != 0, AsyncHash, Hash>>;
template <unsigned F>
using finalize_t =
    std::conditional_t<(F & kOutput) != 0,
                       std::conditional_t<(F & kAsyncCompanions) != 0, AsyncDescribe, Describe>,
                       std::conditional_t<(F & kAsyncCompanions) != 0, AsyncOffset, Offset>>;

template <Mode M>
using mode_t = std::conditional_t<
    M == Mode::Always, hookset::Always,
    std::conditional_t<
        M == Mode::Fallback, hookset::Fallback,
        std::conditional_t<M == Mode::Singleton, hookset::Singleton, hookset::Pipeline>>>;
template <bool B, class T>
using option_if = mp::mp_if_c<B, mp::mp_list<T>, mp::mp_list<>>;

template <class Signature, class Options>
struct slot_of;
template <class Signature, class... Options>
struct slot_of<Signature, mp::mp_list<Options...>> {
  using type = hookset::Slot<Signature, Options...>;
};

template <Mode M, unsigned F>
using slot_base_t = typename slot_of<
    std::conditional_t<
        (F & kVoid) != 0, void(Call),
        std::conditional_t<(F & kKeyed) != 0, int(Call, std::string_view), int(Call)>>,
    mp::mp_append<mp::mp_list<mode_t<M>>, option_if<(F & kKeyed) != 0, hookset::Keyed>,
                  option_if<(F & kChain) != 0, hookset::Chain<chain_t<F>>>,
                  option_if<(F & kAggregate) != 0, hookset::Aggregate<aggregate_t<F>>>,
                  option_if<(F & kFinalize) != 0, hookset::Finalize<finalize_t<F>>>,
                  option_if<(F & kOutput) != 0, hookset::Output<std::string>>>>::type;

inline int run_default(const Call& c) {
  recorder.record(c.id, by_default, kBegin, c.x);
  if (c.x == default_throws_on) throw std::runtime_error("default rejects 13");
  return c.x;
}
inline Task<int> async_default(const Call& c) { co_return run_default(c); }
inline Task<void> async_void_default(const Call& c) {
  run_default(c);
  co_return;
}

inline void record_key(int call, int who, std::string_view key) {
  recorder.record(call, who, kKey, key_index(key));
}

// The default (a keyed slot's gets the key too, recorded).
template <unsigned F, bool Keyed = (F & kKeyed) != 0>
struct model_default {
  static auto default_impl(const Call& c) {
    if constexpr ((F & kAsyncDefault) != 0 && (F & kVoid) != 0) return async_void_default(c);
    else if constexpr ((F & kAsyncDefault) != 0) return async_default(c);
    else if constexpr ((F & kVoid) != 0) run_default(c);
    else return run_default(c);
  }
};
template <unsigned F>
struct model_default<F, true> {
  static auto default_impl(const Call& c, std::string_view key) {
    record_key(c.id, by_default, key);
    if constexpr ((F & kAsyncDefault) != 0) return async_default(c);
    else return run_default(c);
  }
};

template <int Id, Mode M, unsigned F>
struct ModelSlot : slot_base_t<M, F>, model_default<F> {
  static constexpr SlotKind kind{M, F};
};

using Nested = hookset::HookSet<ModelSlot<23, Mode::Always, kAsyncDefault>,
                                ModelSlot<24, Mode::Fallback, kChain>>;
using Set = hookset::HookSet<
    ModelSlot<0, Mode::Always, 0>, ModelSlot<1, Mode::Fallback, kAsyncDefault>,
    ModelSlot<2, Mode::Singleton, 0>, ModelSlot<3, Mode::Singleton, kAsyncDefault>,
    ModelSlot<4, Mode::Always, kVoid | kAsyncDefault>, ModelSlot<5, Mode::Fallback, kVoid>,
    ModelSlot<6, Mode::Singleton, kVoid>, ModelSlot<7, Mode::Always, kChain>,
    ModelSlot<8, Mode::Fallback, kChain | kAsyncCompanions>,
    ModelSlot<9, Mode::Always, kAggregate | kAsyncDefault>,
    ModelSlot<10, Mode::Fallback, kAggregate | kAsyncCompanions>,
    ModelSlot<11, Mode::Always, kChain | kAggregate | kAsyncCompanions>,
    ModelSlot<12, Mode::Fallback, kChain | kAggregate>, ModelSlot<13, Mode::Always, kFinalize>,
    ModelSlot<14, Mode::Fallback, kFinalize | kAsyncCompanions | kAsyncDefault>,
    ModelSlot<15, Mode::Always, kChain | kFinalize>,
    ModelSlot<16, Mode::Fallback, kChain | kFinalize | kAsyncDefault>,
    ModelSlot<17, Mode::Always, kAggregate | kOutput>,
    ModelSlot<18, Mode::Fallback, kAggregate | kOutput>,
    ModelSlot<19, Mode::Fallback, kChain | kAggregate | kOutput | kAsyncCompanions>,
    ModelSlot<20, Mode::Always, kFinalize | kOutput>,
    ModelSlot<21, Mode::Fallback, kChain | kFinalize | kOutput | kAsyncCompanions>,
    ModelSlot<22, Mode::Always, kChain | kAggregate | kOutput>, ModelSlot<25, Mode::Pipeline, 0>,
    ModelSlot<26, Mode::Pipeline, kAsyncDefault>, ModelSlot<27, Mode::Always, kKeyed>,
    ModelSlot<28, Mode::Singleton, kKeyed | kAsyncDefault>, Nested>;

using Slots = Set::slots;
constexpr int slot_count = static_cast<int>(mp::mp_size<Slots>::value);

constexpr std::array<SlotKind, slot_count> slot_kinds = [] {
  std::array<SlotKind, slot_count> kinds{};
  mp::mp_for_each<mp::mp_iota_c<slot_count>>(
      [&](auto i) { kinds[i] = mp::mp_at_c<Slots, i>::kind; });
  return kinds;
}();

template <class F>
decltype(auto) with_slot(int index, F&& f) {
  return mp::mp_with_index<slot_count>(
      static_cast<std::size_t>(index),
      [&](auto i) -> decltype(auto) { return f(mp::mp_identity<mp::mp_at_c<Slots, i>>{}); });
}

}  // namespace hookset_model
