#pragma once
// Plugins: shared libraries that register hooks in a program's set, loaded, reloaded and
// unloaded while other threads dispatch (docs/plugins.md). Optional, like <hookset/asio.hpp>,
// and POSIX only (dlopen).
//
// The plugin's side, in a shared library built with hookset_add_plugin (CMake):
//
//   HOOKSET_PLUGIN(AppHooks, registrar) {        // AppHooks: the program's set type (an alias)
//     registrar.add<CheckTool>(deny_shell);
//   }
//
// The program's side:
//
//   hookset::PluginHost<AppHooks> host;          // dispatch through it: host.call<S>(...)
//   hookset::Plugin policy = host.load("plugins/policy.so");
//   host.reload(policy, "plugins/policy.so");    // a new build of it
//   host.unload(policy).wait();                  // its library is closed
//
// How it stays safe:
//  - A plugin registers into a set of its own (a staging set), never into the program's. The
//    host merges the staging sets of its plugins into its own registrations and publishes the
//    result as one version (SharedHookSet): a dispatch sees a plugin's registrations whole or
//    not at all, and a plugin whose entry point throws leaves nothing behind.
//  - Every hook list that holds a plugin's registrations keeps its library loaded (an anchor,
//    released after the list's entries and companions): a dispatch that runs, or is suspended
//    in, a plugin's hook holds its list, so the library is closed only after the last one ends.
//    Unload publishes a version built without the plugin; when the old versions' lists are gone,
//    a closer thread closes the library, a grace period later (never the thread that let go of
//    it, which may be returning through the end of a plugin's coroutine). Nothing is counted
//    per call.
//  - A plugin must use the program's hookset objects - hook ids, the timer thread, per-thread
//    caches, the engine code its registrations name - never copies of its own, which would run
//    plugin code where the library cannot be closed under it: the program exports its symbols
//    and the plugin does not hide its own (hookset_plugin_host, hookset_add_plugin), and a load
//    checks that the dynamic linker bound them so.
//  - dlclose does not always unmap (a library with STB_GNU_UNIQUE symbols, or a thread_local
//    with a destructor, stays). After closing, the host asks the dynamic linker whether the
//    library is still loaded and says so (Unloaded::resident()).

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <hookset/coro/frame_pool.hpp>
#include <hookset/detail/hook_list.hpp>
#include <hookset/detail/observer_types.hpp>
#include <hookset/executor.hpp>
#include <hookset/fingerprint.hpp>
#include <hookset/hook_id.hpp>
#include <hookset/hook_set.hpp>
#include <hookset/observer.hpp>
#include <hookset/shared_set.hpp>

