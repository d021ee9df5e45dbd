// Sets shared between threads.
//  1. A frozen set (HookSet::freeze()) handed to a thread pool: four workers dispatch it with no
//     lock at all; it cannot change under them.
//  2. A SharedHookSet: the workers keep dispatching while a "config reloader" thread publishes
//     new versions of the content filters; each dispatch runs on exactly one version.
// The program prints what it checked and exits non-zero if a check fails.
#include <hookset/hookset.hpp>

#include <atomic>
#include <cstddef>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

// Each filter says which rule set (version) it belongs to and whether the text passes.
struct Verdicts {
  std::vector<std::string> operator()(std::vector<std::string> verdicts) const { return verdicts; }
};
struct FilterContent
    : hookset::Slot<std::string(std::string_view text), hookset::Always,
                    hookset::Aggregate<Verdicts>, hookset::Output<std::vector<std::string>>> {
  static std::string default_impl(std::string_view) { return "base:ok"; }
};
using Filters = hookset::HookSet<FilterContent>;

// The filters of rule set `version`: `version % 3 + 1` of them, each blocking one word.
Filters rules(int version) {
  Filters filters;
  const char* words[] = {"spam", "scam", "phish"};
  for (int i = 0; i <= version % 3; ++i)
    filters.add<FilterContent>([version, word = std::string(words[i])](std::string_view text) {
      return "v" + std::to_string(version) +
             (text.find(word) != std::string_view::npos ? ":blocked" : ":ok");
    });
  return filters;
}

// The version a dispatch's verdicts came from, or -1 if they mix versions.
int version_of(const std::vector<std::string>& verdicts) {
  std::set<std::string> versions;
  for (std::size_t i = 1; i < verdicts.size(); ++i)
    versions.insert(verdicts[i].substr(0, verdicts[i].find(':')));
  if (versions.size() != 1 ||
      verdicts.size() != static_cast<std::size_t>(std::stoi(versions.begin()->substr(1)) % 3 + 2))
    return -1;
  return std::stoi(versions.begin()->substr(1));
}

}  // namespace

int main() {
  bool ok = true;
  const std::vector<std::string_view> texts = {"hello", "buy spam now", "a scam", "phish here"};

  // 1. A frozen set and a thread pool.
  const auto frozen = rules(2).freeze();
  std::vector<std::vector<std::string>> expected;
  for (std::string_view text : texts)
    expected.push_back(hookset::sync_wait(frozen.call<FilterContent>(text)));
  std::atomic<int> mismatches{0};
  {
    std::vector<std::thread> pool;
    for (int worker = 0; worker < 4; ++worker)
      pool.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) {
          const std::size_t t = static_cast<std::size_t>(i) % texts.size();
          if (hookset::sync_wait(frozen.call<FilterContent>(texts[t])) != expected[t]) ++mismatches;
        }
      });
    for (std::thread& worker : pool) worker.join();
  }
  std::cout << "frozen set: 4 workers x 1000 dispatches, answers as on one thread: "
            << (mismatches == 0 ? "yes" : "no") << '\n';
  ok = ok && mismatches == 0;

  // 2. A shared set, updated while the workers dispatch.
  hookset::SharedHookSet<FilterContent> shared(rules(0));
  std::atomic<bool> reloading{true};
  std::atomic<int> mixed{0}, dispatches{0};
  {
    std::vector<std::thread> pool;
    for (int worker = 0; worker < 4; ++worker)
      pool.emplace_back([&] {
        while (reloading) {
          if (version_of(hookset::sync_wait(shared.call<FilterContent>("buy spam now"))) < 0)
            ++mixed;
          ++dispatches;
        }
      });
    std::thread reloader([&] {
      for (int version = 1; version <= 50; ++version) {
        shared.publish(rules(version));
        std::this_thread::yield();
      }
      reloading = false;
    });
    reloader.join();
    for (std::thread& worker : pool) worker.join();
  }
  const int latest = version_of(hookset::sync_wait(shared.call<FilterContent>("hello")));
  std::cout << "shared set: 50 versions published while 4 workers dispatched; every dispatch saw "
               "one version: "
            << (mixed == 0 && dispatches > 0 ? "yes" : "no") << "; now on version " << latest
            << '\n';
  ok = ok && mixed == 0 && dispatches > 0 && latest == 50 && shared.version() == 50;
  return ok ? 0 : 1;
}
