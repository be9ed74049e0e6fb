// SPDX-License-Identifier: BSL-1.0
// Writing answers: Go's own answers to requests it does not serve, raw bytes with a write
// timeout, the graceful close after an answer that ends the connection, the Date header,
// and the Beast message for the answers append_response_head (http_server.hpp) does not
// write itself.
#pragma once

#include "devagent/src/server/connection.hpp"
#include "devagent/src/server/http_types.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace conclave::dev::detail {

// Go's answer to a request it cannot parse ("400 Bad Request[: detail]" as the body too).
std::string raw_error(std::string_view status, std::string_view detail = {});

// Go's answer to a Transfer-Encoding other than one field "chunked" (HTTP/1.1).
std::string unsupported_transfer_encoding();

// Shuts the sending side, reads (and drops) what the client still sends for a moment so
// the answer is not lost to a TCP reset, then closes.
boost::asio::awaitable<void> close_gracefully(connection& stream, std::int64_t max_drain);

/// Writes `bytes` within `timeout` (agent_config's: 0 is none); false when that failed.
boost::asio::awaitable<bool> write_raw(connection& stream, std::string_view bytes,
                                       std::chrono::milliseconds timeout);

// The Date header, formatted once per second rather than per response.
const std::string& current_http_date();

// Takes the body over: responses can be large (a KV tree), and `r` is not used afterwards.
boost::beast::http::response<boost::beast::http::string_body> to_beast(http_response&& r, bool head,
                                                                       bool keep_alive);

} // namespace conclave::dev::detail
