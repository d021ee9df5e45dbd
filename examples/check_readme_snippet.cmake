# cmake -DREADME=<README.md> -DSECTION=<heading> -DSOURCE=<file.cpp> [-DACTUAL=<file>]
#       -P check_readme_snippet.cmake
#
# The first ```cpp block under the Markdown heading line <SECTION> (e.g. "## Quick start") must
# equal <SOURCE> byte for byte, so that the README shows the program CTest compiles and runs. If
# <SOURCE> has a line containing `README-SNIPPET-BEGIN` and one containing `README-SNIPPET-END`,
# only the lines between them are compared. On a mismatch the first differing line of each is
# printed (with its line number), and a `diff -u` when diff is available. The block as found in
# the README is saved to <ACTUAL>.
cmake_minimum_required(VERSION 3.16)

foreach(var README SECTION SOURCE)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_readme_snippet.cmake: -D${var}=... is required")
  endif()
endforeach()

file(READ "${README}" readme)
file(READ "${SOURCE}" source)

# The heading must be a line of its own.
string(FIND "\n${readme}" "\n${SECTION}\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "FAIL: ${README} has no heading line \"${SECTION}\"")
endif()
string(SUBSTRING "${readme}" ${at} -1 section)
string(FIND "${section}" "\n## " next_heading)  # the section ends at the next level-2 heading
if(NOT next_heading EQUAL -1)
  string(SUBSTRING "${section}" 0 ${next_heading} section)
endif()
string(FIND "${section}" "\n```cpp\n" fence)
if(fence EQUAL -1)
  message(FATAL_ERROR "FAIL: the \"${SECTION}\" section of ${README} has no ```cpp block")
endif()
# Line number of the block's first line in the README, for the messages below.
string(SUBSTRING "${readme}" 0 ${at} before_section)
string(SUBSTRING "${section}" 0 ${fence} before_fence)
string(REGEX MATCHALL "\n" newlines "${before_section}${before_fence}\n```cpp\n")
list(LENGTH newlines readme_first_line)
math(EXPR readme_first_line "${readme_first_line} + 1")

math(EXPR fence "${fence} + 8")  # past "\n```cpp\n"
string(SUBSTRING "${section}" ${fence} -1 block)
string(FIND "${block}" "\n```" end)
if(end EQUAL -1)
  message(FATAL_ERROR "FAIL: the ```cpp block under \"${SECTION}\" in ${README} is not closed")
endif()
math(EXPR end "${end} + 1")  # keep the block's last newline
string(SUBSTRING "${block}" 0 ${end} block)

set(source_first_line 1)
string(FIND "${source}" "README-SNIPPET-BEGIN" begin_marker)
if(NOT begin_marker EQUAL -1)
  string(SUBSTRING "${source}" ${begin_marker} -1 source)
  string(FIND "${source}" "\n" eol)
  math(EXPR eol "${eol} + 1")
  string(SUBSTRING "${source}" ${eol} -1 source)  # from the line after the marker
  string(FIND "${source}" "README-SNIPPET-END" end_marker)
  if(end_marker EQUAL -1)
    message(FATAL_ERROR "FAIL: ${SOURCE} has README-SNIPPET-BEGIN but no README-SNIPPET-END")
  endif()
  string(SUBSTRING "${source}" 0 ${end_marker} source)
  string(FIND "${source}" "\n" last_newline REVERSE)  # drop the marker line's beginning
  math(EXPR last_newline "${last_newline} + 1")
  string(SUBSTRING "${source}" 0 ${last_newline} source)
  file(READ "${SOURCE}" whole)
  string(FIND "${whole}" "${source}" offset)
  string(SUBSTRING "${whole}" 0 ${offset} before_region)
  string(REGEX MATCHALL "\n" newlines "${before_region}")
  list(LENGTH newlines source_first_line)
  math(EXPR source_first_line "${source_first_line} + 1")
endif()

if(ACTUAL)
  file(WRITE "${ACTUAL}" "${block}")
endif()
if(block STREQUAL source)
  message("PASS: the ```cpp block under \"${SECTION}\" in ${README} equals ${SOURCE}")
  return()
endif()

# Find the first differing line. (Walked with string(FIND): C++ text is no CMake list.)
set(line 0)
while(TRUE)
  string(FIND "${block}" "\n" readme_eol)
  string(FIND "${source}" "\n" source_eol)
  string(SUBSTRING "${block}" 0 ${readme_eol} readme_line)
  string(SUBSTRING "${source}" 0 ${source_eol} source_line)
  if(readme_eol EQUAL -1 OR source_eol EQUAL -1 OR NOT readme_line STREQUAL source_line)
    break()
  endif()
  math(EXPR readme_eol "${readme_eol} + 1")
  math(EXPR source_eol "${source_eol} + 1")
  string(SUBSTRING "${block}" ${readme_eol} -1 block)
  string(SUBSTRING "${source}" ${source_eol} -1 source)
  math(EXPR line "${line} + 1")
endwhile()
math(EXPR readme_line_number "${readme_first_line} + ${line}")
math(EXPR source_line_number "${source_first_line} + ${line}")
if(readme_eol EQUAL -1)
  set(readme_line "(end of the block)")
endif()
if(source_eol EQUAL -1)
  set(source_line "(end of the file)")
endif()
message("first difference:\n"
        "  ${README}:${readme_line_number}:\n    ${readme_line}\n"
        "  ${SOURCE}:${source_line_number}:\n    ${source_line}")
find_program(DIFF diff)
if(DIFF AND ACTUAL AND begin_marker EQUAL -1)
  message("diff -u <program> <README block>:")
  execute_process(COMMAND "${DIFF}" -u "${SOURCE}" "${ACTUAL}")
endif()
message(FATAL_ERROR "FAIL: the ```cpp block under \"${SECTION}\" in ${README} differs from ${SOURCE}: "
                    "copy the program into the README (or the README's block into the program)")
