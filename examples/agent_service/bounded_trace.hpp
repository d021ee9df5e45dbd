#pragma once
// The trace, bounded. A hookset::TraceWriter keeps every event until it is written: over a long
// run that grows without end. This observer hands the events to a writer and replaces it with a
// fresh one every max_events / 2 events, dropping the one before: the file then holds the last
// events, at least half the limit (once there were as many) and at most the limit.
#include <hookset/observer.hpp>
#include <hookset/trace.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <sstream>
#include <string>
#include <string_view>

namespace json = boost::json;

class BoundedTrace : public hookset::Observer {
 public:
  BoundedTrace(std::string path, std::size_t max_events)
      : path_(std::move(path)),
        per_writer_(std::max<std::size_t>(max_events / 2, 1)),
        current_(std::make_unique<Generation>()) {}

  void on_warning(std::string_view slot, std::string_view message) override {
    record([&](hookset::TraceWriter& writer) { writer.on_warning(slot, message); });
  }
  void on_dispatch_begin(std::string_view slot, std::uint64_t dispatch_id) override {
    record([&](hookset::TraceWriter& writer) { writer.on_dispatch_begin(slot, dispatch_id); });
  }
  void on_dispatch_end(std::string_view slot, std::uint64_t dispatch_id, std::size_t hooks_run,
                       std::exception_ptr error) override {
    record([&](hookset::TraceWriter& writer) {
      writer.on_dispatch_end(slot, dispatch_id, hooks_run, error);
    });
  }
  bool wants_hook_events() const noexcept override { return true; }
  void on_hook_begin(const hookset::HookEvent& event) override {
    record([&](hookset::TraceWriter& writer) { writer.on_hook_begin(event); });
  }
  void on_hook_end(const hookset::HookEvent& event) override {
    record([&](hookset::TraceWriter& writer) { writer.on_hook_end(event); });
  }

  std::size_t event_count() const {
    std::shared_lock lock(mutex_);
    return (previous_ ? previous_->writer.event_count() : 0) + current_->writer.event_count();
  }

  // Writes the events kept, oldest first, as one Chrome trace.
  void write() {
    std::unique_lock lock(mutex_);
    const clock::time_point origin = (previous_ ? previous_ : current_)->origin;
    json::array events;
    for (Generation* generation : {previous_.get(), current_.get()}) {
      if (!generation) continue;
      generation->out.str("");
      generation->writer.flush();
      json::value written = json::parse(generation->out.str());
      // Each writer times its events from its own start: shifted onto the oldest one's. (Its
      // "tid" numbers, too, are its own: the threads in the order that writer saw them.)
      const double shift_us =
          std::chrono::duration<double, std::micro>(generation->origin - origin).count();
      for (json::value& event : written.at("traceEvents").as_array()) {
        json::value& ts = event.as_object()["ts"];
        ts = ts.to_number<double>() + shift_us;
        events.push_back(std::move(event));
      }
    }
    json::object trace{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
    std::ofstream file(path_, std::ios::trunc);
    file << json::serialize(trace) << '\n';
  }

 private:
  using clock = std::chrono::steady_clock;
  struct Generation {
    clock::time_point origin = clock::now();  // (the writer's own origin, within microseconds)
    std::ostringstream out;                   // what the writer writes, when asked
    hookset::TraceWriter writer{out};
  };

  template <typename Forward>
  void record(Forward forward) {
    {
      std::shared_lock lock(mutex_);
      forward(current_->writer);
    }
    if (recorded_.fetch_add(1, std::memory_order_relaxed) + 1 >= per_writer_) replace_writer();
  }
  void replace_writer() {
    std::unique_ptr<Generation> dropped;
    {
      std::unique_lock lock(mutex_);
      if (recorded_.load(std::memory_order_relaxed) < per_writer_) return;  // done by another
      dropped = std::move(previous_);
      previous_ = std::move(current_);
      current_ = std::make_unique<Generation>();
      recorded_.store(0, std::memory_order_relaxed);
    }
  }  // `dropped` goes here, outside the lock

  const std::string path_;
  const std::size_t per_writer_;
  mutable std::shared_mutex mutex_;  // shared to record, exclusive to replace the writer
  std::unique_ptr<Generation> previous_;
  std::unique_ptr<Generation> current_;
  std::atomic<std::size_t> recorded_{0};  // by current_
};
