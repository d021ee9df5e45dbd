// Per-hook observation: hook begin/end events (slot, dispatch id, HookId, name, position,
// duration, outcome) for synchronous, asynchronous, concurrent, failed, skipped, timed-out and
// cancelled hooks; observers per set as well as process-wide; and the Chrome trace writer,
// whose file parses as JSON with matching begin/end pairs.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <hookset/hookset.hpp>
#include <hookset/trace.hpp>

using namespace std::chrono_literals;
using hookset::HookOutcome;
using hookset::Task;

namespace {

struct Sum {
  int operator()(std::vector<int> v) const {
    int total = 0;
    for (int x : v) total += x;
    return total;
  }
};
struct Count : hookset::Slot<int(int), hookset::Always> {
  static int default_impl(int x) { return x; }
};
struct Many
    : hookset::Slot<int(int), hookset::Always, hookset::Aggregate<Sum>, hookset::Concurrent> {
  static int default_impl(int x) { return x; }
};
using Set = hookset::HookSet<Count, Many>;

// Records every event as a line: "begin Count #<position> <name>", "end ... <outcome>",
// "dispatch-begin", "dispatch-end <hooks_run>".
struct HookRecorder : hookset::Observer {
  std::vector<std::string> lines;
  std::vector<hookset::HookEvent> ends;
  std::mutex mutex;
  bool wants_hook_events() const noexcept override { return true; }
  void on_dispatch_begin(std::string_view slot, std::uint64_t) override {
    add("dispatch-begin " + std::string(slot));
  }
  void on_dispatch_end(std::string_view, std::uint64_t, std::size_t hooks_run,
                       std::exception_ptr error) override {
    add("dispatch-end " + std::to_string(hooks_run) + (error ? " error" : ""));
  }
  void on_hook_begin(const hookset::HookEvent& e) override {
    add("begin " + std::to_string(e.position) + " " + std::string(e.name));
  }
  void on_hook_end(const hookset::HookEvent& e) override {
    add("end " + std::to_string(e.position) + " " + std::string(e.name) + " " +
        std::string(to_string(e.outcome)));
    std::lock_guard lock(mutex);
    ends.push_back(e);
  }
  void add(std::string line) {
    std::lock_guard lock(mutex);
    lines.push_back(std::move(line));
  }
};

// A minimal JSON syntax check (objects, arrays, strings, numbers, true/false/null).
class json_checker {
 public:
  explicit json_checker(std::string_view text) : s_(text) {}
  bool valid() {
    skip();
    if (!value()) return false;
    skip();
    return i_ == s_.size();
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool string() {
    if (s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      if (s_[i_] == '\\') {
        ++i_;
        continue;
      }
      if (s_[i_] == '"') {
        ++i_;
        return true;
      }
      if (static_cast<unsigned char>(s_[i_]) < 0x20) return false;
    }
    return false;
  }
  bool number() {
    const std::size_t start = i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) ||
                              std::string_view("+-.eE").find(s_[i_]) != std::string_view::npos))
      ++i_;
    return i_ > start;
  }
  bool value() {
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      skip();
      if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
      for (;;) {
        skip();
        if (c == '{') {
          if (!string()) return false;
          skip();
          if (i_ >= s_.size() || s_[i_++] != ':') return false;
          skip();
        }
        if (!value()) return false;
        skip();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') {
          ++i_;
          continue;
        }
        return s_[i_++] == close;
      }
    }
    if (c == '"') return string();
    if (literal("true") || literal("false") || literal("null")) return true;
    return number();
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

TEST_CASE(
    "hook events of synchronous and asynchronous hooks - with names - positions and outcomes") {
  Set set;
  HookRecorder recorder;
  set.set_observer(&recorder);
  set.add<Count>([](int x, std::optional<int> last) { return x + *last; }, {.name = "sync"});
  set.add<Count>([](int x, std::optional<int> last) -> Task<int> { co_return x + *last; },
                 {.name = "task"});
  set.add<Count>([](int, std::optional<int>) -> int { throw std::runtime_error("no"); },
                 {.name = "flaky", .on_failure = hookset::FailOpen});
  CHECK(hookset::sync_wait(set.call<Count>(1)) == 3);
  CHECK(recorder.lines == std::vector<std::string>{"dispatch-begin Count", "begin 0 sync",
                                                   "end 0 sync ok", "begin 1 task", "end 1 task ok",
                                                   "begin 2 flaky", "end 2 flaky skipped",
                                                   "dispatch-end 3"});
  REQUIRE(recorder.ends.size() == 3);
  CHECK(recorder.ends[0].slot == "Count");
  CHECK(recorder.ends[0].hook);
  CHECK(recorder.ends[0].dispatch_id == recorder.ends[2].dispatch_id);
  CHECK(recorder.ends[2].error);
}

