// SPDX-License-Identifier: BSL-1.0
// Each Consul endpoint's two halves with no server (lib/consul/endpoints/): the request its
// arguments build, or the arguments it refuses before sending; and what every kind of reply
// decodes to: the result, or the error with the words the diagnostics carry.
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/agent_check.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/endpoints/session.hpp"
#include "support/catch.hpp"

#include <boost/json/parse.hpp>

#include <string>
#include <utility>

using namespace conclave;
using namespace std::chrono_literals;
namespace endpoint = conclave::detail::endpoint;
using detail::api_call;
using detail::api_reply;

namespace {

// The request `e` builds, or the error it refuses its arguments with.
template <class E>
std::pair<error_code, api_call> built(E e) {
    api_call call;
    auto ec = e.build(call);
    return {ec, std::move(call)};
}

// The query string of a built request, in order: "raw&index=7&wait=5s".
std::string params_of(const api_call& call) {
    std::string out;
    for (const auto& [name, value] : call.params) {
        if (!out.empty())
            out += '&';
        out += name;
        if (value)
            out += "=" + *value;
    }
    return out;
}

api_reply reply(unsigned status, std::string body, std::uint64_t index = 0) {
    api_reply r;
    r.status = status;
    r.body = std::move(body);
    r.meta.index = index;
    return r;
}

// Builds `e` (with diagnostics) and decodes `r` as its answer.
template <class E>
std::pair<error_code, typename E::result> decoded(E e, api_reply r, diagnostics* diag = nullptr) {
    api_call call;
    REQUIRE_FALSE(e.build(call));
    call.diag = diag;
    return e.decode(call, r);
}

constexpr const char* one_entry =
    R"([{"Key":"a b","Value":"aGk=","Flags":3,"LockIndex":1,"Session":"s1",)"
    R"("CreateIndex":4,"ModifyIndex":9}])";

constexpr const char* one_session =
    R"([{"ID":"adf4238a-882b-9ddc-4a9d-5b6758e4159e","Name":"n","Node":"node1",)"
    R"("LockDelay":15000000000,"Behavior":"release","TTL":"10s","NodeChecks":["serfHealth"],)"
    R"("ServiceChecks":null,"CreateIndex":5,"ModifyIndex":5}])";

} // namespace

TEST_CASE("endpoint kv_get: builds a percent-encoded path and the query's parameters",
          "[unit][endpoint]") {
    auto q = query_options{}.with_index(7).with_wait(5s).with_mode(consistency::stale);
    auto [ec, call] = built(endpoint::kv_get{"/a b/c", q});
    REQUIRE_FALSE(ec);
    CHECK(call.method == boost::beast::http::verb::get);
    CHECK(call.path == "/v1/kv/a%20b/c"); // one leading '/' dropped, as Go's client does
    CHECK(params_of(call) == "index=7&wait=5000ms&stale");
    CHECK(call.blocking);
    CHECK(call.one_entry);
}

TEST_CASE("endpoint kv_get: refuses a key with '//' before sending, and says why",
          "[unit][endpoint]") {
    diagnostics diag;
    auto [ec, call] = built(endpoint::kv_get{"a//b", query_options{}.with_diag(&diag)});
    CHECK(ec == errc::invalid_argument);
    CHECK(diag.client_message.find("must not begin with '/' or contain '//'") != std::string::npos);
}

TEST_CASE("endpoint kv_get: a 404 is no entry, with the index to block on", "[unit][endpoint]") {
    auto [ec, r] = decoded(endpoint::kv_get{"k", {}}, reply(404, "", 12));
    CHECK_FALSE(ec);
    CHECK_FALSE(r.entry);
    CHECK(r.meta.index == 12);
}

TEST_CASE("endpoint kv_get: one entry decodes with its value, flags and indexes",
          "[unit][endpoint]") {
    auto [ec, r] = decoded(endpoint::kv_get{"a b", {}}, reply(200, one_entry, 9));
    REQUIRE_FALSE(ec);
    REQUIRE(r.entry);
    CHECK(r.entry->key == "a b");
    CHECK(r.entry->value == "hi");
    CHECK(r.entry->flags == 3);
    CHECK(r.entry->session == "s1");
    CHECK(r.entry->modify_index == 9);
    CHECK(r.meta.index == 9);
}

