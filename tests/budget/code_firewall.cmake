# The code firewall: a file that registers and dispatches slots carries only the code of the features
# it uses. The engine reaches the code of the driver (a dispatch that suspended), of the
# synchronous wait, of the interceptor layer, of the named order, of the dispatch context and of
# watched dispatches through pointers that only what uses them sets (a coroutine hook's or an
# interceptor's registration, a registration naming an order, a time limit, an observer), so a
# file that uses none of them does not contain that code. This holds it: a regression shows as
# one of those functions in the object of a file that registers and dispatches plain
# synchronous hooks (issue 39's per-file object-code targets: benchmarks/compile_cost/object_size.py).
#
#   cmake -DCXX=<compiler> [-DCOMPILER_ID=<CMake's compiler id>] -DNM=<nm> -DINCLUDE_DIR=<include/>
#         -DSOURCE=<firewall_program.cpp> -DWORK_DIR=<scratch dir> -P code_firewall.cmake
#
# GCC -O2 only (what the targets are measured with; inlining decides what another compiler
# emits): with another compiler it prints "SKIP: ..." (CTest reports it skipped). The same
# program with HOOKSET_FIREWALL_USES_FEATURES, which uses every one of those features, must
# contain every one of the functions: that is what shows the patterns below still name them.

if(NOT COMPILER_ID STREQUAL "GNU")
  message("SKIP: the code firewall is checked with GCC (compiler: ${COMPILER_ID})")
  return()
endif()

# <what>=<regular expression over `nm -C` output>. (Of the interceptor layer, the await_resume of
# a first interceptor that is a coroutine, resume_interceptor, stays named by every dispatch: a
# direct call there saves a coroutine interceptor's dispatch 2 instructions, for 0.2 KB.)
set(firewalled
  "the driver of a suspended dispatch=::drive\\("
  "the synchronous wait of a suspended dispatch=drive_awaiter"
  "the outcome of what a dispatch awaited=take_pending_outcome"
  "the interceptor layer=start_intercepted|call_interceptor"
  "the named order=named_order"
  "the dispatch context=dispatch_context::"
  "the watched code=watched_code|dispatch_observers::do_|conclude_bookkept_hook")

file(MAKE_DIRECTORY "${WORK_DIR}")
function(symbols_of variant defines out)
  set(object "${WORK_DIR}/firewall_${variant}.o")
  execute_process(
    COMMAND "${CXX}" -std=c++20 -O2 "-I${INCLUDE_DIR}" ${defines} -c "${SOURCE}" -o "${object}"
    RESULT_VARIABLE result ERROR_VARIABLE errors)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "FAIL: compiling ${SOURCE} (${variant}) failed:\n${errors}")
  endif()
  execute_process(COMMAND "${NM}" -C "${object}" RESULT_VARIABLE result OUTPUT_VARIABLE symbols)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "FAIL: ${NM} -C ${object} failed")
  endif()
  set(${out} "${symbols}" PARENT_SCOPE)
endfunction()

symbols_of(plain "" plain)
symbols_of(features "-DHOOKSET_FIREWALL_USES_FEATURES" features)

set(failures "")
foreach(item IN LISTS firewalled)
  string(FIND "${item}" "=" at)
  string(SUBSTRING "${item}" 0 ${at} what)
  math(EXPR at "${at} + 1")
  string(SUBSTRING "${item}" ${at} -1 pattern)
  string(REGEX MATCH "[^\n]*(${pattern})[^\n]*" found "${plain}")
  if(found)
    string(SUBSTRING "${found}" 0 240 found)
    list(APPEND failures "a file of plain hooks contains ${what}: ${found}")
  else()
    message("ok: a file of plain hooks does not contain ${what}")
  endif()
  if(NOT features MATCHES "${pattern}")
    list(APPEND failures "the pattern for ${what} (${pattern}) matches nothing in the file that uses it: update the pattern")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n" failures "${failures}")
  message(FATAL_ERROR "FAIL:\n${failures}")
endif()
