// SPDX-License-Identifier: BSL-1.0
// Malformed and abusive requests get Go's / Consul's answer and never hurt other
// connections or the agent.
#include "agent_fixture.hpp"
#include "support/catch.hpp"

using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

asio::awaitable<std::string> raw_exchange(std::uint16_t port, std::string bytes) {
    const auto ex = co_await asio::this_coro::executor;
    http_conn conn(ex, port);
    {
        const auto r1_ = co_await conn.connect();
        REQUIRE_FALSE(r1_);
    }
    co_await conn.send_raw(std::move(bytes));
    co_return co_await conn.read_until_close();
}

} // namespace

TEST_CASE("garbage bytes get 400 and a closed connection, others keep working",
          "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto ex = co_await asio::this_coro::executor;
        http_conn other(ex, f.port());
        {
            const auto r2_ = co_await other.connect();
            REQUIRE_FALSE(r2_);
        }
        {
            const auto r3_ = co_await other.request("PUT", "/v1/kv/k", "v");
            REQUIRE(r3_.status == 200);
        }

        const std::vector<std::string> garbages{
            std::string("\x00\x01\x02garbage\r\n\r\n", 14), std::string("GET\r\n\r\n"),
            std::string("GET /v1/kv/k HTTP/9.9\r\n\r\n"),
            std::string("GET /v1/kv/k HTTP/1.1\r\nContent-Length: -4\r\nHost: a\r\n\r\n")};
        for (const std::string& garbage : garbages) {
            const std::string answer = co_await raw_exchange(f.port(), garbage);
            INFO(garbage);
            CHECK(answer.starts_with("HTTP/1.1 400 Bad Request"));
        }
        // A target Go cannot parse, and a bad %-escape.
        const std::string no_slash =
            co_await raw_exchange(f.port(), "GET v1/kv/k HTTP/1.1\r\nHost: a\r\n\r\n");
        CHECK(no_slash.starts_with("HTTP/1.1 400"));
        const std::string bad_escape =
            co_await raw_exchange(f.port(), "GET /v1/kv/%zz HTTP/1.1\r\nHost: a\r\n\r\n");
        CHECK(bad_escape.starts_with("HTTP/1.1 400"));
        // HTTP/1.1 needs a Host header.
        const std::string no_host =
            co_await raw_exchange(f.port(), "GET /v1/kv/k HTTP/1.1\r\n\r\n");
        CHECK(no_host.starts_with("HTTP/1.1 400 Bad Request"));
        CHECK(no_host.find("missing required Host header") != std::string::npos);

        // The earlier connection is unaffected.
        const http_reply again = co_await other.request("GET", "/v1/kv/k");
        CHECK(again.status == 200);
    }(f));
}

// The body is parsed from what came with the head when it is all there, and read on
// otherwise (in pieces, chunked or not).
TEST_CASE("a request body is read whole however it arrives", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto ex = co_await asio::this_coro::executor;
        const std::string value(3000, 'v');
        const std::string head_cl = "PUT /v1/kv/k HTTP/1.1\r\nHost: a\r\nConnection: close\r\n"
                                    "Content-Length: 3000\r\n\r\n";
        const std::string head_chunked = "PUT /v1/kv/k HTTP/1.1\r\nHost: a\r\nConnection: "
                                         "close\r\nTransfer-Encoding: chunked\r\n\r\n";
        const std::string chunked = "7d0\r\n" + value.substr(0, 2000) + "\r\n3e8\r\n" +
                                    value.substr(2000) + "\r\n0\r\n\r\n";
        // Each request as the pieces it is sent in, a little apart (separate reads).
        const std::vector<std::vector<std::string>> requests{
            {head_cl + value},
            {head_cl, value.substr(0, 1000), value.substr(1000)},
            {head_cl + value.substr(0, 10), value.substr(10)},
            {head_chunked + chunked},
            {head_chunked + chunked.substr(0, 900), chunked.substr(900)},
        };
        for (std::size_t i = 0; i < requests.size(); ++i) {
            INFO("request " << i);
            {
                const auto d_ = co_await http(f.port(), "DELETE", "/v1/kv/k");
                REQUIRE(d_.status == 200);
            }
            http_conn conn(ex, f.port());
            {
                const auto c_ = co_await conn.connect();
                REQUIRE_FALSE(c_);
            }
            for (std::size_t piece = 0; piece < requests[i].size(); ++piece) {
                if (piece > 0)
                    co_await sleep_for(20ms);
                const auto s_ = co_await conn.send_raw(requests[i][piece]);
                REQUIRE_FALSE(s_);
            }
            const std::string answer = co_await conn.read_until_close();
            CHECK(answer.starts_with("HTTP/1.1 200 OK"));
            const auto r = co_await http(f.port(), "GET", "/v1/kv/k?raw");
            CHECK(r.status == 200);
            CHECK(r.body == value);
        }
    }(f));
}

