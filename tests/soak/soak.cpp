// Soak: many dispatches of one slot through a SharedHookSet, on an io_context run by two
// threads, while a publisher thread keeps changing the set (hooks removed and added, versions
// published with publish() and update()). The hooks are random: synchronous (one taking the stop
// token, one overrunning its time limit now and then), hookset::Task hooks that hop to the
// io_context, asio::awaitable hooks and Task hooks waiting on short timers (stopped by Asio's
// cancellation or by their stop token), hooks that throw, hooks with their own time limit, each
// with a random failure policy. Dispatches go through async_call or co_await inside an
// asio::awaitable; some get a deadline, some are cancelled at a random moment (the handler's
// cancellation slot, or the stop token of their CallOptions).
//
// What it checks, beyond "no crash" (ASan, TSan and UBSan check the rest):
//  - every dispatch completes exactly once, and its outcome is one its version allows: the
//    value encodes the version's stamp and the bits of the hooks that contributed, which must
//    be what the version's hooks give for that dispatch's input (fail-open skips and time
//    limits allowed where timing decides); a failure names a hook of that version with the
//    right policy; DispatchCancelled only if this test cancelled it, DispatchTimeout (of the
//    dispatch) only if it had a deadline and not before it;
//  - the version a dispatch ran on was the current one at some moment of its `call`;
//  - no hook starts or finishes after its dispatch completed, and none is still running when
//    it completes (each hook counts itself on its dispatch's probe, held by shared_ptr);
//  - every hook started also finished, and the observer saw as many ends as begins;
//  - each kind of outcome happened: "stall" dispatches (their first hook waits 10 s) are either
//    cancelled after 1 ms or given a 3 ms deadline, so cancellations and timeouts are certain,
//    whatever the speed of the machine (a sanitizer build, a loaded CI runner).
//
// Environment: HOOKSET_SOAK_DISPATCHES (default 20000; the full soak is 1000000), HOOKSET_SEED
// (default below; printed), HOOKSET_SOAK_ASIO_HOOKS=0 (waiting hooks are all hookset::Task
// hooks, none an asio::awaitable). The random choices (the versions' hooks, each dispatch's plan)
// follow from the seed; which version a dispatch meets, and the timing, do not. It prints the
// seed, then one line: dispatches, wall time, each outcome's count, versions, hook runs and
// violations (then the first violations, if any).
//
//   ctest --test-dir build/gcc -L soak --output-on-failure
//   HOOKSET_SOAK_DISPATCHES=1000000 build/<tree>/tests/bin/test_soak_soak
//   bash scripts/soak.sh     (the full size under ASan+UBSan and under TSan)
//
// The last test cases pin, deterministically, the library problems the soak found first: an
// asio::awaitable hook stopped before its coroutine first ran (the dispatch never completed),
// and a synchronous hook concluded twice when its conclusion threw.
#include "hookset_catch.hpp"
#include "lifetime_probe.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>

namespace net = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace lifetime = test_support::lifetime;

namespace {

constexpr std::uint64_t default_seed = 20261124;
constexpr std::uint64_t default_dispatches = 20000;
constexpr int in_flight = 96;                // dispatches running at once
constexpr std::uint64_t publish_every = 16;  // completed dispatches between two versions
constexpr int max_random_hooks = 10;

std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  if (!text || !*text) return fallback;
  return std::strtoull(text, nullptr, 10);
}

// splitmix64: decides, from a dispatch's input and a hook's salt, what the hook does.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// ---- the slot ------------------------------------------------------------------------------

// A dispatch's value: its version's stamp in the high half, and in the low half one bit per
// hook that contributed (the fold ORs them in).
using Value = std::uint64_t;
constexpr Value anchor_bit = Value{1} << 31;
constexpr std::uint32_t stamp_of(Value v) { return static_cast<std::uint32_t>(v >> 32); }
constexpr std::uint32_t bits_of(Value v) { return static_cast<std::uint32_t>(v); }

struct VersionSpec;

// The argument of a dispatch, shared with its hooks: they count themselves on it, and check
// that the dispatch has not completed.
struct Probe {
  int owner = 0;            // the dispatch's index, for the lifetime probes of its hooks' frames
  std::uint64_t since = 0;  // (lifetime::mark() when it started)
  std::uint64_t input = 0;  // decides which hooks throw or wait long
  bool stall = false;       // the anchor hook waits 10 s
  std::atomic<bool> completed{false};
  std::atomic<int> running{0};
  std::shared_ptr<const VersionSpec> version;  // set by the version's stamp hook
};
using ProbePtr = std::shared_ptr<Probe>;

struct Score : hookset::Slot<Value(ProbePtr), hookset::Always> {
  static Value default_impl(const ProbePtr&) { return 0; }
};
using Set = hookset::HookSet<Score>;
using Shared = hookset::SharedHookSet<Score>;

// ---- what the hooks count --------------------------------------------------------------------

struct HookCounts {
  std::atomic<long> started{0}, finished{0};
  std::atomic<long> started_late{0}, finished_late{0};  // after their dispatch completed
  std::atomic<long> saw_stop{0};                        // found their stop token triggered
  std::atomic<long> stalls_aborted{0};                  // anchors of stall dispatches stopped
};
HookCounts hook_counts;

// One hook run, from its first to its last instruction, counted on its dispatch's probe. It
// holds the probe, so the check stays safe even if the dispatch (wrongly) were gone.
class Visit {
 public:
  explicit Visit(const ProbePtr& probe) : probe_(probe) {
    if (probe_->completed.load()) ++hook_counts.started_late;
    ++probe_->running;
    ++hook_counts.started;
  }
  ~Visit() {
    if (probe_->completed.load()) ++hook_counts.finished_late;
    --probe_->running;
    ++hook_counts.finished;
  }
  Visit(const Visit&) = delete;
  Visit& operator=(const Visit&) = delete;

 private:
  ProbePtr probe_;
};

// What a hook throws: its registration's name, to check against the version.
struct HookThrew : std::runtime_error {
  explicit HookThrew(const std::string& hook)
      : std::runtime_error("soak: hook " + hook + " threw"), name(hook) {}
  std::string name;
};

