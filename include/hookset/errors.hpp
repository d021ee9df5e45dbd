#pragma once
// The typed errors a dispatch or a registration ends with. Each names the slot it concerns.

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <hookset/hook_id.hpp>

namespace hookset {

namespace detail {

// How messages name a registration: 'its name', else #its id.
inline std::string hook_label(HookId hook, const std::string& name) {
  return name.empty() ? "#" + std::to_string(hook.value()) : "'" + name + "'";
}

// What a failure says: its what(), or nothing for an exception not derived from std::exception
// (or no exception).
inline std::optional<std::string> exception_what(const std::exception_ptr& error) {
  if (!error) return std::nullopt;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return std::string(e.what());
  } catch (...) {
    return std::nullopt;
  }
}
inline constexpr const char* not_a_std_exception = "an exception not derived from std::exception";

}  // namespace detail

// Base of the errors a dispatch itself raises (not the hooks' own exceptions, which propagate
// as they are unless a failure policy says otherwise).
class DispatchError : public std::runtime_error {
 public:
  DispatchError(std::string slot_name, const std::string& message)
      : std::runtime_error("hookset: slot " + slot_name + ": " + message),
        slot(std::move(slot_name)) {}
  std::string slot;
};

// The dispatch's stop token was triggered (by the caller, or by an Asio cancellation) before it
// completed. Every hook it started had finished when this was thrown.
class DispatchCancelled : public DispatchError {
 public:
  explicit DispatchCancelled(std::string slot_name)
      : DispatchError(std::move(slot_name), "dispatch cancelled") {}
};

// A time limit expired: the dispatch's deadline, or (per_hook) the time limit of the hook
// `hook` named `hook_name`. The hook running at expiry was asked to stop and had finished when
// this was thrown. `hook` is empty when the deadline expired between hooks.
class DispatchTimeout : public DispatchError {
 public:
  DispatchTimeout(std::string slot_name, HookId hook_id, std::string name, bool hook_limit)
      : DispatchError(std::move(slot_name), describe(hook_id, name, hook_limit)),
        hook(hook_id),
        hook_name(std::move(name)),
        per_hook(hook_limit) {}
  HookId hook;
  std::string hook_name;
  bool per_hook;

 private:
  static std::string describe(HookId hook, const std::string& name, bool hook_limit) {
    std::string text = hook_limit ? "the time limit of hook " : "deadline expired";
    if (hook_limit || hook) {
      if (!hook_limit) text += " while hook ";
      text += detail::hook_label(hook, name);
      text += hook_limit ? " expired" : " ran";
    }
    return text;
  }
};

// A hook registered with FailClosed failed: `cause` is what it threw (or the DispatchTimeout or
// DispatchCancelled of its own time limit).
class HookFailed : public DispatchError {
 public:
  HookFailed(std::string slot_name, HookId hook_id, std::string name, std::exception_ptr error)
      : DispatchError(std::move(slot_name), describe(hook_id, name, error)),
        hook(hook_id),
        hook_name(std::move(name)),
        cause(std::move(error)) {}
  HookId hook;
  std::string hook_name;
  std::exception_ptr cause;

 private:
  static std::string describe(HookId hook, const std::string& name,
                              const std::exception_ptr& error) {
    std::string text = "hook " + detail::hook_label(hook, name) + " failed (fail-closed)";
    if (error) text += ": " + detail::exception_what(error).value_or(detail::not_a_std_exception);
    return text;
  }
};

// A registration's `before`/`after` names a registration the slot does not have, or the
// constraints form a cycle. The set is left unchanged.
class OrderingError : public std::invalid_argument {
 public:
  OrderingError(std::string slot_name, const std::string& message)
      : std::invalid_argument("hookset: slot " + slot_name + ": " + message),
        slot(std::move(slot_name)) {}
  std::string slot;
};

}  // namespace hookset