namespace hookset {

// A plugin that could not be loaded (or reloaded): the library, and why - the slot that differs,
// the version, what its entry point threw. The program's set is unchanged.
class PluginError : public std::runtime_error {
 public:
  PluginError(std::string path, std::string reason)
      : std::runtime_error("plugin " + path + ": " + reason),
        path_(std::move(path)),
        reason_(std::move(reason)) {}
  const std::string& path() const noexcept { return path_; }
  const std::string& reason() const noexcept { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

// What a plugin's entry point registers through: the add, intercept and configure functions of
// the set it registers into, and its observers, all recorded under the plugin. (Its ids name
// registrations of that set; the host removes them all at once when it unloads the plugin.)
template <class Set>
class Registrar;

template <class... Members>
class Registrar<HookSet<Members...>> {
 public:
  using set_type = HookSet<Members...>;

  Registrar(set_type& set, std::vector<std::shared_ptr<Observer>>& observers) noexcept
      : set_(set), observers_(observers) {}
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  // add's forms, as HookSet has them (so options may be written in braces).
  template <class S, class Hook>
  requires(!detail::is_key_selector<Hook>) HookId add(Hook&& hook, Priority priority = {}) {
    return set_.template add<S>(std::forward<Hook>(hook), priority);
  }
  template <class S, class Hook>
  requires(!detail::is_key_selector<Hook>) HookId add(Hook&& hook, HookOptions options) {
    return set_.template add<S>(std::forward<Hook>(hook), std::move(options));
  }
  template <class S, class Selector, class Hook>
  requires detail::is_key_selector<Selector> HookId add(Selector&& selector, Hook&& hook,
                                                        Priority priority = {}) {
    return set_.template add<S>(std::forward<Selector>(selector), std::forward<Hook>(hook),
                                priority);
  }
  template <class S, class Selector, class Hook>
  requires detail::is_key_selector<Selector> HookId add(Selector&& selector, Hook&& hook,
                                                        HookOptions options) {
    return set_.template add<S>(std::forward<Selector>(selector), std::forward<Hook>(hook),
                                std::move(options));
  }
  template <class Object, class... Args>
  std::vector<HookId> add_hooks(Object&& object, Args&&... args) {
    return set_.add_hooks(std::forward<Object>(object), std::forward<Args>(args)...);
  }
  template <class S, class... Args>
  HookId intercept(Args&&... args) {
    return set_.template intercept<S>(std::forward<Args>(args)...);
  }
  template <class... Args>
  HookId intercept_all(Args&&... args) {
    return set_.intercept_all(std::forward<Args>(args)...);
  }
  template <class S, class Companion>
  void configure(Companion&& companion) {
    set_.template configure<S>(std::forward<Companion>(companion));
  }
  // An observer of the program's set while the plugin is loaded: told of every dispatch and
  // warning, beside the program's own observer (HookSet::set_observer).
  void observe(std::shared_ptr<Observer> observer) {
    if (observer) observers_.push_back(std::move(observer));
  }
  // The set itself, for the rest (nested<N>(), count<S>()).
  set_type& set() noexcept { return set_; }

 private:
  set_type& set_;
  std::vector<std::shared_ptr<Observer>>& observers_;
};

namespace detail {

// The objects hookset keeps for the whole process or for each thread, as the code of one image
// (the program, or a plugin) reaches them. A plugin must reach the program's: with objects of
// its own it would number hooks apart (HookId), run a timer thread of its own in its own code,
// and register thread-exit destructors that keep its library mapped until those threads end.
// The dynamic linker binds them to the program's when the program exports its symbols and the
// plugin does not hide its own (hookset_plugin_host, hookset_add_plugin).
struct process_objects {
  using erased_fn = void (*)();
  erased_fn next_hook_id;          // HookId::next: one numbering of registrations
  erased_fn default_executor;      // the timer thread
  erased_fn thread_cache_adopter;  // coroutine frame caches, emptied at thread exit
  erased_fn parked_lists;          // snapshots parked during synchronous dispatches
  const void* installed_observer;  // set_observer's
  const void* next_dispatch_id;
};

// This image's view. (Internal linkage: each image has its own, which reports its bindings.)
[[maybe_unused]] static process_objects process_objects_here() noexcept {
  using erased_fn = process_objects::erased_fn;
  return {reinterpret_cast<erased_fn>(&HookId::next),
          reinterpret_cast<erased_fn>(&default_executor),
          reinterpret_cast<erased_fn>(frame_pool::thread_cache_adopter()),
          reinterpret_cast<erased_fn>(&parked_lists),
          &installed_observer,
          &next_dispatch_id};
}

// The engine code a registration of each slot S of `Slots` names - what runs a dispatch on after
// a coroutine hook (suspended_driver_for), an interceptor's layer (interceptor_code_for) - as
// this image reaches it. A plugin's registrations must name the program's: a dispatch that runs
// the plugin's copy has plugin code on its stack under whatever it resumes (the dispatch's
// awaiter, which may run on for long), and the library could not be closed under it. Asking
// for them here also makes the program define them, for the dynamic linker to bind the
// plugin's references to. (Internal linkage: each image reports its own bindings.)
template <class... Slots>
[[maybe_unused]] static const void* const* engine_objects_here(std::size_t& count) noexcept {
  static const void* const objects[] = {suspended_driver_for<Slots, true>()...,
                                        interceptor_code_for<Slots>()..., nullptr};
  count = 2 * sizeof...(Slots);
  return objects;
}
template <class... Slots>
constexpr auto engine_objects_of(mp::mp_list<Slots...>) noexcept {
  return &engine_objects_here<Slots...>;
}

// The first of `plugin`'s objects that is not the program's, named; empty if none.
inline std::string unshared_process_object(const process_objects& program,
                                           const process_objects& plugin) {
  if (plugin.next_hook_id != program.next_hook_id) return "hook ids (HookId::next)";
  if (plugin.default_executor != program.default_executor)
    return "the timer thread (default_executor)";
  if (plugin.thread_cache_adopter != program.thread_cache_adopter)
    return "the coroutine frame caches";
  if (plugin.parked_lists != program.parked_lists) return "the parked snapshots";
  if (plugin.installed_observer != program.installed_observer) return "the process-wide observer";
  if (plugin.next_dispatch_id != program.next_dispatch_id) return "dispatch ids";
  return {};
}

}  // namespace detail

// What a plugin exports (HOOKSET_PLUGIN defines it). `abi_version` keeps its place in every
// version, so that a library of another version is told apart before anything else is read.
struct PluginEntry {
  std::uint32_t abi_version;
  const SetManifest* manifest;
  // The plugin's view of hookset's process-wide objects: the program's own when the dynamic
  // linker binds the plugin's hookset objects to the program's (see detail::process_objects).
  detail::process_objects (*process_objects)();
  // Registers the plugin's hooks in `staging` (a detail::plugin_staging of its set type,
  // checked against the manifest).
  void (*register_hooks)(void* staging);
  // The plugin's view of the engine code of each slot of its set (detail::engine_objects_here):
  // `count` entries.
  const void* const* (*engine_objects)(std::size_t& count);
};

namespace detail {

// What a plugin's entry point registers into: a set of its own and its observers.
template <class Set>
struct plugin_staging {
  Set set;
  std::vector<std::shared_ptr<Observer>> observers;
};

template <class Set, void (*Register)(Registrar<Set>&)>
void register_plugin_hooks(void* staging) {
  auto& into = *static_cast<plugin_staging<Set>*>(staging);
  Registrar<Set> registrar(into.set, into.observers);
  Register(registrar);
}

// The observer of a version with plugin observers: tells the program's own observer and every
// plugin's. It holds the plugins' libraries (first: released last), as their observers' code is
// theirs. Hook events go to those that want them at the time; values to those that ask.
class observer_fanout final : public Observer {
 public:
  observer_fanout(Observer* own, std::vector<std::shared_ptr<const void>> libraries,
                  std::vector<std::shared_ptr<Observer>> plugins)
      : libraries_(std::move(libraries)), own_(own), plugins_(std::move(plugins)) {
    if (own_) all_.push_back(own_);
    for (const auto& plugin : plugins_) all_.push_back(plugin.get());
  }
  void on_warning(std::string_view slot, std::string_view message) override {
    for (Observer* o : all_) o->on_warning(slot, message);
  }
  void on_dispatch_begin(std::string_view slot, std::uint64_t id) override {
    for (Observer* o : all_) o->on_dispatch_begin(slot, id);
  }
  void on_dispatch_end(std::string_view slot, std::uint64_t id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    for (Observer* o : all_) o->on_dispatch_end(slot, id, hooks_run, error);
  }
  bool wants_hook_events() const noexcept override {
    for (Observer* o : all_)
      if (o->wants_hook_events()) return true;
    return false;
  }
  void on_hook_begin(const HookEvent& event) override {
    for (Observer* o : all_)
      if (o->wants_hook_events()) o->on_hook_begin(event);
  }
  void on_hook_end(const HookEvent& event) override {
    for (Observer* o : all_)
      if (o->wants_hook_events()) o->on_hook_end(event);
  }
  bool wants_values() const noexcept override {
    for (Observer* o : all_)
      if (o->wants_values()) return true;
    return false;
  }
  void on_dispatch_result(std::string_view slot, std::uint64_t id, std::string_view value,
                          std::string_view input) override {
    for (Observer* o : all_)
      if (o->wants_values()) o->on_dispatch_result(slot, id, value, input);
  }

 private:
  std::vector<std::shared_ptr<const void>> libraries_;
  Observer* own_;
  std::vector<std::shared_ptr<Observer>> plugins_;
  std::vector<Observer*> all_;
};

template <class Set, void (*Register)(Registrar<Set>&)>
constexpr PluginEntry plugin_entry_for() noexcept {
  return {abi_version, &set_manifest<Set>, &process_objects_here,
          &register_plugin_hooks<Set, Register>, engine_objects_of(typename Set::slots{})};
}

template <class... Members>
struct set_lists<HookSet<Members...>> {
  template <class F>
  static void each(HookSet<Members...>& set, F&& f) {
    set.for_each_list(f);
  }
};

// Where an unload stands: finished when the library is closed. Waiters block, or are resumed
// on the thread that closes it.
class unload_state {
 public:
  // The awaiting coroutines are resumed first, then the waiting threads woken: when wait()
  // returns, every awaiter has run up to its next suspension.
  void finish(bool resident, bool in_service) {
    std::vector<std::coroutine_handle<>> resume;
    {
      std::lock_guard lock(mutex_);
      resident_ = resident;
      in_service_ = in_service;
      finishing_ = true;
      resume.swap(waiting_);
    }
    for (std::coroutine_handle<> waiter : resume) waiter.resume();
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
  }
  bool done() const {
    std::lock_guard lock(mutex_);
    return done_;
  }
  bool resident() const {
    std::lock_guard lock(mutex_);
    return resident_;
  }
  bool in_service() const {
    std::lock_guard lock(mutex_);
    return in_service_;
  }
  void wait() const {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_; });
  }
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> limit) const {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return done_; });
  }
  // False when already done (then the caller goes on).
  bool suspend(std::coroutine_handle<> waiter) {
    std::lock_guard lock(mutex_);
    if (finishing_) return false;
    waiting_.push_back(waiter);
    return true;
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool finishing_ = false;  // resident_ is known
  bool done_ = false;
  bool resident_ = false;
  bool in_service_ = false;
  std::vector<std::coroutine_handle<>> waiting_;
};

