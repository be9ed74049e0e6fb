// SPDX-License-Identifier: BSL-1.0
// `conclave barrier enter` (double barrier): the commands run only once N are inside; a
// -timeout gives up (exit 5), participants expecting another N are refused (exit 1), a
// signal ends the wait (128 + signal). `conclave barrier set|remove|wait`: a wait ends with
// the remove, a -timeout gives up on a set barrier (exit 5), another recipe's key and bad
// arguments are refused (exit 1). Nothing is left behind.
#include "cli/cli_fixture.hpp"

#include <csignal>

namespace conclave::test::cli {

namespace {

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

// Keys under `prefix` on the server.
std::size_t keys_under(cli_fixture& f, const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& k : f.keys())
        n += k.key.rfind(prefix, 0) == 0;
    return n;
}

} // namespace

TEST_CASE("barrier: enter runs the commands only once N participants are inside", "[barrier]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto child = "echo \"ran $CONCLAVE_BARRIER_PARTICIPANTS\" >> " + log;
    std::vector<std::unique_ptr<process>> procs;
    for (int i = 0; i < 2; ++i)
        procs.push_back(f.run({"barrier", "enter", "-n=3", "jobs/batch", child}));
    // Two participants inside (their keys written, their enters waiting), none run yet.
    REQUIRE(poll_until([&] { return keys_under(f, "jobs/batch/") == 2; }, 30s));
    CHECK(read_lines(log).empty());
    for (const auto& p : procs)
        CHECK(process_alive(p->pid()));
    procs.push_back(f.run({"barrier", "enter", "-n=3", "jobs/batch", "--", child}));
    for (auto& p : procs) {
        const int code = p->wait();
        INFO(p->err());
        CHECK(code == 0);
    }
    CHECK(read_lines(log) == std::vector<std::string>(3, "ran 3"));
}

TEST_CASE("barrier: enter gives up after -timeout and a signal ends its wait", "[barrier]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto alone =
        f.run({"barrier", "enter", "-n=2", "-timeout=300ms", "jobs/t", "echo ran >> " + log});
    CHECK(alone->wait() == 5);
    CHECK(has(alone->err(), "Timeout: entering double barrier jobs/t within 300ms"));

    auto waiting = f.run({"barrier", "enter", "-n=2", "jobs/t", "echo ran >> " + log});
    REQUIRE(poll_until([&] { return keys_under(f, "jobs/t/") == 1; }, 30s));
    waiting->signal(SIGTERM);
    CHECK(waiting->wait() == 128 + SIGTERM);
    CHECK(has(waiting->err(), "Shutdown triggered during entering double barrier jobs/t"));
    CHECK(read_lines(log).empty());
}

TEST_CASE("barrier: a lost session stops the command and exits 3", "[barrier]") {
    cli_fixture f;
    const auto log = f.path("log");
    // One participant: the barrier opens at once.
    auto p = f.run({"barrier", "enter", "-n=1", "jobs/lost",
                    "echo ready >> " + log + "; sleep 60; echo finished >> " + log});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    const auto sessions = f.sessions();
    REQUIRE(sessions.size() == 1);
    REQUIRE(f.agent.expire_session(sessions.at(0).id));
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 3);
    CHECK(has(p->err(), "Barrier session lost"));
    CHECK(read_lines(log).size() == 1); // the command did not run to its end
}

TEST_CASE("barrier: participants expecting another count are refused", "[barrier]") {
    cli_fixture f;
    auto three = f.run({"barrier", "enter", "-n=3", "jobs/n", "true"});
    REQUIRE(poll_until([&] { return keys_under(f, "jobs/n/") == 1; }, 30s));
    auto two = f.run({"barrier", "enter", "-n=2", "jobs/n", "true"});
    // Whichever enter sees the other's key first is refused (the other may then wait on).
    const auto refused = [](const process& p) {
        return has(p.err(), "Error! semaphore limit conflict [double barrier jobs/n: participant");
    };
    REQUIRE(poll_until([&] { return refused(*two) || refused(*three); }, 30s));
    auto& loser = refused(*two) ? two : three;
    auto& other = refused(*two) ? three : two;
    CHECK(loser->wait() == 1);
    CHECK(has(loser->err(), refused(*two) ? "expects 3 participants, this one 2"
                                          : "expects 2 participants, this one 3"));
    other->signal(SIGINT);
    const int code = other->wait();
    CHECK((code == 1 || code == 128 + SIGINT)); // refused too, or interrupted: never ran
}

