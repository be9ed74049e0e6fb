// SPDX-License-Identifier: BSL-1.0
// The fault-injecting proxy (test/support/fault_proxy.hpp) against the embedded dev agent:
// faithful forwarding, the agent's endpoint counters, injected errors and disconnects, held
// responses, blocking queries, and stopping with requests in flight.
#include "devagent/agent_fixture.hpp"
#include "scripted_server.hpp"
#include "support/catch.hpp"
#include "support/fault_proxy.hpp"
#include "support/http_client.hpp"
#include "support/run.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <memory>

using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
namespace asio = boost::asio;
namespace dev = conclave::dev;

namespace {

std::uint16_t start_agent(dev::agent& a) {
    a.start();
    return a.port();
}

// A dev agent and a proxy in front of it, on one io_context.
struct proxy_fixture {
    asio::io_context ioc;
    dev::agent agent;
    fault_proxy proxy;

    explicit proxy_fixture(dev::agent_config cfg = test_agent_config())
        : agent(ioc.get_executor(), std::move(cfg))
        , proxy(ioc.get_executor(), "127.0.0.1", start_agent(agent)) {
        proxy.start();
    }
    ~proxy_fixture() {
        proxy.stop();
        agent.stop();
    }
};

// Polls a counter that has no event of its own (as until_blocked does), with a deadline.
template <class Predicate>
asio::awaitable<void> until(Predicate done, std::chrono::milliseconds limit = 5000ms) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error("condition not reached in time");
        co_await sleep_for(2ms);
    }
}

// "name=count ..." so that a mismatch shows which counter differs.
std::string describe(const std::map<std::string, std::uint64_t>& counters) {
    std::string out;
    for (const auto& [name, n] : counters)
        out += name + "=" + std::to_string(n) + "; ";
    return out;
}

// The X-Consul-Index of `key` (written first, so that the index is not 0).
asio::awaitable<std::uint64_t> write_and_index(std::uint16_t port, std::string key) {
    const http_reply put = co_await http(port, "PUT", "/v1/kv/" + key, "v1");
    REQUIRE(put.status == 200);
    const http_reply get = co_await http(port, "GET", "/v1/kv/" + key);
    REQUIRE(get.index() > 0);
    co_return get.index();
}

} // namespace

TEST_CASE("the proxy forwards KV writes and reads with their headers", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        const http_reply put = co_await conn.request("PUT", "/v1/kv/greeting?flags=7", "hello");
        REQUIRE(put.status == 200);
        CHECK(put.body == "true\n");
        const http_reply proxied = co_await conn.request("GET", "/v1/kv/greeting");
        const http_reply raw = co_await conn.request("GET", "/v1/kv/greeting?raw");
        const http_reply missing = co_await conn.request("GET", "/v1/kv/nothing-here");
        // Three requests on one keep-alive client connection: one upstream connection.
        CHECK(f.proxy.stats().connections_accepted == 1);
        CHECK(f.agent.stats().connections_accepted == 1);

        REQUIRE(proxied.status == 200);
        CHECK(proxied.has("x-consul-index"));
        CHECK(proxied.has("x-consul-knownleader"));
        CHECK(proxied.has("x-consul-lastcontact"));
        const auto entry = proxied.json().as_array().at(0).as_object();
        CHECK(entry.at("Value").as_string() == "aGVsbG8=");
        CHECK(entry.at("Flags").as_int64() == 7);
        CHECK(raw.body == "hello");
        CHECK(missing.status == 404);
        CHECK(missing.index() == proxied.index());

        // Byte for byte what the agent answers directly (but the Date).
        http_reply direct = co_await http(f.agent.port(), "GET", "/v1/kv/greeting");
        http_reply via = proxied;
        direct.headers.erase("date");
        via.headers.erase("date");
        CHECK(via.status == direct.status);
        CHECK(via.headers == direct.headers);
        CHECK(via.body == direct.body);
    }(f));
}

