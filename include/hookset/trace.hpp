#pragma once
// hookset::TraceWriter: an observer that records dispatches, hooks and warnings as Chrome
// trace-event JSON (open the file in https://ui.perfetto.dev or chrome://tracing). In one line:
//
//   auto tracing = hookset::trace_to_file("hooks.json");  // process-wide, until the scope ends
//
// What the file holds (the JSON Object Format, {"traceEvents": [...]}):
//  - each dispatch as an async slice (ph "b"/"e", category "dispatch", named after the slot,
//    id "d<dispatch id>"), its end carrying hooks_run and the error, if any;
//  - each hook inside it as a nested async slice (category "hook", named after the
//    registration, or "hook #<id>"), its end carrying the outcome (ok, failed, timed_out,
//    cancelled, skipped), the error, and a pipeline hook's decision;
//  - each warning as an instant event (ph "i", category "warning").
// With include_values() (or a slot's trace_values), values too, rendered through
// hookset::value_format (format.hpp): a dispatch's end carries its result ("value") and a
// pipeline's final input ("input"); a pipeline hook's end, the input it saw and what its decision
// carried. Without them nothing is rendered.
// Timestamps are microseconds on the steady clock since the writer was created; "tid" is the
// thread the event happened on. Written when the writer is flushed or destroyed.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <hookset/errors.hpp>
#include <hookset/observer.hpp>

namespace hookset {

class TraceWriter : public Observer {
 public:
  using clock = std::chrono::steady_clock;

  // Writes to `path` (replacing it) when flushed or destroyed.
  explicit TraceWriter(std::string path) : path_(std::move(path)) {}
  // Writes to `out`, which must outlive the writer.
  explicit TraceWriter(std::ostream& out) : out_(&out) {}
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;
  ~TraceWriter() override {
    try {
      flush();
    } catch (...) {
    }
  }

  // Writes every event recorded so far (the whole file, again).
  void flush() {
    std::lock_guard lock(mutex_);
    std::ostringstream json;
    json << "{\"traceEvents\":[";
    for (std::size_t i = 0; i < events_.size(); ++i) json << (i ? ",\n" : "\n") << events_[i];
    json << "\n],\"displayTimeUnit\":\"ms\"}\n";
    if (out_) {
      *out_ << json.str();
      out_->flush();
    } else {
      std::ofstream file(path_, std::ios::trunc);
      file << json.str();
    }
  }

  // Asks for values in the trace (see above): dispatch results and pipeline inputs.
  TraceWriter& include_values(bool include = true) noexcept {
    values_.store(include, std::memory_order_relaxed);
    return *this;
  }
  bool wants_values() const noexcept override { return values_.load(std::memory_order_relaxed); }

  std::size_t event_count() const {
    std::lock_guard lock(mutex_);
    return events_.size();
  }

  void on_warning(std::string_view slot, std::string_view message) override {
    record("i", "warning", slot, "", R"("s":"t",)", [&](std::ostream& args) {
      args << "\"message\":";
      quoted(args, message);
    });
  }
  void on_dispatch_begin(std::string_view slot, std::uint64_t dispatch_id) override {
    record("b", "dispatch", slot, "d" + std::to_string(dispatch_id), "", nullptr);
  }
  // Kept until the dispatch's end, which carries it.
  void on_dispatch_result(std::string_view, std::uint64_t dispatch_id, std::string_view value,
                          std::string_view input) override {
    std::lock_guard lock(mutex_);
    results_[dispatch_id] = {std::string(value), std::string(input)};
  }
  void on_dispatch_end(std::string_view slot, std::uint64_t dispatch_id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    std::pair<std::string, std::string> result;
    bool has_result = false;
    {
      std::lock_guard lock(mutex_);
      if (auto found = results_.find(dispatch_id); found != results_.end()) {
        result = std::move(found->second);
        has_result = true;
        results_.erase(found);
      }
    }
    record("e", "dispatch", slot, "d" + std::to_string(dispatch_id), "", [&](std::ostream& args) {
      args << "\"hooks_run\":" << hooks_run;
      if (error) {
        args << ",\"error\":";
        quoted(args, describe(error));
      }
      if (has_result) {
        args << ",\"value\":";
        quoted(args, result.first);
        if (!result.second.empty()) {
          args << ",\"input\":";
          quoted(args, result.second);
        }
      }
    });
  }
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const HookEvent& event) override {
    record("b", "hook", hook_name(event), hook_id(event), "", [&](std::ostream& args) {
      args << "\"slot\":";
      quoted(args, event.slot);
      args << ",\"hook_id\":" << event.hook.value() << ",\"position\":" << event.position;
    });
  }
  void on_hook_end(const HookEvent& event) override {
    record("e", "hook", hook_name(event), hook_id(event), "", [&](std::ostream& args) {
      args << "\"outcome\":\"" << to_string(event.outcome) << "\",\"duration_us\":"
           << std::chrono::duration<double, std::micro>(event.duration).count();
      if (event.error) {
        args << ",\"error\":";
        quoted(args, describe(event.error));
      }
      if (!event.decision.empty()) {
        args << ",\"decision\":";
        quoted(args, event.decision);
      }
      if (!event.input.empty()) {
        args << ",\"input\":";
        quoted(args, event.input);
      }
      if (!event.value.empty()) {
        args << ",\"value\":";
        quoted(args, event.value);
      }
    });
  }

