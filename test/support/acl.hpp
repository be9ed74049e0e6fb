// SPDX-License-Identifier: BSL-1.0
// A real Consul with ACLs on (default policy "deny") for one test, and tokens made on it.
// The dev agent has no ACLs: these tests need CONSUL_BIN (they skip, visibly, without it).
#pragma once

#include "support/backend.hpp" // (random_uuid)
#include "support/consul_server.hpp"

#include <memory>
#include <string>

namespace conclave::test {

/// The management token of acl_consul()'s servers.
inline const std::string acl_master_token = "5d2e8a43-7c1f-4b6e-9a0d-3f8b2c6e1a74";

/// A Consul (one agent or the test cluster, as the test run chooses) with ACLs on; empty,
/// after printing the CTest skip marker, when the tests run without a Consul binary.
std::unique_ptr<consul_server> acl_consul();

/// Creates a policy named `name` with `rules` (ACL HCL) and a token holding only it; returns
/// the token's SecretID. Throws when Consul refuses.
std::string make_token(const consul_server& consul, const std::string& name,
                       const std::string& rules);

/// The rules docs/howto/cluster.md ("ACLs") gives as enough for every recipe under `prefix`.
std::string minimal_rules(const std::string& prefix);

} // namespace conclave::test
