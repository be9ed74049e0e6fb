// SPDX-License-Identifier: BSL-1.0
// A user's test built on the dev agent component (conclave::devagent): it starts the agent
// in its own process, on a free port, and takes and releases a lock against it.
#include "lock_cycle.hpp"

#include <conclave/dev/agent.hpp>

int main() {
    boost::asio::io_context ioc;
    conclave::dev::agent agent{ioc.get_executor(), {.port = 0}};
    agent.start();
    conclave::client_config cfg;
    cfg.port = agent.port();
    // The agent serves until stopped: stop it once the lock cycle is over, so run() returns.
    return consumer::run_lock_cycle(ioc, cfg, [&] { agent.stop(); });
}