TEST_CASE("endpoint kv_get: two entries or broken JSON are a bad response, not a result",
          "[unit][endpoint]") {
    diagnostics diag;
    const std::string two =
        R"([{"Key":"a","Value":null,"Flags":0,"LockIndex":0,"CreateIndex":1,"ModifyIndex":1},)"
        R"({"Key":"b","Value":null,"Flags":0,"LockIndex":0,"CreateIndex":1,"ModifyIndex":1}])";
    auto [ec, r] = decoded(endpoint::kv_get{"a", {}}, reply(200, two), &diag);
    CHECK(ec == errc::bad_response);
    CHECK_FALSE(r.entry);
    CHECK(diag.client_message == "GET /v1/kv/a: expected one KV entry");
    auto [ec2, r2] = decoded(endpoint::kv_get{"a", {}}, reply(200, "[{"));
    CHECK(ec2 == errc::bad_response);
}

TEST_CASE("endpoint kv_get: a refused status carries Consul's text and the missing permission",
          "[unit][endpoint]") {
    diagnostics diag;
    auto [ec, r] =
        decoded(endpoint::kv_get{"app/lock", {}}, reply(403, "Permission denied"), &diag);
    CHECK(ec == errc::permission_denied);
    CHECK(diag.http_status == 403);
    CHECK(diag.server_message == "Permission denied");
    CHECK(diag.client_message.find("lacks key read on \"app/lock\"") != std::string::npos);
    auto [ec500, r500] = decoded(endpoint::kv_get{"k", {}}, reply(500, "rpc error"), &diag);
    CHECK(ec500 == errc::server_error);
    CHECK(diag.client_message == "GET /v1/kv/k: Unexpected response code: 500");
}

TEST_CASE("endpoint kv_get_raw: the body is the value as stored, and a 404 is none",
          "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::kv_get_raw{"k", query_options{}.with_index(3)});
    REQUIRE_FALSE(ec);
    CHECK(params_of(call) == "raw&index=3");
    auto [dec, r] = decoded(endpoint::kv_get_raw{"k", {}}, reply(200, std::string("\0x", 2), 4));
    CHECK_FALSE(dec);
    CHECK(r.value == std::string("\0x", 2));
    CHECK(r.meta.index == 4);
    auto [dec404, none] = decoded(endpoint::kv_get_raw{"k", {}}, reply(404, "", 5));
    CHECK_FALSE(dec404);
    CHECK_FALSE(none.value);
    CHECK(none.meta.index == 5);
}

TEST_CASE("endpoint kv_list: recurse, a 404 is an empty list, a broken one an error",
          "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::kv_list{"svc/", {}});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/kv/svc/");
    CHECK(params_of(call) == "recurse");
    CHECK_FALSE(call.one_entry); // held to max_response_body, not the one-entry limit
    auto [dec, r] = decoded(endpoint::kv_list{"", {}}, reply(200, one_entry));
    CHECK_FALSE(dec);
    CHECK(r.entries.size() == 1);
    auto [dec404, empty] = decoded(endpoint::kv_list{"x", {}}, reply(404, "", 2));
    CHECK_FALSE(dec404);
    CHECK(empty.entries.empty());
    CHECK(empty.meta.index == 2);
    auto [bad, r3] = decoded(endpoint::kv_list{"x", {}}, reply(200, R"({"Key":"a"})"));
    CHECK(bad == errc::bad_response);
}

TEST_CASE("endpoint kv_keys: the separator is sent, and anything but strings is an error",
          "[unit][endpoint]") {
    auto [ec, call] =
        built(endpoint::kv_keys{"svc/", kv_keys_options{}.with_separator("/").with_query(
                                            query_options{}.with_mode(consistency::consistent))});
    REQUIRE_FALSE(ec);
    CHECK(params_of(call) == "keys&separator=/&consistent");
    auto [dec, r] = decoded(endpoint::kv_keys{"", {}}, reply(200, R"(["a","b/"])"));
    CHECK_FALSE(dec);
    CHECK(r.keys == std::vector<std::string>{"a", "b/"});
    auto [bad, r2] = decoded(endpoint::kv_keys{"", {}}, reply(200, R"(["a",1])"));
    CHECK(bad == errc::bad_response);
    CHECK(r2.keys.empty());
}

