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

# ordo_add_adapter(<name> SOURCES ...): builds libur_adapter_<name>.so.0 exporting only
# the urGet*ProcAddrTable getters (see adapters/adapter.map).
function(ordo_add_adapter name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  set(target ur_adapter_${name})
  add_library(${target} SHARED ${A_SOURCES}
    ${PROJECT_SOURCE_DIR}/source/generated/proc_addr_getters.gen.cpp)
  set_target_properties(${target} PROPERTIES VERSION 0.12.0 SOVERSION 0)
  target_link_libraries(${target} PRIVATE ordo_source ordo_stream_ordered ordo_warnings Threads::Threads ${CMAKE_DL_LIBS} ${A_LIBS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${PROJECT_SOURCE_DIR}/adapters/adapter.map -Wl,--no-undefined)
  install(TARGETS ${target} EXPORT OrdoTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
