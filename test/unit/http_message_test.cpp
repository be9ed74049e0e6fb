// SPDX-License-Identifier: BSL-1.0
// The client's HTTP messages without sockets: the request head bytes, and what the
// response parser keeps (status, body, Consul's meta headers, keep-alive) however the
// bytes arrive.
#include "http/request.hpp"
#include "http/response_parser.hpp"
#include "support/catch.hpp"

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

using namespace conclave;
using namespace conclave::detail::http;
using namespace std::chrono_literals;
namespace bhttp = boost::beast::http;

namespace {

std::string head_of(const request& req) {
    std::string out = "stale";
    out.clear(); // a reused string: only this head's bytes
    append_request_head(out, req);
    return out;
}

struct parsed {
    error_code ec;
    bool keep_alive = false;
    bool need_eof = false;
};

// Feeds `bytes` to a parser `step` bytes at a time, as reads would deliver them, then the
// end of the stream if the message is still open.
parsed parse(const std::string& bytes, response& res, std::size_t step,
             std::size_t body_limit = 1 << 20) {
    response_parser p{res, body_limit};
    p.eager(true);
    std::string pending;
    std::size_t fed = 0;
    parsed out;
    bool want_more = true;
    while (!p.is_done()) {
        if (want_more) {
            if (fed == bytes.size()) {
                p.put_eof(out.ec);
                break;
            }
            const std::size_t n = std::min(step, bytes.size() - fed);
            pending.append(bytes, fed, n);
            fed += n;
        }
        error_code ec;
        const std::size_t used = p.put(boost::asio::buffer(pending), ec);
        pending.erase(0, used);
        if (ec && ec != bhttp::error::need_more) {
            out.ec = ec;
            return out;
        }
        want_more = ec == bhttp::error::need_more || used == 0 || pending.empty();
    }
    if (!out.ec) {
        out.keep_alive = p.keep_alive();
        out.need_eof = p.need_eof();
    }
    return out;
}

} // namespace

TEST_CASE("a PUT without a body still says Content-Length: 0", "[http_message]") {
    request req;
    req.method = bhttp::verb::put;
    req.target = "/v1/session/destroy/abc";
    req.host = "127.0.0.1:8500";
    CHECK(head_of(req) == "PUT /v1/session/destroy/abc HTTP/1.1\r\n"
                          "Host: 127.0.0.1:8500\r\n"
                          "User-Agent: conclave/0.1\r\n"
                          "Content-Length: 0\r\n"
                          "\r\n");
    req.method = bhttp::verb::post;
    CHECK(head_of(req).find("\r\nContent-Length: 0\r\n") != std::string::npos);
}

TEST_CASE("a GET or DELETE without a body has no Content-Length", "[http_message]") {
    request req;
    req.target = "/v1/kv/k?index=17";
    req.host = "localhost";
    req.token = "secret-token";
    CHECK(head_of(req) == "GET /v1/kv/k?index=17 HTTP/1.1\r\n"
                          "Host: localhost\r\n"
                          "User-Agent: conclave/0.1\r\n"
                          "X-Consul-Token: secret-token\r\n"
                          "\r\n");
    req.method = bhttp::verb::delete_;
    CHECK(head_of(req).find("Content-Length") == std::string::npos);
    CHECK(head_of(req).starts_with("DELETE /v1/kv/k?index=17 HTTP/1.1\r\n"));
}

TEST_CASE("a request with a body carries token, authorization, type and length in order",
          "[http_message]") {
    request req;
    req.method = bhttp::verb::put;
    req.target = "/v1/txn";
    req.host = "consul:8500";
    req.token = "t";
    req.authorization = "Basic dTpw";
    req.content_type = "application/json";
    req.body = std::string(1234, 'x');
    CHECK(head_of(req) == "PUT /v1/txn HTTP/1.1\r\n"
                          "Host: consul:8500\r\n"
                          "User-Agent: conclave/0.1\r\n"
                          "X-Consul-Token: t\r\n"
                          "Authorization: Basic dTpw\r\n"
                          "Content-Type: application/json\r\n"
                          "Content-Length: 1234\r\n"
                          "\r\n");
}

