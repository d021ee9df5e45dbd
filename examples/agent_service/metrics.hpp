#pragma once
// Metrics: HTTP requests and responses, per slot the dispatches, errors and latency (measured by
// a set-wide interceptor, add_metrics), and the audit hooks skipped (reported to this observer).
#include "line_writer.hpp"

#include <hookset/observer.hpp>

#include <boost/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace json = boost::json;

class Metrics : public hookset::Observer {
 public:
  using clock = std::chrono::steady_clock;

  void count_request(std::string_view route) {
    std::lock_guard lock(mutex_);
    ++requests_;
    ++routes_[std::string(route)];
  }
  void count_response(unsigned status) {
    std::lock_guard lock(mutex_);
    ++statuses_[std::to_string(status)];
  }
  // A client gone before its request was complete.
  void count_aborted() {
    std::lock_guard lock(mutex_);
    ++aborted_;
  }
  // A connection over the cap, answered 503 and closed.
  void count_turned_away() {
    std::lock_guard lock(mutex_);
    ++turned_away_;
  }
  // A request's latency, from its first byte read to its answer written, by route.
  void record_latency(std::string_view route, clock::duration took) {
    const auto us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    std::lock_guard lock(mutex_);
    Latency& latency = latencies_[std::string(route)];
    ++latency.count;
    latency.total_us += us;
    for (std::size_t i = 0; i < latency_buckets.size(); ++i)
      latency.at_most[i] += us <= latency_buckets[i].us ? 1 : 0;
  }
  // An accept that failed (at the descriptor limit, say): each one, the backoff's waits apart.
  void count_accept_failure() {
    std::lock_guard lock(mutex_);
    ++accept_failures_;
  }
  // The access log's writer, whose dropped lines the metrics show.
  void watch_access_log(const LineWriter* writer) { access_log_ = writer; }
  void count_tool_call(std::string_view tool) {
    std::lock_guard lock(mutex_);
    ++tool_calls_[std::string(tool)];
  }
  std::uint64_t requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

