// SPDX-License-Identifier: BSL-1.0
// The agent's TTL checks (/v1/agent/check/..., /v1/agent/checks) and the sessions bound to
// them, answered as Consul 1.8.0 answered the same requests (recorded by hand with curl
// against `consul agent -dev`).
#include "agent_fixture.hpp"
#include "support/catch.hpp"

using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

using check_state = std::pair<std::string, std::string>;

// Status and output of check `id` as GET /v1/agent/checks shows it ("" when absent).
asio::awaitable<check_state> agent_check(std::uint16_t port, std::string id) {
    const http_reply r = co_await http(port, "GET", "/v1/agent/checks");
    REQUIRE(r.status == 200);
    const json::value all = r.json();
    const auto& checks = all.as_object();
    const auto* c = checks.if_contains(id);
    if (c == nullptr)
        co_return check_state{};
    co_return check_state{std::string(c->at("Status").as_string()),
                          std::string(c->at("Output").as_string())};
}

// A session create body bound to node check `id` (built outside the coroutines: g++ 12
// cannot keep a string literal's array across a co_await).
json::value node_checks_body(const std::string& id) {
    return json::value{{"NodeChecks", json::array{json::value(id)}}, {"LockDelay", "0s"}};
}

json::value service_checks_body(const std::string& id) {
    return json::value{{"NodeChecks", json::array{}},
                       {"ServiceChecks", json::array{json::object{{"ID", id}}}}};
}

asio::awaitable<bool> session_exists(std::uint16_t port, std::string id) {
    const http_reply r = co_await http(port, "GET", "/v1/session/info/" + id);
    co_return r.body != "[]\n";
}

} // namespace

TEST_CASE("agent check register refuses what Consul refuses, in its words", "[agent][checks]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        const std::pair<const char*, std::pair<unsigned, std::string>> cases[] = {
            {R"({"Name":"x"})", {400, "Invalid check: TTL must be > 0 for TTL checks"}},
            {R"({"Name":"x","TTL":"0s"})", {400, "Invalid check: TTL must be > 0 for TTL checks"}},
            {R"({"ID":"y"})", {400, "Missing check name"}},
            {R"({"Name":"z","TTL":"abc"})",
             {400, "Request decode failed: time: invalid duration \"abc\""}},
            {R"({"Name":"z","TTL":"1s","Status":"bogus"})", {400, "Bad check status"}},
            {R"({"Name":"z","TTL":"1s","ServiceID":"nosvc"})",
             {500, "ServiceID \"nosvc\" does not exist"}},
            {"notjson",
             {400, "Request decode failed: invalid character 'o' in literal null "
                   "(expecting 'u')"}},
            {"", {400, "Request decode failed: EOF"}},
        };
        for (const auto& [body, want] : cases) {
            CAPTURE(body);
            const http_reply r = co_await http(port, "PUT", "/v1/agent/check/register", body);
            CHECK(r.status == want.first);
            CHECK(r.body == want.second);
        }
        const http_reply get = co_await http(port, "GET", "/v1/agent/check/pass/c");
        CHECK(get.status == 405);
        CHECK(get.body == "method GET not allowed");
    }(f));
}

