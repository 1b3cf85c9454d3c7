# SPDX-License-Identifier: Apache-2.0
# Shared compile settings for every Ordo target.
add_library(ordo_warnings INTERFACE)
target_compile_options(ordo_warnings INTERFACE -Wall -Wextra -Wno-unused-parameter)
if(ORDO_WERROR)
  target_compile_options(ordo_warnings INTERFACE -Werror)
endif()

if(ORDO_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
elseif(ORDO_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ORDO_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ORDO_SANITIZE must be '', 'address' or 'thread'")
endif()

# ordo_include_root(<target> <PUBLIC|INTERFACE> <entry>...): what <target>'s users may
# include, and nothing else. Each <entry> (a folder or header of the target's source
# folder) is linked into an include root of the target's own in the build tree, so that
# "ordo/logger.hpp" or "driver_api.hpp" keep their spelling while the folder above them
# (source/, or the library's folder with its private headers) is on no one's include path
# (docs/architecture.md, "Layering").
function(ordo_include_root target scope)
  set(root ${PROJECT_BINARY_DIR}/include_roots/${target})
  file(MAKE_DIRECTORY ${root})
  foreach(entry ${ARGN})
    get_filename_component(name ${entry} NAME)
    get_filename_component(path ${entry} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    if(NOT EXISTS ${path})
      message(FATAL_ERROR "ordo_include_root(${target}): ${path} does not exist")
    endif()
    file(CREATE_LINK ${path} ${root}/${name} SYMBOLIC)
  endforeach()
  target_include_directories(${target} ${scope} ${root})
endfunction()

# ordo_add_adapter(<name> [NO_INSTALL] [RESIDENT] SOURCES ... [LIBS ...]): builds
# libur_adapter_<name>.so.0 exporting only the urGet*ProcAddrTable getters (see
# adapters/adapter.map). Every adapter gets ordo_base (the generated table fill and
# getters need it); LIBS names the other libraries of source/ it uses
# (ordo_stream_ordered, ordo_ur_common, ...).
# NO_INSTALL: built and tested, never installed (the template adapter).
# RESIDENT: never unmapped once loaded (-z nodelete), for an adapter whose code runs on
# threads that outlive its last release: its own workers or callback thread, or the
# runtime's threads calling back into it (docs/adapter-guide.md, "Unloading").
function(ordo_add_adapter name)
  cmake_parse_arguments(A "NO_INSTALL;RESIDENT" "" "SOURCES;LIBS" ${ARGN})
  set(target ur_adapter_${name})
  add_library(${target} SHARED ${A_SOURCES}
    ${PROJECT_SOURCE_DIR}/source/generated/proc_addr_getters.gen.cpp)
  set_target_properties(${target} PROPERTIES VERSION 0.12.0 SOVERSION 0)
  target_link_libraries(${target} PRIVATE ordo_base ordo_warnings Threads::Threads ${A_LIBS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/adapters/adapter.map -Wl,--no-undefined)
  if(A_RESIDENT)
    target_link_options(${target} PRIVATE -Wl,-z,nodelete)
  endif()
  if(NOT A_NO_INSTALL)
    install(TARGETS ${target} EXPORT OrdoTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endfunction()
