#pragma once
// What a registration may say about its hook: a name, a priority, a time limit and a failure
// policy, in one struct:
//
//   set.add<ModerateOutput>(moderation, {.name = "moderation", .priority = hookset::Priority{-10},
//                                        .timeout = 200ms, .on_failure = hookset::FailClosed});
//
// `set.add<S>(hook, hookset::Priority{n})` remains the short form for a priority alone.

#include <optional>
#include <string>
#include <vector>

#include <hookset/detail/chrono.hpp>
#include <hookset/hook_id.hpp>

namespace hookset {

// What a failure of one hook - an exception it throws, its time limit expiring, or its own
// cancellation - does to the dispatch that runs it.
enum class FailurePolicy : unsigned char {
  propagate,    // the dispatch fails with the hook's own exception (a timeout: DispatchTimeout)
  fail_open,    // reported to the observers; the dispatch goes on as if the hook had not run
  fail_closed,  // the dispatch fails with HookFailed naming the slot, the hook and the cause
};
inline constexpr FailurePolicy Propagate = FailurePolicy::propagate;
inline constexpr FailurePolicy FailOpen = FailurePolicy::fail_open;
inline constexpr FailurePolicy FailClosed = FailurePolicy::fail_closed;

struct HookOptions {
  // Shown to observers and in errors; what `before`/`after` of other registrations refer to.
  std::string name{};
  Priority priority{};
  // The hook's own time limit, counted from when it starts; none when empty. On expiry the
  // hook is asked to stop through its stop token and the failure policy decides.
  std::optional<std::chrono::nanoseconds> timeout{};
  // Empty: the slot's policy (`static constexpr hookset::FailurePolicy on_failure` in the
  // slot), else Propagate.
  std::optional<FailurePolicy> on_failure{};
  // Run before / after the registrations of the same slot with these names (in addition to
  // priorities). Resolved when registering: an unknown name or a cycle throws OrderingError.
  std::vector<std::string> before{};
  std::vector<std::string> after{};
};

}  // namespace hookset