// ---- hooks -------------------------------------------------------------------------------------

enum class Kind : unsigned char {
  sync,       // returns at once
  sync_stop,  // the same, taking the stop token as its last parameter
  task,       // a hookset::Task that hops to the io_context and asks current_stop_token()
  timer,      // waits 0-2 ms on a timer: an asio::awaitable, or a Task stopped by its stop token
  limited,    // as `timer` with a 4 ms time limit, waiting 0-1 ms, or 10 s for a quarter of inputs
  sync_slow,  // synchronous with a 1 ms time limit, sleeping 1.5 ms for a sixteenth of inputs
  anchor,     // the first hook of every version: as `timer`, or 10 s for stall dispatches
};
constexpr int kind_count = 6;  // the random kinds (anchor excluded)

struct HookSpec {
  Kind kind = Kind::sync;
  bool throwing = false;  // throws for a sixth of inputs
  bool as_task = false;   // timer, limited, anchor: a hookset::Task waiting, not an asio::awaitable
  hookset::FailurePolicy policy = hookset::Propagate;
  std::optional<std::chrono::milliseconds> limit;
  int priority = 0;
  std::uint64_t seq = 0;  // registration order
  std::uint32_t bit = 0;
  std::uint64_t salt = 0;
  std::string name;

  bool throws(std::uint64_t input) const { return throwing && mix(input ^ salt) % 6 == 0; }
  bool waits_long(std::uint64_t input, bool stall) const {
    if (kind == Kind::anchor) return stall;
    if (kind == Kind::sync_slow) return (mix(input ^ salt) >> 8) % 16 == 0;
    return kind == Kind::limited && (mix(input ^ salt) >> 8) % 4 == 0;
  }
  std::chrono::microseconds wait(std::uint64_t input, bool stall) const {
    if (waits_long(input, stall)) return 10s;
    const std::uint64_t spread = kind == Kind::limited ? 1000 : 2000;
    return std::chrono::microseconds((mix(input ^ salt) >> 16) % (spread + 1));
  }
  Value contribute(const ProbePtr& probe, const std::optional<Value>& last) const {
    if (throws(probe->input)) throw HookThrew(name);
    return last.value_or(0) | bit;
  }
};

// Resumes the awaiting coroutine on the io_context (another thread, often).
struct Hop {
  net::any_io_executor executor;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> waiting) const {
    net::post(executor, [waiting] { waiting.resume(); });
  }
  void await_resume() const noexcept {}
};

// Each hook coroutine takes a lifetime probe by value: its frame holds it until destroyed.
hookset::Task<Value> hopping(std::shared_ptr<const HookSpec> spec, const ProbePtr& probe,
                             std::optional<Value> last, net::any_io_executor executor,
                             lifetime::Probe) {
  Visit visit(probe);
  co_await Hop{executor};
  const hookset::stop_token stop = co_await hookset::current_stop_token();
  if (stop.stop_requested()) ++hook_counts.saw_stop;
  co_return spec->contribute(probe, last);
}

// `probe` is the dispatch's own argument, by reference: it must stay alive until the hook has
// finished, also when the hook is cancelled (ASan checks the read after the wait).
net::awaitable<Value> waiting(std::shared_ptr<const HookSpec> spec, const ProbePtr& probe,
                              std::optional<Value> last, lifetime::Probe) {
  Visit visit(probe);
  net::steady_timer timer(co_await net::this_coro::executor,
                          spec->wait(probe->input, probe->stall));
  try {
    co_await timer.async_wait(net::use_awaitable);  // operation_aborted when stopped
  } catch (const boost::system::system_error&) {
    if (probe->stall) ++hook_counts.stalls_aborted;  // reads the argument after the stop
    throw;
  }
  co_return spec->contribute(probe, last);
}

// Waits on a timer of the io_context, cut short by a stop token: what Asio's cancellation does
// for an asio::awaitable hook, done by hand for a hookset::Task hook. Awaited as a named object
// through a trivially destructible awaiter (as <hookset/asio.hpp> does, for GCC 12).
class StoppableWait {
  struct State {
    explicit State(const net::any_io_executor& executor)
        : strand(net::make_strand(executor)), timer(strand) {}
    net::strand<net::any_io_executor> strand;
    net::steady_timer timer;
    bool stopped = false, aborted = false;  // on the strand only
    std::coroutine_handle<> waiting;
  };
  struct Cancel {
    std::shared_ptr<State> state;
    void operator()() const {
      net::post(state->strand, [state = state] {
        state->stopped = true;
        state->timer.cancel();
      });
    }
  };

 public:
  StoppableWait(net::any_io_executor executor, std::chrono::microseconds duration,
                hookset::stop_token stop)
      : executor_(std::move(executor)), duration_(duration), stop_(std::move(stop)) {}

  // co_await: true if the time passed, false if stopped first.
  auto operator co_await() & noexcept {
    struct awaiter {
      StoppableWait& self;
      bool await_ready() const noexcept { return false; }
      void await_suspend(std::coroutine_handle<> waiting) { self.start(waiting); }
      bool await_resume() const { return self.finish(); }
    };
    return awaiter{*this};
  }

 private:
  void start(std::coroutine_handle<> waiting) {
    state_ = std::make_shared<State>(executor_);
    state_->waiting = waiting;
    state_->timer.expires_after(duration_);
    if (stop_.stop_possible()) on_stop_.emplace(stop_, Cancel{state_});
    // Last: from here the coroutine may resume on another thread.
    net::post(state_->strand, [state = state_] {
      if (state->stopped) {
        state->aborted = true;
        state->waiting.resume();
        return;
      }
      state->timer.async_wait([state](const boost::system::error_code& error) {
        state->aborted = error == net::error::operation_aborted;
        state->waiting.resume();
      });
    });
  }
  bool finish() {
    on_stop_.reset();  // waits for a Cancel running elsewhere
    return !state_->aborted;
  }

