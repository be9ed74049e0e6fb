// SPDX-License-Identifier: BSL-1.0
// The real Consul a test runs against (support/consul_launcher/consul_server.hpp starts it), when
// the environment asks for one.
#pragma once

#include "consul_launcher/consul_server.hpp"

#include <memory>
#include <optional>

namespace conclave::test {

using programs::consul_server;
using programs::consul_server_options;

/// The real Consul the test environment asks for: CONCLAVE_TEST_CONSUL_BIN names a Consul to
/// start as a dev agent, CONCLAVE_TEST_CONSUL_CLUSTER one to start as a three-server
/// cluster. Empty when neither is set (then tests use the embedded dev agent, or the server
/// CONCLAVE_TEST_CONSUL_ADDR names).
std::optional<consul_server_options> consul_server_from_env();

/// A real Consul for one test. A test that asks nothing of the server beyond a minimum TTL
/// (no extra flags, no ACLs) gets the one this process already started for such tests, if
/// its TTL is the same: test cases of a process run one after another, and each gets the
/// server running, ready and empty (every session destroyed, every key deleted), as a server
/// started for it would be; a dev agent a test killed is started again, empty. A cluster in
/// which a test killed a server is replaced by a new cluster. Starting a three-server
/// cluster takes seconds; cleaning one takes milliseconds. Any other test gets a server of
/// its own.
std::shared_ptr<consul_server> start_test_consul(consul_server_options options);

} // namespace conclave::test
