# Runs the libFuzzer binary for the CTest tests of tests/fuzz (CMakeLists.txt there):
#   -DFUZZER=<binary> -DSEEDS=<corpus dir> -DWORK=<dir>   fuzz for $ENV{HOOKSET_FUZZ_SECONDS} seconds
#       (default 60) on WORK/corpus, a working copy of the seeds (kept between runs: what earlier
#       runs found is fuzzed from too); crash reproducers go to WORK/artifacts/
#   -DFUZZER=<binary> -DREPLAY=<dir>                      run every file of <dir> once
# The source tree is never written to.
if(DEFINED REPLAY)
  file(GLOB _inputs LIST_DIRECTORIES false "${REPLAY}/*")
  list(FILTER _inputs EXCLUDE REGEX "/\\.[^/]*$")
  list(LENGTH _inputs _count)
  if(_count EQUAL 0)
    message(STATUS "no files in ${REPLAY}")
    return()
  endif()
  # Files only: given a directory, libFuzzer would start fuzzing instead.
  execute_process(COMMAND "${FUZZER}" ${_inputs} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "replaying ${REPLAY}: exit ${_rc}")
  endif()
  message(STATUS "${_count} regression inputs replayed")
  return()
endif()

set(_seconds 60)
if(DEFINED ENV{HOOKSET_FUZZ_SECONDS} AND NOT "$ENV{HOOKSET_FUZZ_SECONDS}" STREQUAL "")
  set(_seconds "$ENV{HOOKSET_FUZZ_SECONDS}")
endif()
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
file(GLOB _seeds LIST_DIRECTORIES false "${SEEDS}/*")
if(_seeds)
  file(COPY ${_seeds} DESTINATION "${WORK}/corpus")
endif()
# Throughput: the entropic power schedule and the symbolized "NEW_FUNC" lines each cost about half
# the executions per second with this many instrumented inline functions (measured: 64 -> 218/s).
set(_speed -entropic=0 -print_funcs=0)
message(STATUS "fuzzing for ${_seconds} s on ${WORK}/corpus")
execute_process(
  COMMAND "${FUZZER}" "${WORK}/corpus" "-max_total_time=${_seconds}" -timeout=20 -rss_limit_mb=2560
          ${_speed} -print_final_stats=1 "-artifact_prefix=${WORK}/artifacts/"
  RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a problem (exit ${_rc}); its input is in ${WORK}/artifacts/: "
                      "copy it to tests/fuzz/regressions/")
endif()
