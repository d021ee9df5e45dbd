# cmake -DSTEP=<step> ... -P consumer.cmake — one step of the consumer tests (see CMakeLists.txt
# beside this file, which passes the variables). Every step works in a directory of its own,
# wiped first, so each run is a fresh configure as a user would do it.
#
#   STEP=install        configure hookset's source (tests/examples off), `cmake --install` it to
#                       PREFIX, check the installed layout (headers, package files, LICENSE) and
#                       the version file's answers
#   STEP=cmake_project  configure, build and run the CMake project PROJECT_DIR (the consumer, or
#                       the Conan test_package), against PREFIX (find_package) or, when
#                       HOOKSET_SOURCE_DIR is set, with add_subdirectory
#   STEP=pkg_config     `pkg-config --cflags hookset` from PREFIX, and compile + run the consumer
#                       with those flags (prints HOOKSET_SKIP, which CTest reports as skipped,
#                       when pkg-config is not installed)
#   STEP=include_only   compile + run the consumer with `-std=c++20 -I <source>/include` only
#
# Common variables: WORK_DIR, GENERATOR, [MAKE_PROGRAM], [GENERATOR_PLATFORM], [GENERATOR_TOOLSET],
# CXX, [CXX_FLAGS], [BUILD_TYPE], [CONFIG], [EXE_SUFFIX], [BOOST_DIR], [BOOST_INCLUDE_DIR].

cmake_minimum_required(VERSION 3.16)  # script mode: today's policies (if(TRUE), ...)

foreach(var STEP WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "consumer.cmake: -D${var}=... is required")
  endif()
endforeach()

