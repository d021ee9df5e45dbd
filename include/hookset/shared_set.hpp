#pragma once
// Sets to share between threads:
//  - FrozenHookSet<Slots...>: an immutable set (HookSet::freeze()). Any number of threads may
//    dispatch it without synchronisation; it dispatches exactly as the set it was frozen from.
//  - SharedHookSet<Slots...>: a holder through which many threads dispatch while others
//    publish changed versions (add, remove, extend... on a copy) atomically. A dispatch runs on
//    the version current when it was made, and keeps that version alive until it completes.
//
//   hookset::SharedHookSet<Validate, Choose> hooks;
//   hooks.update([](auto& set) { set.template add<Validate>(reject_keys); });  // any thread
//   auto verdict = co_await hooks.call<Validate>(prompt);                       // any thread

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <hookset/hook_set.hpp>

namespace hookset {

template <class... Members>
class FrozenHookSet {
 public:
  using set_type = HookSet<Members...>;
  using slots = typename set_type::slots;
  template <class S>
  static constexpr bool contains = set_type::template contains<S>;

  FrozenHookSet() = default;
  explicit FrozenHookSet(set_type set) noexcept : set_(std::move(set)) {}

  template <class S, class... Args>
  auto call(Args&&... args) const {
    return set_.template call<S>(std::forward<Args>(args)...);
  }
  template <class S, class... Args>
  auto call(boost::hana::basic_type<S> slot, Args&&... args) const {
    return set_.call(slot, std::forward<Args>(args)...);
  }
  template <class S>
  std::size_t count() const noexcept {
    return set_.template count<S>();
  }
  bool holds(HookId id) const noexcept { return set_.holds(id); }
  Observer* observer() const noexcept { return set_.observer(); }
  // The frozen nested set N (HookSet::nested<N>), const: how a slot that two named nested sets
  // share is dispatched. Part of this version: keep it (SharedHookSet::load()) while the dispatch
  // runs.
  template <class N>
  decltype(auto) nested() const noexcept {
    return set_.template nested<N>();
  }
  // Keyed slots (<hookset/keyed.hpp>).
  template <class S>
  std::vector<key_type_t<S>> keys() const {
    return set_.template keys<S>();
  }
  template <class S, class Key>
  bool has_hooks(const Key& key) const {
    return set_.template has_hooks<S>(key);
  }

  // Historic slots (HookSet::history): the history is shared with the set this was frozen
  // from, and with every copy and version of it.
  template <class S>
  std::vector<recorded_call_t<S>> history() const {
    return set_.template history<S>();
  }
  template <class S>
  void clear_history() const {
    set_.template clear_history<S>();
  }
  void replay_history_to(const set_type& newcomers) const { set_.replay_history_to(newcomers); }

  // A mutable copy (sharing the hooks), to change and freeze again.
  set_type thaw() const& { return set_; }
  set_type thaw() && noexcept { return std::move(set_); }

 private:
  set_type set_;
};

template <class... Members>
FrozenHookSet<Members...> HookSet<Members...>::freeze() const& {
  return FrozenHookSet<Members...>(*this);
}
template <class... Members>
FrozenHookSet<Members...> HookSet<Members...>::freeze() && {
  return FrozenHookSet<Members...>(std::move(*this));
}

template <class... Members>
class SharedHookSet {
 public:
  using set_type = HookSet<Members...>;
  using frozen_type = FrozenHookSet<Members...>;

  SharedHookSet() : current_(std::make_shared<const frozen_type>()) {}
  explicit SharedHookSet(set_type initial)
      : current_(std::make_shared<const frozen_type>(std::move(initial))) {}
  SharedHookSet(const SharedHookSet&) = delete;
  SharedHookSet& operator=(const SharedHookSet&) = delete;

  // The current version: dispatch it as often as needed; it stays as it is.
  std::shared_ptr<const frozen_type> load() const noexcept {
    std::lock_guard lock(current_mutex_);
    return current_;
  }
  // How many versions were published (0: the initial one).
  std::uint64_t version() const noexcept { return version_.load(std::memory_order_acquire); }

  // Dispatches slot S on the current version, which the dispatch keeps alive until it completes.
  template <class S, class... Args>
  auto call(Args&&... args) const {
    std::shared_ptr<const frozen_type> version = load();
    auto dispatch = version->template call<S>(std::forward<Args>(args)...);
    return std::move(dispatch).keeping(std::move(version));
  }

  // Historic slots (HookSet::history): every version shares one history.
  template <class S>
  std::vector<recorded_call_t<S>> history() const {
    return load()->template history<S>();
  }
  template <class S>
  void clear_history() const {
    load()->template clear_history<S>();
  }

  // Publishes `next` as the current version.
  void publish(set_type next) {
    auto frozen = std::make_shared<const frozen_type>(std::move(next));
    std::lock_guard lock(writers_);
    replace_current(std::move(frozen));
  }
  // Publishes `next` as the current version, which keeps `keep_alive` (what the version refers
  // to, its observer say) until the version and every dispatch of it are gone.
  void publish(set_type next, std::shared_ptr<const void> keep_alive) {
    struct kept_version {
      std::shared_ptr<const void> kept;  // (first: released after the set)
      frozen_type frozen;
    };
    auto holder = std::make_shared<const kept_version>(
        kept_version{std::move(keep_alive), frozen_type(std::move(next))});
    std::shared_ptr<const frozen_type> frozen(holder, &holder->frozen);
    std::lock_guard lock(writers_);
    replace_current(std::move(frozen));
  }

  // Applies `edit(set_type&)` to a copy of the current version and publishes the result.
  // Writers take turns, so no edit is lost; if `edit` throws, nothing is published.
  template <class Edit>
  void update(Edit&& edit) {
    std::lock_guard lock(writers_);
    set_type next = load()->thaw();
    std::forward<Edit>(edit)(next);
    replace_current(std::make_shared<const frozen_type>(std::move(next)));
  }

 private:
  // Called with writers_ held. The old version is released after current_mutex_ is: its last
  // owner may be this thread, and destroying a set runs its hooks' destructors (user code).
  void replace_current(std::shared_ptr<const frozen_type> next) noexcept {
    {
      std::lock_guard lock(current_mutex_);
      current_.swap(next);
      version_.fetch_add(1, std::memory_order_acq_rel);
    }
  }

  // A plain mutex around the pointer, held only to copy or swap it, rather than
  // std::atomic<std::shared_ptr>: libstdc++ 12's implementation releases its internal lock
  // with a relaxed store after a load, a data race by the memory model that ThreadSanitizer
  // reports (8 readers and a publisher trip it within seconds), and it is no faster.
  mutable std::mutex current_mutex_;
  std::shared_ptr<const frozen_type> current_;
  std::atomic<std::uint64_t> version_{0};
  std::mutex writers_;
};

}  // namespace hookset
