// SPDX-License-Identifier: BSL-1.0
// Session TTL expiry and lock-delay timing, with a short session_ttl_min and generous bounds.
#include "agent_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
namespace asio = boost::asio;

namespace {

conclave::dev::agent_config fast_ttl_config() {
    auto cfg = test_agent_config();
    cfg.session_ttl_min = 100ms;
    return cfg;
}

// Blocks on session info until the session disappears; returns when that happened.
asio::awaitable<std::chrono::steady_clock::time_point> wait_until_gone(std::uint16_t port,
                                                                       std::string id) {
    for (;;) {
        const http_reply now = co_await http(port, "GET", "/v1/session/info/" + id);
        REQUIRE(now.status == 200);
        if (now.body == "[]\n")
            co_return std::chrono::steady_clock::now();
        const std::string target =
            "/v1/session/info/" + id + "?index=" + std::to_string(now.index()) + "&wait=20s";
        const http_reply woke = co_await http(port, "GET", target);
        REQUIRE(woke.status == 200);
        if (woke.body == "[]\n")
            co_return std::chrono::steady_clock::now();
    }
}

} // namespace

TEST_CASE("a TTL session expires after about TTL x 2, never before its TTL", "[agent][ttl]") {
    agent_fixture f(fast_ttl_config());
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const auto created = std::chrono::steady_clock::now();
        const json::value body1 = {
            {"NodeChecks", json::array{}}, {"TTL", "150ms"}, {"LockDelay", "0s"}};
        const std::string s = co_await create_session(port, body1);
        const http_reply info = co_await http(port, "GET", "/v1/session/info/" + s);
        CHECK(info.json().as_array().at(0).at("TTL").as_string() == "150ms");
        const auto gone = co_await wait_until_gone(port, s);
        const double lived = seconds(gone - created);
        CHECK(lived >= 0.150);
        CHECK(lived < 0.300 + 1.0);
        {
            const auto r1_ = co_await http(port, "PUT", "/v1/session/renew/" + s);
            CHECK(r1_.status == 404);
        }
    }(f));
}

TEST_CASE("a renew between TTL and 2 x TTL keeps the session and restarts the timer",
          "[agent][ttl]") {
    agent_fixture f(fast_ttl_config());
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body2 = {
            {"NodeChecks", json::array{}}, {"TTL", "200ms"}, {"LockDelay", "0s"}};
        const std::string s = co_await create_session(port, body2);
        co_await sleep_for(300ms); // past the TTL, before 2 x TTL
        const http_reply renew = co_await http(port, "PUT", "/v1/session/renew/" + s);
        const auto renewed = std::chrono::steady_clock::now();
        REQUIRE(renew.status == 200);
        CHECK(renew.json().as_array().at(0).at("ID").as_string() == s);
        const auto gone = co_await wait_until_gone(port, s);
        const double lived = seconds(gone - renewed);
        CHECK(lived >= 0.200);
        CHECK(lived < 0.400 + 1.0);
    }(f));
}

TEST_CASE("TTL expiry releases held keys and wakes their watchers", "[agent][ttl]") {
    agent_fixture f(fast_ttl_config());
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body3 = {
            {"NodeChecks", json::array{}}, {"TTL", "100ms"}, {"LockDelay", "0s"}};
        const std::string s = co_await create_session(port, body3);
        {
            const auto r2_ = co_await http(port, "PUT", "/v1/kv/lock?acquire=" + s, "me");
            REQUIRE(r2_.body == "true\n");
        }
        const http_reply held = co_await http(port, "GET", "/v1/kv/lock");
        const std::string target =
            "/v1/kv/lock?index=" + std::to_string(held.index()) + "&wait=20s";
        const http_reply woke = co_await http(port, "GET", target);
        REQUIRE(woke.status == 200);
        CHECK(woke.index() > held.index());
        CHECK_FALSE(woke.json().as_array().at(0).as_object().contains("Session"));
        CHECK(seconds(woke.elapsed) < 2.0);
    }(f));
}

TEST_CASE("lock-delay refuses acquires until it has passed, for any session", "[agent][ttl]") {
    agent_fixture f(fast_ttl_config());
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body4 = {{"NodeChecks", json::array{}}, {"LockDelay", "300ms"}};
        const std::string s1 = co_await create_session(port, body4);
        const json::value body5 = {{"NodeChecks", json::array{}}, {"LockDelay", "0s"}};
        const std::string s2 = co_await create_session(port, body5);
        {
            const auto r3_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s1);
            REQUIRE(r3_.body == "true\n");
        }
        {
            const auto r4_ = co_await http(port, "PUT", "/v1/session/destroy/" + s1);
            REQUIRE(r4_.status == 200);
        }
        const auto destroyed = std::chrono::steady_clock::now();

        // Refused: the key has no holder, which is how clients recognise a lock-delay.
        {
            const auto r5_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s2);
            CHECK(r5_.body == "false\n");
        }
        {
            const auto r6_ = co_await http(port, "GET", "/v1/kv/k");
            CHECK_FALSE(r6_.json().as_array().at(0).as_object().contains("Session"));
        }
        // Plain writes, CAS and reads are not affected; the txn verb lock is.
        {
            const auto r7_ = co_await http(port, "PUT", "/v1/kv/k", "plain");
            CHECK(r7_.body == "true\n");
        }
        const http_reply txn =
            co_await http(port, "PUT", "/v1/txn",
                          R"([{"KV":{"Verb":"lock","Key":"k","Session":")" + s2 + R"("}}])");
        CHECK(txn.status == 409);
        CHECK(txn.body.find("due to lock delay") != std::string::npos);
        // Another key is free.
        {
            const auto r8_ = co_await http(port, "PUT", "/v1/kv/other?acquire=" + s2);
            CHECK(r8_.body == "true\n");
        }

        std::chrono::steady_clock::time_point acquired{};
        for (int i = 0; i < 100; ++i) {
            co_await sleep_for(25ms);
            if ((co_await http(port, "PUT", "/v1/kv/k?acquire=" + s2)).body == "true\n") {
                acquired = std::chrono::steady_clock::now();
                break;
            }
        }
        REQUIRE(acquired != std::chrono::steady_clock::time_point{});
        CHECK(seconds(acquired - destroyed) >= 0.290);
        CHECK(seconds(acquired - destroyed) < 0.300 + 1.0);
    }(f));
}

TEST_CASE("a voluntary release arms no lock-delay", "[agent][ttl]") {
    agent_fixture f(fast_ttl_config());
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const json::value body6 = {{"NodeChecks", json::array{}}, {"LockDelay", "10s"}};
        const std::string s1 = co_await create_session(port, body6);
        const json::value body7 = {{"NodeChecks", json::array{}}};
        const std::string s2 = co_await create_session(port, body7);
        {
            const auto r9_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s1);
            REQUIRE(r9_.body == "true\n");
        }
        {
            const auto r10_ = co_await http(port, "PUT", "/v1/kv/k?release=" + s1);
            REQUIRE(r10_.body == "true\n");
        }
        {
            const auto r11_ = co_await http(port, "PUT", "/v1/session/destroy/" + s1);
            REQUIRE(r11_.status == 200);
        }
        {
            const auto r12_ = co_await http(port, "PUT", "/v1/kv/k?acquire=" + s2);
            CHECK(r12_.body == "true\n");
        }
    }(f));
}