TEST_CASE("the proxy forwards request headers and bodies unchanged", "[proxy]") {
    asio::io_context ioc;
    scripted_server upstream(ioc, [](const received_request&) {
        return scripted_reply{http_response(200, "[]",
                                            {{"Content-Type", "application/json"},
                                             {"X-Consul-Index", "42"},
                                             {"X-Consul-Knownleader", "true"},
                                             {"X-Consul-Lastcontact", "7"}})};
    });
    fault_proxy proxy(ioc.get_executor(), "127.0.0.1", upstream.port());
    proxy.start();
    const http_reply r = run(ioc, [](std::uint16_t port) -> asio::awaitable<http_reply> {
        http_conn conn(co_await asio::this_coro::executor, port);
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        std::map<std::string, std::string> headers{{"X-Consul-Token", "s3cret"},
                                                   {"X-Extra", "a b"}};
        co_return co_await conn.request("PUT", "/v1/txn?stale&dc=dc1", std::string("[1,2]"),
                                        std::move(headers));
    }(proxy.port()));
    CHECK(r.status == 200);
    CHECK(r.body == "[]");
    CHECK(r.header("x-consul-index") == "42");
    CHECK(r.header("x-consul-knownleader") == "true");
    CHECK(r.header("x-consul-lastcontact") == "7");
    CHECK(r.header("content-type") == "application/json");
    REQUIRE(upstream.requests().size() == 1);
    const auto& req = upstream.requests()[0].message;
    CHECK(req.method_string() == "PUT");
    CHECK(req.target() == "/v1/txn?stale&dc=dc1");
    CHECK(req["X-Consul-Token"] == "s3cret");
    CHECK(req["X-Extra"] == "a b");
    CHECK(req[boost::beast::http::field::content_type] == "application/octet-stream");
    CHECK(req.body() == "[1,2]");
    CHECK(describe(proxy.stats().by_endpoint) == "PUT /v1/txn=1; ");
}

TEST_CASE("the proxy forwards bodies above Beast's default limits", "[proxy]") {
    auto cfg = test_agent_config();
    cfg.kv_max_value_size = 4u << 20;
    proxy_fixture f(cfg);
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        const auto port = f.proxy.port();
        // 3 MiB requests (Beast's default request body limit: 1 MiB), a ~12 MiB response
        // (its default response limit: 8 MiB).
        const std::string value(3u << 20, 'x');
        for (const char* key : {"big/a", "big/b", "big/c"}) {
            const http_reply put = co_await http(port, "PUT", std::string("/v1/kv/") + key, value);
            REQUIRE(put.status == 200);
        }
        const http_reply all = co_await http(port, "GET", "/v1/kv/big/?recurse");
        REQUIRE(all.ec == boost::system::error_code{});
        CHECK(all.status == 200);
        CHECK(all.body.size() > (12u << 20));
        CHECK(all.json().as_array().size() == 3);
    }(f));
}

