# The include budget: what including hookset's core headers costs every file of a user's, in
# preprocessed lines on top of the standard headers hookset's interface needs anyway.
#
#   cmake -DCXX=<compiler> [-DCOMPILER_ID=<CMake's compiler id>] -DINCLUDE_DIR=<include/>
#         -DWORK_DIR=<scratch dir> -P include_budget.cmake
#
# For each header below, preprocesses (-std=c++20 -E) a file that includes the standard baseline
# and a file that includes the baseline and the header, and fails when the difference - the lines
# hookset adds - exceeds the header's budget. The budgets are recorded for GCC with its libstdc++
# (what a header pulls in differs between standard libraries, and a little between compilers);
# with another compiler or standard library it prints "SKIP: ..." (CTest reports it skipped).
# Growth past a budget is a decision: raise the number here, in the same commit as the reason, and
# update the table in docs/performance.md#include-cost.

# The standard headers whose types appear in hookset's interface: every file that uses hookset
# has them anyway, so they are the baseline, not hookset's cost. For std::chrono that is
# <bits/chrono.h>, the clocks and durations (detail/chrono.hpp), not <chrono>: with <chrono> in
# the baseline, <sstream>, the calendar and the time zones could come back unseen (they did, with
# detail/dispatch/options.hpp, until 2026-11-29).
set(baseline_headers vector memory coroutine atomic optional string_view bits/chrono.h stop_token
                     exception stdexcept string)

