// SPDX-License-Identifier: BSL-1.0
// `conclave latch create|count-down|get|wait`: the count printed alone on a line, a wait that
// ends once counted down (or gives up after -timeout, exit 5), and the refusals (a count
// set already, another recipe's key, bad arguments), each exit 1.
#include "cli/cli_fixture.hpp"

#include <csignal>

namespace conclave::test::cli {

namespace {

using result = std::pair<int, std::string>;

result latch(const cli_fixture& f, std::vector<std::string> args) {
    return output_of(f, "latch", std::move(args));
}

} // namespace

TEST_CASE("latch: a wait returns once the count is down to 0", "[latch]") {
    cli_fixture f;
    CHECK(latch(f, {"get", "jobs/loaded"}) == result{0, "0\n"}); // a missing key is 0
    CHECK(latch(f, {"wait", "jobs/loaded"}) == result{0, ""});   // open: at once
    CHECK(latch(f, {"create", "-count=2", "jobs/loaded"}) == result{0, "2\n"});

    auto again = f.run({"latch", "create", "-count=5", "jobs/loaded"});
    CHECK(again->wait() == 1);
    CHECK(again->err() == "Error! latch jobs/loaded is counting down already (count 2)\n");

    auto timed = f.run({"latch", "wait", "-timeout=300ms", "jobs/loaded"});
    CHECK(timed->wait() == 5);
    CHECK(timed->err() == "Timeout: wait for latch jobs/loaded within 300ms\n");

    auto waiting = f.run({"latch", "wait", "jobs/loaded"});
    CHECK(latch(f, {"count-down", "jobs/loaded"}) == result{0, "1\n"});
    CHECK(!waiting->wait_for(200ms)); // still 1 (a bound on the test, not a synchronisation)
    CHECK(latch(f, {"get", "jobs/loaded"}) == result{0, "1\n"});
    CHECK(latch(f, {"count-down", "jobs/loaded"}) == result{0, "0\n"});
    const int code = waiting->wait();
    INFO(waiting->err());
    CHECK(code == 0);
    CHECK(f.keys().empty()); // the count down to 0 deleted the key
    CHECK(latch(f, {"count-down", "jobs/loaded"}) == result{0, "0\n"}); // stays at 0
}

TEST_CASE("latch: a signal ends a wait with 128 + the signal", "[latch]") {
    cli_fixture f;
    CHECK(latch(f, {"create", "-count=1", "jobs/sig"}) == result{0, "1\n"});
    // -log-level=debug logs each request as it completes: once the first read of the key is
    // logged, the command waits (its signal handling installed long before).
    auto waiting = f.run({"latch", "wait", "-log-level=debug", "jobs/sig"});
    REQUIRE(poll_until(
        [&] { return waiting->err().find("GET /v1/kv/jobs/sig") != std::string::npos; }, 30s));
    waiting->signal(SIGTERM);
    const int code = waiting->wait();
    CHECK(code == 128 + SIGTERM);
    CHECK(waiting->err().find("Shutdown triggered during wait for latch jobs/sig\n") !=
          std::string::npos);
    CHECK(latch(f, {"count-down", "jobs/sig"}) == result{0, "0\n"});
}

TEST_CASE("latch: another recipe's key is refused", "[latch]") {
    cli_fixture f;
    CHECK(f.run({"kv", "put", "-flags=3304740253564472344", "held", "5"})->wait() == 0);
    for (const char* op : {"get", "count-down", "wait"}) {
        auto p = f.run({"latch", op, "held"});
        CHECK(p->wait() == 1);
        CHECK(p->err().find("key held is not a countdown latch: it is a lock's key") !=
              std::string::npos);
    }
    CHECK(f.run({"kv", "delete", "held"})->wait() == 0);
}

TEST_CASE("latch: bad arguments are refused before Consul is asked", "[latch][args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"latch"}, "Error! Missing operation: create, count-down, get or wait\n", true},
        {{"latch", "open", "k"},
         "Error! Unknown operation 'open': use create, count-down, get or wait\n",
         true},
        {{"latch", "get"}, "Error! Missing KEY argument\n", true},
        {{"latch", "get", "a", "b"}, "Too many arguments (expected 1, got 2)\n", true},
        {{"latch", "create", "k"},
         "Error! -count must be between 1 and 9223372036854775807 (got 0)\n",
         true},
        {{"latch", "create", "-count=-3", "k"},
         "Error! -count must be between 1 and 9223372036854775807 (got -3)\n",
         true},
        {{"latch", "count-down", "-count=2", "k"}, "Error! -count is for create\n", true},
        {{"latch", "get", "-timeout=1s", "k"}, "Error! -timeout is for wait\n", true},
        {{"latch", "wait", "-timeout=-1s", "k"}, "Timeout must be positive\n", false},
    };
    check_refused(f, cases, "Usage: conclave latch");
    CHECK(f.keys().empty());
}

} // namespace conclave::test::cli