TEST_CASE("the proxy counts requests by endpoint as the dev agent does", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        const http_reply created =
            co_await conn.request("PUT", "/v1/session/create", R"({"TTL":"10s"})");
        REQUIRE(created.status == 200);
        const std::string id(created.json().at("ID").as_string());
        for (const auto& [method, target] : std::vector<std::pair<std::string, std::string>>{
                 {"PUT", "/v1/kv/a"},
                 {"GET", "/v1/kv/a"},
                 {"GET", "/v1/kv/a%2Fb?stale"},
                 {"GET", "/v1/kv/?recurse"},
                 {"DELETE", "/v1/kv/a"},
                 {"PUT", "/v1/session/renew/" + id},
                 {"GET", "/v1/session/info/" + id},
                 {"GET", "/v1/session/node/conclave-dev"},
                 {"GET", "/v1/session/list"},
                 {"PUT", "/v1/session/destroy/" + id},
                 {"GET", "/v1/status/leader"},
                 {"GET", "/v1/status/peers"},
                 {"GET", "/v1/agent/self"},
                 {"GET", "/v1/catalog/nodes"},
                 {"GET", "/v1/catalog/node/conclave-dev"},
                 {"GET", "/v1/health/node/conclave-dev"},
                 {"GET", "/v1/kv"},      // redirected to /v1/kv/: "other"
                 {"GET", "/v1/kv//a"},   // unclean, redirected: "other"
                 {"GET", "/v1/unknown"}, // no route: "other"
                 {"POST", "/v1/txn"},    // a route, a method it refuses
                 {"GET", "/v1/_conclave/stats"},
             }) {
            const http_reply r = co_await conn.request(method, target);
            REQUIRE(r.status != 0);
        }
        // A second client connection, a second upstream connection.
        const http_reply leader = co_await http(f.proxy.port(), "GET", "/v1/status/leader");
        CHECK(leader.status == 200);

        proxy_stats p = f.proxy.stats();
        dev::agent_stats a = f.agent.stats();
        CHECK(describe(p.by_endpoint) == describe(a.by_endpoint));
        CHECK(p.requests == a.requests);
        CHECK(p.requests == 23);
        CHECK(p.connections_accepted == 2);
        CHECK(a.connections_accepted == 2);
        CHECK(p.by_endpoint["GET /v1/kv"] == 3);
        CHECK(p.by_endpoint["GET other"] == 3);
        CHECK(p.by_endpoint["PUT /v1/session/renew"] == 1);
        CHECK(p.by_endpoint["GET /v1/status/leader"] == 2);

        f.proxy.reset_stats();
        CHECK(f.proxy.stats().requests == 0);
        CHECK(f.proxy.stats().by_endpoint.empty());
        CHECK(f.proxy.stats().connections_open >= 1); // a gauge: not reset
    }(f));
}

TEST_CASE("injected errors answer exactly `count` requests, then requests are forwarded again",
          "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        f.proxy.inject_errors("/v1/kv/locked", 2, 503);
        f.proxy.inject_errors("/v1/kv/", 1);
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);

        // The query string is not part of the matched path.
        const http_reply first = co_await conn.request("GET", "/v1/kv/locked/x?stale");
        CHECK(first.status == 503);
        CHECK(first.body == "injected error");
        CHECK(first.header("content-type") == "text/plain; charset=utf-8");
        CHECK_FALSE(first.has("x-consul-index"));
        // Other paths pass and leave the injections pending.
        const http_reply leader = co_await conn.request("GET", "/v1/status/leader");
        CHECK(leader.status == 200);
        const http_reply second = co_await conn.request("PUT", "/v1/kv/locked/y", "v");
        CHECK(second.status == 503);
        const http_reply other = co_await conn.request("GET", "/v1/kv/other");
        CHECK(other.status == 500);
        CHECK(other.body == "No cluster leader");
        // Used up: forwarded (a 404 from the agent, with its index), on the same connection.
        const http_reply after = co_await conn.request("GET", "/v1/kv/locked/x");
        CHECK(after.status == 404);
        CHECK(after.has("x-consul-index"));

        proxy_stats p = f.proxy.stats();
        CHECK(p.requests == 5);
        CHECK(p.connections_accepted == 1);
        CHECK(p.by_endpoint["GET (injected)"] == 2);
        CHECK(p.by_endpoint["PUT (injected)"] == 1);
        CHECK(p.by_endpoint["GET /v1/kv"] == 1);
        // The injected ones never reached the agent.
        dev::agent_stats a = f.agent.stats();
        CHECK(a.requests == 2);
        CHECK(a.by_endpoint["GET /v1/kv"] == 1);
        CHECK(a.by_endpoint.count("PUT /v1/kv") == 0);
    }(f));
}

