// SPDX-License-Identifier: BSL-1.0
// The names the HTTP server's sources share: the namespaces they write short, and `use`,
// the completion token of their awaited socket operations (errors come back as values:
// a failed read or write ends a connection, it is no exception).
#pragma once

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/error.hpp> // (declares boost::beast::http)

namespace conclave::dev::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

inline constexpr auto use = asio::as_tuple(asio::use_awaitable);

} // namespace conclave::dev::detail