TEST_CASE("endpoint kv_put: flags, cas and the value as an octet-stream body", "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::kv_put{"k", "v", kv_put_options{}.with_flags(5).with_cas(0)});
    REQUIRE_FALSE(ec);
    CHECK(call.method == boost::beast::http::verb::put);
    CHECK(params_of(call) == "flags=5&cas=0");
    CHECK(call.body == "v");
    CHECK(std::string(call.content_type) == "application/octet-stream");
    CHECK(call.finish_once_sent); // a write is finished before a cancellation is reported
}

TEST_CASE("endpoint kv_put: refuses two modes at once, a leading '/' and an empty key",
          "[unit][endpoint]") {
    diagnostics diag;
    auto both = kv_put_options{}.with_cas(1).with_acquire("s");
    both.diag = &diag;
    CHECK(built(endpoint::kv_put{"k", "v", both}).first == errc::invalid_argument);
    CHECK(diag.client_message == "at most one of cas, acquire and release may be set");
    CHECK(built(endpoint::kv_put{"/k", "v", {}}).first == errc::invalid_argument);
    CHECK(built(endpoint::kv_put{"", "v", {}}).first == errc::invalid_argument);
}

TEST_CASE("endpoint kv_put and kv_delete: Consul's true or false, nothing else",
          "[unit][endpoint]") {
    CHECK(decoded(endpoint::kv_put{"k", "", {}}, reply(200, "true\n")) ==
          std::pair{error_code{}, true});
    CHECK(decoded(endpoint::kv_put{"k", "", {}}, reply(200, "false")) ==
          std::pair{error_code{}, false});
    diagnostics diag;
    auto [bad, v] = decoded(endpoint::kv_delete{"k", {}}, reply(200, "yes"), &diag);
    CHECK(bad == errc::bad_response);
    CHECK(diag.client_message == "DELETE /v1/kv/k: expected true or false");
    auto [ec, call] =
        built(endpoint::kv_delete{"/p/", kv_delete_options{}.with_recurse().with_cas(3)});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/kv/p/");
    CHECK(params_of(call) == "recurse&cas=3");
}

TEST_CASE("endpoint session_create: the JSON body carries what was set, in Consul's names",
          "[unit][endpoint]") {
    auto o = session_options{}.with_name("n").with_ttl(10s).with_lock_delay(0ms);
    o.node_checks = std::vector<std::string>{};
    auto [ec, call] = built(endpoint::session_create{o});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/session/create");
    CHECK(std::string(call.content_type) == "application/json");
    const auto body = boost::json::parse(call.body).as_object();
    CHECK(body.at("Name") == "n");
    CHECK(body.at("TTL") == "10s");
    CHECK(body.at("LockDelay") == "0s"); // an explicit 0 disables the lock-delay
    CHECK(body.at("Behavior") == "release");
    CHECK(body.at("NodeChecks").as_array().empty()); // explicitly none
    CHECK(body.at("Checks").as_array().empty());     // (agents before 1.7)
    CHECK_FALSE(body.contains("Node"));
}

TEST_CASE("endpoint session_create: the reply's ID, or a bad response without one",
          "[unit][endpoint]") {
    CHECK(decoded(endpoint::session_create{{}}, reply(200, R"({"ID":"abc"})")) ==
          std::pair{error_code{}, std::string("abc")});
    for (const char* body : {R"({"ID":""})", R"({"ID":5})", "{}", "[]", "null", "{"}) {
        CAPTURE(body);
        CHECK(decoded(endpoint::session_create{{}}, reply(200, body)).first == errc::bad_response);
    }
}