  net::any_io_executor executor_;
  std::chrono::microseconds duration_;
  hookset::stop_token stop_;
  std::shared_ptr<State> state_;
  std::optional<hookset::stop_callback<Cancel>> on_stop_;
};

hookset::Task<Value> task_waiting(std::shared_ptr<const HookSpec> spec, const ProbePtr& probe,
                                  std::optional<Value> last, net::any_io_executor executor,
                                  lifetime::Probe) {
  Visit visit(probe);
  const hookset::stop_token stop = co_await hookset::current_stop_token();
  StoppableWait wait(std::move(executor), spec->wait(probe->input, probe->stall), stop);
  if (!co_await wait) {
    if (probe->stall) ++hook_counts.stalls_aborted;
    throw std::system_error(std::make_error_code(std::errc::operation_canceled));
  }
  co_return spec->contribute(probe, last);
}

hookset::HookId register_hook(Set& set, std::shared_ptr<const HookSpec> spec,
                              const net::any_io_executor& executor) {
  hookset::HookOptions options{.name = spec->name,
                               .priority = hookset::Priority{spec->priority},
                               .timeout = spec->limit,
                               .on_failure = spec->policy};
  switch (spec->kind) {
    case Kind::sync:
      return set.add<Score>(
          [spec](const ProbePtr& probe, std::optional<Value> last) {
        Visit visit(probe);
        return spec->contribute(probe, last);
          },
          std::move(options));
    case Kind::sync_stop:
      return set.add<Score>(
          [spec](const ProbePtr& probe, std::optional<Value> last, hookset::stop_token stop) {
        Visit visit(probe);
        if (stop.stop_requested()) ++hook_counts.saw_stop;
        return spec->contribute(probe, last);
          },
          std::move(options));
    case Kind::sync_slow:
      return set.add<Score>(
          [spec](const ProbePtr& probe, std::optional<Value> last) {
        Visit visit(probe);
        if (spec->waits_long(probe->input, false)) std::this_thread::sleep_for(1500us);
        return spec->contribute(probe, last);
          },
          std::move(options));
    case Kind::task:
      return set.add<Score>(
          [spec, executor](const ProbePtr& probe, std::optional<Value> last) {
        return hopping(spec, probe, std::move(last), executor, lifetime::Probe(probe->owner));
          },
          std::move(options));
    case Kind::timer:
    case Kind::limited:
    case Kind::anchor:
      if (spec->as_task)
        return set.add<Score>(
            [spec, executor](const ProbePtr& probe, std::optional<Value> last) {
          return task_waiting(spec, probe, std::move(last), executor,
                              lifetime::Probe(probe->owner));
            },
            std::move(options));
      return set.add<Score>(
          [spec](const ProbePtr& probe, std::optional<Value> last) {
        return waiting(spec, probe, std::move(last), lifetime::Probe(probe->owner));
          },
          std::move(options));
  }
  throw std::logic_error("soak: unknown hook kind");
}

// ---- versions --------------------------------------------------------------------------------

// One published version: its stamp and its hooks in the order they run (the anchor first, not
// listed; the stamp hook before it).
struct VersionSpec {
  std::uint32_t stamp = 0;
  std::vector<std::shared_ptr<const HookSpec>> hooks;
};

// How a dispatch ended.
enum class End : unsigned char {
  ok,
  cancelled,
  deadline,
  hook_limit,
  hook_failed,
  hook_threw,
  unexpected
};
constexpr int end_count = 7;
constexpr const char* end_names[end_count] = {
    "ok", "cancelled", "deadline", "hook-limit", "hook-failed", "hook-threw", "unexpected"};

struct Ending {
  End end = End::ok;
  std::string hook;        // the hook a failure names
  bool by_limit = false;   // hook_failed: its cause is the hook's time limit
  std::uint32_t bits = 0;  // ok: the contributing hooks
  bool operator==(const Ending&) const = default;
};

// Every ending the version allows for this input, apart from dispatch-level stops: each hook
// contributes, throws (as decided by the input) or - if it has a time limit - may time out
// (must, if it waits 10 s); its policy decides what a failure does.
std::vector<Ending> allowed_endings(const VersionSpec& version, std::uint64_t input) {
  std::vector<Ending> out;
  const auto step = [&](const auto& self, std::size_t i, std::uint32_t bits) -> void {
    for (; i < version.hooks.size(); ++i) {
      const HookSpec& hook = *version.hooks[i];
      const bool must_time_out = hook.waits_long(input, false);
      const bool may_time_out = hook.limit.has_value();
      const bool threw = !must_time_out && hook.throws(input);
      // Each way this hook can end: 0 contributed, 1 threw, 2 timed out.
      int ways[2];
      int count = 0;
      if (must_time_out) {
        ways[count++] = 2;
      } else {
        ways[count++] = threw ? 1 : 0;
        if (may_time_out) ways[count++] = 2;
      }
      for (int w = 0; w + 1 < count;
           ++w) {  // all but the last way: explore, then go on with the last
        if (ways[w] == 0) {
          self(self, i + 1, bits | hook.bit);
          continue;
        }
        switch (hook.policy) {
          case hookset::FailurePolicy::fail_open:
            self(self, i + 1, bits);
            break;
          case hookset::FailurePolicy::fail_closed:
            out.push_back({End::hook_failed, hook.name, ways[w] == 2, 0});
            break;
          case hookset::FailurePolicy::propagate:
            out.push_back({ways[w] == 2 ? End::hook_limit : End::hook_threw, hook.name, false, 0});
            break;
        }
      }
      const int last_way = ways[count - 1];
      if (last_way == 0) {
        bits |= hook.bit;
        continue;
      }
      if (hook.policy == hookset::FailurePolicy::fail_open) continue;
      if (hook.policy == hookset::FailurePolicy::fail_closed)
        out.push_back({End::hook_failed, hook.name, last_way == 2, 0});
      else out.push_back({last_way == 2 ? End::hook_limit : End::hook_threw, hook.name, false, 0});
      return;
    }
    out.push_back({End::ok, {}, false, bits | static_cast<std::uint32_t>(anchor_bit)});
  };
  step(step, 0, 0);
  return out;
}

