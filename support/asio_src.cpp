// SPDX-License-Identifier: BSL-1.0
// Asio, Asio SSL and Beast compiled once for conclave's own programs (CLI, tests, benchmark,
// examples), which build with BOOST_ASIO_SEPARATE_COMPILATION and
// BOOST_BEAST_SEPARATE_COMPILATION: the way a program that compiles Asio itself links the
// library (which includes Asio header-only and defines none of Asio's symbols).
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
