// SPDX-License-Identifier: BSL-1.0
// Consul limits the connections one address holds at once (limits.http_max_conns_per_client,
// 200 by default) and answers one more with a 429 before reading anything on it. A client
// that meets the limit keeps to the connections it has: the refused request goes out again
// on one of them, blocking queries take fewer, and short requests still get through.
#include "client_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

constexpr std::size_t server_limit = 4;

dev::agent_config limited_agent() {
    auto cfg = test_agent_config();
    cfg.max_conns_per_client = server_limit;
    return cfg;
}

// A server that accepts `server_limit` connections from one address, and clients of it.
struct limited_fixture {
    asio::io_context ioc;
    backend server{ioc, limited_agent()};
    std::string p = server.prefix();

    client make_client(std::size_t max_connections, std::size_t share,
                       std::chrono::milliseconds request_timeout = 10s) {
        auto cfg = server.client_config();
        cfg.max_connections = max_connections;
        cfg.consul_connection_limit = share;
        cfg.request_timeout = request_timeout;
        return client{ioc.get_executor(), cfg};
    }

    ~limited_fixture() {
        client consul = make_client(1, 1);
        auto cleanup = [&]() -> asio::awaitable<void> {
            co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse(true), tuple_token);
        };
        try {
            run(ioc, cleanup(), 5000ms);
        } catch (...) {
        }
    }
};

// `server_limit` connections to `ep`, each served a request, once the server counts no
// earlier connection from this address (an abandoned blocking query's stays counted until
// its wait is over, into the next test case): until then one of them is refused with a 429,
// and they are tried again. (No event says when the server forgets a connection.)
asio::awaitable<std::vector<asio::ip::tcp::socket>>
all_connections_served(const asio::ip::tcp::endpoint& ep) {
    using tcp = asio::ip::tcp;
    constexpr auto token = asio::as_tuple(asio::use_awaitable);
    const std::string request = "GET /v1/status/leader HTTP/1.1\r\nHost: probe\r\n\r\n";
    auto ex = co_await asio::this_coro::executor;
    for (;;) {
        std::vector<tcp::socket> probes;
        bool served = true;
        for (std::size_t i = 0; i < server_limit && served; ++i) {
            probes.emplace_back(ex);
            auto [ec] = co_await probes.back().async_connect(ep, token);
            served = !ec;
        }
        for (auto& s : probes) {
            if (!served)
                break;
            auto [wec, written] = co_await asio::async_write(s, asio::buffer(request), token);
            asio::streambuf head;
            auto [rec, got] = co_await asio::async_read_until(s, head, "\r\n", token);
            const std::string line{asio::buffers_begin(head.data()),
                                   asio::buffers_begin(head.data()) + static_cast<long>(got)};
            served = !wec && !rec && line.find(" 200 ") != std::string::npos;
        }
        if (served)
            co_return probes;
        probes.clear();
        asio::steady_timer pause{ex, 100ms};
        co_await pause.async_wait(asio::use_awaitable);
    }
}

} // namespace

TEST_CASE_METHOD(limited_fixture,
                 "a connection beyond the per-client limit is answered with a 429 and closed",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    const auto cfg = server.client_config();
    auto body = [&]() -> asio::awaitable<void> {
        const asio::ip::tcp::endpoint ep{asio::ip::make_address(cfg.host), cfg.port};
        std::vector<asio::ip::tcp::socket> accepted;
        for (std::size_t i = 0; i < server_limit; ++i) {
            accepted.emplace_back(ioc);
            co_await accepted.back().async_connect(ep, asio::use_awaitable);
        }
        asio::ip::tcp::socket refused{ioc};
        co_await refused.async_connect(ep, asio::use_awaitable);
        std::string answer;
        auto [ec, n] = co_await asio::async_read(refused, asio::dynamic_buffer(answer),
                                                 asio::as_tuple(asio::use_awaitable));
        CHECK(ec == asio::error::eof); // and then closed
        CHECK(answer == "HTTP/1.1 429 Too Many Requests\r\n"
                        "Content-Type: text/plain\r\n"
                        "Content-Length: 81\r\n"
                        "Connection: close\r\n"
                        "\r\n"
                        "Your IP is issuing too many concurrent connections, please rate "
                        "limit your calls\n");
    };
    run(ioc, body());
}

namespace {

// Blocking queries on `keys` keys at once, and a write to each meanwhile: returns once every
// query saw its key's value (each checked).
asio::awaitable<void> watch_and_write(client& consul, const std::string& p, int keys,
                                      std::chrono::milliseconds wait) {
    const auto start = co_await consul.async_kv_get(p + "k0");
    std::vector<std::optional<std::string>> seen(keys);
    int done = 0;
    asio::steady_timer all_done{consul.get_executor(), 1h}; // cancelled by the last watcher
    // (The coroutine's parameters live in its frame; a lambda's captures would not.)
    auto watch = [&](int i, std::string key, query_options q) -> asio::awaitable<void> {
        for (;;) {
            auto r = co_await consul.async_kv_get(key, q);
            if (r.entry) {
                seen[i] = r.entry->value;
                break;
            }
            q.index = r.meta.index;
        }
        if (++done == keys)
            all_done.cancel();
    };
    for (int i = 0; i < keys; ++i)
        asio::co_spawn(consul.get_executor(),
                       watch(i, p + "k" + std::to_string(i),
                             query_options{}.with_index(start.meta.index).with_wait(wait)),
                       asio::detached);
    for (int i = 0; i < keys; ++i)
        co_await consul.async_kv_put(p + "k" + std::to_string(i), "v" + std::to_string(i));
    if (done < keys)
        co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
    for (int i = 0; i < keys; ++i)
        CHECK(seen[i] == "v" + std::to_string(i));
}

} // namespace

