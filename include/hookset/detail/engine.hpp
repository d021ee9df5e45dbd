#pragma once
// The dispatch engine, split by concern over detail/dispatch/:
//   call.hpp            what set.call<S>(args...) returns: the inputs alone, which become the
//                       awaitable when the dispatch starts (sync_wait's path: no state at all
//                       for a dispatch that is its synchronous default alone)
//   dispatch.hpp        the awaitable: reads the run-time facts once, holds the state
//   frame.hpp           the state that names no type of the slot (a base), the watched start
//                       (begin, rules, end) and the loop with bookkeeping over the kind's entry
//                       points (steps.hpp), compiled once
//   rules.hpp           start / take_output / finish, what the outputs mean (pipeline_rules.hpp:
//                       a Pipeline's decisions; collect.hpp: an aggregate's outputs collected)
//   hook_loop.hpp       the hooks from next_ on: the plain stretch inline, the rest in the
//                       frame's loop; plain_loops.hpp: the hand-written loops of the plain policy
//   driver.hpp          a dispatch that had to wait; concurrent.hpp: the concurrent window
//   intercept.hpp       the interceptors around the dispatch
//   options.hpp         the options of a dispatch not started (a face)
//
// Every step returns true when the dispatch is complete and false when it left an awaitable
// pending (an asynchronous default, hook or companion), naming in `resume_` the step that takes
// its value. await_ready() runs the steps synchronously - the whole dispatch when nothing
// suspends: no frame, no allocation, no suspension - and a dispatch that must wait suspends into
// a small driver coroutine that awaits the pending awaitable - at one place, whatever it is -
// takes its outcome and calls `resume_`, until done. The synchronous run and the driver call
// the very same steps: no rule exists twice.

#include <hookset/detail/dispatch/attribution.hpp>     // IWYU pragma: export
#include <hookset/detail/dispatch/call.hpp>            // IWYU pragma: export
#include <hookset/detail/dispatch/concurrent.hpp>      // IWYU pragma: export
#include <hookset/detail/dispatch/dispatch.hpp>        // IWYU pragma: export
#include <hookset/detail/dispatch/driver.hpp>          // IWYU pragma: export
#include <hookset/detail/dispatch/hook_loop.hpp>       // IWYU pragma: export
#include <hookset/detail/dispatch/intercept.hpp>       // IWYU pragma: export
#include <hookset/detail/dispatch/pipeline_rules.hpp>  // IWYU pragma: export
#include <hookset/detail/dispatch/plain_loops.hpp>     // IWYU pragma: export
#include <hookset/detail/dispatch/rules.hpp>           // IWYU pragma: export
#include <hookset/detail/dispatch/steps.hpp>           // IWYU pragma: export
#include <hookset/detail/dispatch/watched.hpp>         // IWYU pragma: export
