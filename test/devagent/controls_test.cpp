// SPDX-License-Identifier: BSL-1.0
// The dev agent's private test controls, over HTTP and through the C++ API.
#include "agent_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
namespace asio = boost::asio;

TEST_CASE("force-expire invalidates a session with its behaviour and arms its lock-delay",
          "[agent][controls]") {
    agent_fixture f;
    const auto port = f.port();
    run(f.ioc, [](agent_fixture& f, std::uint16_t port) -> asio::awaitable<void> {
        const json::value body1 = {
            {"NodeChecks", json::array{}}, {"LockDelay", "300ms"}, {"Behavior", "release"}};
        const std::string s1 = co_await create_session(port, body1);
        const json::value body2 = {{"NodeChecks", json::array{}}, {"LockDelay", "0s"}};
        const std::string s2 = co_await create_session(port, body2);
        {
            const auto r1_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s1, "held");
            REQUIRE(r1_.body == "true\n");
        }
        const http_reply before = co_await http(port, "GET", "/v1/kv/k");

        const auto expired_at = std::chrono::steady_clock::now();
        const http_reply exp = co_await http(port, "PUT", "/v1/_conclave/session/expire/" + s1);
        CHECK(exp.status == 200);
        CHECK(exp.body == "true\n");

        // Released (behaviour release): Session gone, value and LockIndex kept, index moved.
        const http_reply after = co_await http(port, "GET", "/v1/kv/k");
        REQUIRE(after.status == 200);
        const json::value after_json = after.json();
        const auto& e = after_json.as_array().at(0).as_object();
        CHECK_FALSE(e.contains("Session"));
        CHECK(e.at("LockIndex").as_int64() == 1);
        CHECK(after.index() > before.index());
        {
            const auto r2_ = co_await http(port, "GET", "/v1/session/info/" + s1);
            CHECK(r2_.body == "[]\n");
        }

        // Lock-delay: refused at once, accepted once 300 ms have passed.
        {
            const auto r3_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s2);
            CHECK(r3_.body == "false\n");
        }
        co_await sleep_for(400ms);
        {
            const auto r4_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s2);
            CHECK(r4_.body == "true\n");
        }
        CHECK(std::chrono::steady_clock::now() - expired_at >= 300ms);

        // Unknown sessions are reported, not invented.
        {
            const auto r5_ =
                co_await http(port, "PUT", "/v1/_conclave/session/expire/" + random_uuid());
            CHECK(r5_.body == "false\n");
        }
        CHECK_FALSE(f.agent.force_expire_session(random_uuid()));
    }(f, port));
}

TEST_CASE("force-expire through the C++ API applies the delete behaviour", "[agent][controls]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body3 = {
            {"NodeChecks", json::array{}}, {"LockDelay", "0s"}, {"Behavior", "delete"}};
        const std::string s = co_await create_session(port, body3);
        {
            const auto r6_ = co_await http(port, "PUT", "/v1/kv/a?acquire=" + s, "x");
            REQUIRE(r6_.body == "true\n");
        }
        {
            const auto r7_ = co_await http(port, "PUT", "/v1/kv/b", "plain");
            REQUIRE(r7_.status == 200);
        }
        CHECK(f.agent.force_expire_session(s));
        {
            const auto r8_ = co_await http(port, "GET", "/v1/kv/a");
            CHECK(r8_.status == 404);
        }
        {
            const auto r9_ = co_await http(port, "GET", "/v1/kv/b");
            CHECK(r9_.status == 200);
        }
        CHECK_FALSE(f.agent.force_expire_session(s));
    }(f));
}

TEST_CASE("injected errors are answered first, then normal service resumes", "[agent][controls]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        f.agent.inject_errors("/v1/kv/", 2);
        const http_reply r1 = co_await http(port, "GET", "/v1/kv/k");
        CHECK(r1.status == 500);
        CHECK(r1.body == "No cluster leader");
        // Other paths are not affected.
        {
            const auto r10_ = co_await http(port, "GET", "/v1/session/list");
            CHECK(r10_.status == 200);
        }
        {
            const auto r11_ = co_await http(port, "PUT", "/v1/kv/k", "v");
            CHECK(r11_.status == 500);
        }
        const http_reply r3 = co_await http(port, "GET", "/v1/kv/k");
        CHECK(r3.status == 404); // the injected PUT was not applied

        // Over HTTP, with another status.
        const http_reply ctl = co_await http(
            port, "PUT", "/v1/_conclave/inject/errors?prefix=/v1/kv/&count=1&status=503");
        CHECK(ctl.status == 200);
        {
            const auto r12_ = co_await http(port, "GET", "/v1/kv/k");
            CHECK(r12_.status == 503);
        }
        {
            const auto r13_ = co_await http(port, "GET", "/v1/kv/k");
            CHECK(r13_.status == 404);
        }
    }(f));
}

