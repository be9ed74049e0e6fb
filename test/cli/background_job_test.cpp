// SPDX-License-Identifier: BSL-1.0
// A command that exits by itself while something it started runs on (`sh -c 'worker &
// exit 1'`): `conclave lock` and `conclave elect` kill its process group before they release
// the lock or the key, so no background job outlives the term or piles up over restarts.
#include "cli/cli_fixture.hpp"

#include <csignal>
#include <sys/types.h>

namespace conclave::test::cli {

namespace {

// Starts a background sleep, appends its pid to `pids` and exits with `status`.
std::string leaving_job(const std::string& pids, int status) {
    return "sleep 600 & echo $! >> " + pids + "; exit " + std::to_string(status);
}

std::vector<pid_t> jobs(const std::string& pids) {
    std::vector<pid_t> out;
    for (const auto& line : read_lines(pids))
        out.push_back(std::stoi(line));
    return out;
}

bool gone(pid_t pid) {
    // SIGKILL takes effect asynchronously: a generous bound for a loaded machine.
    return poll_until([&] { return !process_alive(pid); }, 30s);
}

// A failed check must not leave 10-minute sleeps behind.
struct kill_leftovers {
    std::string pids;
    ~kill_leftovers() {
        for (const pid_t pid : jobs(pids))
            if (process_alive(pid))
                ::kill(pid, SIGKILL);
    }
};

} // namespace

TEST_CASE("lock: what the command started is killed when it exits", "[lock]") {
    cli_fixture f;
    const auto pids = f.path("pids");
    kill_leftovers cleanup{pids};
    auto p = f.run({"lock", "svc/background", leaving_job(pids, 0)});
    CHECK(p->wait(60s) == 0);
    const auto started = jobs(pids);
    REQUIRE(started.size() == 1);
    CHECK(gone(started[0]));
}

TEST_CASE("elect: what the command started is killed at the end of each term", "[elect]") {
    cli_fixture f;
    const auto pids = f.path("pids");
    kill_leftovers cleanup{pids};
    auto p = f.run({"elect", "-max-restarts=1", "svc/background", "--", leaving_job(pids, 1)});
    // The first term's job is gone while conclave waits to restart the command.
    REQUIRE(poll_until([&] { return p->err().find("Child failed") != std::string::npos; }, 60s));
    REQUIRE(jobs(pids).size() == 1);
    CHECK(gone(jobs(pids)[0]));
    const int code = p->wait(60s);
    INFO(p->err());
    CHECK(code == 4);
    const auto started = jobs(pids);
    REQUIRE(started.size() == 2);
    CHECK(gone(started[1]));
}

} // namespace conclave::test::cli
