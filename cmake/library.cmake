# SPDX-License-Identifier: BSL-1.0
# How conclave's library targets are built: conclave (lib/), the dev agent (devagent/) and
# the codec they share (codec/). They define no macro of Asio's or Beast's for the program
# and compile none of their sources: the program does, header-only (the default) or
# separately, and conclave is built the same way (CONCLAVE_ASIO_SEPARATE_COMPILATION,
# docs/install.md; a mismatch fails to link, see conclave/detail/asio_mode.hpp).

# Common to every library target: C++20 for whoever links them, the public headers, no
# symbols beyond the exported API in a shared build (CONCLAVE_DECL marks that API). The
# source tree's root is on the private include path, for the codec ("codec/json.hpp").
function(conclave_library target)
    target_compile_features(${target} PUBLIC cxx_std_20)
    target_include_directories(${target}
        PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
               $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
        PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${target} PRIVATE $<BUILD_INTERFACE:conclave_build_flags>)
    # One DEFINE_SYMBOL for all: the targets share one precompiled header, whose macros
    # must match (CMake's default is <target>_EXPORTS).
    set_target_properties(${target} PROPERTIES
        CXX_EXTENSIONS OFF
        DEFINE_SYMBOL CONCLAVE_BUILDING
        POSITION_INDEPENDENT_CODE ON
        CXX_VISIBILITY_PRESET hidden
        VISIBILITY_INLINES_HIDDEN ON
        VERSION ${PROJECT_VERSION}
        SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
    if(BUILD_SHARED_LIBS)
        target_compile_definitions(${target} PUBLIC CONCLAVE_SHARED)
    endif()
    if(CONCLAVE_ASIO_SEPARATE_COMPILATION)
        target_compile_definitions(${target} PRIVATE
            BOOST_ASIO_SEPARATE_COMPILATION BOOST_BEAST_SEPARATE_COMPILATION)
    endif()
endfunction()

set(conclave_codec_dependencies Boost::headers Boost::json Boost::url OpenSSL::SSL
    OpenSSL::Crypto Threads::Threads)

# Makes the codec (an object library, codec/CMakeLists.txt) part of a library target, and
# lets it reuse the codec's precompiled header.
function(conclave_link_codec target)
    target_sources(${target} PRIVATE $<TARGET_OBJECTS:conclave_codec>)
    target_link_libraries(${target} PUBLIC ${conclave_codec_dependencies})
    conclave_reuse_precompiled_header(${target} conclave_codec)
    if(CMAKE_DISABLE_PRECOMPILE_HEADERS AND BUILD_SHARED_LIBS)
        target_compile_options(${target} PRIVATE "SHELL:-include codec/pch.hpp")
    endif()
endfunction()