Ending classify(std::exception_ptr error, Value value) {
  if (!error) return {End::ok, {}, false, bits_of(value)};
  try {
    std::rethrow_exception(error);
  } catch (const hookset::DispatchCancelled&) {
    return {End::cancelled, {}, false, 0};
  } catch (const hookset::DispatchTimeout& timeout) {
    if (!timeout.per_hook) return {End::deadline, {}, false, 0};
    return {End::hook_limit, timeout.hook_name, false, 0};
  } catch (const hookset::HookFailed& failed) {
    bool by_limit = false;
    std::string cause = "?";
    try {
      std::rethrow_exception(failed.cause);
    } catch (const hookset::DispatchTimeout& timeout) {
      by_limit = timeout.per_hook;
      cause = timeout.per_hook ? failed.hook_name : "a dispatch timeout";
    } catch (const HookThrew& threw) {
      cause = threw.name;
    } catch (const hookset::HookFailed& inner) {
      cause = "another HookFailed (" + inner.hook_name + ")";
    } catch (...) {
    }
    if (cause != failed.hook_name)
      return {End::unexpected, "HookFailed naming " + failed.hook_name + ", cause " + cause, false,
              0};
    return {End::hook_failed, failed.hook_name, by_limit, 0};
  } catch (const HookThrew& threw) {
    return {End::hook_threw, threw.name, false, 0};
  } catch (const std::exception& e) {
    return {End::unexpected, e.what(), false, 0};
  } catch (...) {
    return {End::unexpected, "an exception not derived from std::exception", false, 0};
  }
}

// ---- the observer ------------------------------------------------------------------------------

std::string describe(const std::exception_ptr& error) {
  if (!error) return "no error";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an exception not derived from std::exception";
  }
}

// Counts dispatches and hook runs, and pairs each hook run's end with its begin (by dispatch id
// and position): an end without a begin, or a second begin, is an anomaly.
struct CountingObserver : hookset::Observer {
  std::atomic<long> begins{0}, ends{0}, hook_begins{0}, hook_ends{0}, fail_open_warnings{0};

  void on_warning(std::string_view, std::string_view message) override {
    if (message.find("fail-open") != std::string_view::npos) ++fail_open_warnings;
  }
  void on_dispatch_begin(std::string_view, std::uint64_t) override { ++begins; }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t, std::exception_ptr) override {
    ++ends;
  }
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const hookset::HookEvent& event) override {
    ++hook_begins;
    std::lock_guard lock(mutex_);
    if (++open_[{event.dispatch_id, event.position}] != 1) anomaly("begun twice", event);
  }
  void on_hook_end(const hookset::HookEvent& event) override {
    ++hook_ends;
    std::lock_guard lock(mutex_);
    const auto run = open_.find({event.dispatch_id, event.position});
    if (run == open_.end()) anomaly("ended without a begin (or twice)", event);
    else if (--run->second == 0) open_.erase(run);
  }

  // Hook runs begun and not ended, and the first anomalies.
  std::size_t still_open() const {
    std::lock_guard lock(mutex_);
    return open_.size();
  }
  long anomalies() const {
    std::lock_guard lock(mutex_);
    return anomaly_count_;
  }
  std::vector<std::string> first_anomalies() const {
    std::lock_guard lock(mutex_);
    return messages_;
  }

 private:
  void anomaly(const char* what, const hookset::HookEvent& event) {
    ++anomaly_count_;
    if (messages_.size() >= 10) return;
    messages_.push_back("observer: hook '" + std::string(event.name) + "' at position " +
                        std::to_string(event.position) + " of dispatch #" +
                        std::to_string(event.dispatch_id) + " " + what + " (outcome " +
                        std::string(hookset::to_string(event.outcome)) + ", " +
                        describe(event.error) + ")");
  }

  mutable std::mutex mutex_;
  std::map<std::pair<std::uint64_t, std::size_t>, int> open_;
  long anomaly_count_ = 0;
  std::vector<std::string> messages_;
};

// ---- the soak
// ------------------------------------------------------------------------------------

// What one dispatch is given, drawn from the seed and its index.
struct Plan {
  bool stall = false;
  bool in_coroutine = false;  // co_await inside an asio::awaitable, else async_call
  std::optional<std::chrono::microseconds> timeout;
  std::optional<std::chrono::microseconds> cancel_after;
  bool cancel_by_slot = false;  // the handler's cancellation slot, else the CallOptions stop token
};

Plan draw_plan(std::uint64_t seed, std::uint64_t index) {
  std::mt19937_64 rng(mix(seed ^ mix(index)));
  const auto percent = [&] { return static_cast<int>(rng() % 100); };
  Plan plan;
  plan.in_coroutine = percent() < 25;
  if (percent() < 2) {
    // Certain outcomes, whatever the machine's speed: the anchor waits 10 s.
    plan.stall = true;
    if (percent() < 50) plan.cancel_after = 1ms;
    else plan.timeout = 3ms;
  } else {
    if (percent() < 25) {
      constexpr std::chrono::microseconds timeouts[] = {2ms, 5ms, 15ms};
      plan.timeout = timeouts[rng() % 3];
    }
    if (percent() < 15) plan.cancel_after = std::chrono::microseconds(rng() % 3001);
  }
  plan.cancel_by_slot = plan.cancel_after && !plan.in_coroutine && percent() < 50;
  return plan;
}

// One dispatch, from its launch to its completion; touched on its strand only.
struct Run {
  Run(net::io_context& io, std::uint64_t i, Plan p)
      : index(i),
        plan(p),
        strand(net::make_strand(io)),
        timer(strand),
        probe(std::make_shared<Probe>()) {}
  std::uint64_t index;
  Plan plan;
  net::strand<net::io_context::executor_type> strand;
  net::steady_timer timer;  // fires the cancellation
  net::cancellation_signal signal;
  hookset::stop_source stop;
  ProbePtr probe;
  Clock::time_point launched;
  std::uint32_t stamp_low = 0, stamp_high = 0;  // the versions current around `call`
  int completions = 0;
  bool cancel_fired = false;
};

