// SPDX-License-Identifier: BSL-1.0
// The X-Consul-Namespace header as Consul 1.8 OSS answers it. The golden transcripts pin ?ns=
// and ?partition= (test/golden/ns_*.json, partition_ignored.json) but cannot send a header,
// so the header's cases are here, checked against a real Consul 1.8 by hand.
#include "agent_fixture.hpp"
#include "support/catch.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace conclave::test;
using namespace std::chrono_literals;
namespace asio = boost::asio;

namespace {

using header_map = std::map<std::string, std::string>;

const std::string header_refusal = "Bad request: Invalid header: \"X-Consul-Namespace\" - "
                                   "Namespaces are a Consul Enterprise feature";
const std::string query_refusal = "Bad request: Invalid query parameter: \"ns\" - "
                                  "Namespaces are a Consul Enterprise feature";

// One request with extra headers on a fresh connection. (`body` is a string literal or null.)
asio::awaitable<http_reply> send(std::uint16_t port, std::string method, std::string target,
                                 header_map headers, const char* body = nullptr) {
    const auto ex = co_await asio::this_coro::executor;
    http_conn conn(ex, port);
    {
        const auto ec = co_await conn.connect();
        REQUIRE_FALSE(ec);
    }
    std::optional<std::string> payload;
    if (body != nullptr)
        payload = body;
    co_return co_await conn.request(std::move(method), std::move(target), std::move(payload),
                                    std::move(headers));
}

// Consul's BadRequestError: plain text, and none of the X-Consul-* meta headers.
void check_refused(const http_reply& r, const std::string& text) {
    CHECK(r.status == 400);
    CHECK(r.body == text);
    CHECK(r.header("content-type") == "text/plain; charset=utf-8");
    for (const auto& h : r.headers)
        CHECK_FALSE(h.first.starts_with("x-consul-"));
}

struct probe {
    const char* method;
    std::string target;
    const char* body;
};

// Every KV and session request a client makes, on key "k" and session `id`.
std::vector<probe> kv_and_session_probes(const std::string& id) {
    return {{"GET", "/v1/kv/k", nullptr},
            {"GET", "/v1/kv/k?raw", nullptr},
            {"GET", "/v1/kv/?recurse", nullptr},
            {"GET", "/v1/kv/?keys", nullptr},
            {"PUT", "/v1/kv/k2", "x"},
            {"PUT", "/v1/kv/k?acquire=" + id, "x"},
            {"PUT", "/v1/kv/k?cas=0", "x"},
            {"DELETE", "/v1/kv/k", nullptr},
            {"DELETE", "/v1/kv/?recurse", nullptr},
            {"PUT", "/v1/session/create", R"({"NodeChecks":[]})"},
            {"PUT", "/v1/session/renew/" + id, nullptr},
            {"PUT", "/v1/session/destroy/" + id, nullptr},
            {"GET", "/v1/session/info/" + id, nullptr},
            {"GET", "/v1/session/list", nullptr},
            {"GET", "/v1/session/node/n1", nullptr}};
}

std::string with_ns(const std::string& target, const std::string& ns) {
    return target + (target.find('?') == std::string::npos ? "?ns=" : "&ns=") + ns;
}

} // namespace

TEST_CASE("namespace: X-Consul-Namespace on KV and session endpoints is a 400, before ?ns=",
          "[agent][namespace]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const std::uint16_t port = f.port();
        {
            const http_reply put = co_await http(port, "PUT", "/v1/kv/k", "v");
            REQUIRE(put.status == 200);
        }
        const json::value no_checks = json::parse(R"({"NodeChecks":[]})");
        const std::string id = co_await create_session(port, no_checks);
        const header_map foo{{"X-Consul-Namespace", "foo"}};
        const header_map dflt{{"X-Consul-Namespace", "default"}};
        const header_map empty{{"X-Consul-Namespace", ""}};
        for (const probe& p : kv_and_session_probes(id)) {
            INFO(p.method << " " << p.target);
            const http_reply by_header = co_await send(port, p.method, p.target, foo, p.body);
            check_refused(by_header, header_refusal);
            // Both: the header is checked first.
            const http_reply both =
                co_await send(port, p.method, with_ns(p.target, "foo"), dflt, p.body);
            check_refused(both, header_refusal);
            // An empty header is no namespace: the query parameter's refusal.
            const http_reply by_query =
                co_await send(port, p.method, with_ns(p.target, "foo"), empty, p.body);
            check_refused(by_query, query_refusal);
        }
        // Nothing was done: the key keeps its value and has no holder, k2 was not written,
        // the session lives and is the only one.
        const http_reply k = co_await http(port, "GET", "/v1/kv/k");
        REQUIRE(k.status == 200);
        CHECK(k.json().at(0).at("Value").as_string() == "dg==");
        CHECK_FALSE(k.json().at(0).as_object().contains("Session"));
        const http_reply k2 = co_await http(port, "GET", "/v1/kv/k2");
        CHECK(k2.status == 404);
        const http_reply list = co_await http(port, "GET", "/v1/session/list");
        REQUIRE(list.status == 200);
        REQUIRE(list.json().as_array().size() == 1);
        CHECK(list.json().at(0).at("ID").as_string() == id);
    }(f));
}

