# cmake -DBUILD_DIR=<dir> -DTARGET=<target> -DSOURCE=<snippet.cpp> [-DCONFIG=<cfg>]
#       [-DCOMPILE_COMMANDS=<compile_commands.json>] -P check.cmake
#
# Passes only if compiling <SOURCE> as <target> FAILS and
#  - the build output matches EVERY `// EXPECT: <regex>` line of <SOURCE> (CMake regex syntax,
#    searched anywhere in the output);
#  - the first error the compiler reports is hookset's own (contains "hookset:"): misuse is
#    reported in the library's words first, not as a failure deep inside it;
#  - with a `// EXPECT-ERRORS: <n>` line, the compiler reports exactly n errors;
#  - the output matches NO `// EXPECT-NOT: <regex>` line (a false follow-on message).
# Otherwise prints the output and fails. A snippet with no EXPECT line fails, so a failure can
# never pass "by accident".

foreach(var BUILD_DIR TARGET SOURCE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check.cmake: -D${var}=... is required")
  endif()
endforeach()

file(STRINGS "${SOURCE}" expect_lines REGEX "^[ \t]*//[ \t]*EXPECT:")
set(expects "")
foreach(line IN LISTS expect_lines)
  string(REGEX REPLACE "^[ \t]*//[ \t]*EXPECT:[ \t]*" "" regex "${line}")
  string(STRIP "${regex}" regex)
  if(NOT regex STREQUAL "")
    list(APPEND expects "${regex}")
  endif()
endforeach()
if(NOT expects)
  message(FATAL_ERROR "FAIL ${SOURCE}: no '// EXPECT: <regex>' line; say what the diagnostic must contain")
endif()

# Plain ASCII quotes and no colour codes in the diagnostics the regexes are matched against.
set(ENV{LC_ALL} C)
set(ENV{LANG} C)
set(ENV{GCC_COLORS} "")
set(config_args "")
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()

# With -DCOMPILE_COMMANDS=<compile_commands.json>, the snippet's own compile command is run
# directly: no build tool, so these tests run in parallel with each other and with the rest.
# Otherwise the build tool builds <TARGET> (one at a time: tests/CMakeLists.txt locks the tree).
set(compile_command "")
if(DEFINED COMPILE_COMMANDS AND EXISTS "${COMPILE_COMMANDS}")
  file(READ "${COMPILE_COMMANDS}" database)
  string(JSON entries LENGTH "${database}")
  math(EXPR last "${entries} - 1")
  foreach(i RANGE ${last})
    string(JSON file GET "${database}" ${i} file)
    if(file STREQUAL SOURCE)
      string(JSON compile_command GET "${database}" ${i} command)
      string(JSON compile_directory GET "${database}" ${i} directory)
      break()
    endif()
  endforeach()
endif()
if(compile_command)
  separate_arguments(compile_args UNIX_COMMAND "${compile_command}")
  # The object goes to a scratch path of its own (a snippet that compiles must leave nothing in
  # the target's object directory, which the build tool owns).
  list(FIND compile_args "-o" output_index)
  if(output_index GREATER -1)
    math(EXPR output_index "${output_index} + 1")
    list(REMOVE_AT compile_args ${output_index})
    list(INSERT compile_args ${output_index} "${BUILD_DIR}/compile_fail_objects/${TARGET}.o")
    file(MAKE_DIRECTORY "${BUILD_DIR}/compile_fail_objects")
  endif()
  execute_process(
    COMMAND ${compile_args}
    WORKING_DIRECTORY "${compile_directory}"
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
else()
  execute_process(
    COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}" ${config_args}
    RESULT_VARIABLE result
    OUTPUT_VARIABLE output
    ERROR_VARIABLE output)
endif()

get_filename_component(snippet "${SOURCE}" NAME)
if(result EQUAL 0)
  message("${output}")
  message(FATAL_ERROR "FAIL ${snippet}: it compiled, but it must be rejected")
endif()

# Match against the diagnostics only: drop the build tool's own lines (Ninja's "[1/1] Building ...",
# and "FAILED: <object>" followed by the compiler command line, which names the snippet's path).
string(REGEX REPLACE "FAILED: [^\n]*\n[^\n]*\n" "" diagnostics "${output}")
string(REGEX REPLACE "\\[[0-9]+/[0-9]+\\] [^\n]*\n" "" diagnostics "${diagnostics}")

# The compiler's error lines ("<file>:<line>:<col>: error: ..." with GCC and Clang).
# (Semicolons would split the CMake list: messages contain them.)
string(REPLACE ";" "," diagnostics_as_list "${diagnostics}")
string(REGEX MATCHALL "[^\n]*: error: [^\n]*" error_lines "${diagnostics_as_list}")
list(LENGTH error_lines error_count)
set(missing "")
if(error_count EQUAL 0)
  list(APPEND missing "(no line with ': error: ')")
else()
  list(GET error_lines 0 first_error)
  if(NOT first_error MATCHES "hookset: ")
    list(APPEND missing "the first error is not hookset's own: ${first_error}")
  endif()
endif()
file(STRINGS "${SOURCE}" count_lines REGEX "^[ \t]*//[ \t]*EXPECT-ERRORS:")
if(count_lines)
  list(GET count_lines 0 count_line)
  string(REGEX REPLACE "^[ \t]*//[ \t]*EXPECT-ERRORS:[ \t]*([0-9]+).*" "\\1" expected_count "${count_line}")
  if(NOT error_count EQUAL expected_count)
    list(APPEND missing "exactly ${expected_count} error(s), but the compiler reported ${error_count}")
  endif()
endif()
foreach(regex IN LISTS expects)
  if(NOT diagnostics MATCHES "${regex}")
    list(APPEND missing "${regex}")
  endif()
endforeach()
file(STRINGS "${SOURCE}" expect_not_lines REGEX "^[ \t]*//[ \t]*EXPECT-NOT:")
set(unwanted "")
foreach(line IN LISTS expect_not_lines)
  string(REGEX REPLACE "^[ \t]*//[ \t]*EXPECT-NOT:[ \t]*" "" regex "${line}")
  string(STRIP "${regex}" regex)
  if(NOT regex STREQUAL "" AND diagnostics MATCHES "${regex}")
    list(APPEND unwanted "${regex}")
  endif()
endforeach()

if(missing OR unwanted)
  message("${output}")
  foreach(regex IN LISTS missing)
    message("  not found in the compiler output: ${regex}")
  endforeach()
  foreach(regex IN LISTS unwanted)
    message("  found in the compiler output, but must not be: ${regex}")
  endforeach()
  message(FATAL_ERROR "FAIL ${snippet}: rejected, but the diagnostic is not the expected one")
endif()

list(LENGTH expects n)
message("PASS ${snippet}: rejected, and all ${n} EXPECT patterns matched")