TEST_CASE("endpoint session_create: a check critical or missing is check_critical, naming it",
          "[unit][endpoint]") {
    diagnostics diag;
    auto [critical, id] = decoded(endpoint::session_create{{}},
                                  reply(500, "Check 'web' is in critical state"), &diag);
    CHECK(critical == errc::check_critical);
    CHECK(diag.server_message == "Check 'web' is in critical state");
    CHECK(decoded(endpoint::session_create{{}}, reply(500, "Missing check 'web' registration"))
              .first == errc::check_critical);
    CHECK(decoded(endpoint::session_create{{}}, reply(500, "Missing node registration")).first ==
          errc::server_error);
    // Through a server that forwards to the leader.
    CHECK(endpoint::refused_check("rpc error making call: Check 'a b' is in critical state") ==
          "a b");
    CHECK(endpoint::refused_check("Missing check 'x' registration") == "x");
    CHECK_FALSE(endpoint::refused_check("Check '' is in critical state"));
    CHECK_FALSE(endpoint::refused_check("Check 'x' is fine"));
    auto o = session_options{}.with_service_checks({service_check{"web", ""}});
    auto [ec, call] = built(endpoint::session_create{o});
    REQUIRE_FALSE(ec);
    CHECK(boost::json::parse(call.body).at("ServiceChecks") ==
          boost::json::parse(R"([{"ID":"web","Namespace":""}])"));
}

TEST_CASE("endpoint agent checks: a TTL check's register, update and deregister requests",
          "[unit][endpoint]") {
    auto o = agent_check_options{}
                 .with_id("c1")
                 .with_name("n")
                 .with_service_id("web")
                 .with_ttl(1500ms)
                 .with_status(check_status::passing);
    auto [ec, call] = built(endpoint::agent_check_register{o});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/agent/check/register");
    CHECK(call.datacenter.empty()); // the agent answers for itself
    CHECK(boost::json::parse(call.body) ==
          boost::json::parse(
              R"({"ID":"c1","Name":"n","ServiceID":"web","TTL":"1.5s","Status":"passing"})"));
    CHECK(built(endpoint::agent_check_register{agent_check_options{}.with_name("n")}).first ==
          errc::invalid_argument); // no TTL
    auto [ec2, fail] =
        built(endpoint::agent_check_update{"a b", check_status::critical, "down", {}});
    REQUIRE_FALSE(ec2);
    CHECK(fail.path == "/v1/agent/check/fail/a%20b");
    CHECK(params_of(fail) == "note=down");
    CHECK(built(endpoint::agent_check_update{"c", check_status::warning, {}, {}}).second.path ==
          "/v1/agent/check/warn/c");
    CHECK(built(endpoint::agent_check_deregister{"c", {}}).second.path ==
          "/v1/agent/check/deregister/c");
    CHECK(built(endpoint::agent_check_deregister{"", {}}).first == errc::invalid_argument);
    CHECK(decoded(endpoint::agent_check_update{"c", check_status::passing, {}, {}},
                  reply(500, "CheckID \"c\" does not have associated TTL"))
              .first == errc::server_error);
    CHECK(decoded(endpoint::agent_check_deregister{"c", {}}, reply(200, "")) ==
          std::pair{error_code{}, true});
}

TEST_CASE("endpoint session_renew: a session Consul no longer has is session_invalidated",
          "[unit][endpoint]") {
    diagnostics diag;
    auto [gone, e] =
        decoded(endpoint::session_renew{"s1", {}}, reply(404, "Session id 's1' not found"), &diag);
    CHECK(gone == errc::session_invalidated);
    CHECK(diag.server_message == "Session id 's1' not found");
    CHECK(decoded(endpoint::session_renew{"s1", {}}, reply(200, "[]")).first ==
          errc::session_invalidated);
    CHECK(decoded(endpoint::session_renew{"s1", {}}, reply(200, "null")).first ==
          errc::session_invalidated);
    auto [ok, entry] = decoded(endpoint::session_renew{"s1", {}}, reply(200, one_session));
    CHECK_FALSE(ok);
    CHECK(entry.ttl == 10s);
    CHECK(decoded(endpoint::session_renew{"s1", {}}, reply(500, "boom")).first ==
          errc::server_error);
}

TEST_CASE(
    "endpoint session_renew: the ID is one encoded path segment, and a renewal need not finish",
    "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::session_renew{"a/b c", write_options{}.with_timeout(2s)});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/session/renew/a%2Fb%20c");
    CHECK(call.deadline.has_value());
    CHECK_FALSE(call.finish_once_sent); // a renewal undoes nothing and is undone by nothing
}

