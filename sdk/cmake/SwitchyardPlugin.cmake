# switchyard_add_plugin(<name> SOURCES <files...> [LIBRARIES <targets...>]
#                       [OUTPUT_DIR <dir>] [NO_INSTALL]
#                       [INSTALL_DIR <dir>] [COMPONENT <component>])
# Builds a switchyard plugin: a shared library named libswitchyard-<name>.so with only
# its entry symbol visible, linked against the SDK (and whatever LIBRARIES it wraps).
# Target name: switchyard-plugin-<name>.
#
# Unless NO_INSTALL is given, `cmake --install` puts it in INSTALL_DIR (default
# ${CMAKE_INSTALL_LIBDIR}/switchyard/plugins, where an installed host looks) as part of
# COMPONENT (default "plugins").
include_guard(GLOBAL)
include(GNUInstallDirs)

function(switchyard_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR;INSTALL_DIR;COMPONENT" "SOURCES;LIBRARIES"
                        ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "switchyard_add_plugin(${name}): SOURCES is required")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "switchyard_add_plugin(${name}): unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(target switchyard-plugin-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE switchyard::sdk ${ARG_LIBRARIES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "switchyard-${name}"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${ARG_OUTPUT_DIR})
  elseif(DEFINED SWITCHYARD_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${SWITCHYARD_PLUGIN_OUTPUT_DIR})
  endif()
  # Fail at link time, not load time, on a symbol the plugin forgot to define.
  target_link_options(${target} PRIVATE "LINKER:--no-undefined")
  # Export the entry symbol and nothing else, not even weak template instantiations.
  set(exports_map ${CMAKE_CURRENT_BINARY_DIR}/${target}.exports.map)
  file(WRITE ${exports_map} "{ global: switchyard_plugin_init; local: *; };\n")
  target_link_options(${target} PRIVATE "LINKER:--version-script=${exports_map}")
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${exports_map})

  if(NOT ARG_NO_INSTALL)
    if(NOT ARG_INSTALL_DIR)
      set(ARG_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/switchyard/plugins)
    endif()
    if(NOT ARG_COMPONENT)
      set(ARG_COMPONENT plugins)
    endif()
    install(TARGETS ${target}
            LIBRARY DESTINATION ${ARG_INSTALL_DIR} COMPONENT ${ARG_COMPONENT})
  endif()
endfunction()