# run(<what> COMMAND...): runs a command, prints its output, fails the test if it fails.
function(run what)
  string(REPLACE ";" " " shown "${ARGN}")
  message("---- ${what}: ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "FAIL ${STEP}: ${what} failed (${result})")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# The configure arguments every CMake project here gets: the generator and compiler of the tree
# under test, so the Clang tree tests Clang.
set(common_args -G "${GENERATOR}" "-DCMAKE_CXX_COMPILER=${CXX}")
foreach(pair "MAKE_PROGRAM;CMAKE_MAKE_PROGRAM" "CXX_FLAGS;CMAKE_CXX_FLAGS" "BUILD_TYPE;CMAKE_BUILD_TYPE"
             "BOOST_DIR;Boost_DIR")
  list(GET pair 0 var)
  list(GET pair 1 cache)
  if(DEFINED ${var} AND NOT "${${var}}" STREQUAL "")
    list(APPEND common_args "-D${cache}=${${var}}")
  endif()
endforeach()
if(GENERATOR_PLATFORM)
  list(APPEND common_args -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND common_args -T "${GENERATOR_TOOLSET}")
endif()
set(build_args "")
if(CONFIG)
  set(build_args --config "${CONFIG}")
endif()

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---------------------------------------------------------------------------------------------
if(STEP STREQUAL "install")
  foreach(var SOURCE_DIR PREFIX VERSION)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "consumer.cmake: STEP=install needs -D${var}=...")
    endif()
  endforeach()
  file(REMOVE_RECURSE "${PREFIX}")
  run("configure hookset with tests and examples off"
      "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK_DIR}" ${common_args}
      -DHOOKSET_BUILD_TESTS=OFF -DHOOKSET_BUILD_EXAMPLES=OFF -DHOOKSET_BUILD_BENCHMARKS=OFF
      "-DCMAKE_INSTALL_PREFIX=${WORK_DIR}/configured-prefix")
  run("build (nothing to compile: header-only)" "${CMAKE_COMMAND}" --build "${WORK_DIR}" ${build_args})
  # Installed elsewhere than configured: the package must not hard-code its configure-time prefix.
  run("install" "${CMAKE_COMMAND}" --install "${WORK_DIR}" --prefix "${PREFIX}" ${build_args})

  set(missing "")
  file(GLOB_RECURSE source_headers RELATIVE "${SOURCE_DIR}/include" "${SOURCE_DIR}/include/*.hpp"
       "${SOURCE_DIR}/include/*.ipp")
  foreach(file IN LISTS source_headers)
    if(NOT EXISTS "${PREFIX}/include/${file}")
      list(APPEND missing "include/${file}")
    endif()
  endforeach()
  foreach(file share/cmake/hookset/hooksetConfig.cmake share/cmake/hookset/hooksetConfigVersion.cmake
               share/cmake/hookset/hooksetTargets.cmake share/pkgconfig/hookset.pc
               share/doc/hookset/LICENSE)
    if(NOT EXISTS "${PREFIX}/${file}")
      list(APPEND missing "${file}")
    endif()
  endforeach()
  if(missing)
    message(FATAL_ERROR "FAIL install: not installed: ${missing}")
  endif()
  # The installed license is the source tree's, byte for byte.
  file(SHA256 "${SOURCE_DIR}/LICENSE" source_license)
  file(SHA256 "${PREFIX}/share/doc/hookset/LICENSE" installed_license)
  if(NOT source_license STREQUAL installed_license)
    message(FATAL_ERROR "FAIL install: share/doc/hookset/LICENSE differs from ${SOURCE_DIR}/LICENSE")
  endif()
  file(GLOB_RECURSE package_files "${PREFIX}/share/*")
  foreach(file IN LISTS package_files)
    file(READ "${file}" text)
    if(text MATCHES "configured-prefix")
      message(FATAL_ERROR "FAIL install: ${file} hard-codes the configure-time install prefix")
    endif()
  endforeach()
  # Architecture-independent: nothing under lib*/ (the package lives in share/).
  file(GLOB lib_dirs "${PREFIX}/lib*")
  if(lib_dirs)
    message(FATAL_ERROR "FAIL install: a header-only package installed ${lib_dirs}")
  endif()

  # The version file, asked as find_package asks it: same major.minor is compatible, nothing else;
  # and no pointer-size check (ARCH_INDEPENDENT).
  string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${VERSION}")
  set(major ${CMAKE_MATCH_1})
  set(minor ${CMAKE_MATCH_2})
  math(EXPR next_minor "${minor} + 1")
  math(EXPR next_major "${major} + 1")
  foreach(case "${VERSION};TRUE" "${major}.${minor};TRUE" "${major}.${next_minor};FALSE"
               "${next_major}.0;FALSE")
    list(GET case 0 asked)
    list(GET case 1 expected)
    set(PACKAGE_FIND_VERSION "${asked}")
    string(REPLACE "." ";" parts "${asked}.0.0")
    list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
    list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
    list(GET parts 2 PACKAGE_FIND_VERSION_PATCH)
    unset(PACKAGE_VERSION_COMPATIBLE)
    unset(PACKAGE_VERSION_UNSUITABLE)
    set(CMAKE_SIZEOF_VOID_P 2)  # an unlikely pointer size: an arch-checking file would refuse
    include("${PREFIX}/share/cmake/hookset/hooksetConfigVersion.cmake")
    if(PACKAGE_VERSION_UNSUITABLE)
      message(FATAL_ERROR "FAIL install: the version file is architecture-dependent")
    endif()
    if(NOT PACKAGE_VERSION STREQUAL VERSION)
      message(FATAL_ERROR "FAIL install: the version file says ${PACKAGE_VERSION}, expected ${VERSION}")
    endif()
    if((PACKAGE_VERSION_COMPATIBLE AND NOT expected) OR (NOT PACKAGE_VERSION_COMPATIBLE AND expected))
      message(FATAL_ERROR "FAIL install: asking for ${asked}: compatible=${PACKAGE_VERSION_COMPATIBLE}, "
                          "expected ${expected}")
    endif()
    message("version file: asking for ${asked} -> compatible=${expected}")
  endforeach()
  message("PASS install: hookset ${VERSION} installed to ${PREFIX}")