class Soak {
 public:
  Soak(std::uint64_t seed, std::uint64_t dispatches, bool asio_hooks)
      : seed_(seed),
        total_(dispatches),
        asio_hooks_(asio_hooks),
        work_(net::make_work_guard(io_)),
        rng_(mix(seed)),
        completions_(dispatches) {
    Set initial;
    initial.set_observer(&observer_);
    auto anchor = std::make_shared<HookSpec>();
    anchor->kind = Kind::anchor;
    anchor->priority = -1000;
    anchor->bit = static_cast<std::uint32_t>(anchor_bit);
    anchor->salt = rng_();
    anchor->name = "anchor";
    anchor->as_task = !asio_hooks_;
    register_hook(initial, std::move(anchor), io_.get_executor());
    for (int i = 0; i < 4; ++i) add_random_hook(initial);
    restamp(initial);
    shared_.publish(std::move(initial));
    published_.store(publishing_.load());
  }

  void run() {
    const auto start = Clock::now();
    for (int i = 0; i < in_flight; ++i) launch_next();
    std::thread publisher([this] { publish_while_dispatching(); });
    std::thread second([this] { run_io(); });
    run_io();
    second.join();
    publisher.join();
    wall_ = Clock::now() - start;
  }

  // ---- results
  std::uint64_t total() const { return total_; }
  long completed() const { return completed_.load(); }
  long launched() const { return launched_.load(); }
  long count(End end) const { return ends_[static_cast<int>(end)].load(); }
  long ok_with_skips() const { return ok_with_skips_.load(); }
  long stalls_cancelled() const { return stalls_cancelled_.load(); }
  long stalls_timed_out() const { return stalls_timed_out_.load(); }
  long violations() const { return violations_.load(); }
  long escaped() const { return escaped_.load(); }
  bool abandoned() const { return abandoned_.load(); }
  std::vector<std::string> first_violations() const {
    std::lock_guard lock(messages_mutex_);
    return messages_;
  }
  long completed_once() const {
    long n = 0;
    for (const auto& c : completions_) n += c.load() == 1;
    return n;
  }
  std::uint64_t versions() const { return shared_.version(); }
  long distinct_versions_seen() const { return versions_seen_.load(); }
  const CountingObserver& observer() const { return observer_; }
  double wall_seconds() const { return std::chrono::duration<double>(wall_).count(); }