TEST_CASE_METHOD(limited_fixture,
                 "within its share of Consul's connections, short requests never wait for "
                 "blocking queries",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    // A write stuck behind the blocking queries (30 s waits) would fail the test.
    client consul = make_client(16, server_limit, 5s);
    auto body = [&]() -> asio::awaitable<void> {
        // Six blocking queries: three run, three wait their turn; the fourth connection is
        // the writes'.
        co_await watch_and_write(consul, p, 6, 30s);
        const auto stats = consul.stats();
        // A real Consul counts a connection until its server has seen it close: one the test
        // harness made just before (its readiness probe) can still count on a loaded machine
        // and cost one refusal. The client then keeps to the connections it has.
        CHECK(stats.refused_connects <= 1);
        CHECK(stats.connection_limit == server_limit - stats.refused_connects);
        CHECK(stats.blocking_query_limit == stats.connection_limit - 1);
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(limited_fixture,
                 "beyond Consul's connection limit, the client keeps to the connections it has",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    client consul = make_client(16, client_config{}.consul_connection_limit); // (200)
    auto body = [&]() -> asio::awaitable<void> {
        // The refused requests go out again on the accepted connections: nothing fails.
        // The blocking queries may hold them all, so the writes may wait for one to end
        // (their 2 s waits keep the test short).
        co_await watch_and_write(consul, p, 6, 2s);
        const auto stats = consul.stats();
        CHECK(stats.refused_connects >= 1);
        CHECK(stats.connection_limit <= server_limit);
        CHECK(stats.blocking_query_limit < stats.connection_limit);
        CHECK(stats.open_connections <= server_limit);
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(limited_fixture,
                 "an abandoned blocking query keeps its connection counted until its wait is over",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    client consul = make_client(client_config{}.max_connections, server_limit);
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = co_await consul.async_kv_get(p + "k");
        // Blocking queries, then abandoned: Consul counts their connections for 3 s more.
        asio::cancellation_signal stop[2];
        for (auto& s : stop)
            asio::co_spawn(ioc,
                           consul.async_kv_get(
                               p + "k", query_options{}.with_index(start.meta.index).with_wait(3s),
                               asio::use_awaitable),
                           asio::bind_cancellation_slot(s.slot(), asio::detached));
        while (server.stats().blocking_queries_waiting < 2) {
            asio::steady_timer poll{ioc, 5ms}; // (no event tells when they reach Consul)
            co_await poll.async_wait(asio::use_awaitable);
        }
        for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
        // Writes meanwhile, four at a time: they share what Consul still accepts.
        for (int round = 0; round < 3; ++round) {
            auto put = [&](int i) {
                return consul.async_kv_put(p + "w" + std::to_string(i), "x", kv_put_options{},
                                           asio::use_awaitable);
            };
            using namespace asio::experimental::awaitable_operators;
            co_await (put(0) && put(1) && put(2) && put(3));
        }
        CHECK(consul.stats().refused_connects == 0);
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(limited_fixture,
                 "after a refusal, the client climbs back to Consul's limit once other "
                 "connections close",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    auto cfg = server.client_config();
    cfg.max_connections = 16;
    cfg.connection_limit_retry = 200ms;
    client consul{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto puts = [&]() -> asio::awaitable<void> {
            auto put = [&](int i) {
                return consul.async_kv_put(p + "w" + std::to_string(i), "x", kv_put_options{},
                                           asio::use_awaitable);
            };
            using namespace asio::experimental::awaitable_operators;
            co_await (put(0) && put(1) && put(2) && put(3));
        };
        // Another program on the address holds all the connections Consul accepts from it
        // but two (accepted first: the server accepts in the order they came). (Not all but
        // one: against a real Consul, the connection of the test harness's readiness probe
        // may still count for a moment, and the client must keep one of its own.)
        const asio::ip::tcp::endpoint ep{asio::ip::make_address(cfg.host), cfg.port};
        auto others = co_await all_connections_served(ep);
        others.erase(others.begin() + static_cast<long>(server_limit - 2), others.end());
        // Refused beyond two connections, the requests go out on those. (The server sees
        // the two closes a moment later: until then it refuses the client every connection,
        // and its requests fail, having none to go out on.)
        for (int tries = 0;; ++tries) {
            bool done = false;
            try {
                co_await puts();
                done = true;
            } catch (const std::exception&) {
                if (tries == 100)
                    throw;
            }
            if (done)
                break;
            asio::steady_timer pause{ioc, 20ms};
            co_await pause.async_wait(asio::use_awaitable);
        }
        CHECK(consul.stats().refused_connects >= 1);
        CHECK(consul.stats().connection_limit <= 2);

        // The other program closes its connections: the client tries one more now and then
        // (while requests wait for one) and climbs back up to what Consul accepts.
        others.clear();
        while (consul.stats().connection_limit < server_limit) {
            co_await puts();
            asio::steady_timer pause{ioc, 20ms}; // (no event says when Consul saw the close)
            co_await pause.async_wait(asio::use_awaitable);
        }
        // Blocking queries get their share of the connections back as well.
        co_await consul.async_kv_get(p + "w0", query_options{}.with_index(1).with_wait(1s));
        const auto stats = consul.stats();
        CHECK(stats.open_connections <= server_limit);
        CHECK(stats.blocking_query_limit == server_limit - 1);
    };
    run(ioc, body(), 60s);
}
