// SPDX-License-Identifier: BSL-1.0
// `conclave lock` and `conclave elect` killed with SIGKILL (no cleanup can run): their
// command, and everything it started, dies with them instead of running on without the
// lock or the leadership.
#include "cli/cli_fixture.hpp"

#include <csignal>

namespace conclave::test::cli {

namespace {

// The shell records its own pid and a background job's, then waits.
std::string recording_child(const cli_fixture& f) {
    return "sleep 600 & echo $! > " + f.path("job") + "; echo $$ > " + f.path("shell") + "; wait";
}

void check_dies_with_conclave(cli_fixture& f, process& conclave) {
    REQUIRE(poll_until([&] { return read_lines(f.path("shell")).size() == 1; }, 30s));
    REQUIRE(read_lines(f.path("job")).size() == 1);
    const pid_t shell = std::stoi(read_lines(f.path("shell")).at(0));
    const pid_t job = std::stoi(read_lines(f.path("job")).at(0));
    REQUIRE(process_alive(shell));
    REQUIRE(process_alive(job));
    conclave.signal(SIGKILL);
    CHECK(conclave.wait(30s) == 128 + SIGKILL);
    // The command's first process (parent-death signal) and what it started (its process
    // group, killed by conclave's watcher) are gone.
    CHECK(poll_until([&] { return !process_alive(shell); }, 30s));
    CHECK(poll_until([&] { return !process_alive(job); }, 30s));
    // The killed conclave could not clean up: its session and key are the test's to remove.
    f.agent.reset_state();
}

} // namespace

TEST_CASE("lock: the command dies when conclave is killed", "[lock]") {
    cli_fixture f;
    auto p = f.run({"lock", "svc/killed", recording_child(f)});
    check_dies_with_conclave(f, *p);
}

TEST_CASE("elect: the command dies when conclave is killed", "[elect]") {
    cli_fixture f;
    auto p = f.run({"elect", "svc/killed", "--", recording_child(f)});
    check_dies_with_conclave(f, *p);
}

} // namespace conclave::test::cli