// How many plugin loads hold each library the host opened (the same build loaded again shares
// the library: the dynamic linker counts the opens, this says whose they are).
class open_libraries {
 public:
  static open_libraries& instance() {
    static open_libraries libraries;
    return libraries;
  }
  void open(void* handle) {
    std::lock_guard lock(mutex_);
    for (auto& [library, loads] : loads_)
      if (library == handle) {
        ++loads;
        return;
      }
    loads_.emplace_back(handle, 1);
  }
  // One load of `handle` closes: whether another still holds it.
  bool close(void* handle) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i != loads_.size(); ++i)
      if (loads_[i].first == handle) {
        if (--loads_[i].second != 0) return true;
        loads_.erase(loads_.begin() + static_cast<std::ptrdiff_t>(i));
        return false;
      }
    return false;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, std::size_t>> loads_;
};

// How long the closer waits after the last list holding a plugin's registrations went before it
// closes the library: for the stack that let go of it to return through what plugin code may
// still be under it - the end of a plugin coroutine hook's body, where a compiler does not make
// its resumption of the dispatch a tail call (GCC without optimisation).
inline constexpr std::chrono::milliseconds plugin_close_grace{20};

// Closes plugin libraries on a thread of its own, never on the thread that let go of one.
class library_closer {
 public:
  static library_closer& instance() {
    static library_closer closer;
    return closer;
  }
  void close_later(void* handle, std::string opened_as, std::shared_ptr<unload_state> state) {
    std::lock_guard lock(mutex_);
    queue_.push_back({std::chrono::steady_clock::now() + plugin_close_grace, handle,
                      std::move(opened_as), std::move(state)});
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
    wake_.notify_one();
  }

