#pragma once
// The entry points of a slot kind that the frame's watched start, its hook loop with bookkeeping
// and its watched run of one hook call (frame.hpp, hook_steps): what of them needs the slot's
// types - starting the rules or the interceptors, reporting the result, calling a hook, keeping
// its output until its fate is known, taking an output, finishing. The start, the loop and the
// run are the frame's, one copy for every kind.

#include <exception>
#include <utility>

#include <hookset/detail/dispatch/dispatch.hpp>

namespace hookset::detail {

template <class Kind, class... A>
const hook_steps dispatch<Kind, mp::mp_list<A...>>::bookkept_steps{
    // start_rules: the rules over the snapshot (one out-of-line copy: the plain start's too).
    [](dispatch_frame& frame) { return rules::start_snapshot(static_cast<dispatch&>(frame)); },
    // start_interceptors: through the snapshot's pointer, which its interceptors set (a file that
    // registers none for this kind does not contain the layer). Null for an attributing kind:
    // its dispatch hands a slot with interceptors to them in await_ready, before it would start
    // here.
    []() -> bool (*)(dispatch_frame&) {
      if constexpr (attributes_result) {
        return nullptr;
      } else {
        return [](dispatch_frame& frame) {
          dispatch& self = static_cast<dispatch&>(frame);
          return interceptors::code_of(*self.list_).start_in_context(self);
        };
      }
    }(),
    // start_plain: a fold's loop, counting the hooks run.
    []() -> bool (*)(dispatch_frame&) {
      if constexpr (plain_loops<dispatch>::fold_loop && companions_constructible) {
        return [](dispatch_frame& frame) {
          return plain_loops<dispatch>::run_fold_counted(static_cast<dispatch&>(frame));
        };
      } else {
        return nullptr;
      }
    }(),
    &watched_policy<dispatch>::report_result,
    // call: a synchronous hook, its output kept aside (staged_) until its fate is known.
    [](dispatch_frame& frame, const entry& hook) {
  dispatch& self = static_cast<dispatch&>(frame);
  const auto sync = sync_call_of<Kind>(hook);
  if constexpr (is_void) self.call_with_args(sync, hook.object);
  else if constexpr (Kind::is_fold)
    self.staged_.emplace(loop::call_fold(self, sync, hook.object, loop::last_for(self, hook)));
  else self.staged_.emplace(self.call_with_args(sync, hook.object));
    },
    // start: a coroutine hook's Task, pending; its outcome is the driver's (after_hook).
    [](dispatch_frame& frame, const entry& hook) {
  dispatch& self = static_cast<dispatch&>(frame);
  self.pending_value_.emplace(loop::start_async_hook(self, hook));
  self.suspend_into(pending_kind::hook, nullptr, hook.record->suspended_driver);
},
    // settle: the hook's fate - its output kept aside, made of its failure, or none.
    [](dispatch_frame& frame, const entry& hook, hook_step step, bool returned,
       const std::exception_ptr& error) {
  dispatch& self = static_cast<dispatch&>(frame);
  if constexpr (!is_void) {
    if (returned) {
      struct dropped {
        late<result>& staged;
        ~dropped() { staged.destroy(); }
      } drop{self.staged_};
      if (step == hook_step::produced) loop::keep_output(self, std::move(self.staged_.get()));
    }
  }
  if (step != hook_step::skipped) loop::count_output(self, hook, step, error);
    },
    // produce: a plain hook, whose output nothing can skip: the newest at once.
    [](dispatch_frame& frame, const entry& hook) {
  dispatch& self = static_cast<dispatch&>(frame);
  loop::call_plain(self, hook);
  ++self.produced_;
  self.produced_by(&hook);
    },
    // take, finish: the rules (out of line here: the hot loops have their own copies inline).
    []() -> progress (*)(dispatch_frame&) {
      if constexpr (judges_outputs) {
        return
            [](dispatch_frame& frame) { return rules::take_output(static_cast<dispatch&>(frame)); };
      } else {
        return nullptr;  // (a fold's, a void slot's: its output is kept, nothing to take)
      }
    }(),
    [](dispatch_frame& frame, bool stopped) {
  dispatch& self = static_cast<dispatch&>(frame);
  return stopped ? rules::finish_stopped(self) : rules::finish(self);
    },
    // run_concurrently: the first hook that suspends a concurrent dispatch - it and every later
    // one run concurrently, driven by the driver (concurrent_runner::run), which then finishes the
    // dispatch. The driver is the one that hook's registration names, as for any coroutine hook:
    // a file whose concurrent slots have only synchronous hooks does not contain it.
    []() -> void (*)(dispatch_frame&, const entry&) {
      if constexpr (Kind::is_concurrent) {
        return [](dispatch_frame& frame, const entry& hook) {
          static_cast<dispatch&>(frame).suspend_into(pending_kind::concurrent, &rules::finish,
                                                     hook.record->suspended_driver);
        };
      } else {
        return nullptr;
      }
    }(),
    substitutes, Kind::is_pipeline};

}  // namespace hookset::detail