 private:
  static std::string hook_name(const HookEvent& event) {
    return event.name.empty() ? "hook #" + std::to_string(event.hook.value())
                              : std::string(event.name);
  }
  // Hooks nest in their dispatch's slice: same id scope, distinct ids per hook run.
  static std::string hook_id(const HookEvent& event) {
    return "d" + std::to_string(event.dispatch_id) + "." + std::to_string(event.position);
  }
  static std::string describe(const std::exception_ptr& error) {
    return detail::exception_text(error);
  }
  static void quoted(std::ostream& out, std::string_view text) {
    out << '"';
    for (const char c : text) {
      switch (c) {
        case '"':
          out << "\\\"";
          break;
        case '\\':
          out << "\\\\";
          break;
        case '\n':
          out << "\\n";
          break;
        case '\r':
          out << "\\r";
          break;
        case '\t':
          out << "\\t";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20) {
            const char* hex = "0123456789abcdef";
            out << "\\u00" << hex[(c >> 4) & 0xf] << hex[c & 0xf];
          } else {
            out << c;
          }
      }
    }
    out << '"';
  }

  void record(std::string_view phase, std::string_view category, std::string_view name,
              std::string_view id, std::string_view extra,
              const std::function<void(std::ostream&)>& args) {
    const double ts = std::chrono::duration<double, std::micro>(clock::now() - origin_).count();
    std::ostringstream event;
    event << "{\"ph\":\"" << phase << "\",\"cat\":\"" << category << "\",\"name\":";
    quoted(event, name);
    if (!id.empty()) event << ",\"id\":\"" << id << '"';
    event << ",\"ts\":" << ts << ",\"pid\":1,\"tid\":" << thread_number() << ',' << extra
          << "\"args\":{";
    if (args) args(event);
    event << "}}";
    std::lock_guard lock(mutex_);
    events_.push_back(event.str());
  }

  std::size_t thread_number() {
    std::lock_guard lock(mutex_);
    const auto [where, added] = threads_.emplace(std::this_thread::get_id(), threads_.size() + 1);
    return where->second;
  }

  std::string path_;
  std::ostream* out_ = nullptr;
  const clock::time_point origin_ = clock::now();
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
  std::map<std::thread::id, std::size_t> threads_;
  std::map<std::uint64_t, std::pair<std::string, std::string>> results_;  // value, input
  std::atomic<bool> values_{false};
};

// A TraceWriter installed as the process-wide observer until it goes out of scope (then the
// previous observer is back and the file is written).
class TraceSession {
 public:
  explicit TraceSession(std::string path)
      : writer_(std::make_unique<TraceWriter>(std::move(path))), installed_(writer_.get()) {}
  TraceWriter& writer() noexcept { return *writer_; }

 private:
  std::unique_ptr<TraceWriter> writer_;
  ScopedObserver installed_;
};

inline TraceSession trace_to_file(std::string path) { return TraceSession(std::move(path)); }

}  // namespace hookset
