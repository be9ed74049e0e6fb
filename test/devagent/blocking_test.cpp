// SPDX-License-Identifier: BSL-1.0
// Blocking queries: wake-ups, timeouts, what does not wake them, and clients that leave.
#include "agent_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
namespace asio = boost::asio;

namespace {

// Parks `target` as a blocking query, then runs `then` once it is parked.
asio::awaitable<std::tuple<http_reply, http_reply>> watch_then(agent_fixture& f, std::string target,
                                                               std::string method, std::string path,
                                                               std::optional<std::string> body) {
    const auto port = f.port();
    co_return co_await (http(port, "GET", std::move(target)) &&
                            [](agent_fixture& f, std::string method, std::string path,
                               std::optional<std::string> body) -> asio::awaitable<http_reply> {
        co_await until_blocked(f.agent, 1);
        co_return co_await http(f.port(), std::move(method), std::move(path), std::move(body));
    }(f, std::move(method), std::move(path), std::move(body)));
}

std::string with_index(const std::string& target, std::uint64_t index, const char* wait) {
    const char sep = target.find('?') == std::string::npos ? '?' : '&';
    return target + sep + "index=" + std::to_string(index) + "&wait=" + wait;
}

} // namespace

TEST_CASE("a blocking GET of a missing key returns when the key is written", "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const http_reply missing = co_await http(f.port(), "GET", "/v1/kv/k");
        REQUIRE(missing.status == 404);
        auto [watch, put] = co_await watch_then(f, with_index("/v1/kv/k", missing.index(), "10s"),
                                                "PUT", "/v1/kv/k?flags=42", std::string("x"));
        CHECK(put.body == "true\n");
        REQUIRE(watch.status == 200);
        CHECK(watch.index() > missing.index());
        CHECK(watch.json().as_array().at(0).at("Flags").as_int64() == 42);
        CHECK(seconds(watch.elapsed) < 5.0);
    }(f));
}

TEST_CASE("a blocking GET times out after wait plus jitter with the same index",
          "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        {
            const auto r1_ = co_await http(f.port(), "PUT", "/v1/kv/k", "x");
            REQUIRE(r1_.status == 200);
        }
        const http_reply now = co_await http(f.port(), "GET", "/v1/kv/k");
        const http_reply r =
            co_await http(f.port(), "GET", with_index("/v1/kv/k", now.index(), "400ms"));
        REQUIRE(r.status == 200);
        CHECK(r.index() == now.index());
        CHECK(seconds(r.elapsed) >= 0.400);
        CHECK(seconds(r.elapsed) < 0.400 + 0.025 + 1.0);

        // An index from the future waits the whole time too; index=0 never blocks.
        const http_reply future =
            co_await http(f.port(), "GET", "/v1/kv/k?index=999999999&wait=300ms");
        CHECK(future.index() == now.index());
        CHECK(seconds(future.elapsed) >= 0.300);
        const http_reply zero = co_await http(f.port(), "GET", "/v1/kv/k?index=0&wait=10s");
        CHECK(seconds(zero.elapsed) < 1.0);
    }(f));
}

TEST_CASE("writes elsewhere and identical rewrites do not wake a watched key",
          "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        {
            const auto r2_ = co_await http(port, "PUT", "/v1/kv/w/a", std::string("a"));
            REQUIRE(r2_.status == 200);
        }
        const http_reply list = co_await http(port, "GET", "/v1/kv/w/?recurse");
        auto [watch, put] =
            co_await watch_then(f, with_index("/v1/kv/w/?recurse", list.index(), "500ms"), "PUT",
                                "/v1/kv/x", "outside");
        CHECK(put.status == 200);
        CHECK(watch.index() == list.index());
        CHECK(seconds(watch.elapsed) >= 0.5);

        const http_reply key = co_await http(port, "GET", "/v1/kv/w/a");
        auto [same, rewrite] =
            co_await watch_then(f, with_index("/v1/kv/w/a", key.index(), "500ms"), "PUT",
                                "/v1/kv/w/a", std::string("a"));
        CHECK(rewrite.body == "true\n");
        CHECK(same.index() == key.index());
        CHECK(seconds(same.elapsed) >= 0.5);
    }(f));
}

TEST_CASE("deleting a watched key wakes it with 404 and a higher index", "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        {
            const auto r3_ = co_await http(f.port(), "PUT", "/v1/kv/k", "x");
            REQUIRE(r3_.status == 200);
        }
        const http_reply key = co_await http(f.port(), "GET", "/v1/kv/k");
        auto [watch, del] = co_await watch_then(f, with_index("/v1/kv/k", key.index(), "10s"),
                                                "DELETE", "/v1/kv/k", std::nullopt);
        CHECK(del.status == 200);
        CHECK(watch.status == 404);
        CHECK(watch.index() > key.index());
        CHECK(seconds(watch.elapsed) < 5.0);
    }(f));
}

