# SPDX-License-Identifier: BSL-1.0
# Install rules: headers, libraries, the CMake package (find_package(conclave)), a
# pkg-config file, the CLI. Components: conclave (the library), devagent (the embedded dev
# agent, optional), cli.
include(CMakePackageConfigHelpers)

set(conclave_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/conclave)

install(TARGETS conclave EXPORT conclave-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT conclave
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT conclave
            NAMELINK_COMPONENT conclave
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT conclave)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/conclave
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT conclave)
install(EXPORT conclave-targets NAMESPACE conclave:: DESTINATION ${conclave_cmake_dir}
    COMPONENT conclave)

if(CONCLAVE_BUILD_DEVAGENT)
    install(TARGETS conclave_dev EXPORT conclave-devagent-targets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devagent
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT devagent
                NAMELINK_COMPONENT devagent
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT devagent)
    install(DIRECTORY ${PROJECT_SOURCE_DIR}/devagent/include/conclave/dev
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/conclave COMPONENT devagent)
    install(EXPORT conclave-devagent-targets NAMESPACE conclave:: DESTINATION ${conclave_cmake_dir}
        COMPONENT devagent)
endif()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/conclave-config.cmake.in
    ${PROJECT_BINARY_DIR}/conclave-config.cmake INSTALL_DESTINATION ${conclave_cmake_dir})
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/conclave-config-version.cmake
    COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/conclave-config.cmake
              ${PROJECT_BINARY_DIR}/conclave-config-version.cmake
    DESTINATION ${conclave_cmake_dir} COMPONENT conclave)

# pkg-config: the prefix is found relative to the .pc file, so the tree can be moved.
set(conclave_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH conclave_pc_to_prefix /${conclave_pc_dir} /)
string(REGEX REPLACE "/$" "" conclave_pc_to_prefix "${conclave_pc_to_prefix}")
set(conclave_pc_cflags "")
if(BUILD_SHARED_LIBS)
    set(conclave_pc_cflags " -DCONCLAVE_SHARED")
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/conclave.pc.in ${PROJECT_BINARY_DIR}/conclave.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/conclave.pc DESTINATION ${conclave_pc_dir}
    COMPONENT conclave)
if(CONCLAVE_BUILD_DEVAGENT)
    configure_file(${CMAKE_CURRENT_LIST_DIR}/conclave-devagent.pc.in
        ${PROJECT_BINARY_DIR}/conclave-devagent.pc @ONLY)
    install(FILES ${PROJECT_BINARY_DIR}/conclave-devagent.pc DESTINATION ${conclave_pc_dir}
        COMPONENT devagent)
endif()

install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR}
    COMPONENT conclave)

if(CONCLAVE_BUILD_CLI)
    install(TARGETS conclave_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
endif()
