# cmake -DBUILD_DIR=<dir> -DTARGET=<target> -DSOURCE=<snippet.cpp> [-DCONFIG=<cfg>] -P check.cmake
#
# Passes only if building <target> FAILS and the build output matches EVERY `// EXPECT: <regex>`
# line of <SOURCE> (CMake regex syntax, searched anywhere in the output). Otherwise prints the
# output and fails. A snippet with no EXPECT line fails, so a failure can never pass "by accident".

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

execute_process(
  COMMAND "${CMAKE_COMMAND}" --build "${BUILD_DIR}" --target "${TARGET}" ${config_args}
  RESULT_VARIABLE result
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

get_filename_component(snippet "${SOURCE}" NAME)
if(result EQUAL 0)
  message("${output}")
  message(FATAL_ERROR "FAIL ${snippet}: it compiled, but it must be rejected")
endif()

# Match against the diagnostics only: drop the build tool's own lines (Ninja's "[1/1] Building ...",
# and "FAILED: <object>" followed by the compiler command line, which names the snippet's path).
string(REGEX REPLACE "FAILED: [^\n]*\n[^\n]*\n" "" diagnostics "${output}")
string(REGEX REPLACE "\\[[0-9]+/[0-9]+\\] [^\n]*\n" "" diagnostics "${diagnostics}")

set(missing "")
foreach(regex IN LISTS expects)
  if(NOT diagnostics MATCHES "${regex}")
    list(APPEND missing "${regex}")
  endif()
endforeach()

if(missing)
  message("${output}")
  foreach(regex IN LISTS missing)
    message("  not found in the compiler output: ${regex}")
  endforeach()
  message(FATAL_ERROR "FAIL ${snippet}: rejected, but the diagnostic lacks the expected text")
endif()

list(LENGTH expects n)
message("PASS ${snippet}: rejected, and all ${n} EXPECT patterns matched")
