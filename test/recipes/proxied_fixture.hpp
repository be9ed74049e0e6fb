// SPDX-License-Identifier: BSL-1.0
// The recipe tests' fixture with a second client, `through`, that talks to the agent through
// a fault proxy (support/fault_proxy.hpp): a process whose requests the test can hold back,
// fail or answer otherwise.
#pragma once

#include "recipes_fixture.hpp"
#include "support/fault_proxy.hpp"

namespace conclave::test {

struct proxied_fixture : recipes_fixture {
    fault_proxy proxy{ioc.get_executor(), server.client_config().host, server.client_config().port};
    client through = [this] {
        proxy.start();
        client_config cfg = server.client_config();
        cfg.host = "127.0.0.1";
        cfg.port = proxy.port();
        return client{ioc.get_executor(), cfg};
    }();
};

} // namespace conclave::test