TEST_CASE("endpoint session writes and info: an empty ID is refused before sending",
          "[unit][endpoint]") {
    diagnostics diag;
    CHECK(built(endpoint::session_renew{"", write_options{}.with_diag(&diag)}).first ==
          errc::invalid_argument);
    CHECK(diag.client_message == "missing session ID");
    CHECK(built(endpoint::session_destroy{"", {}}).first == errc::invalid_argument);
    CHECK(built(endpoint::session_info{"", {}}).first == errc::invalid_argument);
}

TEST_CASE("endpoint session_destroy: true when Consul says so", "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::session_destroy{"s1", {}});
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/session/destroy/s1");
    CHECK(call.method == boost::beast::http::verb::put);
    CHECK(decoded(endpoint::session_destroy{"s1", {}}, reply(200, "true")).second);
    CHECK_FALSE(decoded(endpoint::session_destroy{"s1", {}}, reply(200, "false")).second);
}

TEST_CASE("endpoint session_info: an unknown session is none, a known one is decoded",
          "[unit][endpoint]") {
    auto [ec, none] = decoded(endpoint::session_info{"s1", {}}, reply(200, "[]", 8));
    CHECK_FALSE(ec);
    CHECK_FALSE(none.session);
    CHECK(none.meta.index == 8);
    auto [ec2, known] = decoded(endpoint::session_info{"s1", {}}, reply(200, one_session));
    CHECK_FALSE(ec2);
    REQUIRE(known.session);
    CHECK(known.session->node == "node1");
    CHECK(known.session->node_checks == std::vector<std::string>{"serfHealth"});
    auto [bad, r] = decoded(endpoint::session_info{"s1", {}}, reply(200, R"([{"ID":5}])"));
    CHECK(bad == errc::bad_response);
}

TEST_CASE("endpoint session_list: every session, or a node's, and null is none",
          "[unit][endpoint]") {
    CHECK(built(endpoint::session_list{std::nullopt, {}}).second.path == "/v1/session/list");
    CHECK(built(endpoint::session_list{"node 1", {}}).second.path == "/v1/session/node/node%201");
    auto [ec, r] = decoded(endpoint::session_list{std::nullopt, {}}, reply(200, "null"));
    CHECK_FALSE(ec);
    CHECK(r.sessions.empty());
    CHECK(decoded(endpoint::session_list{std::nullopt, {}}, reply(200, one_session))
              .second.sessions.size() == 1);
}

TEST_CASE("endpoint txn: committed on 200, rolled back with its errors on 409, else an error",
          "[unit][endpoint]") {
    endpoint::txn t{{txn_op::get("k")}, txn_options{}.with_mode(consistency::stale)};
    auto [ec, call] = built(t);
    REQUIRE_FALSE(ec);
    CHECK(call.path == "/v1/txn");
    CHECK(params_of(call) == "stale");
    CHECK(boost::json::parse(call.body).as_array().size() == 1);
    auto [ok, done] = decoded(t, reply(200, R"({"Results":[],"Errors":null})", 3));
    CHECK_FALSE(ok);
    CHECK(done.committed);
    CHECK(done.meta.index == 3);
    auto [ec409, rolled] =
        decoded(t, reply(409, R"({"Results":null,"Errors":[{"OpIndex":0,"What":"no"}]})"));
    CHECK_FALSE(ec409);
    CHECK_FALSE(rolled.committed);
    REQUIRE(rolled.errors.size() == 1);
    CHECK(rolled.errors[0].what == "no");
    CHECK(decoded(t, reply(413, "too large")).first == errc::request_too_large);
    CHECK(decoded(t, reply(200, "[")).first == errc::bad_response);
}

TEST_CASE("endpoint status_leader and agent_self: their JSON, or a bad response",
          "[unit][endpoint]") {
    CHECK(decoded(endpoint::status_leader{{}}, reply(200, R"("127.0.0.1:8300")")) ==
          std::pair{error_code{}, std::string("127.0.0.1:8300")});
    CHECK(decoded(endpoint::status_leader{{}}, reply(200, R"("")")).second.empty()); // no leader
    CHECK(decoded(endpoint::status_leader{{}}, reply(200, "8300")).first == errc::bad_response);
    auto [ec, info] =
        decoded(endpoint::agent_self{{}},
                reply(200, R"({"Config":{"NodeName":"n1","Datacenter":"dc1","Version":"1.8.0"}})"));
    CHECK_FALSE(ec);
    CHECK(info.node_name == "n1");
    CHECK(info.datacenter == "dc1");
    CHECK(info.version == "1.8.0");
    CHECK(decoded(endpoint::agent_self{{}}, reply(200, R"({"Member":{}})")).first ==
          errc::bad_response);
}

