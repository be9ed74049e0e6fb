// SPDX-License-Identifier: BSL-1.0
// This program compiles Asio, Asio SSL and Beast itself (separate compilation), once.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
