// SPDX-License-Identifier: BSL-1.0
#include "support/consul_server.hpp"

#include <cstdlib>
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

} // namespace conclave::test