TEST_CASE("endpoint names: each request is reported under its endpoint's name",
          "[unit][endpoint]") {
    const auto name = [](auto e) { return std::string(built(std::move(e)).second.endpoint); };
    CHECK(name(endpoint::kv_get{"k", {}}) == "kv_get");
    CHECK(name(endpoint::kv_get_raw{"k", {}}) == "kv_get");
    CHECK(name(endpoint::kv_list{"k", {}}) == "kv_list");
    CHECK(name(endpoint::kv_keys{"k", {}}) == "kv_keys");
    CHECK(name(endpoint::kv_put{"k", "v", {}}) == "kv_put");
    CHECK(name(endpoint::kv_delete{"k", {}}) == "kv_delete");
    CHECK(name(endpoint::txn{{}, {}}) == "txn");
    CHECK(name(endpoint::session_create{{}}) == "session_create");
    CHECK(name(endpoint::session_renew{"s", {}}) == "session_renew");
    CHECK(name(endpoint::session_destroy{"s", {}}) == "session_destroy");
    CHECK(name(endpoint::session_info{"s", {}}) == "session_info");
    CHECK(name(endpoint::session_list{std::nullopt, {}}) == "session_list");
    CHECK(name(endpoint::session_list{"n", {}}) == "session_node");
    CHECK(name(endpoint::status_leader{{}}) == "status_leader");
    CHECK(name(endpoint::agent_self{{}}) == "agent_self");
    CHECK(name(endpoint::agent_check_register{{}}) == "agent_check_register");
    CHECK(name(endpoint::agent_check_deregister{"c", {}}) == "agent_check_deregister");
    CHECK(name(endpoint::agent_check_update{"c", check_status::passing, {}, {}}) ==
          "agent_check_update");
    CHECK(name(endpoint::kv_get{"a//b", {}}) == "kv_get"); // refused, but still named
}

TEST_CASE("endpoint scope: the client's namespace and partition, unless the operation names one",
          "[unit][endpoint]") {
    const auto target = [](auto e) {
        api_call call;
        call.namespace_name = "client-ns"; // as client_impl::new_call starts a call
        call.partition = "client-part";
        REQUIRE_FALSE(e.build(call));
        std::string storage;
        return std::pair{std::string(detail::request_target(call, "dc1", storage)), call.body};
    };
    CHECK(target(endpoint::kv_get{"k", {}}).first ==
          "/v1/kv/k?dc=dc1&ns=client-ns&partition=client-part");
    CHECK(target(endpoint::kv_get{"k", query_options{}.with_namespace("mine")}).first ==
          "/v1/kv/k?dc=dc1&ns=mine&partition=client-part");
    CHECK(target(endpoint::kv_put{"k", "v", kv_put_options{}.with_partition("p2")}).first ==
          "/v1/kv/k?dc=dc1&ns=client-ns&partition=p2");
    CHECK(target(endpoint::session_renew{"s", write_options{}.with_namespace("n2")}).first ==
          "/v1/session/renew/s?dc=dc1&ns=n2&partition=client-part");
    // A transaction's operations carry the namespace and partition themselves.
    auto [txn_target, txn_body] =
        target(endpoint::txn{{txn_op::get("a")}, txn_options{}.with_namespace("n3")});
    CHECK(txn_target == "/v1/txn?dc=dc1&ns=n3&partition=client-part");
    CHECK(txn_body ==
          R"([{"KV":{"Verb":"get","Key":"a","Namespace":"n3","Partition":"client-part"}}])");
}

TEST_CASE("endpoint scope: nothing is sent when neither the client nor the operation names one",
          "[unit][endpoint]") {
    auto [ec, call] = built(endpoint::txn{{txn_op::get("a")}, txn_options{}});
    REQUIRE_FALSE(ec);
    std::string storage;
    CHECK(detail::request_target(call, "", storage) == "/v1/txn");
    CHECK(call.body == R"([{"KV":{"Verb":"get","Key":"a"}}])");
}
