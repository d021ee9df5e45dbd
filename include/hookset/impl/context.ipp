#pragma once
// The per-dispatch context's code (detail/dispatch/context.hpp): not a template, the same for
// every slot, so compiled once with HOOKSET_SEPARATE_COMPILATION (coro/config.hpp).

#include <atomic>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/hook_outcome.hpp>  // the code a context names (watched_code)
#include <hookset/errors.hpp>

namespace hookset::detail {

HOOKSET_NOINLINE HOOKSET_DECL void expiry_timer::arm(Executor& executor,
                                                     Executor::clock::time_point when,
                                                     hookset::stop_source source) {
  expired_ = std::make_shared<std::atomic<bool>>(false);
  timer_ = executor.start_timer(when, [expired = expired_, source = std::move(source)]() mutable {
    expired->store(true, std::memory_order_release);
    source.request_stop();
  });
}

HOOKSET_NOINLINE HOOKSET_DECL void expiry_timer::cancel() noexcept {
  if (timer_) timer_->cancel();
  timer_.reset();
}

HOOKSET_DECL dispatch_context::~dispatch_context() = default;

HOOKSET_NOINLINE HOOKSET_DECL dispatch_context* make_dispatch_context(CallOptions options) {
  return new dispatch_context(std::move(options));
}

// (Each entry calls the member function of the same name; clang-format 14 cannot lay out a
// braced list of lambdas.)
// clang-format off
HOOKSET_DECL const dispatch_context::functions dispatch_context::code = {
    [](dispatch_context* context) noexcept { delete context; },
    [](const dispatch_context& context) { return context.do_inherited_options(); },
    [](dispatch_context& context, const await_context* awaiting, std::string_view slot) {
      context.do_begin(awaiting, slot);
    },
    [](const dispatch_context& context, std::string_view slot, const hook_entry* hook) {
      context.do_check(slot, hook);
    },
    [](dispatch_context& context) { context.do_arm_deadline(); },
    [](dispatch_context& context, const hook_entry& hook, bool arm) {
      context.do_begin_hook(hook, arm);
    },
    [](dispatch_context& context) { context.do_arm_hook_timer(); },
    [](dispatch_context& context) noexcept { return context.do_end_hook(); },
    [](dispatch_context& context) noexcept { context.do_end(); },
    [](dispatch_context& context) noexcept -> Executor& { return context.do_executor(); },
    [](dispatch_context& context, expiry_timer& timer, clock::time_point when,
       const hookset::stop_source& source) { timer.arm(context.do_executor(), when, source); },
    &watched_code,
};
// clang-format on

HOOKSET_DECL CallOptions dispatch_context::do_inherited_options() const {
  CallOptions inherited;
  inherited.stop_token = token_;
  inherited.deadline = deadline_;
  inherited.executor = executor_;
  return inherited;
}

HOOKSET_DECL void dispatch_context::do_begin(const await_context* awaiting, std::string_view slot) {
  executor_ = options_.executor;
  if (!executor_ && awaiting) executor_ = const_cast<Executor*>(awaiting->nearest_executor());
  if (options_.timeout) {
    const auto by_timeout = clock::now() + *options_.timeout;
    // (The earlier of the two, without <algorithm>: about 11k lines in every including file.)
    deadline_ =
        options_.deadline && *options_.deadline < by_timeout ? *options_.deadline : by_timeout;
  } else {
    deadline_ = options_.deadline;
  }
  token_ = source_.get_token();
  if (options_.stop_token.stop_possible())
    from_caller_.emplace(options_.stop_token, stop_forwarder{&source_});
  link_ = await_context{awaiting, nullptr, &token_, executor_};
  // The hooks see the dispatch's token first: it must not hide the stop token of whatever
  // awaits the dispatch (a hook of another, a tripwire's work), which they would see without
  // it. They get a token that either stops; the enclosing one does not cancel the dispatch.
  if (const hookset::stop_token* enclosing = awaiting ? awaiting->nearest_stop() : nullptr)
    if (enclosing->stop_possible() && !(*enclosing == options_.stop_token)) {
      hooks_stop_.emplace();
      hooks_token_ = hooks_stop_->get_token();
      hooks_from_dispatch_.emplace(token_, stop_forwarder{&*hooks_stop_});
      hooks_from_enclosing_.emplace(*enclosing, stop_forwarder{&*hooks_stop_});
      link_.stop = &hooks_token_;
    }
  if (deadline_ && clock::now() >= *deadline_) deadline_passed_ = true;
  do_check(slot, nullptr);
}

HOOKSET_DECL void dispatch_context::do_check(std::string_view slot, const hook_entry* hook) const {
  if (!source_.stop_requested() && !deadline_passed_ && !(deadline_ && clock::now() >= *deadline_))
    return;
  if (deadline_passed_ || deadline_timer_.expired() || (deadline_ && clock::now() >= *deadline_))
    throw DispatchTimeout(std::string(slot), hook ? hook->id() : HookId{},
                          hook ? hook->record->name : std::string(), false);
  throw DispatchCancelled(std::string(slot));
}

HOOKSET_DECL void dispatch_context::do_arm_deadline() {
  if (deadline_ && !deadline_timer_.armed())
    deadline_timer_.arm(do_executor(), *deadline_, source_);
}

HOOKSET_DECL void dispatch_context::do_begin_hook(const hook_entry& hook, bool arm) {
  hook_running_ = false;
  if (!hook.record->timeout) return;
  hook_running_ = true;
  hook_source_ = hookset::stop_source();
  hook_token_ = hook_source_.get_token();
  hook_from_dispatch_.emplace(*link_.stop, stop_forwarder{&hook_source_});
  hook_link_ = await_context{link_.parent, nullptr, &hook_token_, executor_};
  hook_started_ = clock::now();
  hook_limit_ = *hook.record->timeout;
  if (arm) do_arm_hook_timer();
}
HOOKSET_DECL void dispatch_context::do_arm_hook_timer() {
  if (hook_running_ && !hook_timer_.armed())
    hook_timer_.arm(do_executor(), hook_started_ + hook_limit_, hook_source_);
}

HOOKSET_DECL bool dispatch_context::do_end_hook() noexcept {
  if (!hook_running_) return false;
  hook_running_ = false;
  const bool expired = hook_timer_.expired() || clock::now() - hook_started_ > hook_limit_;
  hook_timer_.cancel();
  hook_from_dispatch_.reset();
  return expired && !source_.stop_requested();
}

HOOKSET_DECL void dispatch_context::do_end() noexcept {
  deadline_timer_.cancel();
  hook_timer_.cancel();
}

}  // namespace hookset::detail
