# SPDX-License-Identifier: BSL-1.0
# Precompiled headers of conclave's targets: the library's (codec/pch.hpp), the programs'
# (support/program_pch.hpp) and the tests' (test/support/pch.hpp). Each is named as an #include
# resolves it, not by its path, so that CMake's generated cmake_pch.hxx reads the same in
# every checkout: a clone at another path then reuses ccache's objects.
#
# CMAKE_DISABLE_PRECOMPILE_HEADERS turns them off (the clang presets do: CMake passes clang
# the header by an absolute path that ccache cannot make relative, so a clone at another
# path would miss the cache for every file). Every source includes what it uses, so it
# compiles either way; the library's header also sets the visibility of Boost's
# declarations, which a shared library needs (see codec/pch.hpp): there it is then
# included first in every source instead (-include).

# `target` precompiles `header` (a name its include path resolves) for its own sources
# (scope PRIVATE) or also for the targets linking it (PUBLIC).
function(conclave_precompile_header target scope header)
    if(NOT CMAKE_DISABLE_PRECOMPILE_HEADERS)
        target_precompile_headers(${target} ${scope} "\"${header}\"")
    endif()
endfunction()

# `target` reuses the precompiled header of `from`.
function(conclave_reuse_precompiled_header target from)
    if(NOT CMAKE_DISABLE_PRECOMPILE_HEADERS)
        target_precompile_headers(${target} REUSE_FROM ${from})
    endif()
endfunction()
