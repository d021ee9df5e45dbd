#pragma once
// The typed errors a dispatch or a registration ends with. Each names the slot it concerns.
// (Their code, which is the same for every slot: <hookset/impl/errors.ipp>.)

#include <exception>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <hookset/coro/config.hpp>
#include <hookset/hook_id.hpp>

namespace hookset {

namespace detail {

// How messages name a registration: 'its name', else #its id.
std::string hook_label(HookId hook, const std::string& name);

// What a failure says: its what(), or nothing (no exception, or not a std::exception).
std::optional<std::string> exception_what(const std::exception_ptr& error);
inline constexpr const char* not_a_std_exception = "an exception not derived from std::exception";
// The same as text: its what(), else not_a_std_exception. (Out of line: the text of a failure
// is a cold path, which a template that reports one - a verdict's failed hook - calls.)
std::string exception_text(const std::exception_ptr& error);

}  // namespace detail

// Base of the errors a dispatch itself raises (not the hooks' own exceptions, which propagate
// as they are unless a failure policy says otherwise).
class DispatchError : public std::runtime_error {
 public:
  DispatchError(std::string slot_name, const std::string& message);
  DispatchError(const DispatchError&) = default;
  DispatchError(DispatchError&&) = default;
  DispatchError& operator=(const DispatchError&) = default;
  DispatchError& operator=(DispatchError&&) = default;
  // Out of line with separate compilation: the class's vtable and type_info are then made once.
  HOOKSET_DECL ~DispatchError() override;
  std::string slot;
};

// The dispatch's stop token was triggered (by the caller, or by an Asio cancellation) before it
// completed. Every hook it started had finished when this was thrown.
class DispatchCancelled : public DispatchError {
 public:
  explicit DispatchCancelled(std::string slot_name);
  DispatchCancelled(const DispatchCancelled&) = default;
  DispatchCancelled(DispatchCancelled&&) = default;
  DispatchCancelled& operator=(const DispatchCancelled&) = default;
  DispatchCancelled& operator=(DispatchCancelled&&) = default;
  HOOKSET_DECL ~DispatchCancelled() override;
};

// A time limit expired: the dispatch's deadline, or (per_hook) the time limit of the hook
// `hook` named `hook_name`. The hook running at expiry was asked to stop and had finished when
// this was thrown. `hook` is empty when the deadline expired between hooks.
class DispatchTimeout : public DispatchError {
 public:
  DispatchTimeout(std::string slot_name, HookId hook_id, std::string name, bool hook_limit);
  DispatchTimeout(const DispatchTimeout&) = default;
  DispatchTimeout(DispatchTimeout&&) = default;
  DispatchTimeout& operator=(const DispatchTimeout&) = default;
  DispatchTimeout& operator=(DispatchTimeout&&) = default;
  HOOKSET_DECL ~DispatchTimeout() override;
  HookId hook;
  std::string hook_name;
  bool per_hook;

 private:
  static std::string describe(HookId hook, const std::string& name, bool hook_limit);
};

// A hook registered with FailClosed failed: `cause` is what it threw (or the DispatchTimeout or
// DispatchCancelled of its own time limit).
class HookFailed : public DispatchError {
 public:
  HookFailed(std::string slot_name, HookId hook_id, std::string name, std::exception_ptr error);
  HookFailed(const HookFailed&) = default;
  HookFailed(HookFailed&&) = default;
  HookFailed& operator=(const HookFailed&) = default;
  HookFailed& operator=(HookFailed&&) = default;
  HOOKSET_DECL ~HookFailed() override;
  HookId hook;
  std::string hook_name;
  std::exception_ptr cause;

 private:
  static std::string describe(HookId hook, const std::string& name,
                              const std::exception_ptr& error);
};

// A registration's `before`/`after` names a registration the slot does not have, or the
// constraints form a cycle. The set is left unchanged.
class OrderingError : public std::invalid_argument {
 public:
  OrderingError(std::string slot_name, const std::string& message);
  OrderingError(const OrderingError&) = default;
  OrderingError(OrderingError&&) = default;
  OrderingError& operator=(const OrderingError&) = default;
  OrderingError& operator=(OrderingError&&) = default;
  HOOKSET_DECL ~OrderingError() override;
  std::string slot;
};

namespace detail {

// What a dispatch fails with when the time limit of `hook` expired (the hook's failure policy
// then decides), and what it throws for a FailClosed hook's failure: made here, not in each
// slot kind's engine.
std::exception_ptr hook_time_limit_expired(std::string_view slot, HookId hook,
                                           const std::string& name);
[[noreturn]] void throw_hook_failed(std::string_view slot, HookId hook, const std::string& name,
                                    std::exception_ptr error);
// A dispatch's misuse, told by a std::logic_error: a companion type that cannot be
// default-constructed was not configured (configure<Slot>(instance)); an interceptor called
// next() a second time.
[[noreturn]] void throw_companion_not_configured(std::string_view slot);
[[noreturn]] void throw_next_called_again(std::string_view slot);

}  // namespace detail

}  // namespace hookset

#if defined(HOOKSET_HEADER_ONLY)
#include <hookset/impl/errors.ipp>
#endif