TEST_CASE("namespace: an empty X-Consul-Namespace is ignored, as are X-Consul-Partition and "
          "Basic auth",
          "[agent][namespace]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const std::uint16_t port = f.port();
        const header_map empty{{"X-Consul-Namespace", ""}};
        const header_map partition{{"X-Consul-Partition", "foo"}};
        const header_map basic{{"Authorization", "Basic dXNlcjpwYXNz"}};
        const std::vector<header_map> ignored{empty, partition, basic};
        for (const header_map& h : ignored) {
            INFO(h.begin()->first << ": " << h.begin()->second);
            const http_reply put = co_await send(port, "PUT", "/v1/kv/k", h, "v");
            CHECK(put.status == 200);
            CHECK(put.body == "true\n");
            const http_reply get = co_await send(port, "GET", "/v1/kv/k?raw", h);
            CHECK(get.status == 200);
            CHECK(get.body == "v");
            CHECK(get.has("x-consul-index"));
            const http_reply keys = co_await send(port, "GET", "/v1/kv/?keys", h);
            CHECK(keys.status == 200);
            const http_reply create =
                co_await send(port, "PUT", "/v1/session/create", h, R"({"NodeChecks":[]})");
            CHECK(create.status == 200);
            const http_reply list = co_await send(port, "GET", "/v1/session/list", h);
            CHECK(list.status == 200);
            const http_reply del = co_await send(port, "DELETE", "/v1/kv/k", h);
            CHECK(del.status == 200);
        }
    }(f));
}

TEST_CASE("namespace: txn, status and agent/self ignore X-Consul-Namespace", "[agent][namespace]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const std::uint16_t port = f.port();
        const header_map foo{{"X-Consul-Namespace", "foo"}};
        const http_reply write =
            co_await send(port, "PUT", "/v1/txn?ns=foo", foo,
                          R"([{"KV":{"Verb":"set","Key":"t","Value":"dg==","Namespace":"foo"}}])");
        CHECK(write.status == 200);
        const http_reply read =
            co_await send(port, "PUT", "/v1/txn", foo, R"([{"KV":{"Verb":"get","Key":"t"}}])");
        CHECK(read.status == 200);
        CHECK(read.header("x-consul-knownleader") == "true");
        // The one KV space.
        const http_reply plain = co_await http(port, "GET", "/v1/kv/t?raw");
        CHECK(plain.status == 200);
        CHECK(plain.body == "v");
        const std::vector<std::string> targets{"/v1/status/leader", "/v1/status/peers",
                                               "/v1/agent/self"};
        for (const std::string& target : targets) {
            INFO(target);
            const http_reply r = co_await send(port, "GET", target, foo);
            CHECK(r.status == 200);
        }
    }(f));
}

TEST_CASE("namespace: query options, a GET's key and the method are checked before the header",
          "[agent][namespace]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const std::uint16_t port = f.port();
        const header_map foo{{"X-Consul-Namespace", "foo"}};
        const http_reply missing_key = co_await send(port, "GET", "/v1/kv/", foo);
        CHECK(missing_key.status == 400);
        CHECK(missing_key.body == "Missing key name");
        const http_reply bad_index = co_await send(port, "GET", "/v1/kv/k?index=abc", foo);
        CHECK(bad_index.status == 400);
        CHECK(bad_index.body == "Invalid index");
        const http_reply renew = co_await send(port, "PUT", "/v1/session/renew/x?index=abc", foo);
        CHECK(renew.status == 400);
        CHECK(renew.body == "Invalid index");
        const http_reply post = co_await send(port, "POST", "/v1/kv/k", foo, "x");
        CHECK(post.status == 405);
        CHECK(post.body == "method POST not allowed");
        // On writes the namespace comes first: before the key, the flags and the dc.
        const http_reply put = co_await send(port, "PUT", "/v1/kv/?flags=abc&dc=nope", foo, "x");
        check_refused(put, header_refusal);
        const http_reply create =
            co_await send(port, "PUT", "/v1/session/create?dc=nope", foo, "{bad json");
        check_refused(create, header_refusal);
    }(f));
}

TEST_CASE("namespace: a blocking read with X-Consul-Namespace is refused at once",
          "[agent][namespace]") {
    agent_fixture f;
    run(f.ioc, [](agent_fixture& f) -> asio::awaitable<void> {
        const std::uint16_t port = f.port();
        const http_reply put = co_await http(port, "PUT", "/v1/kv/k", "v");
        REQUIRE(put.status == 200);
        const http_reply get = co_await http(port, "GET", "/v1/kv/k");
        const std::string index = std::to_string(get.index());
        const header_map foo{{"X-Consul-Namespace", "foo"}};
        const std::vector<std::string> targets{"/v1/kv/k?wait=5s&index=" + index,
                                               "/v1/kv/?keys&wait=5s&index=" + index,
                                               "/v1/session/list?wait=5s&index=" + index};
        for (const std::string& target : targets) {
            INFO(target);
            const http_reply r = co_await send(port, "GET", target, foo);
            check_refused(r, header_refusal);
            CHECK(r.elapsed < 2s);
        }
        CHECK(f.agent.stats().blocking_queries_waiting == 0);
    }(f));
}
