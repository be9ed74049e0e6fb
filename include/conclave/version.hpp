// SPDX-License-Identifier: BSL-1.0
// conclave's version: the one place it is written (CMake reads it from here).
#pragma once

#define CONCLAVE_VERSION_MAJOR 0
#define CONCLAVE_VERSION_MINOR 1
#define CONCLAVE_VERSION_PATCH 0

/// MAJOR * 10000 + MINOR * 100 + PATCH, for `#if CONCLAVE_VERSION >= ...`.
#define CONCLAVE_VERSION                                                                           \
    (CONCLAVE_VERSION_MAJOR * 10000 + CONCLAVE_VERSION_MINOR * 100 + CONCLAVE_VERSION_PATCH)

#define CONCLAVE_VERSION_STRING "0.1.0"