  void record_dispatch(std::string_view slot, clock::duration took, bool failed) {
    const auto us = static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(took).count());
    std::lock_guard lock(mutex_);
    SlotStats& stats = slots_[std::string(slot)];
    ++stats.count;
    stats.errors += failed ? 1 : 0;
    stats.total_us += us;
    stats.max_us = std::max(stats.max_us, us);
  }
  // The fail-open policy reports each hook it skipped as a warning.
  void on_warning(std::string_view slot, std::string_view message) override {
    if (message.find("skipped") == std::string_view::npos) return;
    std::lock_guard lock(mutex_);
    ++skipped_[std::string(slot)];
  }

  json::object to_json() const {
    std::lock_guard lock(mutex_);
    json::object slots;
    for (const auto& [name, stats] : slots_) {
      slots[name] = {{"count", stats.count},
                     {"errors", stats.errors},
                     {"hooks_skipped", lookup(skipped_, name)},
                     {"mean_us", stats.count ? stats.total_us / stats.count : 0},
                     {"max_us", stats.max_us}};
    }
    return {{"http",
             {{"requests", requests_},
              {"aborted", aborted_},
              {"accept_failures", accept_failures_},
              {"turned_away", turned_away_},
              {"latency_ms", latency_json()},
              {"routes", to_object(routes_)},
              {"responses", to_object(statuses_)}}},
            {"slots", std::move(slots)},
            {"tool_calls", to_object(tool_calls_)},
            {"access_log", {{"dropped", log_dropped()}}}};
  }

  // The same in the Prometheus text format (version 0.0.4).
  std::string to_prometheus() const {
    std::lock_guard lock(mutex_);
    std::string out;
    const auto family =
        [&out](std::string_view name, std::string_view type, std::string_view help) {
      out.append("# HELP ").append(name).append(" ").append(help).append("\n# TYPE ");
      out.append(name).append(" ").append(type).append("\n");
    };
    const auto sample = [&out](std::string_view name, std::string_view labels, auto value) {
      out.append(name);
      if (!labels.empty()) out.append("{").append(labels).append("}");
      out.append(" ").append(number(value)).append("\n");
    };
    const auto by = [](std::string_view label, std::string_view value) {
      return std::string(label) + "=\"" + label_value(value) + "\"";
    };
    family("agent_http_requests_total", "counter", "HTTP requests read, by route.");
    for (const auto& [route, count] : routes_)
      sample("agent_http_requests_total", by("route", route), count);
    family("agent_http_responses_total", "counter", "HTTP responses, by status.");
    for (const auto& [status, count] : statuses_)
      sample("agent_http_responses_total", by("status", status), count);
    family("agent_http_aborted_total", "counter", "Requests left unfinished by their client.");
    sample("agent_http_aborted_total", "", aborted_);
    family("agent_http_accept_failures_total", "counter", "Failed accepts (descriptor limit).");
    sample("agent_http_accept_failures_total", "", accept_failures_);
    family("agent_http_turned_away_total", "counter", "Connections over the cap, answered 503.");
    sample("agent_http_turned_away_total", "", turned_away_);
    family("agent_http_request_duration_seconds", "histogram",
           "From a request's first byte to its answer written, by route.");
    for (const auto& [route, latency] : latencies_) {
      for (std::size_t i = 0; i < latency_buckets.size(); ++i)
        sample("agent_http_request_duration_seconds_bucket",
               by("route", route) + ",le=\"" + std::string(latency_buckets[i].seconds) + "\"",
               latency.at_most[i]);
      sample("agent_http_request_duration_seconds_bucket", by("route", route) + ",le=\"+Inf\"",
             latency.count);
      sample("agent_http_request_duration_seconds_sum", by("route", route),
             static_cast<double>(latency.total_us) / 1e6);
      sample("agent_http_request_duration_seconds_count", by("route", route), latency.count);
    }
    family("agent_slot_dispatches_total", "counter", "Dispatches of each hookset slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_dispatches_total", by("slot", slot), stats.count);
    family("agent_slot_errors_total", "counter", "Dispatches that failed, by slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_errors_total", by("slot", slot), stats.errors);
    family("agent_slot_dispatch_seconds_total", "counter", "Time spent in dispatches, by slot.");
    for (const auto& [slot, stats] : slots_)
      sample("agent_slot_dispatch_seconds_total", by("slot", slot),
             static_cast<double>(stats.total_us) / 1e6);
    family("agent_slot_hooks_skipped_total", "counter", "Hooks skipped (fail-open), by slot.");
    for (const auto& [slot, count] : skipped_)
      sample("agent_slot_hooks_skipped_total", by("slot", slot), count);
    family("agent_access_log_dropped_total", "counter",
           "Access log lines dropped: the log's reader too slow, or gone.");
    sample("agent_access_log_dropped_total", "", log_dropped());
    family("agent_tool_calls_total", "counter", "Tool calls, by tool.");
    for (const auto& [tool, count] : tool_calls_)
      sample("agent_tool_calls_total", by("tool", tool), count);
    return out;
  }

 private:
  struct SlotStats {
    std::uint64_t count = 0;
    std::uint64_t errors = 0;
    std::uint64_t total_us = 0;
    std::uint64_t max_us = 0;
  };
  // Latency buckets (upper bounds), as Prometheus' defaults but for a 1 ms one.
  struct Bucket {
    std::uint64_t us;
    std::string_view ms;
    std::string_view seconds;
  };
  static constexpr std::array<Bucket, 11> latency_buckets = {{{1'000, "1", "0.001"},
                                                              {5'000, "5", "0.005"},
                                                              {10'000, "10", "0.01"},
                                                              {25'000, "25", "0.025"},
                                                              {50'000, "50", "0.05"},
                                                              {100'000, "100", "0.1"},
                                                              {250'000, "250", "0.25"},
                                                              {500'000, "500", "0.5"},
                                                              {1'000'000, "1000", "1"},
                                                              {2'500'000, "2500", "2.5"},
                                                              {5'000'000, "5000", "5"}}};
  // Cumulative, as Prometheus has it: at_most[i] counts the requests within latency_buckets[i].
  struct Latency {
    std::array<std::uint64_t, latency_buckets.size()> at_most{};
    std::uint64_t count = 0;
    std::uint64_t total_us = 0;
  };
  json::object latency_json() const {
    json::object routes;
    for (const auto& [route, latency] : latencies_) {
      json::object buckets;
      for (std::size_t i = 0; i < latency_buckets.size(); ++i)
        buckets[latency_buckets[i].ms] = latency.at_most[i];
      buckets["+Inf"] = latency.count;
      routes[route] = {{"count", latency.count},
                       {"sum_ms", static_cast<double>(latency.total_us) / 1e3},
                       {"buckets", std::move(buckets)}};
    }
    return routes;
  }
  static std::string number(std::uint64_t value) { return std::to_string(value); }
  static std::string number(double value) {
    char text[32];
    const int length = std::snprintf(text, sizeof text, "%.6f", value);
    return std::string(text, static_cast<std::size_t>(length));
  }
  // A label value as the text format escapes it.
  static std::string label_value(std::string_view text) {
    std::string escaped;
    for (const char c : text) {
      if (c == '\\' || c == '"') escaped += '\\';
      if (c == '\n') {
        escaped += "\\n";
        continue;
      }
      escaped += c;
    }
    return escaped;
  }
  static json::object to_object(const std::map<std::string, std::uint64_t>& counts) {
    json::object object;
    for (const auto& [name, count] : counts) object[name] = count;
    return object;
  }
  static std::uint64_t lookup(const std::map<std::string, std::uint64_t>& counts,
                              const std::string& name) {
    auto found = counts.find(name);
    return found == counts.end() ? 0 : found->second;
  }

  std::uint64_t log_dropped() const { return access_log_ ? access_log_->dropped_lines() : 0; }

  const LineWriter* access_log_ = nullptr;
  mutable std::mutex mutex_;
  std::uint64_t requests_ = 0;
  std::uint64_t aborted_ = 0;
  std::uint64_t accept_failures_ = 0;
  std::uint64_t turned_away_ = 0;
  std::map<std::string, Latency> latencies_;
  std::map<std::string, std::uint64_t> routes_;
  std::map<std::string, std::uint64_t> statuses_;
  std::map<std::string, std::uint64_t> tool_calls_;
  std::map<std::string, std::uint64_t> skipped_;
  std::map<std::string, SlotStats> slots_;
};
