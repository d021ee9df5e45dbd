#pragma once
// Registrations' code that does not depend on the hook's type (detail/hook_call.hpp): compiled
// once with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <memory>
#include <stdexcept>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/hook_call.hpp>

namespace hookset::detail {

HOOKSET_DECL void check_interceptor_options(const HookOptions& options) {
  if (options.timeout || options.on_failure)
    throw std::invalid_argument(
        "hookset: an interceptor takes no time limit nor failure policy (HookOptions::timeout, "
        "HookOptions::on_failure): bound the dispatch (CallOptions) or its hooks instead");
}

HOOKSET_NOINLINE HOOKSET_DECL hook_entry
make_entry(void* object, std::shared_ptr<const void> owner, HookOptions&& options,
           FailurePolicy slot_policy, hook_entry::erased_fn sync, hook_entry::erased_fn async,
           const void* suspended_driver, bool validates, const void* interceptor_code) {
  auto record = std::make_shared<hook_record>();
  record->id = HookId::next();
  record->priority = options.priority.value;
  record->validates = validates;
  record->name = std::move(options.name);
  record->timeout = options.timeout;
  record->interceptor_code = interceptor_code;
  if (options.timeout || interceptor_code) record->make_context = &make_dispatch_context;
  record->before = std::move(options.before);
  record->after = std::move(options.after);
  record->owner = std::move(owner);
  record->suspended_driver = suspended_driver;

  hook_entry entry;
  entry.object = object;
  entry.on_failure = options.on_failure.value_or(slot_policy);
  entry.sync = sync;
  entry.async = async;
  entry.quiet = !record->timeout && entry.on_failure == FailurePolicy::propagate;
  entry.plain = sync && entry.quiet;
  if (!entry.quiet) record->watched = &watched_code;
  entry.record = std::move(record);
  return entry;
}
HOOKSET_NOINLINE HOOKSET_DECL hook_entry make_entry(void* object, std::shared_ptr<const void> owner,
                                                    Priority priority, FailurePolicy slot_policy,
                                                    const watched_functions* watched,
                                                    hook_entry::erased_fn sync,
                                                    hook_entry::erased_fn async,
                                                    const void* suspended_driver, bool validates) {
  auto record = std::make_shared<hook_record>();
  record->id = HookId::next();
  record->priority = priority.value;
  record->validates = validates;
  record->owner = std::move(owner);
  record->suspended_driver = suspended_driver;

  hook_entry entry;
  entry.object = object;
  entry.on_failure = slot_policy;
  entry.sync = sync;
  entry.async = async;
  entry.quiet = slot_policy == FailurePolicy::propagate;
  entry.plain = sync && entry.quiet;
  record->watched = watched;
  entry.record = std::move(record);
  return entry;
}

// (Inline as declared, in header-only mode; never inlined. Every member, as the implicit copy
// would: a member added to hook_entry is added here.)
hook_entry::hook_entry(const hook_entry& other) noexcept
    : object(other.object),
      sync(other.sync),
      async(other.async),
      quiet(other.quiet),
      plain(other.plain),
      on_failure(other.on_failure),
      record(other.record) {}
hook_entry& hook_entry::operator=(const hook_entry& other) noexcept {
  hook_entry copy(other);
  return *this = std::move(copy);
}
hook_entry::~hook_entry() {}

}  // namespace hookset::detail
