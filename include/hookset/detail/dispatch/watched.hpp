#pragma once
// The watched policy's start and end: a dispatch that observers watch, or that has options, a
// hook with a time limit or interceptors, begins its bookkeeping (who observes it, its context)
// before the rules, and ends it when it completes - the frame's start_watched, one function for
// the three, entering this kind's rules through its entry points (steps.hpp), or the driver
// (end_watching). The hooks' bookkeeping is the frame's loop (frame.ipp). Also the quiet start:
// nobody watching, yet a hook that is not plain.

#include <exception>
#include <type_traits>

#include <hookset/coro/config.hpp>
#include <hookset/detail/dispatch/dispatch.hpp>

namespace hookset::detail {

template <class Dispatch>  // (the dispatch grants the policy its friendship)
class watched_policy {
  using Kind = typename Dispatch::kind;
  using output = typename Dispatch::output;
  using rules = typename Dispatch::rules;

 public:
  // Nothing to tell, nothing to stop, no interceptor, yet not every hook plain (coroutine
  // hooks, failure policies) or companions configured: the rules, with the code of the hooks'
  // watched parts at hand (a failure policy's warning).
  HOOKSET_NOINLINE static bool start_quiet(Dispatch& self) {
    self.observers_.code = self.list_ ? self.list_->watched : nullptr;
    return rules::start_snapshot(self);
  }
  // The general start: observers, options, time limits or interceptors - the frame's
  // (frame.ipp), which enters this kind's rules or interceptors through its entry points. (Out
  // of line, a jump to the frame's: called from await_ready with the dispatch itself, GCC lays
  // out every dispatch's call site as before; calling the frame there cost keyed and Asio rows
  // an instruction.)
  HOOKSET_NOINLINE static bool start(Dispatch& self) {
    return self.start_watched(Dispatch::bookkept_steps);
  }

  // The dispatch is over (with `error`, or not): tells the observers, stops its timers.
  HOOKSET_ALWAYS_INLINE static void complete(Dispatch& self,
                                             const std::exception_ptr& error) noexcept {
    if (self.flags_ & Dispatch::watched) [[unlikely]]
      self.end_watching(error, &report_result);  // (the frame's: one copy for every kind)
  }

  // The dispatch's result, for observers that asked for values (events.hpp).
  static void report_result(dispatch_frame& frame) noexcept {
    Dispatch& self = static_cast<Dispatch&>(frame);
    if constexpr (Kind::has_producer) {
      if (self.output_)
        self.observers_.template tell_result<Kind::is_pipeline>(self.slot_->name, *self.output_);
    } else if constexpr (!std::is_void_v<output>) {
      if (self.value_)
        self.observers_.template tell_result<Kind::is_pipeline>(self.slot_->name, *self.value_);
    }
  }
};

}  // namespace hookset::detail