TEST_CASE("a failed hook ends the dispatch: its end says failed") {
  Set set;
  HookRecorder recorder;
  hookset::ScopedObserver process_wide(&recorder);  // process-wide, this time
  set.add<Count>([](int, std::optional<int>) -> int { throw std::runtime_error("no"); },
                 {.name = "bad"});
  CHECK_THROWS(hookset::sync_wait(set.call<Count>(1)));
  CHECK(recorder.lines == std::vector<std::string>{"dispatch-begin Count", "begin 0 bad",
                                                   "end 0 bad failed", "dispatch-end 1 error"});
}

TEST_CASE("timed-out and cancelled hooks") {
  Set set;
  HookRecorder recorder;
  set.set_observer(&recorder);
  set.add<Count>(
      [](int x, std::optional<int>) -> int {
        std::this_thread::sleep_for(20ms);
        return x;
      },
      {.name = "slow", .timeout = 1ms, .on_failure = hookset::FailClosed});
  CHECK_THROWS_AS(hookset::sync_wait(set.call<Count>(1)), hookset::HookFailed);
  CHECK(recorder.lines.at(2) == "end 0 slow timed_out");

  Set other;
  HookRecorder second;
  other.set_observer(&second);
  hookset::stop_source source;
  other.add<Count>(
      [&](int x, std::optional<int>) {
    source.request_stop();
    return x;
      },
      {.name = "stopper"});
  CHECK_THROWS_AS(hookset::sync_wait(other.call<Count>(1).with_stop_token(source.get_token())),
                  hookset::DispatchCancelled);
  CHECK(second.lines.at(2) == "end 0 stopper cancelled");
}

TEST_CASE("concurrent hooks: one begin and one end each - the durations overlap") {
  Set set;
  HookRecorder recorder;
  set.set_observer(&recorder);
  test_support::ManualEvent a, b;
  set.add<Many>(
      [&](int x) -> Task<int> {
        co_await a;
        co_return x;
      },
      {.name = "a"});
  set.add<Many>(
      [&](int x) -> Task<int> {
        co_await b;
        co_return x;
      },
      {.name = "b"});
  test_support::Outcome<int> out;
  test_support::detach(set.call<Many>(1), out);
  b.fire();
  a.fire();
  REQUIRE(out.done);
  CHECK(*out.value == 3);
  CHECK(recorder.lines == std::vector<std::string>{"dispatch-begin Many", "begin 0 a", "begin 1 b",
                                                   "end 0 a ok", "end 1 b ok", "dispatch-end 2"});
}

TEST_CASE("no observer wants hook events: none are made") {
  struct DispatchOnly : hookset::Observer {
    int hook_events = 0;
    void on_hook_begin(const hookset::HookEvent&) override { ++hook_events; }
  } observer;
  Set set;
  set.set_observer(&observer);
  set.add<Count>([](int x, std::optional<int>) { return x; });
  hookset::sync_wait(set.call<Count>(1));
  CHECK(observer.hook_events == 0);
}

TEST_CASE("HookEventSampler: hook events for one dispatch in N, every dispatch's begin and end") {
  struct Sampling : HookRecorder {
    hookset::HookEventSampler sampler{4};
    int asked = 0;
    bool wants_hook_events() const noexcept override {
      ++const_cast<Sampling*>(this)->asked;
      return sampler.sample();
    }
  } observer;
  Set set;
  set.set_observer(&observer);
  set.add<Count>([](int x, std::optional<int> last) { return x + *last; }, {.name = "h"});
  set.add<Count>([](int, std::optional<int> last) -> Task<int> { co_return *last; }, {.name = "t"});
  for (int i = 0; i < 8; ++i) CHECK(hookset::sync_wait(set.call<Count>(1)) == 2);
  CHECK(observer.asked == 8);  // asked once per dispatch
  int begins = 0, hook_begins = 0;
  for (const std::string& line : observer.lines) {
    begins += line.starts_with("dispatch-begin");
    hook_begins += line.starts_with("begin ");
  }
  CHECK(begins == 8);
  CHECK(hook_begins == 2 * 2);  // dispatches 1 and 5 of 8, two hooks each
  CHECK(observer.ends.size() == 4);
  CHECK(hookset::HookEventSampler{0}.one_in() == 1);
}