# <header>=<lines hookset may add on top of the baseline>, recorded 2026-11-26 with GCC 12.2's
# libstdc++ (slot.hpp +4,889, hook_set.hpp +17,247, hookset.hpp +17,870; before the include
# clean-up hook_set.hpp added +41,396). Of hook_set.hpp's lines, about 6.8k are hookset's own and
# about 10.5k its dependencies': boost/hana/type.hpp (slot_c) +3.9k, Boost.Mp11's algorithms
# +3.3k, <variant> (pipeline results) +1.8k, <mutex>/<condition_variable> (the timer thread,
# shared sets) +1.3k.
# Raised 2026-11-27 to hook_set.hpp +17,400 and hookset.hpp +18,000 (measured +17,305 and
# +17,928): hookset's own code grew by ~60 lines (a concurrent slot acting on a failure when it
# happens, next() counted when called, a keyed interceptor's new key, the singleton ordering
# check), no new include.
# Raised again 2026-11-27 to hook_set.hpp +17,650 and hookset.hpp +18,300 (measured +17,584 and
# +18,214): the interceptor layer of unobserved dispatches (next_call, ~250 lines of the engine)
# and the coro/ headers split out of the public ones, no new standard include.
# Raised a third time 2026-11-27 to hook_set.hpp +17,750 and hookset.hpp +18,380 (measured
# +17,708 and +18,338): string keys hashed and compared a word at a time (~45 lines), the
# engine split over detail/dispatch/ (~15: each file's includes), a dispatch that completes at
# once as an Asio operation (~20), no new standard include.
# Raised 2026-11-27 to hook_set.hpp +17,875 and hookset.hpp +18,615 (measured +17,845 and
# +18,584): attributed aggregates and failure substitution in the engine (~120 lines,
# <hookset/attributed.hpp>), and hookset.hpp's <hookset/guard.hpp> (verdict slots, ~110), no new
# standard include.
# Raised 2026-11-27 to hook_set.hpp +17,900 and hookset.hpp +18,680 (measured +17,865 and
# +18,644), merging those with the one hook loop (run_stretch), the Asio at-once path for chain
# slots and the lean interceptor/sync_wait paths of the same day (~35 lines), no new include.
# Raised 2026-11-27 to hook_set.hpp +18,100 and hookset.hpp +18,880 (measured +18,077 and
# +18,856): pipeline phases (hookset::validator, Validation, the phase in the hooks' order and
# the validators' diagnostics, add_hooks' included, ~210 lines), no new include (<optional> is
# in the baseline).
# Raised 2026-11-27 to hook_set.hpp +18,160 and hookset.hpp +19,330 (measured +18,125 and
# +19,298): attribution of fold and chain results, call<S>(...).with_attribution() (~130 lines
# of the engine, ~25 of diagnostics: +156 on each), no new include. (hookset.hpp measured
# +19,142 on main at 3a9deb8 already, over its +18,680: <hookset/tripwire.hpp>.)
# Raised 2026-11-27 to hook_set.hpp +18,380 and hookset.hpp +19,550 (measured +18,345 and +19,518):
# the three merged - tripwires (<hookset/tripwire.hpp>, <hookset/coro/launched.hpp>: ~400
# lines, <mutex> was in the baseline; the engine's output watch and the hooks' stop token under
# an enclosing one, ~60), pipeline phases and attribution.
# Raised 2026-11-28 to hook_set.hpp +18,600 and hookset.hpp +19,720 (measured +18,556 and
# +19,681), no new include: structured lifetime (one detached runner for concurrent hooks and a
# tripwire's guards and work, the tripwire's ending rules, ~60 lines net), thread_locals reached
# through out-of-line accessors under Clang and the frame pool's constinit cache (~70), Task
# awaiting a named awaitable through a pointer (GCC 12's copy, ~40), a verdict's failure (~10).
# Raised 2026-11-28 to hookset.hpp +19,760 (measured hook_set.hpp +18,590, hookset.hpp +19,721),
# no new include: separate compilation (coro/config.hpp's HOOKSET_DECL; executor.hpp,
# frame_pool.hpp and hook_clock.hpp declare what their impl/*.ipp, included at their end in
# header-only mode, defines: ~35 lines of declarations and of the .ipp files' own line markers).
# Raised 2026-11-28 to hook_set.hpp +18,790 and hookset.hpp +19,920 (measured +18,750 and
# +19,881), no new include: the errors, the observer plumbing and warn() declared in their
# headers and defined in impl/*.ipp (~160 lines: the errors' explicitly defaulted copy and move
# operations beside their out-of-line destructors, and declarations written twice).
# Raised 2026-11-28 to hook_set.hpp +18,950 and hookset.hpp +20,080 (measured +18,907 and
# +20,038), no new include: the hook lists, make_entry and the dispatch context declared in their
# headers and defined in impl/*.ipp (~155 lines). (impl/context.ipp does without <algorithm>,
# ~11k lines, for one std::min.)
# Raised 2026-11-28 to hook_set.hpp +19,040 and hookset.hpp +20,170 (measured +19,011 and
# +20,142), no new include: the hook-outcome bookkeeping (a bookkept hook's begin and conclusion:
# time limits, failure policies, events) moved out of the engine into
# detail/dispatch/hook_outcome.hpp and impl/hook_outcome.ipp, compiled once per program with
# separate compilation (~70 lines net: the new header's declarations and comments, and the
# .ipp's line markers).
# Raised 2026-11-28 to hook_set.hpp +19,200 and hookset.hpp +20,330 (measured +19,174 and
# +20,305), no new include: the dispatch driver awaits whatever is pending at one place
# (detail::erased_task in coro/task.hpp, own_await_context in coro/await_context.hpp, ~80 lines)
# and takes its outcome in ordinary functions (driver.hpp, ~60 net), and the declarations of the
# code kept out of line in both modes.
# Raised 2026-11-28 to hook_set.hpp +19,260 and hookset.hpp +20,390 (measured +19,235 and
# +20,366), no new include: a registration that names no order reaches the named-order code only
# through the list's pointer (insert_hook and insert_hook_in_named_order, hook_list.ipp), and an
# edit of a list is one call of the edit between out-of-line steps (~60 lines with comments).
# Raised 2026-11-28 to hook_set.hpp +19,570 and hookset.hpp +20,690 (measured +19,544 and
# +20,669), no new include: the code of a watched dispatch and the dispatch context are reached
# through tables of function pointers that only what turns watching on names (an observer, a
# context, a watched registration), so that a file nothing watches does not contain that code
# (~270 lines: the two tables, the inline forwarders beside the out-of-line functions they reach,
# and why).
# Raised 2026-11-28 to hook_set.hpp +19,860 and hookset.hpp +20,820 (measured +19,833 and
# +20,792): the engine includes <hookset/coro/sync_wait.hpp> (~230 lines, already part of
# hookset.hpp through task.hpp), because a dispatch's suspension names the code that waits for
# it synchronously, with the driver and the interceptor layer, through tables that only what
# can suspend or intercept names (a coroutine hook's or an interceptor's registration, an
# asynchronous default); a file whose dispatches cannot suspend does not contain that code.
# Raised 2026-11-29 to hook_set.hpp +19,900 and hookset.hpp +20,860 (measured +19,880 and
# +20,839): ~50 lines of small out-of-line functions and why they are out of line (the text of
# a pipeline decision, an attributed aggregate's element, a verdict slot's substituted output,
# the one copy of a kind's rules that its plain and watched starts share), which take 1-9 KB
# of object code off each Aggregate, Pipeline, verdict and Concurrent slot kind.
# Raised 2026-11-29 to hook_set.hpp +19,960 and hookset.hpp +20,920 (measured +19,936 and
# +20,895), no new include: await_ready tells the optimiser that a dispatch completed
# synchronously has no driver (HOOKSET_ASSUME, ~10 lines with why), which takes 2-4 instructions
# off every synchronous dispatch; the lean loops' synchronous-dispatch scope reached inline with
# Clang (lean_sync_dispatch_scope, ~15 lines); a Singleton slot's lean call (run_plain_singleton,
# ~15 lines), which takes its one-hook dispatch from 108 / 126 to 74 / 71 instructions.
# Raised 2026-11-29 to hook_set.hpp +20,040 and hookset.hpp +21,000 (measured +20,016 and
# +20,974), no new standard include: a hook's registration is one call of code that is not a
# template (detail::add_hook and hook_facts, ~60 lines), which takes a third of the object code
# off 64 registrations; detail/chrono.hpp (~15 lines), which includes libstdc++'s
# <bits/chrono.h> instead of <chrono> (the baseline has <chrono>, so its saving - <sstream>,
# the calendar and time zones - does not show here; it shows in -fsyntax-only time).
# Raised 2026-11-29 (fourth session) to hook_set.hpp +20,130 and hookset.hpp +21,090 (measured
# +20,108 and +21,071), no new standard include: detail/dispatch/frame.hpp and impl/frame.ipp,
# the part of a dispatch that does not depend on the slot's types (its state, a watched
# dispatch's begin and end) as ordinary code compiled once instead of once per slot kind
# (0.6-2 KB of object code less per kind).
# Raised 2026-11-29 (fifth session) to hook_set.hpp +20,320 and hookset.hpp +21,280 (measured
# +20,291 and +21,249), no new standard include: the hook loop with bookkeeping, the watched run
# of one hook and of plain hooks that report events moved from the engine's templates to the
# frame (impl/frame.ipp), with the kind's typed entry points as one table (detail/dispatch/
# steps.hpp) - about 0.6-1.2 KB of object code less per kind; an aggregate's plain hooks make
# their outputs in its list (collect_plain).
# Raised 2026-11-29 (sixth session) to hook_set.hpp +20,600 and hookset.hpp +21,570 (measured
# +20,561 and +21,528), no new standard include: the engine split into layers over the dispatch
# (rules, hook loop, plain loops, watched policy, driver, concurrent runner, interceptors,
# attribution, options; detail/dispatch/*.hpp), each a class of its own whose functions take the
# dispatch as `self` - the class heads, aliases and parameters of eight classes where there was
# one; dispatch.hpp includes only what it uses.
# Recounted 2026-11-29 (seventh session) over the baseline with <bits/chrono.h> instead of
# <chrono>: hook_set.hpp +20,566 and hookset.hpp +23,070 (f654dff, where options.hpp included
# <chrono>: +25,367 and +26,332). hookset.hpp's +2,500 over hook_set.hpp is <hookset/
# clog_observer.hpp>'s <iostream> (its <istream>, which <chrono>'s <sstream> used to bring):
# ClogObserver writes to std::clog, which only <iostream> declares.
# Raised 2026-11-29 (seventh session) to hook_set.hpp +20,650 and hookset.hpp +23,150 (measured
# +20,610 and +23,114), no new standard include: the dispatch's five flag bits - the frame's
# accessors of what watches a dispatch (has_context, observed, hook_events, bookkept) and the
# rules' finish_stopped, where two bits had been tested in place.
# Raised 2026-11-30 to hook_set.hpp +20,720 and hookset.hpp +23,220 (measured +20,678 and
# +23,182; 842492c +20,610 and +23,114), no new standard include: issue 39's watching rows - a
# watched dispatch's begin, rules and end as one function of the frame (start_watched) with the
# kind's entry points it needs (its rules, interceptors, result report and plain start), and the
# fold loop that counts the hooks run for observers that see only the dispatch's begin and end
# (plain_loops::run_fold_counted, ~25 lines).
# Raised 2026-11-30 (eighth session) to hook_set.hpp +20,760 and hookset.hpp +23,260 (measured
# +20,717 and +23,221), no new standard include: an aggregate with no hook collects the
# default's output in a vector made for one, the aggregate's call on outputs that own memory out
# of line, and the frame pool's rare cases behind a tail call (~40 lines).
# Raised 2026-11-30 (ninth session) to hook_set.hpp +20,800 and hookset.hpp +23,300 (measured
# +20,761 and +23,264), no new include: a failure's text out of line for the
# verdict of a failed hook, the trace observer and HookFailed (detail::exception_text, its
# declaration and its definition in impl/errors.ipp: ~15 lines).
# Raised 2026-11-30 (ninth session) to hook_set.hpp +20,880 and hookset.hpp +23,380 (measured
# +20,848 and +23,351), no new include: a verdict slot's default collected
# straight into its list (call_default with a place for the output), the list reserved in a new
# vector, one out-of-line copy each of collect and of keep_output (~85 lines with comments).
# Raised 2026-11-30 (ninth session) to hook_set.hpp +20,920 and hookset.hpp +23,420 (measured
# +20,882 and +23,385), no new include: the verdict list made with an element
# per output (next_element, the collected count, the list of one without hooks) and one
# out-of-line collect_output (~35 lines with comments).
# Raised 2026-11-30 (ninth session) to hook_set.hpp +20,970 and hookset.hpp +23,470 (measured
# +20,934 and +23,437), no new include: a hook entry's copy and destructor declared out of line
# (~10 lines), an aggregate's plain hooks counted after their stretch (~5), and rules.hpp, over
# 400 lines, split - the aggregate's collection in collect.hpp, the rules' base, with its header
# comment, includes and the rules' using-declarations (~30).
# Raised 2026-11-30 (tenth session) to hook_set.hpp +21,040 and hookset.hpp +23,540 (measured
# +21,018 and +23,521), no new include: a no-hook dispatch's default called from start_now
# (run_default_alone), a fold's default and first hook inline where the call site knows the
# default (run_fold_here, fold_first_here, fold_rest) and call_with_args without a lambda
# (~60 lines with comments), HOOKSET_KNOWN_CONSTANT (~8), one rethrow for a failure's text
# (read_exception_what, ~8).
# Raised 2026-11-30 (nested names) to hook_set.hpp +21,190 and hookset.hpp +23,700 (measured
# +21,151 and +23,662), no new standard include: named nested sets - <hookset/nested.hpp>, the
# member traits, the repeated-slot rules and the ambiguous-slot map in hook_set.hpp, the
# constructor from nested sets, nested<Name>() and the walk add_hooks and intercept_all take
# over every copy (~130 lines with comments), five diagnostics (~45),
# FrozenHookSet::nested (~8).
# Both changes above on one tree (the merge of the two): hook_set.hpp +21,270 and hookset.hpp
# +23,780 (measured +21,232 and +23,743).
# Raised 2026-11-30 (historic slots) to hook_set.hpp +21,650 and hookset.hpp +24,180 (measured
# +21,605 and +24,138), no new standard include (<mutex> and sync_wait were in already):
# Historic<N> - detail/history.hpp (the locked ring of kept calls, the per-set logs, the
# recorder and the replay of a kept call to one hook, ~150 lines with comments), history<S>(),
# clear_history<S>(), replay_history_to, extend_and_replay and the replay in add / add_hooks in
# hook_set.hpp (~130), the option's traits and its three rules and one diagnostic (~90),
# FrozenHookSet's and SharedHookSet's history (~25).
# Raised 2026-11-30 (eleventh session, plugins) to hook_set.hpp +21,300 and hookset.hpp +23,820
# (measured +21,261 and +23,785), no new include: a hook list's anchors (what keeps a plugin's
# library loaded) and their merge in extend (~15 lines), the friend that reaches a set's lists,
# the frame pool's cache adopter for the plugin check (~5), and SharedHookSet::publish with
# what the version keeps alive (~15). <hookset/plugin.hpp> itself is optional, outside
# <hookset/hookset.hpp>.
# Both on one tree (the merge of the two): hook_set.hpp +21,680 and hookset.hpp +24,220
# (measured +21,639 and +24,185).
# Raised 2026-11-30 (twelfth session, compile cost) to hook_set.hpp +21,750 and hookset.hpp
# +24,300 (measured +21,716 and +24,262), no new include: a slot's rules judged without a class
# per rule - the tests of the rules that read only the declaration as namespace-scope functions
# shared by slots declared alike, and slot_ok's stages (~60 lines with comments) - and the lazy
# probes of a hook's fit (~15).
# Raised 2026-11-30 (twelfth session) to hook_set.hpp +21,790 and hookset.hpp +24,340 (measured
# +21,754 and +24,300), no new include: a set's repeated slots found in linear time
# (all_distinct, ~20 lines with comments), the slot checks of a set in a function of their own
# and the lazy search of `contains` (~15).
# Raised 2026-11-30 (twelfth session, engine) to hook_set.hpp +22,010 and hookset.hpp +24,560
# (measured +21,972 and +24,520), no new include: what set.call<S>(...) returns is a dispatch's
# inputs alone (detail/dispatch/call.hpp, ~170 lines with comments), which make the engine's
# awaitable when the dispatch starts - sync_wait's path, the options kept in place - and the
# adapters' way to it (started_dispatch, ~10).
# Raised 2026-11-30 (thirteenth session, engine) to hook_set.hpp +22,060 and hookset.hpp +24,610
# (measured +22,036 and +24,584), no new include: a verdict kind's code made smaller by pieces out
# of line (rules.hpp, frame.hpp, errors.ipp: ~30 lines with comments), and Clang's coroutine
# rows' scoped-context helpers (task.hpp, await_context.hpp: ~20).
set(budgets
  "hookset/slot.hpp=4900"
  "hookset/hook_set.hpp=22060"
  "hookset/hookset.hpp=24610")

