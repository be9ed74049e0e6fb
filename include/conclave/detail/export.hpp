// SPDX-License-Identifier: BSL-1.0
// CONCLAVE_DECL marks the library's API: a shared libconclave exports that and nothing else
// (it is built with hidden visibility), so its internals cannot clash with the program's.
#pragma once

#if defined(_WIN32) && defined(CONCLAVE_SHARED)
#if defined(CONCLAVE_BUILDING)
#define CONCLAVE_DECL __declspec(dllexport)
#else
#define CONCLAVE_DECL __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define CONCLAVE_DECL __attribute__((visibility("default")))
#else
#define CONCLAVE_DECL
#endif
