// SPDX-License-Identifier: BSL-1.0
// Nothing lingers: `conclave lock` exits once its cleanup is done, without waiting for the
// answer to the blocking read that watched its grant (the release changes the key, so
// Consul answers it, but the answer may take its time). Here the proxy never delivers that
// answer: a process that waited for it would wait for the read to time out, and log so.
// (An exit that abandons it logs the read as cancelled.)
#include "cli/cli_fixture.hpp"
#include "cli/proxy_thread.hpp"

#include <fstream>

namespace conclave::test::cli {

TEST_CASE("lock: exits once its cleanup is done without waiting for its blocking read", "[lock]") {
    cli_fixture f;
    for (const std::string n : {"-n=1", "-n=2"}) {
        INFO(n);
        proxy_thread proxy(f.agent.address());
        const auto started = f.path("started" + n);
        const auto go = f.path("go" + n);
        auto p = f.run(
            {"lock", "-log-level=trace", "-http-addr=" + proxy.address(), n, "svc/prompt",
             "echo started > " + started + "; while [ ! -e " + go + " ]; do sleep 0.02; done"});
        REQUIRE(poll_until([&] { return read_lines(started).size() == 1; }, 30s));
        // The grant is watched: a blocking read is under way while the command runs.
        REQUIRE(poll_until([&] { return proxy.blocking_reads_waiting() > 0; }, 30s));
        proxy.hold_blocking_reads("/v1/kv/svc/prompt");
        std::ofstream{go};
        const int code = p->wait(60s);
        const auto err = p->err();
        INFO(err);
        CHECK(code == 0);
        CHECK(err.find(" destroyed\n") != std::string::npos); // its session, at the end
        // Not waited for: a read whose answer never came would have ended by timing out
        // (logged at trace level) once its wait and the request timeout had passed.
        CHECK(err.find("timed out") == std::string::npos);
    }
}

} // namespace conclave::test::cli