TEST_CASE("injected disconnects close the connection without an answer", "[agent][controls]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        {
            const auto r14_ = co_await http(
                port, "PUT", "/v1/_conclave/inject/disconnects?prefix=/v1/kv/&count=1");
            REQUIRE(r14_.status == 200);
        }
        const http_reply dropped = co_await http(port, "GET", "/v1/kv/k");
        CHECK(dropped.ec);
        CHECK(dropped.status == 0);
        {
            const auto r15_ = co_await http(port, "GET", "/v1/kv/k");
            CHECK(r15_.status == 404);
        }

        f.agent.inject_disconnects("/v1/session/", 1);
        {
            const auto r16_ = co_await http(port, "GET", "/v1/session/list");
            CHECK(r16_.ec);
        }
        {
            const auto r17_ = co_await http(port, "GET", "/v1/session/list");
            CHECK(r17_.status == 200);
        }
    }(f));
}

TEST_CASE("reset empties the store, the index goes backwards, blocking queries wake",
          "[agent][controls]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        for (int i = 0; i < 5; ++i) {
            const auto r18_ = co_await http(port, "PUT", "/v1/kv/k" + std::to_string(i), "v");
            REQUIRE(r18_.status == 200);
        }
        const http_reply before = co_await http(port, "GET", "/v1/kv/k4");
        const std::uint64_t index = before.index();
        REQUIRE(index >= 6);

        const std::string target = "/v1/kv/k4?index=" + std::to_string(index) + "&wait=30s";
        auto [watch, ctl] = co_await (http(port, "GET", target) &&
                                          [](agent_fixture& f) -> asio::awaitable<http_reply> {
            co_await until_blocked(f.agent, 1);
            co_return co_await http(f.port(), "PUT", "/v1/_conclave/reset");
        }(f));
        CHECK(ctl.status == 200);
        CHECK(watch.status == 404);
        CHECK(watch.index() < index);
        CHECK(seconds(watch.elapsed) < 5.0);

        const http_reply after = co_await http(port, "GET", "/v1/kv/k0");
        CHECK(after.status == 404);
        CHECK(after.index() == 1);
        {
            const auto r19_ = co_await http(port, "GET", "/v1/kv/?keys");
            CHECK(r19_.body == "[]\n");
        }
        // Writes start again from a low index.
        {
            const auto r20_ = co_await http(port, "PUT", "/v1/kv/x", "v");
            REQUIRE(r20_.status == 200);
        }
        {
            const auto r21_ = co_await http(port, "GET", "/v1/kv/x");
            CHECK(r21_.index() < index);
        }

        // The C++ API does the same.
        f.agent.reset_state();
        {
            const auto r22_ = co_await http(port, "GET", "/v1/kv/x");
            CHECK(r22_.status == 404);
        }
    }(f));
}

TEST_CASE("reaping tombstones moves a list index backwards", "[agent][controls]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        for (const char* k : {"foo/bar", "foo/baz", "foo/zoo"}) {
            const auto r23_ = co_await http(port, "PUT", std::string("/v1/kv/") + k, "v");
            REQUIRE(r23_.status == 200);
        }
        const std::uint64_t baz = (co_await http(port, "GET", "/v1/kv/foo/baz")).index();
        {
            const auto r24_ = co_await http(port, "DELETE", "/v1/kv/foo/zoo");
            REQUIRE(r24_.status == 200);
        }
        const std::uint64_t with_tombstone =
            (co_await http(port, "GET", "/v1/kv/foo/?recurse")).index();
        CHECK(with_tombstone > baz);

        const http_reply reap = co_await http(port, "PUT", "/v1/_conclave/tombstones/reap");
        CHECK(reap.status == 200);
        CHECK(reap.json().at("Reaped").as_int64() == 1);
        {
            const auto r25_ = co_await http(port, "GET", "/v1/kv/foo/?recurse");
            CHECK(r25_.index() == baz);
        }

        {
            const auto r26_ = co_await http(port, "DELETE", "/v1/kv/foo/baz");
            REQUIRE(r26_.status == 200);
        }
        {
            const auto r27_ = co_await http(port, "GET", "/v1/kv/foo/?keys");
            CHECK(r27_.index() > baz);
        }
        f.agent.reap_tombstones();
        {
            const auto r28_ = co_await http(port, "GET", "/v1/kv/foo/?keys");
            CHECK(r28_.index() < baz);
        }
    }(f));
}

TEST_CASE("the stats endpoint is always on, the other controls only when enabled",
          "[agent][controls]") {
    auto cfg = test_agent_config();
    cfg.enable_test_controls = false;
    agent_fixture f(cfg);
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        {
            const auto r29_ = co_await http(port, "GET", "/v1/kv/a");
            REQUIRE(r29_.status == 404);
        }
        const http_reply stats = co_await http(port, "GET", "/v1/_conclave/stats");
        REQUIRE(stats.status == 200);
        const json::value stats_json = stats.json();
        const auto& o = stats_json.as_object();
        CHECK(o.at("Requests").as_int64() >= 2);
        CHECK(o.at("ByEndpoint").as_object().at("GET /v1/kv").as_int64() == 1);
        {
            const auto r30_ = co_await http(port, "PUT", "/v1/_conclave/reset");
            CHECK(r30_.status == 404);
        }
        {
            const auto r31_ = co_await http(port, "PUT", "/v1/_conclave/session/expire/x");
            CHECK(r31_.status == 404);
        }

        const auto s = f.agent.stats();
        CHECK(s.requests >= 4);
        CHECK(s.connections_accepted >= 4);
        CHECK(s.by_endpoint.at("GET /v1/kv") == 1);
        f.agent.reset_stats();
        CHECK(f.agent.stats().requests == 0);
    }(f));
}