TEST_CASE("injected disconnects close the connection without a response", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        f.proxy.inject_disconnects("/v1/kv/", 1);
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        const http_reply leader = co_await conn.request("GET", "/v1/status/leader");
        REQUIRE(leader.status == 200);
        CHECK(f.agent.stats().connections_open == 1);

        const http_reply dropped = co_await conn.request("GET", "/v1/kv/x");
        CHECK(dropped.ec);
        CHECK(dropped.status == 0);
        CHECK(f.proxy.stats().connections_open == 0);
        CHECK(f.proxy.stats().by_endpoint["GET (injected)"] == 1);
        CHECK(f.agent.stats().by_endpoint.count("GET /v1/kv") == 0);
        // The upstream connection is closed with it.
        co_await until([&] { return f.agent.stats().connections_open == 0; });

        // Used up: the next one is forwarded.
        const http_reply after = co_await http(f.proxy.port(), "GET", "/v1/kv/x");
        CHECK(after.status == 404);
        CHECK(f.agent.stats().by_endpoint["GET /v1/kv"] == 1);
    }(f));
}

TEST_CASE("held responses reach the client only after release_held", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        const auto port = f.proxy.port();
        co_await write_and_index(f.agent.port(), "k");
        f.proxy.hold_responses("/v1/kv/");
        bool done = false;
        auto get = [](std::uint16_t port, bool& done) -> asio::awaitable<http_reply> {
            http_reply r = co_await http(port, "GET", "/v1/kv/k");
            done = true;
            co_return r;
        };
        auto control = [](proxy_fixture& f, std::uint16_t port,
                          bool& done) -> asio::awaitable<void> {
            co_await f.proxy.async_wait_held();
            CHECK(f.proxy.held() == 1);
            // Forwarded and answered upstream; held here.
            CHECK(f.agent.stats().by_endpoint["GET /v1/kv"] == 2);
            // Other paths are not held: a whole round trip through the proxy meanwhile.
            const http_reply leader = co_await http(port, "GET", "/v1/status/leader");
            CHECK(leader.status == 200);
            CHECK_FALSE(done);
            f.proxy.release_held();
            CHECK(f.proxy.held() == 0);
        };
        const http_reply r = co_await (get(port, done) && control(f, port, done));
        CHECK(done);
        CHECK(r.status == 200);
        CHECK(r.index() > 0);

        // Holding stopped with the release.
        const http_reply again = co_await http(port, "GET", "/v1/kv/k");
        CHECK(again.status == 200);
        CHECK(f.proxy.held() == 0);
    }(f));
}

TEST_CASE("a blocking query is counted while it waits", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        const auto port = f.proxy.port();
        const std::uint64_t index = co_await write_and_index(port, "b");
        CHECK(f.proxy.stats().blocking_queries_waiting == 0);
        auto watch = [](std::uint16_t port, std::uint64_t index) -> asio::awaitable<http_reply> {
            co_return co_await http(port, "GET",
                                    "/v1/kv/b?wait=30s&index=" + std::to_string(index));
        };
        auto observe = [](proxy_fixture& f, std::uint16_t port) -> asio::awaitable<void> {
            co_await until_blocked(f.agent, 1);
            CHECK(f.proxy.stats().blocking_queries_waiting == 1);
            // ?index=0 is not a blocking query.
            const http_reply plain = co_await http(port, "GET", "/v1/kv/b?index=0");
            CHECK(plain.status == 200);
            CHECK(f.proxy.stats().blocking_queries_waiting == 1);
            const http_reply put = co_await http(port, "PUT", "/v1/kv/b", "v2");
            CHECK(put.status == 200);
        };
        const http_reply woken = co_await (watch(port, index) && observe(f, port));
        CHECK(woken.status == 200);
        CHECK(woken.index() > index);
        CHECK(f.proxy.stats().blocking_queries_waiting == 0);
    }(f));
}

TEST_CASE("a client leaving ends its blocking query upstream", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        const std::uint64_t index = co_await write_and_index(f.agent.port(), "b");
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        auto leave = [](proxy_fixture& f, http_conn& conn) -> asio::awaitable<void> {
            co_await until_blocked(f.agent, 1);
            conn.close();
        };
        const http_reply r =
            co_await (conn.request("GET", "/v1/kv/b?wait=60s&index=" + std::to_string(index)) &&
                      leave(f, conn));
        CHECK(r.ec);
        // Without the proxy closing its upstream side, the query would wait its 60 s.
        co_await until_unblocked(f.agent, 0);
        CHECK(f.proxy.stats().blocking_queries_waiting == 0);
        co_await until([&] { return f.proxy.stats().connections_open == 0; });
    }(f));
}