TEST_CASE("a missing key's watch wakes on a write next to it, not on a distant one (1.8)",
          "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        {
            const auto r4_ = co_await http(port, "PUT", "/v1/kv/far", "a");
            REQUIRE(r4_.status == 200);
        }
        {
            const auto r5_ = co_await http(port, "PUT", "/v1/kv/dir/other", "x");
            REQUIRE(r5_.status == 200);
        }
        const http_reply m1 = co_await http(port, "GET", "/v1/kv/dir/missing");
        auto [near, w1] = co_await watch_then(f, with_index("/v1/kv/dir/missing", m1.index(), "5s"),
                                              "PUT", "/v1/kv/dir/other2", std::string("y"));
        CHECK(w1.status == 200);
        CHECK(near.status == 404);
        CHECK(near.index() > m1.index());
        CHECK(seconds(near.elapsed) < 3.0);

        const http_reply m2 = co_await http(port, "GET", "/v1/kv/dir/missing");
        auto [distant, w2] =
            co_await watch_then(f, with_index("/v1/kv/dir/missing", m2.index(), "500ms"), "PUT",
                                "/v1/kv/far", std::string("z"));
        CHECK(w2.status == 200);
        CHECK(distant.status == 404);
        CHECK(distant.index() == m2.index()); // the last evaluation, from before the wait
        CHECK(seconds(distant.elapsed) >= 0.5);
    }(f));
}

TEST_CASE("session reads block: destroy wakes info, create wakes node", "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body1 = {{"NodeChecks", json::array{}}};
        const std::string s = co_await create_session(port, body1);
        const http_reply info = co_await http(port, "GET", "/v1/session/info/" + s);
        auto [watch, destroy] =
            co_await watch_then(f, with_index("/v1/session/info/" + s, info.index(), "10s"), "PUT",
                                "/v1/session/destroy/" + s, std::nullopt);
        CHECK(destroy.status == 200);
        CHECK(watch.body == "[]\n");
        CHECK(watch.index() > info.index());

        const http_reply node = co_await http(port, "GET", "/v1/session/node/conclave-dev");
        auto [nwatch, create] = co_await watch_then(
            f, with_index("/v1/session/node/conclave-dev", node.index(), "10s"), "PUT",
            "/v1/session/create", std::string(R"({"Name":"late","NodeChecks":[]})"));
        CHECK(create.status == 200);
        REQUIRE(nwatch.json().as_array().size() == 1);
        CHECK(nwatch.json().as_array().at(0).at("Name").as_string() == "late");
    }(f));
}

TEST_CASE("a client that goes away ends its blocking query", "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto ex = co_await asio::this_coro::executor;
        {
            const auto r6_ = co_await http(f.port(), "PUT", "/v1/kv/k", "x");
            REQUIRE(r6_.status == 200);
        }
        const http_reply key = co_await http(f.port(), "GET", "/v1/kv/k");
        http_conn conn(ex, f.port());
        {
            const auto r7_ = co_await conn.connect();
            REQUIRE_FALSE(r7_);
        }
        const std::string req =
            "GET " + with_index("/v1/kv/k", key.index(), "60s") + " HTTP/1.1\r\nHost: x\r\n\r\n";
        {
            const auto r8_ = co_await conn.send_raw(req);
            REQUIRE_FALSE(r8_);
        }
        co_await until_blocked(f.agent, 1);
        conn.close();
        co_await until_unblocked(f.agent, 0);
        CHECK(f.agent.stats().blocking_queries_waiting == 0);
        // The agent still serves.
        {
            const auto r9_ = co_await http(f.port(), "GET", "/v1/kv/k");
            CHECK(r9_.status == 200);
        }
    }(f));
}

TEST_CASE("stopping the agent ends blocking queries", "[agent][blocking]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        {
            const auto r10_ = co_await http(f.port(), "PUT", "/v1/kv/k", "x");
            REQUIRE(r10_.status == 200);
        }
        const http_reply key = co_await http(f.port(), "GET", "/v1/kv/k");
        auto [watch, done] =
            co_await (http(f.port(), "GET", with_index("/v1/kv/k", key.index(), "60s")) &&
                          [](agent_fixture& f) -> asio::awaitable<int> {
                co_await until_blocked(f.agent, 1);
                f.agent.stop();
                co_return 1;
            }(f));
        CHECK(done == 1);
        CHECK(watch.status == 0); // the connection was closed
        CHECK(f.agent.stats().blocking_queries_waiting == 0);
    }(f));
}
