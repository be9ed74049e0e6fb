// SPDX-License-Identifier: BSL-1.0
// -ttl of `conclave lock` and `conclave elect`: the session Consul keeps has it, the child
// gets it in CONCLAVE_SESSION_TTL, and values outside Consul's range are refused before
// anything reaches Consul.
#include "cli/cli_fixture.hpp"

#include <fstream>

namespace conclave::test::cli {

namespace {

// Runs `args` (a command that holds until the gate exists), reads the session of its
// token from Consul, then lets it finish.
void check_session_ttl(cli_fixture& f, std::vector<std::string> args) {
    const auto tok = f.path("token");
    const auto gate = f.path("gate");
    args.push_back("echo $CONCLAVE_SESSION_TTL > " + tok + ".ttl; echo $CONCLAVE_LOCK_TOKEN > " +
                   tok + "; while [ ! -e " + gate + " ]; do sleep 0.05; done");
    auto p = f.run(args);
    REQUIRE(poll_until([&] { return read_lines(tok).size() == 1; }, 30s));
    const auto info = f.session_info(token_session(read_lines(tok).at(0)));
    REQUIRE(info);
    CHECK(info->ttl_text == "25s");
    CHECK(info->ttl == 25s);
    // The child learns it too (in seconds).
    CHECK(read_lines(tok + ".ttl") == std::vector<std::string>{"25"});
    std::ofstream{gate};
    const int code = p->wait();
    INFO(p->err());
    CHECK(code == 0);
}

} // namespace

TEST_CASE("lock: -ttl is the session's TTL", "[lock]") {
    cli_fixture f;
    check_session_ttl(f, {"lock", "-ttl=25s", "svc/ttl"});
}

TEST_CASE("elect: -ttl is the session's TTL", "[elect]") {
    cli_fixture f;
    check_session_ttl(f, {"elect", "-once", "-ttl=25s", "svc/ttl", "--"});
}

TEST_CASE("args: -ttl outside Consul's range of 10s to 24h is refused", "[args]") {
    cli_fixture f;
    const std::string range = "Session TTL must be between 10s and 24h, not ";
    const std::vector<bad_arguments> cases{
        {{"lock", "-ttl=9s", "svc/k", "true"}, range + "9s\n", false},
        {{"lock", "-ttl=25h", "svc/k", "true"}, range + "25h0m0s\n", false},
        {{"lock", "-ttl=0", "svc/k", "true"}, range + "0s\n", false},
        {{"lock", "-ttl=soon", "svc/k", "true"},
         "invalid value \"soon\" for flag -ttl: parse error\n",
         true},
        {{"elect", "-ttl=9s", "svc/k", "true"}, range + "9s\n", false},
        {{"elect", "-ttl=25h", "svc/k", "true"}, range + "25h0m0s\n", false},
        {{"elect", "-ttl=soon", "svc/k", "true"},
         "invalid value \"soon\" for flag -ttl: parse error\n",
         true},
    };
    check_refused(f, cases, "Usage: conclave ");
    CHECK(f.sessions().empty()); // never reached Consul
    // The bounds themselves are accepted.
    for (const std::string ttl : {"-ttl=10s", "-ttl=24h"}) {
        auto p = f.run({"lock", ttl, "svc/k", "true"});
        const int code = p->wait();
        INFO(ttl << ": " << p->err());
        CHECK(code == 0);
    }
}

} // namespace conclave::test::cli
