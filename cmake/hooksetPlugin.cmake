# hookset_add_plugin and hookset_plugin_host: building plugins for <hookset/plugin.hpp> and the
# programs that load them. Included by hooksetConfig.cmake (find_package, Conan) and by
# hookset's own build, so that both build plugins alike.

# hookset_add_plugin(<name> <source>...): a plugin - a shared library (MODULE) linked to
# hookset::hookset whose entry point HOOKSET_PLUGIN defines. Its symbols keep default visibility,
# so that the dynamic linker binds its hookset objects (hook ids, thread-locals) to the
# program's; with GCC it is built with -fno-gnu-unique, so that dlclose can unmap it (a library
# that defines STB_GNU_UNIQUE symbols - every inline variable, with GCC's default - stays
# loaded until the process ends).
function(hookset_add_plugin name)
  if(NOT ARGN)
    message(FATAL_ERROR "hookset_add_plugin(${name}): no source files")
  endif()
  add_library(${name} MODULE ${ARGN})
  target_link_libraries(${name} PRIVATE hookset::hookset)
  set_target_properties(${name} PROPERTIES
    CXX_VISIBILITY_PRESET default
    VISIBILITY_INLINES_HIDDEN OFF)
  target_compile_options(${name} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
endfunction()

# hookset_plugin_host(<target>): a program that loads plugins. It exports its symbols
# (ENABLE_EXPORTS, -rdynamic), so that its plugins use its hookset objects, and links dlopen's
# library. PluginHost refuses a plugin that does not share them.
function(hookset_plugin_host target)
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
  target_link_libraries(${target} PRIVATE ${CMAKE_DL_LIBS})
endfunction()
