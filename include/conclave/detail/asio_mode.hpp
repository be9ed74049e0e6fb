// SPDX-License-Identifier: BSL-1.0
// A program must compile Asio and Beast the way conclave was built: header-only (Asio's
// default) or separately (BOOST_ASIO_SEPARATE_COMPILATION, BOOST_BEAST_SEPARATE_COMPILATION,
// CMake option CONCLAVE_ASIO_SEPARATE_COMPILATION). Mixed, the two halves of the program
// hold different copies of Asio's and Beast's error categories, and errors stop comparing
// equal. Every translation unit that includes conclave refers to the symbol naming its own
// choice; the library defines only the one it was built with, so a mismatch fails to link
// with that name in the error instead of misbehaving at run time.
#pragma once

#include <conclave/detail/export.hpp>

namespace conclave::detail {

#if defined(BOOST_ASIO_SEPARATE_COMPILATION) && defined(BOOST_BEAST_SEPARATE_COMPILATION)
#define CONCLAVE_ASIO_MODE_SYMBOL conclave_built_with_asio_and_beast_separate_compilation
#elif defined(BOOST_ASIO_SEPARATE_COMPILATION)
#define CONCLAVE_ASIO_MODE_SYMBOL conclave_built_with_asio_separate_and_beast_header_only
#elif defined(BOOST_BEAST_SEPARATE_COMPILATION)
#define CONCLAVE_ASIO_MODE_SYMBOL conclave_built_with_asio_header_only_and_beast_separate
#else
#define CONCLAVE_ASIO_MODE_SYMBOL conclave_built_with_asio_and_beast_header_only
#endif

CONCLAVE_DECL extern const int CONCLAVE_ASIO_MODE_SYMBOL;

#if defined(__GNUC__)
// (`used`: kept in every object file although nothing reads it.)
[[gnu::used]] static const int* const asio_mode_check = &CONCLAVE_ASIO_MODE_SYMBOL;
#endif

} // namespace conclave::detail