TEST_CASE("agent TTL checks: pass, warn, fail, update, expiry and deregistration",
          "[agent][checks]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        // No status: critical; the ID defaults to the name.
        http_reply r = co_await http(port, "PUT", "/v1/agent/check/register",
                                     R"({"Name":"n3","TTL":"30s","Notes":"nn"})");
        CHECK(r.status == 200);
        CHECK(r.body.empty());
        const auto c1 = co_await agent_check(port, "n3");
        CHECK(c1 == check_state{"critical", ""});
        co_await http(port, "PUT", "/v1/agent/check/pass/n3?note=ok%20now");
        const auto c2 = co_await agent_check(port, "n3");
        CHECK(c2 == check_state{"passing", "ok now"});
        co_await http(port, "PUT", "/v1/agent/check/update/n3",
                      R"({"Status":"warning","Output":"o"})");
        const auto c3 = co_await agent_check(port, "n3");
        CHECK(c3 == check_state{"warning", "o"});
        r = co_await http(port, "PUT", "/v1/agent/check/update/n3", R"({"Status":"bad"})");
        CHECK(r.status == 400);
        CHECK(r.body == "Invalid check status: 'bad'");
        // Registered again without a status: the status and output stay.
        co_await http(port, "PUT", "/v1/agent/check/register",
                      R"({"ID":"n3","Name":"n3","TTL":"30s"})");
        const auto c4 = co_await agent_check(port, "n3");
        CHECK(c4 == check_state{"warning", "o"});
        r = co_await http(port, "PUT", "/v1/agent/check/pass/nope");
        CHECK(r.status == 500);
        CHECK(r.body == "CheckID \"nope\" does not have associated TTL");
        r = co_await http(port, "PUT", "/v1/agent/check/deregister/");
        CHECK(r.status == 500);
        CHECK(r.body == "CheckID missing");
        r = co_await http(port, "PUT", "/v1/agent/check/deregister/nope");
        CHECK(r.status == 200);
        // A short TTL runs out: critical, "TTL expired".
        co_await http(port, "PUT", "/v1/agent/check/register",
                      R"({"ID":"short","Name":"s","TTL":"100ms","Status":"passing"})");
        const auto end = std::chrono::steady_clock::now() + 20s;
        check_state now = co_await agent_check(port, "short");
        while (now.first == "passing" && std::chrono::steady_clock::now() < end) {
            co_await sleep_for(10ms);
            now = co_await agent_check(port, "short");
        }
        CHECK(now == check_state{"critical", "TTL expired"});
        co_await http(port, "PUT", "/v1/agent/check/deregister/n3");
        const auto dropped = co_await agent_check(port, "n3");
        CHECK(dropped.first.empty());
    }(f));
}

TEST_CASE("sessions bound to agent checks: refused while critical, invalidated when failed, "
          "deregistered or expired, kept through warning",
          "[agent][checks]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const auto port = f.port();
        co_await http(port, "PUT", "/v1/agent/check/register",
                      R"({"ID":"hc","Name":"c","TTL":"30s","Status":"passing"})");
        const json::value b1 = node_checks_body("hc");
        const std::string s1 = co_await create_session(port, b1);
        const json::value b2 = service_checks_body("hc");
        const std::string s2 = co_await create_session(port, b2);
        const http_reply info = co_await http(port, "GET", "/v1/session/info/" + s2);
        const json::value want = json::parse(R"([{"ID":"hc","Namespace":""}])");
        CHECK(info.json().as_array().at(0).at("ServiceChecks") == want);
        co_await http(port, "PUT", "/v1/agent/check/warn/hc?note=hmm");
        const bool e6 = co_await session_exists(port, s1);
        CHECK(e6);
        co_await http(port, "PUT", "/v1/agent/check/fail/hc?note=dead");
        const bool e7 = co_await session_exists(port, s1);
        CHECK_FALSE(e7);
        const bool e8 = co_await session_exists(port, s2);
        CHECK_FALSE(e8);
        http_reply r = co_await http(port, "PUT", "/v1/session/create", R"({"NodeChecks":["hc"]})");
        CHECK(r.status == 500);
        CHECK(r.body == "Check 'hc' is in critical state");
        // Passing again: sessions can be bound to it again; deregistering it ends them.
        co_await http(port, "PUT", "/v1/agent/check/pass/hc");
        const std::string s3 = co_await create_session(port, b1);
        co_await http(port, "PUT", "/v1/agent/check/deregister/hc");
        const bool e9 = co_await session_exists(port, s3);
        CHECK_FALSE(e9);
        r = co_await http(port, "PUT", "/v1/session/create", R"({"ServiceChecks":[{"ID":"hc"}]})");
        CHECK(r.status == 500);
        CHECK(r.body == "Missing check 'hc' registration");
        // A TTL that runs out invalidates its sessions too.
        co_await http(port, "PUT", "/v1/agent/check/register",
                      R"({"ID":"ttl","Name":"t","TTL":"200ms","Status":"passing"})");
        const json::value b4 = node_checks_body("ttl");
        const std::string s4 = co_await create_session(port, b4);
        const auto end = std::chrono::steady_clock::now() + 20s;
        bool alive = true;
        while (alive && std::chrono::steady_clock::now() < end) {
            const http_reply now = co_await http(port, "GET", "/v1/session/info/" + s4);
            alive = now.body != "[]\n";
            if (alive) {
                const std::string target =
                    "/v1/session/info/" + s4 + "?index=" + std::to_string(now.index()) + "&wait=5s";
                co_await http(port, "GET", target);
            }
        }
        CHECK_FALSE(alive);
        const auto c5 = co_await agent_check(port, "ttl");
        CHECK(c5 == check_state{"critical", "TTL expired"});
    }(f));
}
