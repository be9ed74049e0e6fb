// SPDX-License-Identifier: BSL-1.0
// Jeopardy of the grant under `conclave lock` / `conclave elect`: when a renewal of the
// session fails, the child gets -jeopardy-signal, and -recovery-signal once one succeeds
// again; both are reported on stderr. The renewal fails through a fault proxy.
#include "cli/cli_fixture.hpp"
#include "cli/proxy_thread.hpp"

#include <fstream>

namespace conclave::test::cli {

namespace {

// Runs `args` through a proxy with a child that records the signals it traps (USR1 as
// "jeopardy", USR2 as "recovered") and its CONCLAVE_SESSION_TTL, and holds until the gate
// exists. Once it runs, one renewal of the session fails (the first comes at half the
// 10 s TTL; the retry, 1/16 of the TTL later, succeeds). Waits until stderr reports the
// recovery, lets the child finish and returns conclave's stderr, after checking it
// exited 0.
struct jeopardy_run {
    std::string err;
    std::vector<std::string> trapped; ///< the child's record of the signals
    std::string ttl;                  ///< its CONCLAVE_SESSION_TTL
};

jeopardy_run fail_one_renewal(cli_fixture& f, std::vector<std::string> args,
                              const std::string& recovered_text) {
    proxy_thread proxy(f.agent.address());
    const auto ttl = f.path("ttl");
    const auto trapped = f.path("trapped");
    const auto gate = f.path("gate");
    args.insert(args.begin() + 1, "-http-addr=" + proxy.address());
    // The traps run between two short sleeps; nothing else in the group gets a signal.
    args.push_back("trap 'echo jeopardy >> " + trapped + "' USR1; trap 'echo recovered >> " +
                   trapped + "' USR2; echo $CONCLAVE_SESSION_TTL > " + ttl + "; while [ ! -e " +
                   gate + " ]; do sleep 0.05; done");
    auto p = f.run(args);
    REQUIRE(poll_until([&] { return read_lines(ttl).size() == 1; }, 30s));
    proxy.fail_next("/v1/session/renew", 1);
    // Recovered about 6 s after the start; generous for a loaded machine.
    const bool recovered =
        poll_until([&] { return p->err().find(recovered_text) != std::string::npos; }, 60s);
    INFO(p->err());
    REQUIRE(recovered);
    // The child runs a trap only between two sleeps: wait for the recovery's record (the
    // test fails below if it never comes).
    poll_until(
        [&] {
            const auto lines = read_lines(trapped);
            return !lines.empty() && lines.back() == "recovered";
        },
        10s);
    std::ofstream{gate};
    const int code = p->wait();
    jeopardy_run run{p->err(), read_lines(trapped), read_lines(ttl).at(0)};
    INFO(run.err);
    CHECK(code == 0);
    return run;
}

} // namespace

TEST_CASE("lock: -jeopardy-signal and -recovery-signal reach the child when a renewal "
          "fails and then succeeds",
          "[lock][jeopardy]") {
    cli_fixture f;
    const auto run = fail_one_renewal(
        f, {"lock", "-ttl=10s", "-jeopardy-signal=USR1", "-recovery-signal=SIGUSR2", "svc/j"},
        "Lock no longer in jeopardy");
    CHECK(run.ttl == "10");
    // (A renewal late on a loaded machine may add a pair before.)
    REQUIRE(run.trapped.size() >= 2);
    CHECK(run.trapped.size() % 2 == 0);
    CHECK(run.trapped[run.trapped.size() - 2] == "jeopardy");
    CHECK(run.trapped.back() == "recovered");
    CHECK(run.err.find("Lock in jeopardy: renewals of its session are failing or late; held for "
                       "at most ") != std::string::npos);
    CHECK(run.err.find("more unless one succeeds (sent SIGUSR1 to the child)\n") !=
          std::string::npos);
    CHECK(run.err.find("Lock no longer in jeopardy: its session was renewed (sent SIGUSR2 to "
                       "the child)\n") != std::string::npos);
}

TEST_CASE("elect: jeopardy is reported on stderr and sends no signal unless asked, and "
          "-recovery-signal reaches the child",
          "[elect][jeopardy]") {
    cli_fixture f;
    // Without -jeopardy-signal the child is not signalled: SIGUSR1 would be trapped (and
    // recorded), anything else would kill it (exit status not 0).
    const auto run =
        fail_one_renewal(f, {"elect", "-once", "-ttl=10s", "-recovery-signal=12", "svc/j", "--"},
                         "Leadership no longer in jeopardy");
    CHECK(run.ttl == "10");
    REQUIRE_FALSE(run.trapped.empty());
    for (const auto& line : run.trapped)
        CHECK(line == "recovered");
    CHECK(run.err.find("Leadership in jeopardy: renewals of its session are failing or late; "
                       "held for at most ") != std::string::npos);
    CHECK(run.err.find("more unless one succeeds\n") != std::string::npos);
    CHECK(run.err.find("Leadership no longer in jeopardy: its session was renewed (sent "
                       "SIGUSR2 to the child)\n") != std::string::npos);
}

TEST_CASE("args: -jeopardy-signal and -recovery-signal take signal names or numbers",
          "[args][jeopardy]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"lock", "-jeopardy-signal=USR3", "svc/k", "true"},
         "invalid value \"USR3\" for flag -jeopardy-signal: unknown signal (give a name such as "
         "USR1, or a number)\n",
         true},
        {{"elect", "-recovery-signal=0", "svc/k", "true"},
         "invalid value \"0\" for flag -recovery-signal: unknown signal (give a name such as "
         "USR1, or a number)\n",
         true},
    };
    check_refused(f, cases, "Usage: conclave ");
    CHECK(f.sessions().empty()); // never reached Consul
}

} // namespace conclave::test::cli
