// SPDX-License-Identifier: BSL-1.0
// What every request shares, with no server (lib/consul/client.cpp, missing_permission.cpp):
// its target with the query string, the blocking-query parameters, and the words a 403 gets.
#include "consul/client_impl.hpp"
#include "support/catch.hpp"

#include <string>

using namespace conclave;
using namespace std::chrono_literals;
using detail::api_call;

namespace {

std::string target_of(const api_call& call, const std::string& default_dc = "") {
    std::string storage;
    return std::string(detail::request_target(call, default_dc, storage));
}

api_call kv_call(boost::beast::http::verb method, std::string path) {
    api_call call;
    call.method = method;
    call.path = std::move(path);
    return call;
}

} // namespace

TEST_CASE("request target: the path alone, or with its parameters and datacenter encoded",
          "[unit][api_call]") {
    api_call call;
    call.path = "/v1/kv/a%20b";
    CHECK(target_of(call) == "/v1/kv/a%20b");
    call.flag("recurse");
    call.param("separator", "/ &");
    CHECK(target_of(call) == "/v1/kv/a%20b?recurse&separator=/%20%26");
    CHECK(target_of(call, "dc 1") == "/v1/kv/a%20b?recurse&separator=/%20%26&dc=dc%201");
    call.datacenter = "east";
    CHECK(target_of(call, "dc1") == "/v1/kv/a%20b?recurse&separator=/%20%26&dc=east");
}

TEST_CASE("blocking query: an index makes a blocking call with Consul's wait text",
          "[unit][api_call]") {
    api_call call;
    diagnostics diag;
    detail::apply_query(call, query_options{}.with_index(42).with_wait(90s).with_diag(&diag));
    CHECK(call.blocking);
    CHECK(call.wait == 90s);
    REQUIRE(call.params.size() == 2);
    CHECK(call.params[0] == std::pair<std::string, std::optional<std::string>>{"index", "42"});
    CHECK(call.params[1].first == "wait");
    CHECK(call.params[1].second == "90000ms");
    CHECK(call.diag == &diag);

    api_call plain;
    detail::apply_query(plain, query_options{}.with_wait(90s).with_mode(consistency::consistent));
    CHECK_FALSE(plain.blocking); // a wait without an index is no blocking query
    REQUIRE(plain.params.size() == 1);
    CHECK(plain.params[0].first == "consistent");
    CHECK_FALSE(plain.params[0].second);
}

TEST_CASE("blocking query: Consul's default wait is 5 minutes and its cap 10", "[unit][api_call]") {
    CHECK(detail::query_wait(0ms) == 5min);
    CHECK(detail::query_wait(30s) == 30s);
    CHECK(detail::query_wait(20min) == 10min);
}

TEST_CASE("permission denied: names the ACL rule a KV request needs, on the key as written",
          "[unit][api_call]") {
    using boost::beast::http::verb;
    CHECK(detail::missing_permission(kv_call(verb::get, "/v1/kv/app/a%20b"), "", true) ==
          "the ACL token lacks key read on \"app/a b\"");
    CHECK(detail::missing_permission(kv_call(verb::put, "/v1/kv/app/lock"), "", true) ==
          "the ACL token lacks key write on \"app/lock\"");
    auto list = kv_call(verb::get, "/v1/kv/app/");
    list.flag("recurse");
    CHECK(detail::missing_permission(list, "", true) ==
          "the ACL token lacks key_prefix read on \"app/\"");
}

TEST_CASE("permission denied: names the rule of sessions, transactions and the agent",
          "[unit][api_call]") {
    using boost::beast::http::verb;
    const auto need = [](verb m, std::string path) {
        return detail::missing_permission(kv_call(m, std::move(path)), "", true);
    };
    CHECK(need(verb::put, "/v1/txn").find("key write") != std::string::npos);
    CHECK(need(verb::put, "/v1/session/create") ==
          "the ACL token lacks session write on the agent's node");
    CHECK(need(verb::put, "/v1/session/renew/s1") ==
          "the ACL token lacks session write on the session's node");
    CHECK(need(verb::get, "/v1/session/list") == "the ACL token lacks session read");
    CHECK(need(verb::get, "/v1/agent/self") == "the ACL token lacks agent read");
}

TEST_CASE("permission denied: an unknown token is said so, and a missing one gets a hint",
          "[unit][api_call]") {
    using boost::beast::http::verb;
    const auto call = kv_call(verb::get, "/v1/kv/k");
    CHECK(detail::missing_permission(call, "ACL not found", true) ==
          "Consul does not know the ACL token sent (wrong, or deleted)");
    const auto hint = detail::missing_permission(call, "Permission denied", false);
    CHECK(hint.find("no token was sent: set CONSUL_HTTP_TOKEN") != std::string::npos);
}
