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
#define CONCLAVE_VERSION_STRING "0.1.0"
