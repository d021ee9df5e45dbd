// A request service on Boost.Asio: an io_context on two threads serves requests through one
// shared hook set. Hooks are asio::awaitable coroutines waiting on timers (standing in for
// remote policy services); a slow plugin is cut off by its own time limit and skipped
// (fail-open); one client stops waiting, which cancels its dispatch - and the hook it was
// running finishes before the dispatch completes. The results are printed, in request order,
// once the io_context has run dry, and checked. Everything is also traced (hookset::TraceWriter)
// to a Chrome trace file - $HOOKSET_TRACE_FILE, else asio_service.trace.json in the temporary
// directory - to open in https://ui.perfetto.dev.
#include <hookset/asio.hpp>
#include <hookset/hookset.hpp>
#include <hookset/trace.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace net = boost::asio;
using namespace std::chrono_literals;
using namespace net::experimental::awaitable_operators;

struct Request {
  int id;
  std::string user;
  std::string text;
};

// The gate: the first hook that rejects the request wins (Chain<FirstSuccess> over an optional
// reason).
struct Moderate : hookset::Slot<std::optional<std::string>(const Request&), hookset::Always,
                                hookset::Chain<hookset::FirstSuccess>> {
  static std::optional<std::string> default_impl(const Request& request) {
    if (request.text.empty()) return "empty request";
    return std::nullopt;
  }
};
// The context the model gets: folded through every plugin.
struct Enrich : hookset::Slot<std::string(const Request&), hookset::Always> {
  static std::string default_impl(const Request& request) { return request.text; }
};
using ServiceHooks = hookset::HookSet<Moderate, Enrich>;

// Stands in for a call to a remote service.
net::awaitable<void> remote_call(std::chrono::milliseconds latency) {
  net::steady_timer timer(co_await net::this_coro::executor, latency);
  co_await timer.async_wait(net::use_awaitable);  // throws operation_aborted when cancelled
}

std::atomic<int> hooks_running{0};
struct running_guard {
  running_guard() { ++hooks_running; }
  ~running_guard() { --hooks_running; }
};

// Counts what the fail-open policy skipped (it reports every skipped failure as a warning).
struct SkipCounter : hookset::Observer {
  std::atomic<int> skipped{0};
  void on_warning(std::string_view, std::string_view message) override {
    if (message.find("skipped") != std::string_view::npos) ++skipped;
  }
};

ServiceHooks make_hooks() {
  ServiceHooks hooks;
  // A moderation service: 5 ms away.
  hooks.add<Moderate>(
      [](const Request& request) -> net::awaitable<std::optional<std::string>> {
        running_guard guard;
        co_await remote_call(5ms);
        if (request.text.find("forbidden") != std::string::npos)
          co_return "moderation: forbidden topic";
        co_return std::nullopt;
      },
      {.name = "moderation"});
  // A reputation service that hangs: its own 30 ms limit cuts it off, and as fail-open it is
  // skipped (and reported) instead of failing the request.
  hooks.add<Moderate>(
      [](const Request&) -> net::awaitable<std::optional<std::string>> {
        running_guard guard;
        co_await remote_call(10s);
        co_return "reputation: never answers in time";
      },
      {.name = "reputation", .timeout = 30ms, .on_failure = hookset::FailOpen});
  // Context from a profile service (2 ms away); a long-running lookup for "deep" requests.
  hooks.add<Enrich>(
      [](const Request& request, std::optional<std::string> last) -> net::awaitable<std::string> {
        running_guard guard;
        co_await remote_call(request.text.find("deep") != std::string::npos ? 1s : 2ms);
        co_return *last + " [user:" + request.user + "]";
      },
      {.name = "profile"});
  return hooks;
}

std::mutex results_mutex;
std::map<int, std::string> results;
void record(int id, std::string outcome) {
  std::lock_guard lock(results_mutex);
  results[id] = std::move(outcome);
}

// One request, as a handler written on Asio coroutines would serve it.
net::awaitable<void> serve(const ServiceHooks& hooks, Request request,
                           std::chrono::milliseconds patience) {
  try {
    const auto rejection = co_await hooks.call<Moderate>(request).with_timeout(500ms);
    if (rejection) {
      record(request.id, "rejected (" + *rejection + ")");
      co_return;
    }
    // The client waits `patience` for the context, then gives up: the dispatch is cancelled.
    net::steady_timer client(co_await net::this_coro::executor, patience);
    auto outcome =
        co_await (hookset::asio::async_call(hooks.call<Enrich>(request), net::use_awaitable) ||
                  client.async_wait(net::use_awaitable));
    if (outcome.index() == 0) record(request.id, "served: " + std::get<0>(outcome));
    else
      record(request.id, "client gave up; hooks still running when it returned: " +
                             std::to_string(hooks_running.load()));
  } catch (const std::exception& error) {
    record(request.id, std::string("failed: ") + error.what());
  }
}

std::string trace_path() {
  if (const char* path = std::getenv("HOOKSET_TRACE_FILE")) return path;
  return (std::filesystem::temp_directory_path() / "asio_service.trace.json").string();
}

int main() {
  // Every dispatch, hook and warning of the process, as a Chrome trace (written at scope end).
  auto tracing = hookset::trace_to_file(trace_path());
  SkipCounter skips;
  ServiceHooks hooks = make_hooks();
  hooks.set_observer(&skips);

  net::io_context io;
  const Request requests[] = {{1, "ada", "summarise my notes"},
                              {2, "bob", "tell me about a forbidden topic"},
                              {3, "cy", ""},
                              {4, "dee", "deep research, please"}};
  // Each request on a strand of its own: serve() awaits `async_call(...) || timer`, and Asio's
  // per-operation cancellation behind that `||` is not safe for a coroutine that the io_context's
  // two threads could resume at once (heap-use-after-free in its cancellation_signal).
  for (const Request& request : requests)
    net::co_spawn(net::make_strand(io), serve(hooks, request, 100ms), net::detached);

  std::thread second([&] { io.run(); });
  io.run();
  second.join();

  for (const auto& [id, outcome] : results)
    std::cout << "request " << id << ": " << outcome << '\n';
  std::cout << "reputation hook cut off and skipped: " << skips.skipped.load() << " times\n";
  std::cout << "trace: every dispatch and hook recorded: "
            << (tracing.writer().event_count() > 0 ? "yes" : "no") << '\n';

  const bool ok = results.size() == 4 && results[1] == "served: summarise my notes [user:ada]" &&
                  results[2].find("forbidden") != std::string::npos &&
                  results[3].find("empty") != std::string::npos &&
                  results[4].find("gave up") != std::string::npos && hooks_running == 0 &&
                  skips.skipped == 2 && tracing.writer().event_count() > 0;
  return ok ? 0 : 1;
}
