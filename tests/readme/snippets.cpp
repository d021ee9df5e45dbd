// The README's calls with options, verbatim, run in every test stage - AddressSanitizer included,
// where the spelling GCC 12 gets wrong (a braced temporary inside a co_await operand, destroyed
// twice) is a heap-use-after-free. The first test checks that README.md still shows exactly
// these lines, so the docs cannot drift to a spelling this file does not run.
#include "hookset_catch.hpp"
#include "test_support.hpp"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include <hookset/hookset.hpp>

using namespace std::chrono_literals;

namespace {

// The README's slots (its ToolCall holds strings: a double destruction is visible to ASan).
struct ToolCall {
  std::string tool;
  std::string arguments;
};
struct ToolResult {
  std::string output;
};
struct Abort {
  std::string why;
};
struct CheckToolCall
    : hookset::Slot<ToolResult(ToolCall), hookset::Pipeline, hookset::Terminals<Abort>> {
  static ToolResult default_impl(const ToolCall& call) { return {"ran " + call.tool}; }
};
struct ChooseModel : hookset::Slot<std::optional<std::string>(std::string_view task),
                                   hookset::Fallback, hookset::Chain<hookset::FirstSuccess>> {
  static hookset::Task<std::optional<std::string>> default_impl(std::string_view) {
    co_return "small";
  }
};
using AppHooks = hookset::HookSet<CheckToolCall, ChooseModel>;

constexpr std::string_view readme_lines[] = {
    "auto check = "
    "hooks.call<CheckToolCall>(call).with_stop_token(stop.get_token()).with_timeout(2s);",
    "auto verdict = co_await std::move(check);",
    "auto model = hookset::sync_wait(hooks.call<ChooseModel>(task).with_timeout(500ms));",
};

// README lines 1 and 2, verbatim.
hookset::Task<std::string> check_with_options(AppHooks& hooks, hookset::stop_source& stop,
                                              ToolCall call) {
  auto check = hooks.call<CheckToolCall>(call).with_stop_token(stop.get_token()).with_timeout(2s);
  auto verdict = co_await std::move(check);
  co_return verdict.completed() ? verdict.output().output : std::string(verdict.reason());
}
// README line 3, verbatim.
std::optional<std::string> choose_with_timeout(AppHooks& hooks, std::string_view task) {
  auto model = hookset::sync_wait(hooks.call<ChooseModel>(task).with_timeout(500ms));
  return model;
}

// A coroutine hook that waits until its dispatch is stopped.
hookset::Task<void> wait_until_stopped(std::atomic<bool>& waiting) {
  const hookset::stop_token token = co_await hookset::current_stop_token();
  test_support::until_stopped stopped{token};
  waiting = true;
  co_await stopped;
}

}  // namespace

TEST_CASE("README.md shows the calls with options that this file runs") {
  const auto readme =
      std::filesystem::path(__FILE__).parent_path().parent_path().parent_path() / "README.md";
  std::ifstream file(readme);
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  for (std::string_view line : readme_lines) {
    INFO(line);
    CHECK(text.str().find(line) != std::string::npos);
  }
}

TEST_CASE("README: a dispatch built with a stop token and a timeout, then co_awaited") {
  AppHooks hooks;
  hookset::stop_source stop;
  ToolCall call{"fs_read", std::string(64, 'a')};  // (long strings: on the heap)
  CHECK(hookset::sync_wait(check_with_options(hooks, stop, call)) == "ran fs_read");
  hooks.add<CheckToolCall>([](const ToolCall& c) -> hookset::decision_t<CheckToolCall> {
    if (c.tool == "shell") return hookset::reject("no shell");
    return hookset::pass();
  });
  call.tool = "shell";
  CHECK(hookset::sync_wait(check_with_options(hooks, stop, call)) == "no shell");
}

TEST_CASE("README: the stop token reaches the running hook, and the dispatch ends cancelled") {
  AppHooks hooks;
  std::atomic<bool> waiting{false};
  hooks.add<CheckToolCall>(
      [&](const ToolCall&) -> hookset::Task<hookset::decision_t<CheckToolCall>> {
        co_await wait_until_stopped(waiting);
        co_return hookset::pass();
      });
  hookset::stop_source stop;
  std::thread canceller([&] {
    while (!waiting) std::this_thread::yield();
    stop.request_stop();
  });
  CHECK_THROWS_AS(hookset::sync_wait(
                      check_with_options(hooks, stop, ToolCall{"fs_read", std::string(64, 'b')})),
                  hookset::DispatchCancelled);
  canceller.join();
}

TEST_CASE("README: sync_wait of a dispatch with a timeout ends in DispatchTimeout") {
  AppHooks hooks;
  CHECK(choose_with_timeout(hooks, "anything") == "small");
  std::atomic<bool> waiting{false};
  hooks.add<ChooseModel>([&](std::string_view) -> hookset::Task<std::optional<std::string>> {
    co_await wait_until_stopped(waiting);
    co_return "large";
  });
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(choose_with_timeout(hooks, "summarize a book"), hookset::DispatchTimeout);
  CHECK(std::chrono::steady_clock::now() - start >= 500ms);
}