TEST_CASE("huge headers get 431", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        std::string req = "GET /v1/kv/k HTTP/1.1\r\nHost: a\r\nX-Big: ";
        req.append((1 << 20) + 8192, 'a');
        req += "\r\n\r\n";
        const std::string answer = co_await raw_exchange(f.port(), std::move(req));
        CHECK(answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large"));
        {
            const auto r4_ = co_await http(f.port(), "GET", "/v1/kv/k");
            CHECK(r4_.status == 404);
        }
    }(f));
}

TEST_CASE("after an error answer a silent client is dropped once the 2 s drain ends",
          "[agent][malformed]") {
    // The connection's own deadline (the drain's 2 s, shorter than the 60 s the watchdog
    // usually waits) closes it, not the client.
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto ex = co_await asio::this_coro::executor;
        http_conn conn(ex, f.port());
        {
            const auto r1_ = co_await conn.connect();
            REQUIRE_FALSE(r1_);
        }
        std::string garbage = "GET\r\n\r\n";
        {
            const auto r2_ = co_await conn.send_raw(std::move(garbage));
            REQUIRE_FALSE(r2_);
        }
        // The agent shuts its sending side at once; this side stays open and silent.
        const std::string answer = co_await conn.read_until_close();
        CHECK(answer.starts_with("HTTP/1.1 400 Bad Request"));
        const auto since = std::chrono::steady_clock::now();
        while (f.agent.stats().connections_open > 0) {
            REQUIRE(seconds(std::chrono::steady_clock::now() - since) < 10);
            co_await sleep_for(10ms);
        }
        CHECK(seconds(std::chrono::steady_clock::now() - since) > 1.0);
    }(f));
}

TEST_CASE("bad JSON bodies get Consul's decode errors", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const http_reply s1 = co_await http(port, "PUT", "/v1/session/create", "{bad json");
        CHECK(s1.status == 400);
        CHECK(s1.body ==
              "Request decode failed: invalid character 'b' looking for beginning of object key "
              "string");
        CHECK(s1.header("content-type") == "text/plain; charset=utf-8");
        const http_reply s2 = co_await http(port, "PUT", "/v1/session/create", R"({"TTL": 10})");
        CHECK(s2.body == "Request decode failed: json: cannot unmarshal number into Go struct "
                         "field .TTL of type string");
        const http_reply s3 = co_await http(port, "PUT", "/v1/session/create", R"({"Name": "x")");
        CHECK(s3.body == "Request decode failed: unexpected EOF");

        const http_reply t1 = co_await http(port, "PUT", "/v1/txn", "not json");
        CHECK(t1.status == 400);
        CHECK(t1.body ==
              "Failed to parse body: invalid character 'o' in literal null (expecting 'u')");
        const http_reply t2 = co_await http(port, "PUT", "/v1/txn", "");
        CHECK(t2.status == 400);
        CHECK(t2.body == "Failed to parse body: EOF");
        const http_reply t3 = co_await http(port, "PUT", "/v1/txn",
                                            R"([{"KV":{"Verb":"set","Key":"k","Value":"%%"}}])");
        CHECK(t3.body == "Failed to parse body: illegal base64 data at input byte 0");
        const http_reply c1 = co_await http(port, "PUT", "/v1/catalog/register", "[");
        CHECK(c1.status == 400);
        CHECK(c1.body == "Request decode failed: unexpected EOF");
        // Deeply nested input is refused, not recursed into.
        const http_reply deep = co_await http(port, "PUT", "/v1/txn",
                                              std::string(20000, '[') + std::string(20000, ']'));
        CHECK(deep.status == 400);
        CHECK(deep.body.find("exceeded max depth") != std::string::npos);
        {
            const auto r5_ = co_await http(port, "GET", "/v1/kv/k");
            CHECK(r5_.status == 404);
        }
    }(f));
}