foreach(var CXX INCLUDE_DIR WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "include_budget.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK_DIR}")
if(DEFINED COMPILER_ID AND NOT COMPILER_ID STREQUAL "GNU")
  message("SKIP: the budgets are recorded for GCC (${COMPILER_ID} predefines other macros)")
  return()
endif()

function(preprocessed_lines out_var name)
  set(text "")
  foreach(header IN LISTS ARGN)
    string(APPEND text "#include <${header}>\n")
  endforeach()
  file(WRITE "${WORK_DIR}/${name}.cpp" "${text}")
  execute_process(
    COMMAND "${CXX}" -std=c++20 "-I${INCLUDE_DIR}" -E "${WORK_DIR}/${name}.cpp"
    OUTPUT_FILE "${WORK_DIR}/${name}.i"
    ERROR_VARIABLE errors
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "FAIL: preprocessing ${name} failed:\n${errors}")
  endif()
  # Every line counts, blank ones included, as `wc -l` counts them.
  file(READ "${WORK_DIR}/${name}.i" content)
  string(REGEX MATCHALL "\n" newlines "${content}")
  list(LENGTH newlines count)
  set(${out_var} ${count} PARENT_SCOPE)
endfunction()

preprocessed_lines(baseline_lines baseline ${baseline_headers})
file(READ "${WORK_DIR}/baseline.i" baseline_text)
if(NOT baseline_text MATCHES "/c\\+\\+/[0-9]+/vector\"")
  message("SKIP: the budgets are recorded for GCC's libstdc++; this standard library differs")
  return()
endif()

set(over "")
foreach(entry IN LISTS budgets)
  string(REPLACE "=" ";" pair "${entry}")
  list(GET pair 0 header)
  list(GET pair 1 budget)
  string(MAKE_C_IDENTIFIER "${header}" name)
  preprocessed_lines(with_header ${name} ${baseline_headers} ${header})
  math(EXPR added "${with_header} - ${baseline_lines}")
  math(EXPR permille "${with_header} * 1000 / ${baseline_lines}")
  math(EXPR whole "${permille} / 1000")
  math(EXPR frac "${permille} % 1000 + 1000")
  string(SUBSTRING "${frac}" 1 3 frac)
  set(verdict "ok")
  if(added GREATER budget)
    set(verdict "OVER BUDGET")
    list(APPEND over "${header}")
  endif()
  message("<${header}>: ${with_header} lines with the baseline (${baseline_lines}): "
          "+${added}, ${whole}.${frac}x; budget +${budget}: ${verdict}")
endforeach()

if(over)
  message(FATAL_ERROR "FAIL: over the include budget: ${over} (see tests/budget/include_budget.cmake)")
endif()