 private:
  // An exception escaping a handler leaves io_context::run(); it is recorded and the thread
  // goes on running the context (what an Asio service does). The one seen so far (see the test
  // case at the end) strands a dispatch: another one is launched in its place, so that the
  // soak keeps its pace and finishes; the stranded ones are reported by the watchdog.
  void run_io() {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        ++escaped_;
        record_violation(std::string("an exception escaped io_context::run(): ") + e.what());
        launch_next();
      }
    }
  }

  // ---- the publisher

  void add_random_hook(Set& set) {
    auto hook = std::make_shared<HookSpec>();
    hook->kind = static_cast<Kind>(rng_() % kind_count);
    hook->throwing = hook->kind != Kind::limited && rng_() % 2 == 0;
    hook->as_task = !asio_hooks_ || rng_() % 2 == 0;
    constexpr hookset::FailurePolicy policies[] = {hookset::Propagate, hookset::FailOpen,
                                                   hookset::FailClosed};
    hook->policy = policies[rng_() % 3];
    if (hook->kind == Kind::limited) hook->limit = 4ms;
    else if (hook->kind == Kind::sync_slow) hook->limit = 1ms;
    else if (rng_() % 4 == 0) hook->limit = 50ms;
    hook->priority = static_cast<int>(rng_() % 3) - 1;
    hook->seq = next_seq_++;
    std::uint32_t used = 0;
    for (const auto& [spec, id] : hooks_) used |= spec->bit;
    for (std::uint32_t b = 1; b != 0; b <<= 1)
      if (!(used & b)) {
        hook->bit = b;
        break;
      }
    hook->salt = rng_();
    hook->name = "h" + std::to_string(hook->seq);
    const hookset::HookId id = register_hook(set, hook, io_.get_executor());
    hooks_.emplace_back(std::move(hook), id);
  }

  void remove_random_hook(Set& set) {
    const std::size_t i = rng_() % hooks_.size();
    if (!set.remove(hooks_[i].second))
      record_violation("the publisher could not remove " + hooks_[i].first->name);
    hooks_.erase(hooks_.begin() + static_cast<std::ptrdiff_t>(i));
  }

  // Gives `set` a new stamp hook (the first to run) describing the version it is about to be.
  void restamp(Set& set) {
    if (stamp_id_) set.remove(stamp_id_);
    auto version = std::make_shared<VersionSpec>();
    version->stamp = ++publishing_;
    for (const auto& [spec, id] : hooks_) version->hooks.push_back(spec);
    std::stable_sort(version->hooks.begin(), version->hooks.end(),
                     [](const auto& a, const auto& b) {
      return a->priority != b->priority ? a->priority < b->priority : a->seq < b->seq;
    });
    std::shared_ptr<const VersionSpec> frozen = std::move(version);
    stamp_id_ = set.add<Score>(
        [frozen](const ProbePtr& probe, std::optional<Value> last) {
      Visit visit(probe);
      probe->version = frozen;
      return *last | (Value{frozen->stamp} << 32);
        },
        hookset::Priority{-2000});
  }

  // One change: up to two hooks removed, up to two added, a new stamp; published through
  // publish() or update() in turn.
  void change(Set& set) {
    const int removals = hooks_.size() > 2 ? static_cast<int>(rng_() % 3) : 0;
    for (int i = 0; i < removals; ++i) remove_random_hook(set);
    const int additions = static_cast<int>(rng_() % 3);
    for (int i = 0; i < additions && hooks_.size() < max_random_hooks; ++i) add_random_hook(set);
    restamp(set);
  }

  // Also the watchdog: dispatches complete within milliseconds, so 10 s without one completing
  // means some never will; the soak then stops the io_context and reports them.
  void publish_while_dispatching() {
    std::uint64_t next_at = publish_every;
    bool by_update = false;
    long last_completed = -1;
    auto last_progress = Clock::now();
    while (completed_.load() < static_cast<long>(total_)) {
      if (const long now_completed = completed_.load(); now_completed != last_completed) {
        last_completed = now_completed;
        last_progress = Clock::now();
      } else if (Clock::now() - last_progress > 10s) {
        record_violation(
            std::to_string(total_ - static_cast<std::uint64_t>(now_completed)) +
            " dispatch(es) never completed (none for 10 s): the io_context is stopped");
        abandoned_.store(true);
        io_.stop();
        return;
      }
      if (static_cast<std::uint64_t>(completed_.load()) < next_at) {
        std::this_thread::sleep_for(100us);
        continue;
      }
      next_at += publish_every;
      if (by_update) {
        shared_.update([this](Set& set) { change(set); });
      } else {
        Set next = shared_.load()->thaw();
        change(next);
        shared_.publish(std::move(next));
      }
      published_.store(publishing_.load());
      by_update = !by_update;
    }
  }

  // ---- dispatches

  void launch_next() {
    const std::uint64_t index = next_index_.fetch_add(1);
    if (index >= total_) return;
    auto run = std::make_shared<Run>(io_, index, draw_plan(seed_, index));
    run->probe->owner = static_cast<int>(index);
    run->probe->since = lifetime::mark();
    run->probe->input = mix(seed_ + index);
    run->probe->stall = run->plan.stall;
    net::dispatch(run->strand, [this, run] { start(run); });
  }

  hookset::CallOptions options_for(Run& run) {
    hookset::CallOptions options;
    if (run.plan.timeout) options.timeout = *run.plan.timeout;
    if (run.plan.cancel_after && !run.plan.cancel_by_slot)
      options.stop_token = run.stop.get_token();
    return options;
  }

  static net::awaitable<void> in_coroutine(Soak* soak, std::shared_ptr<Run> run) {
    std::exception_ptr error;
    Value value = 0;
    try {
      run->stamp_low = soak->published_.load();
      auto dispatch = soak->shared_.call<Score>(run->probe).with(soak->options_for(*run));
      run->stamp_high = soak->publishing_.load();
      value = co_await std::move(dispatch);
    } catch (...) {
      error = std::current_exception();
    }
    soak->finish(run, error, value);  // on the run's strand, where the coroutine was spawned
  }

  void start(const std::shared_ptr<Run>& run) {
    ++launched_;
    run->launched = Clock::now();
    auto done = net::bind_executor(run->strand, [this, run](std::exception_ptr error, Value value) {
      finish(run, error, value);
    });
    if (run->plan.in_coroutine) {
      net::co_spawn(run->strand, in_coroutine(this, run), net::detached);
    } else {
      run->stamp_low = published_.load();
      auto dispatch = shared_.call<Score>(run->probe).with(options_for(*run));
      run->stamp_high = publishing_.load();
      if (run->plan.cancel_by_slot)
        hookset::asio::async_call(io_.get_executor(), std::move(dispatch),
                                  net::bind_cancellation_slot(run->signal.slot(), std::move(done)));
      else hookset::asio::async_call(io_.get_executor(), std::move(dispatch), std::move(done));
    }
    if (run->plan.cancel_after) {
      run->timer.expires_after(*run->plan.cancel_after);
      run->timer.async_wait([run](const boost::system::error_code& error) {
        if (error || run->completions > 0) return;
        run->cancel_fired = true;
        if (run->plan.cancel_by_slot) run->signal.emit(net::cancellation_type::terminal);
        else run->stop.request_stop();
      });
    }
  }

  void finish(const std::shared_ptr<Run>& run, std::exception_ptr error, Value value) {
    const auto now = Clock::now();
    ++completions_[run->index];
    if (++run->completions != 1) {
      record_violation("dispatch " + std::to_string(run->index) + " completed twice");
      return;
    }
    run->timer.cancel();
    Probe& probe = *run->probe;
    if (const int running = probe.running.load(); running != 0)
      record_violation("dispatch " + std::to_string(run->index) + " completed with " +
                       std::to_string(running) + " hook(s) still running");
    probe.completed.store(true);
    // Structured lifetime: the hooks' frames (their by-value parameters) are gone too.
    if (const auto outlived = lifetime::alive_since(probe.owner, probe.since); !outlived.empty())
      record_violation("dispatch " + std::to_string(run->index) + ": " + outlived.front());

    const Ending ending = classify(error, value);
    check(*run, ending, value, now);
    ++ends_[static_cast<int>(ending.end)];

    if (completed_.fetch_add(1) + 1 == static_cast<long>(total_)) work_.reset();
    launch_next();
  }

  void check(const Run& run, const Ending& ending, Value value, Clock::time_point now) {
    const std::string which = "dispatch " + std::to_string(run.index) + " (" +
                              end_names[static_cast<int>(ending.end)] +
                              (ending.hook.empty() ? "" : " " + ending.hook) + ")";
    switch (ending.end) {
      case End::cancelled:
        if (!run.cancel_fired) record_violation(which + ": cancelled, but nobody cancelled it");
        if (run.plan.stall) ++stalls_cancelled_;
        return;
      case End::deadline:
        if (!run.plan.timeout) record_violation(which + ": timed out without a deadline");
        else if (now - run.launched < *run.plan.timeout)
          record_violation(which + ": timed out before its deadline");
        if (run.plan.stall) ++stalls_timed_out_;
        return;
      case End::unexpected:
        record_violation(which + ": unexpected error");
        return;
      default:
        break;
    }
    if (run.plan.stall)
      record_violation(which + ": a stall dispatch neither cancelled nor timed out");
    const VersionSpec* version = run.probe->version.get();
    if (!version) {
      record_violation(which + ": the version's stamp hook did not run");
      return;
    }
    if (version->stamp < run.stamp_low || version->stamp > run.stamp_high)
      record_violation(which + ": ran on version " + std::to_string(version->stamp) +
                       ", not current during its call (" + std::to_string(run.stamp_low) + ".." +
                       std::to_string(run.stamp_high) + ")");
    if (ending.end == End::ok && stamp_of(value) != version->stamp)
      record_violation(which + ": value stamped " + std::to_string(stamp_of(value)) +
                       " by version " + std::to_string(version->stamp));
    const std::vector<Ending> allowed = allowed_endings(*version, run.probe->input);
    if (std::find(allowed.begin(), allowed.end(), ending) == allowed.end()) {
      std::string text =
          which + " on version " + std::to_string(version->stamp) + ": not an allowed ending";
      if (ending.end == End::ok) text += " (bits " + std::to_string(ending.bits) + ")";
      record_violation(text);
    }
    if (ending.end == End::ok) {
      std::uint32_t all = static_cast<std::uint32_t>(anchor_bit);
      for (const auto& hook : version->hooks) all |= hook->bit;
      if (ending.bits != all) ++ok_with_skips_;
    }
    note_version(version->stamp);
  }

  void note_version(std::uint32_t stamp) {
    std::lock_guard lock(messages_mutex_);
    if (stamp >= seen_stamps_.size()) seen_stamps_.resize(stamp + 1024, false);
    if (!seen_stamps_[stamp]) {
      seen_stamps_[stamp] = true;
      ++versions_seen_;
    }
  }

  void record_violation(std::string message) {
    ++violations_;
    std::lock_guard lock(messages_mutex_);
    if (messages_.size() < 20) messages_.push_back(std::move(message));
  }

  std::uint64_t seed_;
  std::uint64_t total_;
  bool asio_hooks_;
  net::io_context io_;
  net::executor_work_guard<net::io_context::executor_type> work_;
  CountingObserver observer_;
  Shared shared_;

  // The publisher's state (its thread only, and the constructor before it).
  std::mt19937_64 rng_;
  std::vector<std::pair<std::shared_ptr<const HookSpec>, hookset::HookId>> hooks_;
  hookset::HookId stamp_id_;
  std::uint64_t next_seq_ = 0;
  // The newest stamp given to a version about to be published, and the newest published.
  std::atomic<std::uint32_t> publishing_{0}, published_{0};

  std::atomic<std::uint64_t> next_index_{0};
  std::atomic<long> launched_{0}, completed_{0};
  std::vector<std::atomic<int>> completions_;
  std::atomic<long> ends_[end_count] = {};
  std::atomic<long> ok_with_skips_{0}, stalls_cancelled_{0}, stalls_timed_out_{0};
  std::atomic<long> violations_{0}, versions_seen_{0}, escaped_{0};
  std::atomic<bool> abandoned_{false};
  std::vector<bool> seen_stamps_;  // (under messages_mutex_)
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
  Clock::duration wall_{};
};

}  // namespace

