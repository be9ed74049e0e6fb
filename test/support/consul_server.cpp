// SPDX-License-Identifier: BSL-1.0
#include "support/consul_server.hpp"

#include <boost/json/parse.hpp>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace conclave::test {

std::optional<consul_server_options> consul_server_from_env() {
    auto from = [](const char* name) -> std::string {
        const char* v = std::getenv(name);
        return v ? v : "";
    };
    consul_server_options o;
    if (auto bin = from("CONCLAVE_TEST_CONSUL_CLUSTER"); !bin.empty()) {
        o.binary = bin;
        o.servers = 3;
    } else if (auto bin = from("CONCLAVE_TEST_CONSUL_BIN"); !bin.empty()) {
        o.binary = bin;
    } else {
        return std::nullopt;
    }
    return o;
}

namespace {

// Brings a server that earlier tests used back to the state of a fresh one: running, a
// leader, no key, no session. (A cluster a test disturbed is not cleaned but replaced:
// start_test_consul.)
void clean(consul_server& server) {
    for (std::size_t i = 0; i < server.size(); ++i)
        if (!server.running(i))
            server.restart(i); // a dev agent comes back empty
    server.wait_ready();
    auto fail = [](const std::string& what) {
        throw std::runtime_error("cleaning the shared Consul for the next test: " + what);
    };
    // Keys first: a session destroyed while it holds a key arms that key's lock-delay, which
    // outlives the key, and the CLI tests reuse fixed key names from case to case.
    auto r = server.request("DELETE", "/v1/kv/?recurse");
    if (!r || r->first != 200)
        fail("DELETE /v1/kv/?recurse did not answer 200");
    auto list = server.request("GET", "/v1/session/list");
    if (!list || list->first != 200)
        fail("GET /v1/session/list did not answer 200");
    const auto sessions = boost::json::parse(list->second);
    for (const auto& s : sessions.as_array()) {
        const auto id = std::string(s.at("ID").as_string());
        auto destroyed = server.request("PUT", "/v1/session/destroy/" + id);
        if (!destroyed || destroyed->first != 200)
            fail("PUT /v1/session/destroy/" + id + " did not answer 200");
    }
}

} // namespace

std::shared_ptr<consul_server> start_test_consul(consul_server_options options) {
    static std::shared_ptr<consul_server> shared;
    static consul_server_options shared_options;
    if (!options.extra_args.empty() || !options.acl_master_token.empty())
        return std::make_shared<consul_server>(std::move(options));
    // A cluster where a test killed a server is not reused: the restarted server may be a
    // non-voter for a while (Consul's autopilot), and a test that then kills the leader
    // would leave no quorum. Such a cluster is replaced by a new one.
    const bool reusable = shared && !(shared->size() > 1 && shared->disturbed());
    if (reusable && shared_options.binary == options.binary &&
        shared_options.servers == options.servers &&
        shared_options.session_ttl_min == options.session_ttl_min) {
        clean(*shared);
        return shared;
    }
    shared.reset(); // (a test still using it keeps it until its end)
    shared = std::make_shared<consul_server>(options);
    shared_options = std::move(options);
    return shared;
}

} // namespace conclave::test
