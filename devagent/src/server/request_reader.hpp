// SPDX-License-Identifier: BSL-1.0
// Reading a request as Go's net/http server reads one: the head (Beast's parser, keeping
// only the fields the server needs), the body by its Content-Length or chunked with Go's
// limits and error texts, and the request target. What a connection holds while it reads
// and until it answers counts against the agent's request memory (memory_lease).
#pragma once

#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/connection.hpp"
#include "devagent/src/server/field_value.hpp"
#include "devagent/src/server/http_types.hpp"
#include "devagent/src/server/limits.hpp"

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/parser.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace conclave::dev::detail {

// Beast's request parser keeping none of the header fields. Beast's field list throws
// std::length_error for a name or value over 65,535 bytes (Go takes any that fits
// MaxHeaderBytes) and costs an allocation per field, so a head of many small fields would
// cost several times its size; the server needs only what is noted here (the parser itself
// keeps Content-Length, chunked and the Connection tokens). The body is left to read_body()
// (skip), which reads it as Go does.
class request_parser : public boost::beast::http::request_parser<boost::beast::http::empty_body> {
public:
    explicit request_parser(std::size_t header_limit) {
        this->header_limit(
            static_cast<std::uint32_t>(std::min<std::size_t>(header_limit, UINT32_MAX)));
        skip(true);
    }

    unsigned hosts = 0;              ///< Host fields
    unsigned transfer_encodings = 0; ///< Transfer-Encoding fields
    bool te_chunked = false;         ///< the last Transfer-Encoding is "chunked" (trimmed)
    bool expect_continue = false;    ///< Expect: 100-continue
    /// The first X-Consul-Namespace field (the one Go's Header.Get reads) has a value.
    bool namespace_header = false;

    /// Go 1.14's fixTransferEncoding (Consul 1.8): one Transfer-Encoding field, its value
    /// "chunked" (any case, trimmed), or none; anything else is answered 501 ("gzip,
    /// chunked", two fields, even "chunked" twice).
    bool transfer_encoding_supported() const {
        return transfer_encodings == 0 || (transfer_encodings == 1 && te_chunked);
    }

private:
    void on_field_impl(boost::beast::http::field name, boost::beast::string_view name_string,
                       boost::beast::string_view value, error_code&) override {
        switch (name) {
        case boost::beast::http::field::host:
            ++hosts;
            break;
        case boost::beast::http::field::transfer_encoding:
            ++transfer_encodings;
            te_chunked = boost::beast::iequals(
                trim_value(std::string_view(value.data(), value.size())), "chunked");
            break;
        case boost::beast::http::field::expect:
            expect_continue = boost::beast::iequals(
                trim_value(std::string_view(value.data(), value.size())), "100-continue");
            break;
        default:
            if (!namespace_seen_ && boost::beast::iequals(name_string, "X-Consul-Namespace")) {
                namespace_seen_ = true;
                namespace_header =
                    !trim_value(std::string_view(value.data(), value.size())).empty();
            }
            break;
        }
    }

    bool namespace_seen_ = false;
};

// What one connection holds of its request beyond free_request_bytes (read buffer, body,
// and the parsed request until it is answered, a blocking query's wait included), drawn
// from the agent's request_memory_limit: a flood of large requests is refused rather than
// given memory without bound.
class memory_lease {
public:
    memory_lease(std::size_t& pool, std::size_t limit)
        : pool_(pool)
        , limit_(limit) {}
    ~memory_lease() { pool_ -= held_; }
    memory_lease(const memory_lease&) = delete;
    memory_lease& operator=(const memory_lease&) = delete;

    /// The connection is to hold `bytes` of buffers (read buffer, body being read) besides
    /// the request it keeps (keep()): false (holding what it held) when the budget cannot
    /// give that much.
    bool fit(std::size_t bytes) { return take(bytes + kept_); }
    /// The connection keeps a parsed request of `request` bytes (0: none) until it is
    /// answered (a blocking query's whole wait), besides `buffers` bytes of buffers: false
    /// (holding what it held) when the budget cannot give that much. Never false for less.
    bool keep(std::size_t request, std::size_t buffers) {
        if (!take(request + buffers))
            return false;
        kept_ = request;
        return true;
    }

private:
    bool take(std::size_t bytes) {
        const std::size_t want = bytes > free_request_bytes ? bytes - free_request_bytes : 0;
        if (want > held_ && limit_ != 0 && pool_ - held_ + want > limit_)
            return false;
        pool_ = pool_ - held_ + want;
        held_ = want;
        return true;
    }

    std::size_t& pool_;
    std::size_t limit_;
    std::size_t held_ = 0;
    std::size_t kept_ = 0;
};

enum class body_read {
    done,
    failed, ///< req.body_error says why: answered by the route, then the connection closes
    gone,   ///< the connection failed or timed out: closed without an answer
};

// What a parsed request holds (its strings' capacities): its target about three times
// (path, raw query, parsed query), and its body.
std::size_t request_bytes(const http_request& r);

// Gives a buffer that a large request grew back its usual size.
void trim_buffer(boost::beast::flat_buffer& b);

// Whether a read failed on the connection (it ended, failed or timed out) rather than on
// what the client sent.
bool is_transport_error(const error_code& ec);

// Reads a request head into the parser, as Go's server: a kept-alive connection (idle)
// first waits up to idle_timeout for a byte; from the request's first byte (a new
// connection's: from its accept) the head has read_header_timeout. `started` is when the
// request began. An error of Beast's http category is the client's (header_limit: too
// large); any other, the connection's.
boost::asio::awaitable<error_code> read_head(connection& stream, boost::beast::flat_buffer& buffer,
                                             request_parser& parser, const agent_config& cfg,
                                             memory_lease& lease, bool idle,
                                             connection::clock::time_point& started);

// Reads a request body into req.body as Go's net/http reads one for Consul's handler: by
// its Content-Length, or chunked with Go's line and trailer limits and error texts; at most
// `limit` bytes (over it: body_too_large).
boost::asio::awaitable<body_read> read_body(connection& stream, boost::beast::flat_buffer& buffer,
                                            http_request& req, bool chunked, std::int64_t limit,
                                            memory_lease& lease);

// Go's net/http parses the request target into URL.Path (decoded) and RawQuery.
bool make_request(const request_parser& parser, http_request& req);

} // namespace conclave::dev::detail
