// Keyed slots: an exact-key dispatch with 1,000 keys registered against an ordinary slot with
// the same hooks (`keyed_exact`: hookset_keyed vs hookset_plain, N hooks for the dispatched key,
// one hook for each of the 999 other keys); a key without an exact registration in a slot
// without matchers (`keyed_any`: N any-key hooks, the precomputed any-key list); and one in a
// slot with matchers (`keyed_filtered`: N glob registrations, a list filtered per dispatch).
#include "support/alloc_counter.hpp"
#include "support/common.hpp"
#include "support/peers.hpp"

#include <string>
#include <string_view>

#include <hookset/hookset.hpp>

namespace hookset_bench {
namespace {

struct KeyedFold : hookset::Slot<int(std::string_view s, std::string_view tool), hookset::Always,
                                 hookset::Keyed> {
  static int default_impl(std::string_view s, std::string_view) noexcept {
    return default_value(s);
  }
};
struct PlainFold
    : hookset::Slot<int(std::string_view s, std::string_view tool), hookset::Always> {
  static int default_impl(std::string_view s, std::string_view) noexcept {
    return default_value(s);
  }
};
using Set = hookset::HookSet<KeyedFold, PlainFold>;

inline constexpr auto keyed_hook = [](std::string_view s, std::string_view,
                                      std::optional<int> last) noexcept {
  return last.value_or(0) + static_cast<int>(s.size());
};

constexpr int key_count = 1000;
const std::string dispatched_key = "tool_0500";

std::string tool_name(int i) {
  std::string digits = std::to_string(i);
  return "tool_" + std::string(4 - digits.size(), '0') + digits;
}

std::string_view opaque_key() {
  std::string_view key = dispatched_key;
  benchmark::DoNotOptimize(key);
  return key;
}

// 1,000 keys: the dispatched one with n hooks, every other with one.
Set keyed_set(std::int64_t n) {
  Set set;
  for (int i = 0; i < key_count; ++i) {
    const std::string key = tool_name(i);
    if (key == dispatched_key) {
      for (std::int64_t j = 0; j < n; ++j) set.add<KeyedFold>(hookset::key(key), keyed_hook);
    } else {
      set.add<KeyedFold>(hookset::key(key), keyed_hook);
    }
  }
  return set;
}

void exact_keyed(benchmark::State& state, std::int64_t n) {
  const Set set = keyed_set(n);
  measure(state, expected_fold(n), [&](std::string_view s) {
    return hookset::sync_wait(set.call<KeyedFold>(s, opaque_key()));
  });
}

void exact_plain(benchmark::State& state, std::int64_t n) {
  Set set;
  for (std::int64_t j = 0; j < n; ++j) set.add<PlainFold>(keyed_hook);
  measure(state, expected_fold(n), [&](std::string_view s) {
    return hookset::sync_wait(set.call<PlainFold>(s, opaque_key()));
  });
}

// The dispatched key has no exact registration: n any-key hooks run (no matchers: the
// precomputed any-key list).
void any_keyed(benchmark::State& state, std::int64_t n) {
  Set set;
  for (int i = 0; i < key_count; ++i)
    if (tool_name(i) != dispatched_key) set.add<KeyedFold>(hookset::key(tool_name(i)), keyed_hook);
  for (std::int64_t j = 0; j < n; ++j) set.add<KeyedFold>(keyed_hook);
  measure(state, expected_fold(n), [&](std::string_view s) {
    return hookset::sync_wait(set.call<KeyedFold>(s, opaque_key()));
  });
}

// The same with n glob registrations that match it: its list is filtered at dispatch.
void filtered_keyed(benchmark::State& state, std::int64_t n) {
  Set set;
  for (int i = 0; i < key_count; ++i)
    if (tool_name(i) != dispatched_key) set.add<KeyedFold>(hookset::key(tool_name(i)), keyed_hook);
  for (std::int64_t j = 0; j < n; ++j) set.add<KeyedFold>(hookset::glob("tool_05*"), keyed_hook);
  measure(state, expected_fold(n), [&](std::string_view s) {
    return hookset::sync_wait(set.call<KeyedFold>(s, opaque_key()));
  });
}

const bool registered = [] {
  register_scenario("keyed_exact", "hookset_keyed", exact_keyed);
  register_scenario("keyed_exact", "hookset_plain", exact_plain);
  register_scenario("keyed_any", "hookset_keyed", any_keyed);
  register_scenario("keyed_filtered", "hookset_keyed", filtered_keyed);
  return true;
}();

}  // namespace
}  // namespace hookset_bench
