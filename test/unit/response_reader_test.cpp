// SPDX-License-Identifier: BSL-1.0
// The connection's response reading without a socket: the reader fed a connection's bytes
// in reads of a chosen size, as connection.cpp and the fuzzer feed it, and the end of the
// stream (EOF, or a TLS truncation) wherever the bytes stop.
#include "http/response_reader.hpp"
#include "support/catch.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <cstring>
#include <string>

using namespace conclave;
using namespace conclave::detail::http;
using namespace std::chrono_literals;
namespace bhttp = boost::beast::http;
namespace asio = boost::asio;

namespace {

// One connection's bytes, handed out at most `step` at a time (a socket's reads).
struct connection_bytes {
    std::string bytes;
    std::size_t step = std::string::npos;
    std::size_t pos = 0;
    int reads = 0; ///< reads that delivered bytes
};

// Reads one response from `in`, as the connection does; once `in` is exhausted, a read fails
// with `at_end` (EOF unless said otherwise).
error_code read_response(response_reader& reader, response_parser& parser, connection_bytes& in,
                         error_code at_end = asio::error::eof) {
    for (;;) {
        const auto step = reader.next(parser);
        if (step.done)
            return step.ec;
        // A read into no room would return nothing, forever.
        REQUIRE(step.space.size() != 0);
        CHECK(step.space.size() <= response_reader::max_read_size);
        if (in.pos == in.bytes.size())
            return reader.read_error(parser, at_end);
        const std::size_t n = std::min({in.step, step.space.size(), in.bytes.size() - in.pos});
        std::memcpy(step.space.data(), in.bytes.data() + in.pos, n);
        in.pos += n;
        ++in.reads;
        reader.commit(n);
    }
}

std::string response_with_body(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
           std::to_string(body.size()) + "\r\n\r\n" + body;
}

constexpr std::size_t no_body_limit = 1 << 20;

} // namespace

TEST_CASE("a response that arrives in one piece is read with one read", "[response_reader]") {
    // Larger than the 512 bytes Beast reads into an empty buffer: one read only if the
    // reader has room for a usual response from the start.
    const std::string body(10 * 1024, 'v');
    connection_bytes in{response_with_body(body)};
    response_reader reader;
    response res;
    response_parser parser{res, no_body_limit};
    REQUIRE_FALSE(read_response(reader, parser, in));
    CHECK(in.reads == 1);
    CHECK(res.status == 200);
    CHECK(res.body == body);
    CHECK(parser.keep_alive());
    CHECK_FALSE(parser.need_eof());
}

TEST_CASE("a response delivered a byte at a time is read whole", "[response_reader]") {
    connection_bytes in{"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found", 1};
    response_reader reader;
    response res;
    response_parser parser{res, no_body_limit};
    REQUIRE_FALSE(read_response(reader, parser, in));
    CHECK(in.reads == static_cast<int>(in.bytes.size()));
    CHECK(res.status == 404);
    CHECK(res.body == "not found");
    CHECK(parser.keep_alive());
}

TEST_CASE("a second response that arrived with the first is kept for the next read",
          "[response_reader]") {
    connection_bytes in{response_with_body("[\"first\"]") + response_with_body("[\"second\"]")};
    response_reader reader;
    response first;
    response_parser first_parser{first, no_body_limit};
    REQUIRE_FALSE(read_response(reader, first_parser, in));
    CHECK(first.body == "[\"first\"]");
    REQUIRE(in.reads == 1); // the connection's bytes are all read now
    response second;
    response_parser second_parser{second, no_body_limit};
    REQUIRE_FALSE(read_response(reader, second_parser, in));
    CHECK(in.reads == 1);
    CHECK(second.status == 200);
    CHECK(second.body == "[\"second\"]");
}

TEST_CASE("a chunked body is read and joined", "[response_reader]") {
    const std::string bytes = "HTTP/1.1 200 OK\r\n"
                              "Transfer-Encoding: chunked\r\n"
                              "\r\n"
                              "5\r\n[\"a\",\r\n"
                              "4\r\n\"b\"]\r\n"
                              "0\r\n\r\n";
    for (const std::size_t step : {bytes.size(), std::size_t(1), std::size_t(7)}) {
        INFO("step " << step);
        connection_bytes in{bytes, step};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        REQUIRE_FALSE(read_response(reader, parser, in));
        CHECK(res.body == "[\"a\",\"b\"]");
        CHECK(parser.keep_alive());
        CHECK(in.pos == bytes.size());
    }
}

TEST_CASE("a Content-Length over the body limit fails with body_limit", "[response_reader]") {
    connection_bytes in{response_with_body(std::string(100, 'x'))};
    response_reader reader;
    response res;
    response_parser parser{res, 99};
    CHECK(read_response(reader, parser, in) == bhttp::error::body_limit);
}

