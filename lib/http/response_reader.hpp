// SPDX-License-Identifier: BSL-1.0
// Reads HTTP responses out of a connection's bytes, with no I/O: the caller does the reads,
// into the space the reader asks it to fill.
//
// Why: the connection reads from a socket, the fuzzer (fuzz/fuzz_client_response.cpp) from
// its input and the unit tests from strings; all three must read responses the same way, so
// what is buffered between reads, when to read, and what an end of stream means live here
// once. And why not beast::http::async_read: three layers of composed operations per read,
// for what a plain loop over this reader does.
#pragma once

#include "http/response_parser.hpp"

#include <conclave/error.hpp>

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/flat_buffer.hpp>

#include <cstddef>
#include <limits>

namespace conclave::detail::http {

/// The read side of one connection: a response_parser per response, fed from a buffer that
/// keeps what a read brought beyond one response for the next one (a keep-alive connection's
/// pipelined or early bytes). The reader outlives the responses; a parser, one response.
///
/// Use: `next(parser)` until it is done; when it is not, read at most `space.size()` bytes
/// into `space` and `commit()` them; a read that fails goes through `read_error()`.
class response_reader {
public:
    /// Room for the whole of a usual Consul response (headers and a few KV entries).
    static constexpr std::size_t initial_capacity = 16 * 1024;
    /// Beast's own bound for one read into a dynamic buffer.
    static constexpr std::size_t max_read_size = 64 * 1024;

    /// `max_buffered` bounds what the buffer may hold: a response that needs more fails with
    /// buffer_overflow. Left at its default, the parser bounds it: the buffer then holds at
    /// most a header (the parser's header limit, 8 KiB) and one read.
    explicit response_reader(std::size_t max_buffered = std::numeric_limits<std::size_t>::max());

    response_reader(const response_reader&) = delete;
    response_reader& operator=(const response_reader&) = delete;

    /// What next() found: the end of the response (`done`; `ec` says how it ended, success
    /// or failure), or that more bytes are needed, to be read into `space`.
    struct step {
        bool done = false;
        error_code ec;
        boost::asio::mutable_buffer space;
    };

    /// Parses what the buffer holds into `parser`, as far as it goes.
    step next(response_parser& parser);

    /// A read put `n` bytes at the start of the last step's `space`.
    void commit(std::size_t n) { buffer_.commit(n); }

    /// The response's outcome when the stream ended (a read reported EOF).
    error_code end_of_stream(response_parser& parser);

    /// The response's outcome when a TLS peer closed the TCP connection without close_notify.
    static error_code truncated(const response_parser& parser);

    /// The response's outcome when a read failed with `ec`: end_of_stream() for EOF,
    /// truncated() for a TLS truncation, else `ec`.
    error_code read_error(response_parser& parser, error_code ec);

private:
    boost::beast::flat_buffer buffer_; // outlives the responses: it holds the next one's start
};

} // namespace conclave::detail::http