TEST_CASE(
    "soak: dispatches through a shared set republished meanwhile, random hooks, cancellations and "
    "deadlines") {
  const std::uint64_t seed = env_number("HOOKSET_SEED", default_seed);
  const std::uint64_t dispatches =
      std::max<std::uint64_t>(env_number("HOOKSET_SOAK_DISPATCHES", default_dispatches), 1);
  const bool asio_hooks = env_number("HOOKSET_SOAK_ASIO_HOOKS", 1) != 0;
  std::printf("[soak] HOOKSET_SEED=%llu HOOKSET_SOAK_DISPATCHES=%llu HOOKSET_SOAK_ASIO_HOOKS=%d\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(dispatches),
              asio_hooks ? 1 : 0);
  std::fflush(stdout);

  Soak soak(seed, dispatches, asio_hooks);
  soak.run();

  std::string outcomes;
  for (int e = 0; e < end_count; ++e)
    outcomes += std::string(e ? " " : "") + end_names[e] + "=" +
                std::to_string(soak.count(static_cast<End>(e)));
  std::printf(
      "[soak] %llu dispatches in %.2f s: %s (ok with fail-open skips=%ld); %llu versions, %ld "
      "seen; "
      "hooks %ld started, %ld finished, %ld saw their stop token triggered; violations=%ld\n",
      static_cast<unsigned long long>(soak.total()), soak.wall_seconds(), outcomes.c_str(),
      soak.ok_with_skips(), static_cast<unsigned long long>(soak.versions()),
      soak.distinct_versions_seen(), hook_counts.started.load(), hook_counts.finished.load(),
      hook_counts.saw_stop.load(), soak.violations());
  std::fflush(stdout);
  for (const std::string& message : soak.first_violations())
    std::printf("[soak] violation: %s\n", message.c_str());
  for (const std::string& message : soak.observer().first_anomalies())
    std::printf("[soak] %s\n", message.c_str());
  std::fflush(stdout);

  // Every dispatch completed, exactly once, with an outcome its version allows.
  CHECK(soak.escaped() == 0);
  CHECK_FALSE(soak.abandoned());
  CHECK(soak.launched() == static_cast<long>(soak.total()));
  CHECK(soak.completed() == static_cast<long>(soak.total()));
  CHECK(soak.completed_once() == static_cast<long>(soak.total()));
  CHECK(soak.violations() == 0);
  CHECK(soak.count(End::unexpected) == 0);
  long counted = 0;
  for (int e = 0; e < end_count; ++e) counted += soak.count(static_cast<End>(e));
  CHECK(counted == static_cast<long>(soak.total()));

  // No hook ran after its dispatch completed; every hook started also finished.
  CHECK(hook_counts.started_late == 0);
  CHECK(hook_counts.finished_late == 0);
  CHECK(hook_counts.started == hook_counts.finished);
  CHECK(soak.observer().begins == soak.observer().ends);
  CHECK(soak.observer().begins == static_cast<long>(soak.total()));
  CHECK(soak.observer().hook_begins == soak.observer().hook_ends);
  CHECK(soak.observer().anomalies() == 0);
  CHECK(soak.observer().still_open() == 0);
  CHECK(soak.observer().fail_open_warnings >= soak.ok_with_skips());

  // Not vacuous: the stall dispatches make cancellations and timeouts certain, whatever the
  // machine's speed; with enough dispatches, each kind of hook failure happens too.
  CHECK(soak.count(End::cancelled) >= soak.stalls_cancelled());
  CHECK(soak.count(End::deadline) >= soak.stalls_timed_out());
  if (soak.total() >= 2000) {
    CHECK(soak.stalls_cancelled() > 0);
    CHECK(soak.stalls_timed_out() > 0);
    CHECK(soak.count(End::ok) > 0);
    CHECK(soak.ok_with_skips() > 0);
    CHECK(soak.count(End::hook_limit) > 0);
    CHECK(soak.count(End::hook_failed) > 0);
    CHECK(soak.count(End::hook_threw) > 0);
    CHECK(soak.versions() >= soak.total() / publish_every / 2);
    CHECK(soak.distinct_versions_seen() > 1);
    CHECK(hook_counts.started > 0);
  }
}

