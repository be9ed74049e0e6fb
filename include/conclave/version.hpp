// SPDX-License-Identifier: BSL-1.0
/// \file
/// The version of conclave: the one place it is written (CMake reads it from here).
#pragma once

/// Major version number.
#define CONCLAVE_VERSION_MAJOR 0
/// Minor version number.
#define CONCLAVE_VERSION_MINOR 1
/// Patch version number.
#define CONCLAVE_VERSION_PATCH 0

/// MAJOR * 10000 + MINOR * 100 + PATCH, for `#if CONCLAVE_VERSION >= ...`.
#define CONCLAVE_VERSION                                                                           \
    (CONCLAVE_VERSION_MAJOR * 10000 + CONCLAVE_VERSION_MINOR * 100 + CONCLAVE_VERSION_PATCH)

/// "MAJOR.MINOR.PATCH".
#define CONCLAVE_VERSION_STRING                                                                    \
    CONCLAVE_DETAIL_STRINGIZE(CONCLAVE_VERSION_MAJOR)                                              \
    "." CONCLAVE_DETAIL_STRINGIZE(CONCLAVE_VERSION_MINOR) "." CONCLAVE_DETAIL_STRINGIZE(           \
        CONCLAVE_VERSION_PATCH)

/// \cond
// The text of a number macro's value (two steps, so that the macro is expanded first).
#define CONCLAVE_DETAIL_STRINGIZE(x) CONCLAVE_DETAIL_STRINGIZE_TEXT(x)
#define CONCLAVE_DETAIL_STRINGIZE_TEXT(x) #x
/// \endcond
