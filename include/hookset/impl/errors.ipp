#pragma once
// The code of hookset's errors (errors.hpp): the same for every slot, so compiled once with
// HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/errors.hpp>

namespace hookset {

namespace detail {

HOOKSET_NOINLINE HOOKSET_DECL std::string hook_label(HookId hook, const std::string& name) {
  return name.empty() ? "#" + std::to_string(hook.value()) : "'" + name + "'";
}

// A failure's what(), read by rethrowing it: each of the two below rethrows and makes the string
// it returns - assigned to one, GCC inlined 0.7 KB of a string's assignment (in a verdict slot's).
HOOKSET_NOINLINE HOOKSET_DECL std::optional<std::string> exception_what(
    const std::exception_ptr& error) {
  if (!error) return std::nullopt;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return std::optional<std::string>(std::in_place, e.what());
  } catch (...) {
    return std::nullopt;
  }
}

HOOKSET_NOINLINE HOOKSET_DECL std::string exception_text(const std::exception_ptr& error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
  }
  return not_a_std_exception;
}

}  // namespace detail

HOOKSET_NOINLINE HOOKSET_DECL DispatchError::DispatchError(std::string slot_name,
                                                           const std::string& message)
    : std::runtime_error("hookset: slot " + slot_name + ": " + message),
      slot(std::move(slot_name)) {}
HOOKSET_DECL DispatchError::~DispatchError() = default;

HOOKSET_NOINLINE HOOKSET_DECL DispatchCancelled::DispatchCancelled(std::string slot_name)
    : DispatchError(std::move(slot_name), "dispatch cancelled") {}
HOOKSET_DECL DispatchCancelled::~DispatchCancelled() = default;

HOOKSET_NOINLINE HOOKSET_DECL DispatchTimeout::DispatchTimeout(std::string slot_name,
                                                               HookId hook_id, std::string name,
                                                               bool hook_limit)
    : DispatchError(std::move(slot_name), describe(hook_id, name, hook_limit)),
      hook(hook_id),
      hook_name(std::move(name)),
      per_hook(hook_limit) {}
HOOKSET_DECL DispatchTimeout::~DispatchTimeout() = default;

HOOKSET_NOINLINE HOOKSET_DECL std::string DispatchTimeout::describe(HookId hook,
                                                                    const std::string& name,
                                                                    bool hook_limit) {
  std::string text = hook_limit ? "the time limit of hook " : "deadline expired";
  if (hook_limit || hook) {
    if (!hook_limit) text += " while hook ";
    text += detail::hook_label(hook, name);
    text += hook_limit ? " expired" : " ran";
  }
  return text;
}

HOOKSET_NOINLINE HOOKSET_DECL HookFailed::HookFailed(std::string slot_name, HookId hook_id,
                                                     std::string name, std::exception_ptr error)
    : DispatchError(std::move(slot_name), describe(hook_id, name, error)),
      hook(hook_id),
      hook_name(std::move(name)),
      cause(std::move(error)) {}
HOOKSET_DECL HookFailed::~HookFailed() = default;

HOOKSET_NOINLINE HOOKSET_DECL std::string HookFailed::describe(HookId hook, const std::string& name,
                                                               const std::exception_ptr& error) {
  std::string text = "hook " + detail::hook_label(hook, name) + " failed (fail-closed)";
  if (error) text += ": " + detail::exception_text(error);
  return text;
}

HOOKSET_NOINLINE HOOKSET_DECL OrderingError::OrderingError(std::string slot_name,
                                                           const std::string& message)
    : std::invalid_argument("hookset: slot " + slot_name + ": " + message),
      slot(std::move(slot_name)) {}
HOOKSET_DECL OrderingError::~OrderingError() = default;

namespace detail {

HOOKSET_NOINLINE HOOKSET_DECL std::exception_ptr hook_time_limit_expired(std::string_view slot,
                                                                         HookId hook,
                                                                         const std::string& name) {
  return std::make_exception_ptr(DispatchTimeout(std::string(slot), hook, name, true));
}

HOOKSET_NOINLINE HOOKSET_DECL void throw_hook_failed(std::string_view slot, HookId hook,
                                                     const std::string& name,
                                                     std::exception_ptr error) {
  throw HookFailed(std::string(slot), hook, name, std::move(error));
}

HOOKSET_NOINLINE HOOKSET_DECL void throw_companion_not_configured(std::string_view slot) {
  throw std::logic_error("hookset: slot " + std::string(slot) +
                         ": a companion type that cannot be default-constructed must be "
                         "configured with configure<Slot>(instance) before dispatching");
}

HOOKSET_NOINLINE HOOKSET_DECL void throw_next_called_again(std::string_view slot) {
  throw std::logic_error("hookset: slot " + std::string(slot) +
                         ": an interceptor called next() more than once");
}

}  // namespace detail

}  // namespace hookset
