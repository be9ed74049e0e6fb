// SPDX-License-Identifier: BSL-1.0
#include "support/acl.hpp"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <cstdio>
#include <random>
#include <stdexcept>
#include <thread>

namespace conclave::test {

std::unique_ptr<consul_server> acl_consul() {
    auto options = consul_server_from_env();
    if (!options) {
        std::printf("CONCLAVE-SKIPPED: needs a real Consul with ACLs (set CONSUL_BIN)\n");
        return nullptr;
    }
    options->acl_master_token = acl_master_token;
    return std::make_unique<consul_server>(std::move(*options));
}

std::string make_token(const consul_server& consul, const std::string& name,
                       const std::string& rules) {
    boost::json::object policy{{"Name", name}, {"Rules", rules}};
    // Right after the start, the servers may still be setting up their ACLs (a cluster's
    // leader makes the management token): no event says when, so try for a while.
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds{30};
    auto made = consul.request("PUT", "/v1/acl/policy", 0, boost::json::serialize(policy));
    while ((!made || made->first != 200) && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds{50});
        made = consul.request("PUT", "/v1/acl/policy", 0, boost::json::serialize(policy));
    }
    if (!made || made->first != 200)
        throw std::runtime_error("ACL policy not created: " + (made ? made->second : "no answer"));
    const std::string secret = random_uuid();
    boost::json::object token{
        {"SecretID", secret},
        {"Policies", boost::json::array{boost::json::object{{"Name", name}}}}};
    made = consul.request("PUT", "/v1/acl/token", 0, boost::json::serialize(token));
    if (!made || made->first != 200)
        throw std::runtime_error("ACL token not created: " + (made ? made->second : "no answer"));
    return secret;
}

std::string minimal_rules(const std::string& prefix) {
    return "key_prefix \"" + prefix +
           "\" { policy = \"write\" }\n"
           "session_prefix \"\" { policy = \"write\" }\n";
}

} // namespace conclave::test