TEST_CASE("a hook's duration starts at the previous hook's end, not before it") {
  Set set;
  HookRecorder recorder;
  set.set_observer(&recorder);
  set.add<Count>(
      [](int x, std::optional<int> last) {
    std::this_thread::sleep_for(20ms);
    return x + *last;
      },
      {.name = "slow"});
  set.add<Count>([](int, std::optional<int> last) { return *last; }, {.name = "quick"});
  CHECK(hookset::sync_wait(set.call<Count>(1)) == 2);
  REQUIRE(recorder.ends.size() == 2);
  CHECK(recorder.ends[0].duration >= 19ms);
  CHECK(recorder.ends[0].duration < 10s);
  CHECK(recorder.ends[1].duration < 15ms);  // the slow hook's 20 ms are not counted again
}

TEST_CASE("hook_clock: readings move forward and convert to nanoseconds") {
  const auto a = hookset::detail::hook_clock::now();
  std::this_thread::sleep_for(5ms);
  const auto b = hookset::detail::hook_clock::now();
  const auto elapsed = hookset::detail::hook_clock::between(a, b);
  CHECK(elapsed >= 4ms);
  CHECK(elapsed < 10s);
  CHECK(hookset::detail::hook_clock::between(b, a) == std::chrono::nanoseconds{0});
#if defined(__x86_64__)
  INFO("hook events read the " << (hookset::detail::hook_clock::uses_tsc() ? "TSC"
                                                                           : "steady_clock"));
#endif
}

TEST_CASE("an observer that throws changes no dispatch") {
  struct Throwing : hookset::Observer {
    bool wants_hook_events() const noexcept override { return true; }
    void on_dispatch_begin(std::string_view, std::uint64_t) override {
      throw std::runtime_error("b");
    }
    void on_dispatch_end(std::string_view, std::uint64_t, std::size_t,
                         std::exception_ptr) override {
      throw std::runtime_error("e");
    }
    void on_hook_begin(const hookset::HookEvent&) override { throw std::runtime_error("hb"); }
    void on_hook_end(const hookset::HookEvent&) override { throw std::runtime_error("he"); }
  } observer;
  Set set;
  set.set_observer(&observer);
  int runs = 0;
  set.add<Count>([&](int x, std::optional<int> last) {
    ++runs;
    return x + *last;
  });
  CHECK(hookset::sync_wait(set.call<Count>(2)) == 4);
  hookset::ScopedObserver global(&observer);
  CHECK(hookset::sync_wait(set.call<Count>(3)) == 6);
  CHECK(runs == 2);
}

TEST_CASE("the trace writer: JSON with a begin and an end for every dispatch and hook") {
  std::ostringstream out;
  {
    hookset::TraceWriter writer(out);
    Set set;
    set.set_observer(&writer);
    set.add<Count>([](int x, std::optional<int> last) { return x + *last; }, {.name = "quote\"d"});
    set.add<Count>([](int x, std::optional<int> last) -> Task<int> { co_return x + *last; });
    set.add<Many>([](int x) { return x; });
    hookset::sync_wait(set.call<Count>(1));
    hookset::sync_wait(set.call<Many>(2));
    set.add<Count>([](int, std::optional<int>) -> int { throw std::runtime_error("line\nbreak"); });
    CHECK_THROWS(hookset::sync_wait(set.call<Count>(3)));
  }
  const std::string json = out.str();
  INFO(json);
  CHECK(json_checker(json).valid());
  // Every "b" has its "e" with the same id.
  std::map<std::string, int> open;
  std::size_t pos = 0;
  int begins = 0;
  while ((pos = json.find("\"ph\":\"", pos)) != std::string::npos) {
    const char phase = json[pos + 6];
    const std::size_t id_at = json.find("\"id\":\"", pos);
    const std::size_t id_end = json.find('"', id_at + 6);
    const std::string id = json.substr(id_at + 6, id_end - id_at - 6);
    if (phase == 'b') {
      ++open[id];
      ++begins;
    }
    if (phase == 'e') --open[id];
    ++pos;
  }
  CHECK(begins == 3 + 2 + 3 + 1);  // three dispatches; 2, 1 and 3 hook runs
  for (const auto& [id, balance] : open) {
    CAPTURE(id);
    CHECK(balance == 0);
  }
  CHECK(json.find("\"outcome\":\"failed\"") != std::string::npos);
  CHECK(json.find("quote\\\"d") != std::string::npos);
}
