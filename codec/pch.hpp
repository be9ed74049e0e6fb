// SPDX-License-Identifier: BSL-1.0
// Precompiled header of the library's translation units: the heavy, stable headers.
//
// Boost is declared with default visibility even though a shared build hides the library's
// own symbols: Asio's header-only functions hold state the program shares with the library
// (error categories compared by address, the per-thread call stack that tells whether code
// runs inside io_context::run), and a hidden copy inside libconclave would be a second one.
// This header is included first in every library source, so these declarations come first.
#pragma once

#pragma GCC visibility push(default)
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <boost/url.hpp>
#pragma GCC visibility pop

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