TEST_CASE("barrier: a wait ends when the barrier is removed", "[barrier]") {
    cli_fixture f;
    CHECK(f.run({"barrier", "set", "deploy/gate"})->wait() == 0);
    CHECK(f.run({"barrier", "set", "deploy/gate"})->wait() == 0); // set again: no change
    auto timed = f.run({"barrier", "wait", "-timeout=300ms", "deploy/gate"});
    CHECK(timed->wait() == 5);
    CHECK(has(timed->err(), "Timeout: wait for barrier deploy/gate to be removed within 300ms"));
    auto waiting = f.run({"barrier", "wait", "deploy/gate"});
    CHECK(!waiting->wait_for(200ms)); // (a bound on the test, not a synchronisation)
    CHECK(f.run({"barrier", "remove", "deploy/gate"})->wait() == 0);
    CHECK(waiting->wait() == 0);
    CHECK(f.run({"barrier", "remove", "deploy/gate"})->wait() == 0); // removed again
    CHECK(f.run({"barrier", "wait", "deploy/gate"})->wait() == 0);   // at once
}

TEST_CASE("barrier: another recipe's key is refused", "[barrier]") {
    cli_fixture f;
    CHECK(f.run({"counter", "deploy/n", "set", "3"})->wait() == 0);
    auto set = f.run({"barrier", "set", "deploy/n"});
    CHECK(set->wait() == 1);
    CHECK(has(set->err(), "key deploy/n is not a barrier"));
    CHECK(f.run({"kv", "delete", "deploy/n"})->wait() == 0);
}

TEST_CASE("barrier: bad arguments are refused before Consul is asked", "[barrier][args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"barrier"}, "Error! Missing operation: set, remove, wait or enter\n", true},
        {{"barrier", "open", "k"},
         "Error! Unknown operation 'open': use set, remove, wait or enter\n",
         true},
        {{"barrier", "set"}, "Error! Missing KEY argument\n", true},
        {{"barrier", "wait", "a", "b"}, "Too many arguments (expected 1, got 2)\n", true},
        {{"barrier", "set", "-timeout=1s", "k"}, "Error! -timeout is for wait and enter\n", true},
        {{"barrier", "set", "-n=2", "k"}, "Error! -n is for enter\n", true},
        {{"barrier", "wait", "-ttl=20s", "k"}, "Error! -ttl is for enter\n", true},
        {{"barrier", "wait", "-timeout=-1s", "k"}, "Timeout must be positive\n", false},
        {{"barrier", "enter", "p", "true"},
         "Error! -n must be between 1 and 4294967295 (got 0)\n",
         true},
        {{"barrier", "enter", "-n=0", "p", "true"},
         "Error! -n must be between 1 and 4294967295 (got 0)\n",
         true},
        {{"barrier", "enter", "-n=-2", "p", "true"},
         "Error! -n must be between 1 and 4294967295 (got -2)\n",
         true},
        {{"barrier", "enter", "-n=2", "-session-file=/tmp/x", "p", "true"},
         "Error! -session-file is for lock and elect\n",
         true},
        {{"barrier", "enter", "-n=2"},
         "Error! Key prefix and child command must be specified\n",
         true},
        {{"barrier", "enter", "-n=2", "p"},
         "Error! Key prefix and child command must be specified\n",
         true},
        {{"barrier", "enter", "-n=2", "/", "true"}, "Error! Key prefix '/' names no key\n", true},
    };
    check_refused(f, cases, "Usage: conclave barrier");
    CHECK(f.keys().empty());
}

} // namespace conclave::test::cli
