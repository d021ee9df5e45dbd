# cmake -DEXE=<program> -DEXPECTED=<expected_output.txt> [-DACTUAL=<file>] -P check_output.cmake
#
# Runs <program>. It must exit 0; and if <EXPECTED> exists, its stdout must equal that file byte
# for byte. stderr is passed through untouched. The actual stdout is saved to <ACTUAL> for diffing.

execute_process(COMMAND "${EXE}" RESULT_VARIABLE result OUTPUT_VARIABLE actual)
get_filename_component(program "${EXE}" NAME)
if(ACTUAL)
  file(WRITE "${ACTUAL}" "${actual}")
endif()

if(NOT result EQUAL 0)
  message("${actual}")
  message(FATAL_ERROR "FAIL ${program}: exit status ${result}")
endif()

if(NOT EXISTS "${EXPECTED}")
  message("${actual}")
  message("PASS ${program}: exited 0 (no expected_output.txt to compare with)")
  return()
endif()

file(READ "${EXPECTED}" expected)
if(NOT actual STREQUAL expected)
  message("---- expected (${EXPECTED})\n${expected}---- actual\n${actual}----")
  find_program(DIFF diff)
  if(DIFF AND ACTUAL)
    execute_process(COMMAND "${DIFF}" -u "${EXPECTED}" "${ACTUAL}")
  endif()
  message(FATAL_ERROR "FAIL ${program}: stdout differs from expected_output.txt")
endif()
message("${actual}")
message("PASS ${program}: stdout matches expected_output.txt")
