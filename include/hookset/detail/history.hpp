#pragma once
// Historic slots (hookset::Historic<N>): the calls a set keeps, and their replay to a hook.
//
// A set keeps one log per historic slot of its own (a nested set keeps its slots'), made with
// the set and shared by every copy of it - frozen versions and a SharedHookSet's included - as
// copies share hooks. call<S>() is const and may run on many threads at once, so a log is
// locked; it is never locked while a hook runs (a replay works on a copy of the calls).

#include <cstddef>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <hookset/coro/sync_wait.hpp>
#include <hookset/detail/call_traits.hpp>
#include <hookset/detail/hook_call.hpp>
#include <hookset/detail/keyed_index.hpp>
#include <hookset/detail/slot_traits.hpp>
#include <hookset/keyed.hpp>

namespace hookset {

// What a historic slot S keeps of one call: its arguments as values (recorded_t: decayed, a
// std::string_view as a std::string), in parameter order.
template <class S>
using recorded_call_t = boost::mp11::mp_rename<
    boost::mp11::mp_transform<detail::recorded_t, typename S::parameter_types>, std::tuple>;

}  // namespace hookset

namespace hookset::detail {

// The last `capacity` calls of one slot. Full, it overwrites the oldest: calls_ is a ring whose
// oldest element is at oldest_.
template <class Call>
class call_log {
 public:
  explicit call_log(std::size_t capacity) noexcept : capacity_(capacity) {}

  void record(Call call) {
    std::lock_guard lock(mutex_);
    if (calls_.size() < capacity_) {
      calls_.push_back(std::move(call));
    } else {
      calls_[oldest_] = std::move(call);
      oldest_ = (oldest_ + 1) % capacity_;
    }
  }
  // Oldest first.
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    std::vector<Call> ordered;
    ordered.reserve(calls_.size());
    const auto oldest = calls_.begin() + static_cast<std::ptrdiff_t>(oldest_);
    ordered.insert(ordered.end(), oldest, calls_.end());
    ordered.insert(ordered.end(), calls_.begin(), oldest);
    return ordered;
  }
  void clear() noexcept {
    std::vector<Call> dropped;  // destroyed after the lock is released
    std::lock_guard lock(mutex_);
    dropped.swap(calls_);
    oldest_ = 0;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
  std::size_t oldest_ = 0;
};

template <class S>
using call_log_of = call_log<recorded_call_t<S>>;

// A set's logs, one per historic slot of its own (Slots). Copies share them; a move copies too,
// so that a moved-from set records into the same logs as the set it was moved to. Without
// historic slots it is empty and stored in no space ([[no_unique_address]]).
template <class Slots>
class set_history;
template <>
class set_history<mp::mp_list<>> {};
template <class... S>
class set_history<mp::mp_list<S...>> {
 public:
  set_history() : logs_(std::make_shared<call_log_of<S>>(history_capacity<S>)...) {}
  set_history(const set_history&) noexcept = default;
  set_history(set_history&& other) noexcept : logs_(other.logs_) {}
  set_history& operator=(const set_history&) noexcept = default;
  set_history& operator=(set_history&& other) noexcept {
    logs_ = other.logs_;
    return *this;
  }

  template <class Slot>
  call_log_of<Slot>& log() const noexcept {
    return *std::get<mp::mp_find<mp::mp_list<S...>, Slot>::value>(logs_);
  }

 private:
  std::tuple<std::shared_ptr<call_log_of<S>>...> logs_;
};

// A call's record, made from call<S>()'s arguments as the dispatch binds them (arg_ref_t: the
// conversions the dispatch makes, once).
template <class S, class Params = typename S::parameter_types>
struct call_recorder;
template <class S, class... P>
struct call_recorder<S, mp::mp_list<P...>> {
  template <class... Args>
  static recorded_call_t<S> record(Args&... args) {
    return recorded_call_t<S>(recorded_t<P>(static_cast<arg_ref_t<P>>(args))...);
  }
};

// Whether a registration is for the key of a recorded call of slot S (a keyed slot's hooks run
// only for the keys their selector names).
template <class S>
bool replays_to(const hook_entry& entry, const recorded_call_t<S>& call) {
  if constexpr (!is_keyed<S>) {
    return true;
  } else {
    using key = key_type_t<S>;
    const key_selector<key>* selector = selector_of<key>(entry);
    constexpr std::size_t key_index = std::tuple_size_v<recorded_call_t<S>> - 1;
    return !selector || selector->matches(lookup_key<key>(std::get<key_index>(call)));
  }
}

// Calls one registered hook with a recorded call, as a dispatch calls it but alone: no default,
// no other hook, no companion, no interceptor; `last` (fold slots) empty; a coroutine hook run
// to completion (sync_wait). The result is discarded.
template <class Kind, class Params = typename Kind::parameters, class Wire = typename Kind::wire>
struct replay_call;
template <class Kind, class... A, class... Wire>
struct replay_call<Kind, mp::mp_list<A...>, mp::mp_list<Wire...>> {
  template <class Call>
  static void run(const hook_entry& entry, Call& call) {
    std::apply(
        [&](auto&... recorded) {
      // (An empty `last` crosses the erased call as value-initialised wire: (R{}, false), or
      // an empty std::optional<R>.)
      if (entry.sync)
        (void)sync_call_of<Kind>(entry)(entry.object, static_cast<arg_ref_t<A>>(recorded)...,
                                        std::remove_reference_t<Wire>{}...);
      else
        (void)sync_wait(async_call_of<Kind>(entry)(entry.object,
                                                   static_cast<arg_ref_t<A>>(recorded)...,
                                                   std::remove_reference_t<Wire>{}...));
        },
        call);
  }
};

// Replays `calls` (oldest first) to `hooks` (copies of the entries: they keep the hooks alive
// whatever the hooks do to the set meanwhile): each call to every hook it is for, in order.
template <class S>
void replay(std::vector<recorded_call_t<S>>& calls, const std::vector<hook_entry>& hooks) {
  for (recorded_call_t<S>& call : calls)
    for (const hook_entry& entry : hooks)
      if (replays_to<S>(entry, call)) replay_call<kind_of<S>>::run(entry, call);
}

}  // namespace hookset::detail
