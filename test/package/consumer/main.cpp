// SPDX-License-Identifier: BSL-1.0
// A program that uses conclave the way a user's daemon does (installed package, pkg-config,
// add_subdirectory or FetchContent): it takes a lock on the Consul at CONSUL_HTTP_ADDR,
// checks that it holds it, and releases it.
#include "lock_cycle.hpp"

int main() {
    boost::asio::io_context ioc;
    return consumer::run_lock_cycle(ioc, conclave::config_from_env());
}
