// SPDX-License-Identifier: BSL-1.0
// The real Consul a test runs against (programs/consul/consul_server.hpp starts it), when
// the environment asks for one.
#pragma once

#include "consul/consul_server.hpp"

#include <optional>

namespace conclave::test {

using programs::consul_server;
using programs::consul_server_options;

/// The real Consul the test environment asks for: CONCLAVE_TEST_CONSUL_BIN names a Consul to
/// start as a dev agent, CONCLAVE_TEST_CONSUL_CLUSTER one to start as a three-server
/// cluster. Empty when neither is set (then tests use the embedded dev agent, or the server
/// CONCLAVE_TEST_CONSUL_ADDR names).
std::optional<consul_server_options> consul_server_from_env();

} // namespace conclave::test
