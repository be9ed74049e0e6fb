// SPDX-License-Identifier: BSL-1.0
// The dev agent's HTTP timeouts (docs/dev-agent.md, "Limits"): idle and slow clients are
// closed on time, as Go's http.Server closes them (0 meaning none, or read_timeout's), and
// no timeout cuts a blocking query short.
#include "limits_support.hpp"

using namespace conclave::test;
using namespace conclave::test::limits;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace dev = conclave::dev;

TEST_CASE("timeouts of 0 are none, as in Go's http.Server", "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.read_header_timeout = 0ms;
    cfg.read_timeout = 0ms;
    cfg.idle_timeout = 0ms;
    cfg.write_timeout = 0ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        raw_conn c(co_await asio::this_coro::executor);
        {
            const bool ok = co_await c.connect(f.port());
            REQUIRE(ok);
        }
        // Silent, then a head and a body that pause, then idle between requests: all served.
        const raw_conn::ending silent = co_await c.read_until_close(1200ms);
        CHECK_FALSE(silent.closed);
        {
            const bool ok = co_await c.send("PUT /v1/kv/k HTTP/1.1\r\nHost: a\r\n");
            REQUIRE(ok);
        }
        co_await sleep_for(1200ms);
        {
            const bool ok = co_await c.send("Content-Length: 3\r\n\r\na");
            REQUIRE(ok);
        }
        co_await sleep_for(1200ms);
        {
            const bool ok = co_await c.send("bc");
            REQUIRE(ok);
        }
        co_await sleep_for(1200ms);
        {
            const bool ok = co_await c.send(
                "GET /v1/kv/k?raw HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n");
            REQUIRE(ok);
        }
        const raw_conn::ending end = co_await c.read_until_close();
        CHECK(end.closed);
        CHECK(end.bytes.starts_with("HTTP/1.1 200 OK\r\n"));
        CHECK(end.bytes.find("HTTP/1.1 200 OK\r\n", 1) != std::string::npos);
        CHECK(end.bytes.ends_with("\r\n\r\nabc"));
        CHECK(f.agent.stats().connections_timed_out == 0);
    }(f));
}

TEST_CASE("a read_header_timeout or idle_timeout of 0 is read_timeout's, as in Go",
          "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.read_header_timeout = 0ms;
    cfg.idle_timeout = 0ms;
    cfg.read_timeout = 1000ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        // A new connection that sends nothing: its head has read_timeout.
        raw_conn silent(co_await asio::this_coro::executor);
        {
            const bool ok = co_await silent.connect(f.port());
            REQUIRE(ok);
        }
        const raw_conn::ending end = co_await silent.read_until_close();
        CHECK(end.closed);
        CHECK(end.bytes.empty());
        CHECK(end.seconds > 0.7);
        CHECK(end.seconds < 8);
        // A kept-alive connection, idle after its request: read_timeout too.
        http_conn conn(co_await asio::this_coro::executor, f.port());
        {
            const auto ec = co_await conn.connect();
            REQUIRE_FALSE(ec);
        }
        const http_reply r = co_await conn.request("GET", "/v1/status/leader");
        CHECK(r.status == 200);
        const auto start = std::chrono::steady_clock::now();
        const std::string rest = co_await conn.read_until_close(10000ms);
        const double took = seconds(std::chrono::steady_clock::now() - start);
        CHECK(rest.empty());
        CHECK(took > 0.7);
        CHECK(took < 8);
        co_await until([&] { return f.agent.stats().connections_timed_out == 2; });
    }(f));
}

TEST_CASE("a new connection that sends nothing is closed after read_header_timeout",
          "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.read_header_timeout = 300ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        raw_conn c(co_await asio::this_coro::executor);
        {
            const bool ok6_ = co_await c.connect(f.port());
            REQUIRE(ok6_);
        }
        const raw_conn::ending end = co_await c.read_until_close();
        CHECK(end.closed);
        CHECK(end.bytes.empty()); // Go closes on its timeouts without an answer
        CHECK(end.seconds > 0.2);
        CHECK(end.seconds < 8);
        co_await until([&] { return f.agent.stats().connections_timed_out == 1; });
    }(f));
}

TEST_CASE("a request head trickling in is closed at read_header_timeout, however steady",
          "[agent][limits][timeouts]") {
    // The timeout bounds the whole head (Go's ReadHeaderTimeout), not the gap between bytes.
    dev::agent_config cfg = test_agent_config();
    cfg.read_header_timeout = 400ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        raw_conn c(co_await asio::this_coro::executor);
        {
            const bool ok7_ = co_await c.connect(f.port());
            REQUIRE(ok7_);
        }
        const std::string head = large_head("/v1/kv/k", 4000);
        const auto start = std::chrono::steady_clock::now();
        std::size_t sent = 0;
        while (f.agent.stats().connections_timed_out == 0 && sent < head.size()) {
            const bool delivered = co_await c.send(std::string_view(head).substr(sent, 1));
            if (!delivered)
                break;
            ++sent;
            co_await sleep_for(20ms); // the client's pace: the behaviour under test
        }
        CHECK(sent < head.size());
        const raw_conn::ending end = co_await c.read_until_close();
        CHECK(end.closed);
        CHECK(end.bytes.empty());
        const double took = seconds(std::chrono::steady_clock::now() - start);
        CHECK(took > 0.3);
        CHECK(took < 8);
        co_await until([&] { return f.agent.stats().connections_timed_out == 1; });
    }(f));
}