TEST_CASE("an oversized KV value gets 413 and Connection: close", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const http_reply big = co_await http(port, "PUT", "/v1/kv/big", std::string(524289, 'x'));
        CHECK(big.status == 413);
        CHECK(big.body == "Request body(524289 bytes) too large, max size: 524288 bytes. See "
                          "https://www.consul.io/docs/agent/options.html#kv_max_value_size.");
        CHECK(big.header("connection") == "close");
        {
            const auto r6_ = co_await http(port, "GET", "/v1/kv/big");
            CHECK(r6_.status == 404);
        }
        const http_reply ok = co_await http(port, "PUT", "/v1/kv/ok", std::string(524288, 'x'));
        CHECK(ok.status == 200);
        // Consul 1.8's texts: by the Content-Length, and for a chunked body over the limit.
        const http_reply txn = co_await http(port, "PUT", "/v1/txn", std::string(600000, ' '));
        CHECK(txn.status == 413);
        CHECK(txn.body == "Request body(600000 bytes) too large, max size: 524288 bytes. See "
                          "https://www.consul.io/docs/agent/options.html#txn_max_req_len.");
        CHECK(txn.header("connection") == "close");
        std::string chunked =
            "PUT /v1/txn HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";
        for (int i = 0; i < 10; ++i)
            chunked += "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
        chunked += "0\r\n\r\n";
        const std::string txn_chunked = co_await raw_exchange(port, std::move(chunked));
        CHECK(txn_chunked.starts_with("HTTP/1.1 413 ")); // (Go: Request Entity Too Large)
        CHECK(txn_chunked.ends_with(
            "\r\n\r\nRequest body too large, max size: 524288 bytes. See "
            "https://www.consul.io/docs/agent/options.html#txn_max_req_len."));
    }(f));
}

TEST_CASE("a nil transaction operation drops only its own connection", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const http_reply r = co_await http(f.port(), "PUT", "/v1/txn", "[null]");
        CHECK(r.ec);
        {
            const auto r7_ = co_await http(f.port(), "PUT", "/v1/txn", "[]");
            CHECK(r7_.status == 200);
        }
    }(f));
}

TEST_CASE("keep-alive and pipelined requests are answered in order", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto ex = co_await asio::this_coro::executor;
        http_conn conn(ex, f.port());
        {
            const auto r8_ = co_await conn.connect();
            REQUIRE_FALSE(r8_);
        }
        for (int i = 0; i < 3; ++i) {
            const auto r9_ = co_await conn.request("PUT", "/v1/kv/k" + std::to_string(i), "v");
            CHECK(r9_.status == 200);
        }
        CHECK(f.agent.stats().connections_accepted == 1);

        const std::string two = "GET /v1/kv/k0 HTTP/1.1\r\nHost: a\r\n\r\n"
                                "GET /v1/kv/nope HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n";
        const std::string answer = co_await raw_exchange(f.port(), two);
        const auto first = answer.find("HTTP/1.1 200 OK");
        const auto second = answer.find("HTTP/1.1 404 Not Found");
        CHECK(first != std::string::npos);
        CHECK(second != std::string::npos);
        CHECK(first < second);
    }(f));
}

TEST_CASE("wrong methods get 405 with Allow, OPTIONS lists the methods", "[agent][malformed]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const http_reply post = co_await http(f.port(), "POST", "/v1/kv/k", "x");
        CHECK(post.status == 405);
        CHECK(post.header("allow") == "OPTIONS,GET,PUT,DELETE");
        CHECK(post.body == "method POST not allowed");
        const http_reply weird = co_await http(f.port(), "BREW", "/v1/txn");
        CHECK(weird.status == 405);
        CHECK(weird.header("allow") == "OPTIONS,PUT");
        const http_reply options = co_await http(f.port(), "OPTIONS", "/v1/session/info/x");
        CHECK(options.status == 200);
        CHECK(options.header("allow") == "OPTIONS,GET");
        CHECK(options.body.empty());
        const http_reply slash = co_await http(f.port(), "GET", "/v1/kv//k?raw");
        CHECK(slash.status == 301);
        CHECK(slash.header("location") == "/v1/kv/k?raw");
        const http_reply unknown = co_await http(f.port(), "GET", "/v1/not-an-endpoint");
        CHECK(unknown.status == 404);
        CHECK(unknown.body.empty());
        CHECK_FALSE(unknown.has("content-type"));
    }(f));
}