TEST_CASE("a request head is appended after what the string holds", "[http_message]") {
    // The head is written into place after the string's old end, its size added up first:
    // every part must land where the appends of each would have put it.
    request req;
    req.method = bhttp::verb::put;
    req.target = "/v1/kv/a%20b?cas=0&flags=3304740253564472344";
    req.host = "[::1]:8500";
    req.user_agent = "agent/2";
    req.token = "0123456789abcdef0123456789abcdef0123";
    req.content_type = "application/octet-stream";
    req.body = std::string(100000, 'x');
    const std::string expected = "PUT /v1/kv/a%20b?cas=0&flags=3304740253564472344 HTTP/1.1\r\n"
                                 "Host: [::1]:8500\r\n"
                                 "User-Agent: agent/2\r\n"
                                 "X-Consul-Token: 0123456789abcdef0123456789abcdef0123\r\n"
                                 "Content-Type: application/octet-stream\r\n"
                                 "Content-Length: 100000\r\n"
                                 "\r\n";
    CHECK(head_of(req) == expected);
    std::string out = "earlier bytes";
    append_request_head(out, req);
    CHECK(out == "earlier bytes" + expected);
    // Each optional line alone, and a GET with a body, which says its length.
    req.method = bhttp::verb::get;
    req.token = {};
    req.content_type = nullptr;
    req.body = "b";
    CHECK(head_of(req) == "GET /v1/kv/a%20b?cas=0&flags=3304740253564472344 HTTP/1.1\r\n"
                          "Host: [::1]:8500\r\n"
                          "User-Agent: agent/2\r\n"
                          "Content-Length: 1\r\n"
                          "\r\n");
    req.method = bhttp::verb::options;
    req.body.clear();
    req.content_type = "text/plain";
    CHECK(head_of(req) == "OPTIONS /v1/kv/a%20b?cas=0&flags=3304740253564472344 HTTP/1.1\r\n"
                          "Host: [::1]:8500\r\n"
                          "User-Agent: agent/2\r\n"
                          "Content-Type: text/plain\r\n"
                          "Content-Length: 0\r\n"
                          "\r\n");
}

TEST_CASE("the parser keeps status, body and meta headers whatever their case", "[http_message]") {
    const std::string bytes = "HTTP/1.1 404 Not Found\r\n"
                              "content-type: application/json\r\n"
                              "x-consul-index: 42\r\n"
                              "X-CONSUL-KNOWNLEADER: true\r\n"
                              "X-Consul-Lastcontact: 7\r\n"
                              "X-Consul-Effective-Consistency: leader\r\n"
                              "X-Consul-Index-Other: 99\r\n"
                              "Content-Length: 5\r\n"
                              "\r\n"
                              "hello";
    for (const std::size_t step : {bytes.size(), std::size_t(1), std::size_t(7)}) {
        INFO("step " << step);
        response res;
        res.body = "left over";
        res.meta.index = 5;
        const auto r = parse(bytes, res, step);
        REQUIRE_FALSE(r.ec);
        CHECK(res.status == 404);
        CHECK(res.body == "hello");
        CHECK(res.meta.index == 42);
        CHECK(res.meta.known_leader);
        CHECK(res.meta.last_contact == 7ms);
        CHECK(r.keep_alive);
        CHECK_FALSE(r.need_eof);
    }
}

TEST_CASE("absent meta headers read as zero and false", "[http_message]") {
    response res;
    const auto r = parse(
        "HTTP/1.1 200 OK\r\nX-Consul-KnownLeader: false\r\nContent-Length: 0\r\n\r\n", res, 64);
    REQUIRE_FALSE(r.ec);
    CHECK(res.status == 200);
    CHECK(res.body.empty());
    CHECK(res.meta.index == 0);
    CHECK_FALSE(res.meta.known_leader);
    CHECK(res.meta.last_contact == 0ms);
}

TEST_CASE("a chunked body is joined", "[http_message]") {
    const std::string bytes = "HTTP/1.1 200 OK\r\n"
                              "Transfer-Encoding: chunked\r\n"
                              "X-Consul-Index: 9\r\n"
                              "\r\n"
                              "5\r\n[{\"a\"\r\n"
                              "a;ext=1\r\n:1},{\"b\":2\r\n"
                              "2\r\n}]\r\n"
                              "0\r\n\r\n";
    for (const std::size_t step : {bytes.size(), std::size_t(1), std::size_t(3)}) {
        INFO("step " << step);
        response res;
        const auto r = parse(bytes, res, step);
        REQUIRE_FALSE(r.ec);
        CHECK(res.body == R"([{"a":1},{"b":2}])");
        CHECK(res.meta.index == 9);
        CHECK(r.keep_alive);
    }
}

TEST_CASE("a body over the limit is refused, by length or in chunks", "[http_message]") {
    response res;
    auto r = parse("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello world", res, 64, 10);
    CHECK(r.ec == bhttp::error::body_limit);
    r = parse("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhelloworld", res, 64, 10);
    CHECK_FALSE(r.ec);
    r = parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
              "6\r\nhello \r\n5\r\nworld\r\n0\r\n\r\n",
              res, 64, 10);
    CHECK(r.ec == bhttp::error::body_limit);
}

TEST_CASE("Connection: close and bodies delimited by EOF end the connection", "[http_message]") {
    response res;
    auto r = parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", res, 64);
    REQUIRE_FALSE(r.ec);
    CHECK_FALSE(r.keep_alive);
    r = parse("HTTP/1.1 200 OK\r\n\r\nuntil the end", res, 64);
    REQUIRE_FALSE(r.ec);
    CHECK(res.body == "until the end");
    CHECK_FALSE(r.keep_alive);
    CHECK(r.need_eof);
    r = parse("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", res, 64);
    REQUIRE_FALSE(r.ec);
    CHECK_FALSE(r.keep_alive);
}