TEST_CASE("the end of the stream before a response's first byte is end_of_stream",
          "[response_reader]") {
    SECTION("on a new connection") {
        connection_bytes in{""};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        CHECK(read_response(reader, parser, in) == bhttp::error::end_of_stream);
    }
    SECTION("on a keep-alive connection the server closed after a response") {
        connection_bytes in{response_with_body("true")};
        response_reader reader;
        response first;
        response_parser first_parser{first, no_body_limit};
        REQUIRE_FALSE(read_response(reader, first_parser, in));
        response second;
        response_parser second_parser{second, no_body_limit};
        CHECK(read_response(reader, second_parser, in) == bhttp::error::end_of_stream);
    }
}

TEST_CASE("the end of the stream within a response's header is partial_message",
          "[response_reader]") {
    for (const char* bytes :
         {"H", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n"}) {
        INFO(bytes);
        connection_bytes in{bytes};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        CHECK(read_response(reader, parser, in) == bhttp::error::partial_message);
    }
}

TEST_CASE("the end of the stream within a response's body is partial_message",
          "[response_reader]") {
    const std::string framed[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\na\r\n123",
    };
    for (const auto& bytes : framed) {
        INFO(bytes);
        connection_bytes in{bytes};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        CHECK(read_response(reader, parser, in) == bhttp::error::partial_message);
    }
}

TEST_CASE("a response delimited by the end of the stream is read whole", "[response_reader]") {
    const std::string bytes = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{\"Leader\":true}";
    for (const std::size_t step : {bytes.size(), std::size_t(1)}) {
        INFO("step " << step);
        connection_bytes in{bytes, step};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        REQUIRE_FALSE(read_response(reader, parser, in));
        CHECK(res.status == 200);
        CHECK(res.body == "{\"Leader\":true}");
        CHECK(parser.need_eof());
        CHECK_FALSE(parser.keep_alive());
    }
}

TEST_CASE("a TLS truncation is end_of_stream before a response and partial_message within one",
          "[response_reader]") {
    const error_code truncated = asio::ssl::error::stream_truncated;
    const auto read_until_truncated = [&](const std::string& bytes) {
        connection_bytes in{bytes};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        return read_response(reader, parser, in, truncated);
    };
    CHECK(read_until_truncated("") == bhttp::error::end_of_stream);
    CHECK(read_until_truncated("HTTP/1.1 200 OK\r\n") == bhttp::error::partial_message);
    CHECK(read_until_truncated("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345") ==
          bhttp::error::partial_message);
    // Never a success, even for a response the end of the stream would complete: without
    // close_notify, the stream's end may be an attacker's.
    CHECK(read_until_truncated("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody") ==
          bhttp::error::partial_message);
}

TEST_CASE("a read error other than the stream's end is reported as it is", "[response_reader]") {
    connection_bytes in{"HTTP/1.1 200 OK\r\n"};
    response_reader reader;
    response res;
    response_parser parser{res, no_body_limit};
    const error_code reset = asio::error::connection_reset;
    CHECK(read_response(reader, parser, in, reset) == reset);
}

TEST_CASE("a header block larger than a read fails with header_limit", "[response_reader]") {
    // The parser's header limit (8 KiB) ends it long before the buffer could fill: the
    // reader never holds more than a header and one read.
    std::string bytes = "HTTP/1.1 200 OK\r\n";
    while (bytes.size() <= response_reader::max_read_size + 1024)
        bytes += "X-Padding: " + std::string(100, 'p') + "\r\n";
    bytes += "Content-Length: 0\r\n\r\n";
    for (const std::size_t step : {bytes.size(), std::size_t(1000)}) {
        INFO("step " << step);
        connection_bytes in{bytes, step};
        response_reader reader;
        response res;
        response_parser parser{res, no_body_limit};
        CHECK(read_response(reader, parser, in) == bhttp::error::header_limit);
        CHECK(in.pos < bytes.size());
    }
}

TEST_CASE("a buffer full of an unfinished header fails with buffer_overflow", "[response_reader]") {
    // A reader whose buffer is bounded below the parser's header limit: once it has seen
    // part of the fields, the parser waits for the header's end to be in the buffer.
    std::string bytes = "HTTP/1.1 200 OK\r\n";
    while (bytes.size() <= 2048)
        bytes += "X-Padding: " + std::string(100, 'p') + "\r\n";
    bytes += "Content-Length: 0\r\n\r\n";
    connection_bytes in{bytes};
    response_reader reader{1024};
    response res;
    response_parser parser{res, no_body_limit};
    CHECK(read_response(reader, parser, in) == bhttp::error::buffer_overflow);
    CHECK(in.pos < bytes.size());
}

TEST_CASE("Consul's index, leader and last contact headers are read into the meta",
          "[response_reader]") {
    connection_bytes in{"HTTP/1.1 200 OK\r\n"
                        "Content-Type: application/json\r\n"
                        "X-Consul-Index: 1234\r\n"
                        "X-Consul-KnownLeader: true\r\n"
                        "X-Consul-LastContact: 15\r\n"
                        "Content-Length: 2\r\n"
                        "\r\n"
                        "[]",
                        5};
    response_reader reader;
    response res;
    response_parser parser{res, no_body_limit};
    REQUIRE_FALSE(read_response(reader, parser, in));
    CHECK(res.meta.index == 1234);
    CHECK(res.meta.known_leader);
    CHECK(res.meta.last_contact == 15ms);
    CHECK(res.body == "[]");
}