TEST_CASE("the server leaving closes the client connection", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        http_conn conn(co_await asio::this_coro::executor, f.proxy.port());
        const auto connected = co_await conn.connect();
        REQUIRE_FALSE(connected);
        const http_reply leader = co_await conn.request("GET", "/v1/status/leader");
        REQUIRE(leader.status == 200);
        f.agent.stop(); // closes the idle keep-alive connection
        const auto start = std::chrono::steady_clock::now();
        const std::string rest = co_await conn.read_until_close(20s);
        CHECK(rest.empty());
        CHECK(std::chrono::steady_clock::now() - start < 10s);
    }(f));
}

TEST_CASE("stop() with a blocking query in flight ends it cleanly", "[proxy]") {
    proxy_fixture f;
    run(f.ioc, [](proxy_fixture& f) -> asio::awaitable<void> {
        const auto port = f.proxy.port();
        const std::uint64_t index = co_await write_and_index(f.agent.port(), "b");
        auto watch = [](std::uint16_t port, std::uint64_t index) -> asio::awaitable<http_reply> {
            co_return co_await http(port, "GET",
                                    "/v1/kv/b?wait=60s&index=" + std::to_string(index));
        };
        auto stop = [](proxy_fixture& f) -> asio::awaitable<void> {
            co_await until_blocked(f.agent, 1);
            CHECK(f.proxy.stats().blocking_queries_waiting == 1);
            f.proxy.stop();
        };
        const http_reply r = co_await (watch(port, index) && stop(f));
        CHECK(r.ec);
        CHECK(r.status == 0);
        // Both sides closed: the agent sees its client leave.
        co_await until_unblocked(f.agent, 0);
        CHECK(f.proxy.stats().blocking_queries_waiting == 0);
        co_await until([&] { return f.proxy.stats().connections_open == 0; });
        // The listener is closed too.
        const http_reply refused = co_await http(port, "GET", "/v1/status/leader");
        CHECK(refused.ec);
    }(f));
}

TEST_CASE("destroying the proxy with requests in flight and held ends them cleanly", "[proxy]") {
    proxy_fixture f;
    auto proxy = std::make_unique<fault_proxy>(f.ioc.get_executor(), "127.0.0.1", f.agent.port());
    proxy->start();
    run(f.ioc, [](proxy_fixture& f, std::unique_ptr<fault_proxy>& proxy) -> asio::awaitable<void> {
        const auto port = proxy->port();
        const std::uint64_t index = co_await write_and_index(f.agent.port(), "b");
        proxy->hold_responses("/v1/status/");
        auto watch = [](std::uint16_t port, std::uint64_t index) -> asio::awaitable<http_reply> {
            co_return co_await http(port, "GET",
                                    "/v1/kv/b?wait=60s&index=" + std::to_string(index));
        };
        auto destroy = [](proxy_fixture& f,
                          std::unique_ptr<fault_proxy>& proxy) -> asio::awaitable<void> {
            co_await proxy->async_wait_held();
            co_await until_blocked(f.agent, 1);
            proxy.reset();
        };
        // (void first: Asio 1.81's tuple && void operator does not compile.)
        const auto [blocked, held] = co_await (
            destroy(f, proxy) && (watch(port, index) && http(port, "GET", "/v1/status/leader")));
        CHECK(blocked.ec);
        CHECK(held.ec);
        co_await until_unblocked(f.agent, 0);
    }(f, proxy));
    // A waiter on a stopped proxy is told so instead of hanging.
    fault_proxy stopped(f.ioc.get_executor(), "127.0.0.1", f.agent.port());
    stopped.start();
    stopped.stop();
    CHECK_THROWS_AS(run(f.ioc, stopped.async_wait_held()), boost::system::system_error);
}