# ---------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "cmake_project")
  foreach(var PROJECT_DIR EXE)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "consumer.cmake: STEP=cmake_project needs -D${var}=...")
    endif()
  endforeach()
  set(bin_dir "${WORK_DIR}/bin")
  set(project_args "-DCMAKE_RUNTIME_OUTPUT_DIRECTORY=${bin_dir}")
  if(CONFIG)
    string(TOUPPER "${CONFIG}" config_upper)
    list(APPEND project_args "-DCMAKE_RUNTIME_OUTPUT_DIRECTORY_${config_upper}=${bin_dir}")
  endif()
  if(HOOKSET_SOURCE_DIR)
    list(APPEND project_args -DHOOKSET_CONSUMER_MODE=add_subdirectory "-DHOOKSET_SOURCE_DIR=${HOOKSET_SOURCE_DIR}")
  else()
    if(NOT PREFIX)
      message(FATAL_ERROR "consumer.cmake: STEP=cmake_project needs -DPREFIX=... or -DHOOKSET_SOURCE_DIR=...")
    endif()
    if(NOT EXISTS "${PREFIX}/share/cmake/hookset/hooksetConfig.cmake")
      message(FATAL_ERROR "FAIL cmake_project: nothing installed in ${PREFIX} (did consumer/install run?)")
    endif()
    list(APPEND project_args "-DCMAKE_PREFIX_PATH=${PREFIX}")
    if(VERSION)
      list(APPEND project_args "-DHOOKSET_EXPECTED_VERSION=${VERSION}")
    endif()
  endif()
  run("configure ${PROJECT_DIR}" "${CMAKE_COMMAND}" -S "${PROJECT_DIR}" -B "${WORK_DIR}/build"
      ${common_args} ${project_args})
  if(PREFIX AND NOT HOOKSET_SOURCE_DIR)
    # The package must have come from the scratch prefix, not from some system-wide install.
    file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" dir_line REGEX "^hookset_DIR:")
    string(REGEX REPLACE "^hookset_DIR:[A-Z]+=" "" found_dir "${dir_line}")
    get_filename_component(found_dir "${found_dir}" REALPATH)
    get_filename_component(expected_dir "${PREFIX}/share/cmake/hookset" REALPATH)
    if(NOT found_dir STREQUAL expected_dir)
      message(FATAL_ERROR "FAIL cmake_project: hookset_DIR is ${found_dir}, expected ${expected_dir}")
    endif()
  endif()
  run("build" "${CMAKE_COMMAND}" --build "${WORK_DIR}/build" ${build_args})
  run("run" "${bin_dir}/${EXE}${EXE_SUFFIX}")
  message("PASS cmake_project: ${PROJECT_DIR} built and ran")

# ---------------------------------------------------------------------------------------------
elseif(STEP STREQUAL "pkg_config" OR STEP STREQUAL "include_only")
  foreach(var SOURCE SOURCE_DIR CXX)
    if(NOT DEFINED ${var})
      message(FATAL_ERROR "consumer.cmake: STEP=${STEP} needs -D${var}=...")
    endif()
  endforeach()
  separate_arguments(flags UNIX_COMMAND "${CXX_FLAGS}")
  if(BOOST_INCLUDE_DIR)
    list(APPEND flags "-I${BOOST_INCLUDE_DIR}")
  endif()

  if(STEP STREQUAL "pkg_config")
    find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config pkgconf)
    if(NOT PKG_CONFIG_EXECUTABLE)
      message("HOOKSET_SKIP: pkg-config is not installed")
      return()
    endif()
    if(NOT EXISTS "${PREFIX}/share/pkgconfig/hookset.pc")
      message(FATAL_ERROR "FAIL pkg_config: nothing installed in ${PREFIX} (did consumer/install run?)")
    endif()
    set(ENV{PKG_CONFIG_PATH} "${PREFIX}/share/pkgconfig")
    run("pkg-config --modversion" "${PKG_CONFIG_EXECUTABLE}" --modversion hookset)
    string(STRIP "${run_output}" modversion)
    if(VERSION AND NOT modversion STREQUAL VERSION)
      message(FATAL_ERROR "FAIL pkg_config: hookset.pc says version ${modversion}, expected ${VERSION}")
    endif()
    run("pkg-config --cflags" "${PKG_CONFIG_EXECUTABLE}" --cflags hookset)
    string(STRIP "${run_output}" cflags)
    separate_arguments(cflags UNIX_COMMAND "${cflags}")
    # The include dir must be the installed one.
    get_filename_component(expected_include "${PREFIX}/include" REALPATH)
    set(points_to_prefix FALSE)
    foreach(flag IN LISTS cflags)
      if(flag MATCHES "^-I(.+)$")
        get_filename_component(dir "${CMAKE_MATCH_1}" REALPATH)
        if(dir STREQUAL expected_include)
          set(points_to_prefix TRUE)
        endif()
      endif()
    endforeach()
    if(NOT points_to_prefix)
      message(FATAL_ERROR "FAIL pkg_config: --cflags '${cflags}' has no -I for ${expected_include}")
    endif()
    list(APPEND flags ${cflags})
  else()
    list(APPEND flags "-I${SOURCE_DIR}/include")
  endif()

  set(exe "${WORK_DIR}/consumer${EXE_SUFFIX}")
  run("compile" "${CXX}" -std=c++20 -Wall -Wextra -Wpedantic -Werror ${flags} "${SOURCE}" -o "${exe}")
  run("run" "${exe}")
  message("PASS ${STEP}: compiled with ${CXX} and ran")

else()
  message(FATAL_ERROR "consumer.cmake: unknown STEP '${STEP}'")
endif()
