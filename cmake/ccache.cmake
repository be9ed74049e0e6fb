# SPDX-License-Identifier: BSL-1.0
# conclave's own builds compile through ccache when it is installed (scripts/setup.sh installs
# it) and no other launcher was chosen: a rebuild, or another build directory of the same
# checkout, or a clone at another path, reuses the objects already compiled (the
# precompiled headers are named so that this holds for them too: cmake/pch.cmake).
#   CCACHE_BASEDIR, CCACHE_NOHASHDIR  paths relative to the source tree, and the build
#                                     directory left out of the hash
#   CCACHE_SLOPPINESS                 what a precompiled header needs to be cached
#                                     (pch_defines, time_macros) and a fresh clone's new
#                                     file times (include_file_mtime, include_file_ctime)
# -DCONCLAVE_CCACHE=OFF builds without it.
option(CONCLAVE_CCACHE "Compile through ccache when it is installed" ON)
if(NOT CONCLAVE_CCACHE OR CMAKE_CXX_COMPILER_LAUNCHER)
    return()
endif()
find_program(CONCLAVE_CCACHE_PROGRAM ccache)
if(NOT CONCLAVE_CCACHE_PROGRAM)
    message(STATUS "conclave: ccache not found: compiling without it")
    return()
endif()
set(CMAKE_CXX_COMPILER_LAUNCHER
    ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=true
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
    ${CONCLAVE_CCACHE_PROGRAM})
message(STATUS "conclave: compiling through ${CONCLAVE_CCACHE_PROGRAM}")