 private:
  struct pending {
    std::chrono::steady_clock::time_point due;
    void* handle;
    std::string opened_as;
    std::shared_ptr<unload_state> state;
  };
  library_closer() = default;
  ~library_closer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (queue_.empty()) {
        if (stopping_) return;
        wake_.wait(lock);
        continue;
      }
      if (!stopping_ && std::chrono::steady_clock::now() < queue_.front().due) {
        wake_.wait_until(lock, queue_.front().due);
        continue;
      }
      pending next = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      close_now(next.handle, next.opened_as, *next.state);
      lock.lock();
    }
  }

 public:
  static void close_now(void* handle, const std::string& opened_as, unload_state& state) {
    // Still loaded after this: in service for a later load of the same build (a reload that
    // shares it), or kept by the dynamic linker (STB_GNU_UNIQUE symbols, a thread_local's
    // destructor) or by another dlopen of the program's - resident.
    const bool in_service = open_libraries::instance().close(handle);
    ::dlclose(handle);
    void* again = ::dlopen(opened_as.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (again) ::dlclose(again);
    state.finish(again != nullptr && !in_service, again != nullptr && in_service);
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<pending> queue_;  // in the order they are due
  bool stopping_ = false;
  std::thread thread_;
};

// A library opened for a plugin: handed to the closer when the last hook list that holds the
// plugin's registrations goes (each holds this through its anchors).
class plugin_library {
 public:
  plugin_library(void* handle, std::string opened_as, std::shared_ptr<unload_state> state)
      : handle_(handle), opened_as_(std::move(opened_as)), state_(std::move(state)) {
    open_libraries::instance().open(handle_);
  }
  plugin_library(const plugin_library&) = delete;
  plugin_library& operator=(const plugin_library&) = delete;
  ~plugin_library() {
    if (anchored_)
      library_closer::instance().close_later(handle_, std::move(opened_as_), std::move(state_));
    else library_closer::close_now(handle_, opened_as_, *state_);  // (refused: nothing ran)
  }
  // Its plugin's registrations are anchored to it: it may be let go of under plugin code.
  void anchored() noexcept { anchored_ = true; }

 private:
  bool anchored_ = false;
  void* handle_;
  std::string opened_as_;
  std::shared_ptr<unload_state> state_;
};

// Whether a library of this name is loaded in the process.
inline bool library_loaded(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (handle) ::dlclose(handle);
  return handle != nullptr;
}

// The file a library was opened from, as the host opened it: a library loaded under a name is
// the file that was there then, which a new build may since have replaced.
struct file_identity {
  std::uintmax_t device = 0, inode = 0, size = 0;
  std::int64_t modified = 0;
  friend bool operator==(const file_identity&, const file_identity&) = default;
};
inline file_identity identity_of(const std::string& path) {
  struct ::stat status {};
  if (::stat(path.c_str(), &status) != 0) return {};
  return {static_cast<std::uintmax_t>(status.st_dev), static_cast<std::uintmax_t>(status.st_ino),
          static_cast<std::uintmax_t>(status.st_size),
          static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1000000000 + status.st_mtim.tv_nsec};
}
// What the host opened under each name (the program's: PluginHost's code).
class opened_files {
 public:
  static opened_files& instance() {
    static opened_files files;
    return files;
  }
  // Whether `path`, loaded under that name, is the file this host opened there last.
  bool same_file(const std::string& path, const file_identity& now) {
    std::lock_guard lock(mutex_);
    for (const auto& [name, identity] : files_)
      if (name == path) return identity == now;
    return false;
  }
  void opened(const std::string& path, const file_identity& identity) {
    std::lock_guard lock(mutex_);
    for (auto& [name, known] : files_)
      if (name == path) {
        known = identity;
        return;
      }
    files_.emplace_back(path, identity);
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, file_identity>> files_;
};

// A private copy of `path` to open: the dynamic linker returns the library already loaded
// under a name, so a new build at the same path is opened through a copy (removed once open).
inline std::filesystem::path private_copy(const std::filesystem::path& path) {
  static std::atomic<std::uint64_t> copies{0};
  std::filesystem::path copy =
      std::filesystem::temp_directory_path() /
      ("hookset-plugin-" + std::to_string(::getpid()) + "-" + std::to_string(copies.fetch_add(1)) +
       "-" + path.filename().string());
  std::filesystem::copy_file(path, copy, std::filesystem::copy_options::overwrite_existing);
  return copy;
}

}  // namespace detail

// A plugin's library closed: ready() once it is, resident() if the dynamic linker kept it
// mapped all the same. Awaitable: `co_await host.unload(plugin)` resumes on the closer thread
// once it has closed the library, and yields whether it was unmapped.
class Unloaded {
 public:
  Unloaded() = default;
  explicit Unloaded(std::shared_ptr<detail::unload_state> state) noexcept
      : state_(std::move(state)) {}

  bool ready() const { return !state_ || state_->done(); }
  void wait() const {
    if (state_) state_->wait();
  }
  template <class Rep, class Period>
  bool wait_for(std::chrono::duration<Rep, Period> limit) const {
    return !state_ || state_->wait_for(limit);
  }
  // After ready(): whether the library is still mapped although the plugin closed it and no
  // other load of the host holds it (the dynamic linker kept it, or the program opened it too).
  bool resident() const { return state_ && state_->resident(); }
  // After ready(): whether the library stays because a later load of the same build holds it
  // (a reload from an unchanged file shares the library): in service, not resident.
  bool in_service() const { return state_ && state_->in_service(); }

  bool await_ready() const { return ready(); }
  bool await_suspend(std::coroutine_handle<> waiter) { return state_->suspend(waiter); }
  bool await_resume() const { return !resident(); }

 private:
  std::shared_ptr<detail::unload_state> state_;
};

template <class Set>
class PluginHost;

namespace detail {

template <class Set>
struct loaded_plugin {
  std::string path;  // as the program named it
  // Closed with the last list holding the plugin's hooks; reset at unload.
  std::shared_ptr<plugin_library> library;
  std::shared_ptr<unload_state> unloading;
  plugin_staging<Set> staging;  // its registrations (each list anchored to `library`), observers
  bool loaded = false;
};

}  // namespace detail

// A plugin loaded by a PluginHost. A handle: copies name the same plugin, which a reload keeps.
class Plugin {
 public:
  Plugin() = default;
  const std::string& path() const noexcept { return path_; }
  explicit operator bool() const noexcept { return static_cast<bool>(state_); }

 private:
  template <class>
  friend class PluginHost;
  Plugin(std::shared_ptr<void> state, std::string path, const void* host) noexcept
      : state_(std::move(state)), path_(std::move(path)), host_(host) {}
  std::shared_ptr<void> state_;
  std::string path_;
  const void* host_ = nullptr;  // the PluginHost that loaded it
};

// A program's set with plugins: its own registrations (update) and each loaded plugin's,
// published together as one version that any thread dispatches (call, current).
template <class... Members>
class PluginHost<HookSet<Members...>> {
 public:
  using set_type = HookSet<Members...>;
  using frozen_type = FrozenHookSet<Members...>;

  // (Every version is made from own_: they share its history, HookSet::history.)
  PluginHost() { shared_.publish(own_); }
  explicit PluginHost(set_type own) : own_(std::move(own)) { shared_.publish(own_); }
  PluginHost(const PluginHost&) = delete;
  PluginHost& operator=(const PluginHost&) = delete;
  // The plugins' registrations go with the host, and their libraries with the last dispatch
  // that runs their hooks (a Plugin handle kept longer holds neither).
  ~PluginHost() {
    for (const auto& plugin : plugins_) {
      plugin->loaded = false;
      plugin->staging = staging_type();
      plugin->library.reset();
    }
  }

  // ---- dispatch: as SharedHookSet's ----------------------------------------------------------

  template <class S, class... Args>
  auto call(Args&&... args) const {
    return shared_.template call<S>(std::forward<Args>(args)...);
  }
  // The current version (the program's registrations and every loaded plugin's). A dispatch
  // of it keeps the plugins' libraries it runs; keep the version while the dispatch runs.
  std::shared_ptr<const frozen_type> current() const noexcept { return shared_.load(); }
  std::uint64_t version() const noexcept { return shared_.version(); }

  // ---- the program's own registrations --------------------------------------------------------

  // Applies `edit(set_type&)` to the program's own registrations and publishes them with the
  // plugins'. If `edit` throws, nothing changes.
  template <class Edit>
  void update(Edit&& edit) {
    std::shared_ptr<const frozen_type> previous;  // (let go of after the lock: see unload)
    std::lock_guard lock(mutex_);
    set_type own = own_;
    std::forward<Edit>(edit)(own);
    previous = publish_locked(&own, nullptr, nullptr);
    own_ = std::move(own);
  }

  // ---- plugins ---------------------------------------------------------------------------------

  // Loads the plugin library at `path` and publishes its registrations. Throws PluginError (the
  // set unchanged) when the library cannot be opened, is not a hookset plugin, was built
  // against another set or hookset version, or its entry point throws.
  Plugin load(const std::filesystem::path& path) {
    auto plugin = std::make_shared<detail::loaded_plugin<set_type>>();
    plugin->path = path.string();
    open(*plugin, path);
    std::shared_ptr<const frozen_type> previous;
    {
      std::lock_guard lock(mutex_);
      replay_history(*plugin);
      plugins_.push_back(plugin);
      try {
        previous = publish_locked(nullptr, nullptr, nullptr);
      } catch (...) {
        plugins_.pop_back();
        throw;
      }
      plugin->loaded = true;
    }
    return Plugin(plugin, plugin->path, this);
  }

  // Removes the plugin's registrations (dispatches that start from now on do not see them) and
  // closes its library once the dispatches that run them have ended. Unloading a plugin that
  // is not loaded returns a ready Unloaded.
  Unloaded unload(const Plugin& handle) {
    auto plugin = state_of(handle);
    retired_build old;
    {
      std::lock_guard lock(mutex_);
      if (!plugin || !plugin->loaded) return Unloaded();
      old.version = publish_locked(nullptr, plugin.get(), nullptr);
      std::erase(plugins_, plugin);
      plugin->loaded = false;
      old.take(*plugin);
    }
    return old.release();
  }

  // Replaces the plugin with the build at `path` (its own path when empty): each dispatch sees
  // the old registrations or the new ones, never both or neither. When the new build cannot be
  // loaded, throws PluginError and the old one stays. Returns the old library's unload.
  Unloaded reload(const Plugin& handle, const std::filesystem::path& path = {}) {
    auto plugin = state_of(handle);
    if (!plugin) throw PluginError(path.string(), "reload of an empty Plugin handle");
    const std::filesystem::path build = path.empty() ? std::filesystem::path(plugin->path) : path;
    detail::loaded_plugin<set_type> fresh;
    fresh.path = plugin->path;
    open(fresh, build);
    retired_build old;
    {
      std::lock_guard lock(mutex_);
      if (!plugin->loaded) throw PluginError(plugin->path, "reload of a plugin not loaded");
      replay_history(fresh);
      old.version = publish_locked(nullptr, plugin.get(), &fresh);
      old.take(*plugin);
      plugin->library = std::move(fresh.library);
      plugin->unloading = std::move(fresh.unloading);
      plugin->staging = std::move(fresh.staging);
    }
    return old.release();
  }

  // The plugins loaded now, in load order (the order their registrations merge in).
  std::vector<Plugin> plugins() const {
    std::lock_guard lock(mutex_);
    std::vector<Plugin> loaded;
    for (const auto& plugin : plugins_) loaded.push_back(Plugin(plugin, plugin->path, this));
    return loaded;
  }

 private:
  using plugin_type = detail::loaded_plugin<set_type>;
  using staging_type = detail::plugin_staging<set_type>;

  // What an unload or a reload lets go of, taken under the lock and released out of it (the
  // last reference to a version may run hooks' destructors, user code) in this order: the old
  // version, unless a dispatch holds it; the plugin's own lists and observers; its library,
  // handed to the closer once nothing else holds it.
  struct retired_build {
    std::shared_ptr<const frozen_type> version;
    staging_type staging;
    std::shared_ptr<detail::plugin_library> library;
    std::shared_ptr<detail::unload_state> unloading;

    void take(plugin_type& plugin) noexcept {
      staging = std::move(plugin.staging);
      library = std::move(plugin.library);
      unloading = std::move(plugin.unloading);
    }
    Unloaded release() {
      version.reset();
      staging = staging_type();
      library.reset();
      return Unloaded(std::move(unloading));
    }
  };

  // The calls historic slots kept (Historic<N>), replayed to a plugin's hooks before they are
  // published: a plugin loaded late still receives what was called before (a call that runs
  // while the plugin loads may miss its hooks). A hook that throws refuses the build.
  void replay_history(const plugin_type& plugin) const {
    try {
      own_.replay_history_to(plugin.staging.set);
    } catch (const std::exception& error) {
      throw PluginError(plugin.path,
                        std::string("a hook threw when replayed a kept call: ") + error.what());
    } catch (...) {
      throw PluginError(plugin.path, "a hook threw when replayed a kept call");
    }
  }

  // The plugin a handle names; throws std::invalid_argument for another host's.
  std::shared_ptr<plugin_type> state_of(const Plugin& handle) const {
    if (handle.state_ && handle.host_ != this)
      throw std::invalid_argument("hookset::PluginHost: the plugin " + handle.path_ +
                                  " was loaded by another host");
    return std::static_pointer_cast<plugin_type>(handle.state_);
  }

  // Opens the library at `path`, checks it and runs its entry point into `plugin.staging`,
  // whose lists then hold the library.
  static void open(plugin_type& plugin, const std::filesystem::path& path) {
    const std::string name = path.string();
    // A library loaded under this name already: the dynamic linker would return it. The same
    // file (the same build loaded again, while the closer has not closed the last) is shared; a
    // new build written over it since is opened through a copy.
    const detail::file_identity identity = detail::identity_of(name);
    const bool copied =
        detail::library_loaded(name) && !detail::opened_files::instance().same_file(name, identity);
    const std::filesystem::path opened = copied ? detail::private_copy(path) : path;
    void* handle = ::dlopen(opened.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (copied) {
      std::error_code ignored;
      std::filesystem::remove(opened, ignored);  // (the mapping stays)
    }
    if (!handle) {
      const char* why = ::dlerror();
      throw PluginError(name, why ? why : "dlopen failed");
    }
    if (!copied) detail::opened_files::instance().opened(name, identity);
    auto unloading = std::make_shared<detail::unload_state>();
    auto library = std::make_shared<detail::plugin_library>(handle, opened.string(), unloading);
    using entry_fn = const PluginEntry* (*)();
    auto entry_point = reinterpret_cast<entry_fn>(::dlsym(handle, "hookset_plugin_entry"));
    if (!entry_point)
      throw PluginError(name,
                        "exports no hookset_plugin_entry: not a hookset plugin "
                        "(HOOKSET_PLUGIN defines it)");
    const PluginEntry* entry = entry_point();
    if (entry->abi_version != abi_version)
      throw PluginError(name, "built against hookset's binary interface version " +
                                  std::to_string(entry->abi_version) +
                                  ", this program against version " + std::to_string(abi_version));
    if (std::string why = manifest_mismatch(set_manifest<set_type>, *entry->manifest); !why.empty())
      throw PluginError(name, "built against another set: " + why);
    if (std::string object = detail::unshared_process_object(detail::process_objects_here(),
                                                             entry->process_objects());
        !object.empty())
      throw PluginError(name, "it does not share the program's hookset objects (" + object +
                                  "): export the program's symbols (hookset_plugin_host: CMake "
                                  "ENABLE_EXPORTS, -rdynamic) and build the plugin with default "
                                  "visibility (hookset_add_plugin)");
    std::size_t ours = 0, theirs = 0;
    const void* const* program_engine = detail::engine_objects_of(typename set_type::slots{})(ours);
    const void* const* plugin_engine = entry->engine_objects(theirs);
    if (ours != theirs || !std::equal(program_engine, program_engine + ours, plugin_engine))
      throw PluginError(name,
                        "its dispatch code is not the program's: export the program's "
                        "symbols (hookset_plugin_host: CMake ENABLE_EXPORTS, -rdynamic) and "
                        "build the plugin with default visibility (hookset_add_plugin)");
    staging_type staging;  // (declared after `library`: destroyed first if registering throws)
    try {
      entry->register_hooks(&staging);
    } catch (const std::exception& error) {
      // (A PluginError of ours, not the plugin's exception: that one's code is in the library.)
      throw PluginError(name, std::string("its entry point threw: ") + error.what());
    } catch (...) {
      throw PluginError(name, "its entry point threw");
    }
    library->anchored();  // (from here on, closed by the closer)
    const std::shared_ptr<const void> anchor = library;
    detail::set_lists<set_type>::each(staging.set, [&](detail::hook_list_owner& list) {
      if (list.current())
        list.modify([&](detail::hook_list& edited) { edited.keep_alive(anchor); });
    });
    plugin.library = std::move(library);
    plugin.unloading = std::move(unloading);
    plugin.staging = std::move(staging);
  }

  // Publishes the program's registrations (`own`, or own_) with each loaded plugin's, in load
  // order - `replaced`'s as `replacement`'s, or left out when `replacement` is null. Returns
  // the version it replaced, for the caller to let go of outside the lock.
  std::shared_ptr<const frozen_type> publish_locked(const set_type* own,
                                                    const plugin_type* replaced,
                                                    const plugin_type* replacement) {
    set_type next = own ? *own : own_;
    std::vector<std::shared_ptr<const void>> libraries;
    std::vector<std::shared_ptr<Observer>> observers;
    for (const auto& loaded : plugins_) {
      const plugin_type* plugin = loaded.get() != replaced ? loaded.get() : replacement;
      if (!plugin) continue;
      next.extend(plugin->staging.set);
      if (!plugin->staging.observers.empty()) {
        libraries.push_back(plugin->library);
        observers.insert(observers.end(), plugin->staging.observers.begin(),
                         plugin->staging.observers.end());
      }
    }
    std::shared_ptr<const frozen_type> previous = shared_.load();
    if (observers.empty()) {
      shared_.publish(std::move(next));
    } else {
      // The version holds its observer (and through it the plugins' libraries).
      auto fanout = std::make_shared<detail::observer_fanout>(next.observer(), std::move(libraries),
                                                              std::move(observers));
      next.set_observer(fanout.get());
      shared_.publish(std::move(next), std::move(fanout));
    }
    return previous;
  }

  mutable std::mutex mutex_;  // held by loads, unloads, reloads and updates
  set_type own_;
  std::vector<std::shared_ptr<plugin_type>> plugins_;
  SharedHookSet<Members...> shared_;
};

}  // namespace hookset

// Defines a plugin's entry point: HOOKSET_PLUGIN(SetType, registrar) { registrar.add<S>(...); }
// SetType is the program's set type (an alias: a name with no comma); the body registers
// through `registrar`, a hookset::Registrar<SetType>&.
#define HOOKSET_PLUGIN(SetType, registrar)                                        \
  static void hookset_plugin_register(::hookset::Registrar<SetType>& registrar);  \
  extern "C" __attribute__((visibility("default"))) const ::hookset::PluginEntry* \
  hookset_plugin_entry() {                                                        \
    static constexpr ::hookset::PluginEntry entry =                               \
        ::hookset::detail::plugin_entry_for<SetType, &hookset_plugin_register>(); \
    return &entry;                                                                \
  }                                                                               \
  static void hookset_plugin_register(::hookset::Registrar<SetType>& registrar)
