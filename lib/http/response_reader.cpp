// SPDX-License-Identifier: BSL-1.0
#include "http/response_reader.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>

namespace conclave::detail::http {

namespace bhttp = boost::beast::http;

response_reader::response_reader(std::size_t max_buffered)
    : buffer_(max_buffered) {
    // Room for a typical response: read in one recvmsg, not 512 bytes at a time.
    buffer_.reserve(std::min(initial_capacity, max_buffered));
}

response_reader::step response_reader::next(response_parser& parser) {
    for (;;) {
        if (buffer_.size() != 0) {
            error_code ec;
            const std::size_t used = parser.put(buffer_.data(), ec);
            buffer_.consume(used);
            if (ec && ec != bhttp::error::need_more)
                return {true, ec, {}};
            if (parser.is_done())
                return {true, {}, {}};
            if (!ec && used != 0)
                continue; // the header is done; the body may be in the buffer already
        }
        const std::size_t room = boost::beast::read_size(buffer_, max_read_size);
        if (room == 0)
            return {true, bhttp::error::buffer_overflow, {}};
        return {false, {}, buffer_.prepare(room)};
    }
}

error_code response_reader::end_of_stream(response_parser& parser) {
    if (!parser.got_some())
        return bhttp::error::end_of_stream;
    // A response delimited by the end of the stream succeeds here; one cut short does not.
    error_code ec;
    parser.put_eof(ec);
    return ec;
}

error_code response_reader::truncated(const response_parser& parser) {
    // To HTTP that is the end of the stream (a stale keep-alive connection, or a truncated
    // response). Never a success: a message delimited by EOF is not accepted this way.
    return parser.got_some() ? bhttp::error::partial_message : bhttp::error::end_of_stream;
}

error_code response_reader::read_error(response_parser& parser, error_code ec) {
    if (ec == boost::asio::error::eof)
        return end_of_stream(parser);
    if (ec == boost::asio::ssl::error::stream_truncated)
        return truncated(parser);
    return ec;
}

} // namespace conclave::detail::http
