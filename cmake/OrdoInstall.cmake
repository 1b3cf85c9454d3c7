# SPDX-License-Identifier: Apache-2.0
# Install: headers, loader, adapters; a CMake package (unified-runtime::loader,
# unified-runtime::headers) and a pkg-config file.
include(CMakePackageConfigHelpers)
install(EXPORT OrdoTargets NAMESPACE unified-runtime::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/unified-runtime)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/unified-runtime-config.cmake.in
  ${CMAKE_BINARY_DIR}/unified-runtime-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/unified-runtime)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/unified-runtime-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/unified-runtime-config.cmake
              ${CMAKE_BINARY_DIR}/unified-runtime-config-version.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/unified-runtime)
configure_file(${PROJECT_SOURCE_DIR}/cmake/ur_loader.pc.in ${CMAKE_BINARY_DIR}/ur_loader.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/ur_loader.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