// What the soak found first, made deterministic. An asio::awaitable hook is co_spawned with a
// cancellation slot that the dispatch's stop emits (<hookset/asio.hpp>, spawned_awaitable). If
// the stop arrives after the dispatch has called the hook but before the spawned coroutine first
// runs - here the hook's synchronous part requests it; in a service, another thread or a
// deadline does, in that window - Boost 1.81's co_spawn_entry_point finds the cancellation
// when it awaits the hook (the hook fails without having suspended), then, outside its try
// block, `co_await post(...)` throws operation_aborted again: the exception leaves
// io_context::run(), the co_spawn's completion handler is never called, and the dispatch never
// completes (its frames leak).
TEST_CASE(
    "soak: a dispatch stopped before its asio::awaitable hook first runs completes, cancelled") {
  net::io_context io;
  hookset::HookSet<Score> set;
  hookset::stop_source stop;
  auto probe = std::make_shared<Probe>();
  set.add<Score>([&stop](const ProbePtr&, std::optional<Value> last) -> net::awaitable<Value> {
    stop.request_stop();
    return [](Value value) -> net::awaitable<Value> {
      net::steady_timer timer(co_await net::this_coro::executor, 10ms);
      co_await timer.async_wait(net::use_awaitable);
      co_return value;
    }(*last);
  });
  bool completed = false;
  std::exception_ptr error;
  hookset::asio::async_call(io.get_executor(),
                            set.call<Score>(probe).with_stop_token(stop.get_token()),
                            [&](std::exception_ptr e, Value) {
    completed = true;
    error = e;
  });
  std::string escaped;
  try {
    io.run();
  } catch (const std::exception& e) {
    escaped = e.what();
  }
  INFO("escaped io_context::run(): " << escaped);
  CHECK(escaped.empty());
  REQUIRE(completed);
  CHECK_THROWS_AS(std::rethrow_exception(error), hookset::DispatchCancelled);
}

// Also found by the soak (its observer saw two ends for one hook run). A synchronous hook
// concluded inside run_hook's try block (detail/dispatch/dispatch.hpp): when concluding throws -
// the dispatch was stopped while the hook ran, or the hook's own time limit expired under Propagate
// or FailClosed - the hook's end has already been reported, the catch takes the exception for
// the hook's own error and concludes the hook a second time: a second end event, and under
// FailClosed a HookFailed whose cause is another HookFailed instead of the DispatchTimeout.
TEST_CASE(
    "soak: a synchronous hook that overruns its time limit or sees its dispatch stopped ends "
    "once") {
  struct HookEnds : hookset::Observer {
    int begins = 0;
    std::vector<hookset::HookOutcome> ends;
    bool wants_hook_events() const noexcept override { return true; }
    void on_hook_begin(const hookset::HookEvent&) override { ++begins; }
    void on_hook_end(const hookset::HookEvent& event) override { ends.push_back(event.outcome); }
  };
  using Slow = hookset::HookSet<Score>;
  const auto overrun = [](const ProbePtr&, std::optional<Value> last) {
    std::this_thread::sleep_for(5ms);
    return *last;
  };
  auto probe = std::make_shared<Probe>();

  SECTION("FailClosed: HookFailed, caused by the hook's DispatchTimeout") {
    HookEnds observer;
    Slow set;
    set.set_observer(&observer);
    set.add<Score>(overrun, {.name = "slow", .timeout = 1ms, .on_failure = hookset::FailClosed});
    std::exception_ptr cause;
    try {
      hookset::sync_wait(set.call<Score>(probe));
    } catch (const hookset::HookFailed& failed) {
      cause = failed.cause;
    }
    REQUIRE(cause);
    CHECK_THROWS_AS(std::rethrow_exception(cause), hookset::DispatchTimeout);
    CHECK(observer.begins == 1);
    CHECK(observer.ends == std::vector<hookset::HookOutcome>{hookset::HookOutcome::timed_out});
  }
  SECTION("Propagate: DispatchTimeout, one end") {
    HookEnds observer;
    Slow set;
    set.set_observer(&observer);
    set.add<Score>(overrun, {.name = "slow", .timeout = 1ms});
    CHECK_THROWS_AS(hookset::sync_wait(set.call<Score>(probe)), hookset::DispatchTimeout);
    CHECK(observer.begins == 1);
    CHECK(observer.ends == std::vector<hookset::HookOutcome>{hookset::HookOutcome::timed_out});
  }
  SECTION("the dispatch stopped while the hook runs: DispatchCancelled, one end") {
    HookEnds observer;
    Slow set;
    set.set_observer(&observer);
    hookset::stop_source stop;
    set.add<Score>([&stop](const ProbePtr&, std::optional<Value> last) {
      stop.request_stop();
      return *last;
    });
    CHECK_THROWS_AS(hookset::sync_wait(set.call<Score>(probe).with_stop_token(stop.get_token())),
                    hookset::DispatchCancelled);
    CHECK(observer.begins == 1);
    CHECK(observer.ends == std::vector<hookset::HookOutcome>{hookset::HookOutcome::cancelled});
  }
}