TEST_CASE("a body that stops coming is closed at read_timeout without an answer",
          "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.read_timeout = 500ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        raw_conn c(co_await asio::this_coro::executor);
        {
            const bool ok8_ = co_await c.connect(f.port());
            REQUIRE(ok8_);
        }
        {
            const bool ok9_ = co_await c.send(
                "PUT /v1/kv/k HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\n0123456789");
            REQUIRE(ok9_);
        }
        const raw_conn::ending end = co_await c.read_until_close();
        CHECK(end.closed);
        CHECK(end.bytes.empty());
        CHECK(end.seconds > 0.3);
        CHECK(end.seconds < 8);
        co_await until([&] { return f.agent.stats().connections_timed_out == 1; });
        {
            const auto r = co_await http(f.port(), "GET", "/v1/kv/k");
            CHECK(r.status == 404);
        }
    }(f));
}

TEST_CASE("a kept-alive connection is closed after idle_timeout, not while in use",
          "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.idle_timeout = 1000ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        http_conn conn(co_await asio::this_coro::executor, f.port());
        {
            const auto ec2_ = co_await conn.connect();
            REQUIRE_FALSE(ec2_);
        }
        for (int i = 0; i < 4; ++i) {
            if (i > 0)
                co_await sleep_for(100ms); // well within idle_timeout
            const http_reply r = co_await conn.request("GET", "/v1/status/leader");
            CHECK(r.status == 200);
        }
        CHECK(f.agent.stats().connections_accepted == 1);
        const auto start = std::chrono::steady_clock::now();
        const std::string rest = co_await conn.read_until_close(10000ms);
        const double took = seconds(std::chrono::steady_clock::now() - start);
        CHECK(rest.empty());
        CHECK(took > 0.7);
        CHECK(took < 8);
        co_await until([&] { return f.agent.stats().connections_timed_out == 1; });
    }(f));
}

TEST_CASE("a client that does not read its answer is closed after write_timeout",
          "[agent][limits][timeouts]") {
    dev::agent_config cfg = test_agent_config();
    cfg.write_timeout = 500ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        // ~17 MB of JSON: more than the socket buffers take.
        const std::string value(524288, 'v');
        for (int i = 0; i < 24; ++i) {
            const auto r = co_await http(f.port(), "PUT", "/v1/kv/big/" + std::to_string(i), value);
            REQUIRE(r.status == 200);
        }
        raw_conn c(co_await asio::this_coro::executor);
        c.sock.open(tcp::v4());
        c.sock.set_option(asio::socket_base::receive_buffer_size(4096));
        {
            const bool ok10_ = co_await c.connect(f.port());
            REQUIRE(ok10_);
        }
        {
            const bool ok11_ =
                co_await c.send("GET /v1/kv/big/?recurse HTTP/1.1\r\nHost: a\r\n\r\n");
            REQUIRE(ok11_);
        }
        co_await until([&] { return f.agent.stats().connections_timed_out == 1; });
        CHECK(f.agent.stats().connections_open == 0);
    }(f));
}

TEST_CASE("the timeouts never cut a blocking query short", "[agent][limits][timeouts]") {
    // They bound what the client sends, not the agent's wait for an answer: each is a third
    // of the wait (short enough to end it, long enough for a loaded machine's requests).
    dev::agent_config cfg = test_agent_config();
    cfg.read_header_timeout = 1000ms;
    cfg.read_timeout = 1000ms;
    cfg.idle_timeout = 1000ms;
    cfg.write_timeout = 1000ms;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        http_conn conn(co_await asio::this_coro::executor, f.port());
        {
            const auto ec3_ = co_await conn.connect();
            REQUIRE_FALSE(ec3_);
        }
        const http_reply first = co_await conn.request("PUT", "/v1/kv/k", "v");
        REQUIRE(first.status == 200);
        const http_reply current = co_await conn.request("GET", "/v1/kv/k");
        REQUIRE(current.status == 200);
        const http_reply blocked = co_await conn.request(
            "GET", "/v1/kv/k?index=" + std::to_string(current.index()) + "&wait=3s");
        CHECK(blocked.status == 200);
        CHECK(seconds(blocked.elapsed) > 2.9);
        // The same connection, kept alive.
        const http_reply after = co_await conn.request("GET", "/v1/kv/k");
        CHECK(after.status == 200);
        CHECK(f.agent.stats().connections_accepted == 1);
        CHECK(f.agent.stats().connections_timed_out == 0);
    }(f));
}
