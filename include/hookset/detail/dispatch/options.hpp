#pragma once
// The options of a dispatch that has not started (dispatch.hpp derives from this face): a stop
// token, a deadline or timeout, an executor, what to keep alive, a watch on its outputs, the
// context an adapter lends it, and the attribution of its result. They only fill the dispatch's
// context - the engine reads them once, when the dispatch starts - so they are a face of their own,
// not part of the engine.

#include <memory>
#include <type_traits>
#include <utility>

#include <hookset/attributed.hpp>
#include <hookset/call_options.hpp>
#include <hookset/coro/executor.hpp>
#include <hookset/coro/stop_token.hpp>
#include <hookset/detail/chrono.hpp>
#include <hookset/detail/diagnostics.hpp>
#include <hookset/detail/dispatch/context.hpp>
#include <hookset/detail/dispatch/holders.hpp>

namespace hookset::detail {

// The members that give a dispatch its call options, on the dispatch not started (call.hpp) and on
// the engine's awaitable alike: each fills the options Derived::options() returns (making them on
// first use) and returns the dispatch, so that the options chain.
template <class Derived>
class call_option_members {
 public:
  // Gives this dispatch a stop token, a deadline and an executor (call_options.hpp).
  Derived&& with(CallOptions options) && {
    self().options() = std::move(options);
    return std::move(self());
  }
  Derived&& with_stop_token(stop_token token) && {
    self().options().stop_token = std::move(token);
    return std::move(self());
  }
  Derived&& with_deadline(std::chrono::steady_clock::time_point deadline) && {
    self().options().deadline = deadline;
    return std::move(self());
  }
  template <class Rep, class Period>
  Derived&& with_timeout(std::chrono::duration<Rep, Period> timeout) && {
    self().options().timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(timeout);
    return std::move(self());
  }
  Derived&& on(Executor& executor) && {
    self().options().executor = &executor;
    return std::move(self());
  }

 private:
  Derived& self() noexcept { return static_cast<Derived&>(*this); }
};

template <class Dispatch>
class dispatch_options;
template <class Kind, class Params>  // (the dispatch grants this face its friendship)
class dispatch_options<dispatch<Kind, Params>>
    : public call_option_members<dispatch<Kind, Params>> {
  using Dispatch = dispatch<Kind, Params>;

 public:
  // Keeps `owner` (what the hook list owner belongs to: a shared set's version) alive for as
  // long as the dispatch.
  Dispatch&& keeping(std::shared_ptr<const void> owner) && {
    Dispatch& self = this->self();
    if (self.flags_ & Dispatch::keeps_owner) self.owner_kept_.destroy();
    self.owner_kept_.emplace(std::move(owner));
    self.flags_ |= Dispatch::keeps_owner;
    return std::move(self);
  }

  // Reports each output to `watch` as it is made (a tripwire's guard dispatch); only for slots
  // whose aggregate takes attributed outputs (verdict slots). `watch` outlives the dispatch.
  template <class Result>
  void watch_outputs(output_watch<Result>& watch) & {
    static_assert(Dispatch::attributed && std::is_same_v<Result, typename Dispatch::result>,
                  "hookset: only a slot whose Aggregate takes attributed outputs "
                  "(a verdict slot) reports its outputs as they are made");
    self().context().watch(&watch);
  }

  // This dispatch, its result attributed to the registration that produced it: an awaitable
  // of Attributed<output> (docs/semantics.md, section 4). Fold, chain and Singleton slots; the
  // options above combine with it before or after.
  auto with_attribution() && requires(!is_attributing<Kind>) {
    using output = typename Kind::output;
    if constexpr (Kind::is_void) {
      [[maybe_unused]] constexpr bool reported = report_attributed_void<Kind>();  // our error first
      return ill_formed_slot_dispatch<void>{};
    } else if constexpr (Kind::has_aggregate) {
      [[maybe_unused]] constexpr bool reported = report_attributed_aggregate<Kind>();
      return ill_formed_slot_dispatch<Attributed<output>>{};
    } else if constexpr (Kind::is_pipeline) {
      [[maybe_unused]] constexpr bool reported = report_attributed_pipeline<Kind>();
      return ill_formed_slot_dispatch<Attributed<output>>{};
    } else {
      return dispatch<attributing<Kind>>(converting_dispatch{}, std::move(self()));
    }
  }

  // The options given so far (creating empty ones), for adapters that add their own.
  CallOptions& options() & { return self().context().options(); }

  // Runs this dispatch under `context`, which the caller (an adapter's operation, keeping it
  // beside the dispatch) owns and keeps alive until the dispatch is destroyed: the options given
  // so far move into it, and the dispatch allocates no context of its own.
  void run_under(dispatch_context& context) & noexcept {
    Dispatch& self = this->self();
    if (self.has_context()) {
      context.options() = std::move(self.context_->options());
      self.drop_context();
    }
    context.lend();
    self.set_context(&context);
  }

 private:
  Dispatch& self() noexcept { return static_cast<Dispatch&>(*this); }
};

}  // namespace hookset::detail
