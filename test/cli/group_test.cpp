// SPDX-License-Identifier: BSL-1.0
// `conclave group join|members|watch`: a member is listed (and watched) while its command
// runs and gone after; a lost membership stops the command (exit 3); signals are
// forwarded; an id held by a live member, another recipe's key and bad arguments are
// refused (exit 1).
#include "cli/cli_fixture.hpp"

#include <csignal>
#include <fstream>

namespace conclave::test::cli {

namespace {

// A child that writes "ready" (and its environment's member key) to `log`, then runs until
// the file `go` exists.
std::string waiting_child(const std::string& log, const std::string& go) {
    return "echo \"ready $CONCLAVE_MEMBER_KEY\" >> " + log + "; while [ ! -f " + go +
           " ]; do sleep 0.05; done";
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string members(const cli_fixture& f, const std::string& prefix) {
    auto p = f.run({"group", "members", prefix});
    CHECK(p->wait() == 0);
    return p->out();
}

} // namespace

TEST_CASE("group: a member is listed and watched while its command runs", "[group]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto go = f.path("go");
    // The watch first: its first report (no members) is printed before anyone joins, so
    // that it reports the join and the leave as two changes.
    auto watch = f.run({"group", "watch", "-count=3", "svc/workers"});
    REQUIRE(poll_until([&] { return has(watch->out(), "index "); }, 30s));

    auto member = f.run({"group", "join", "-value=10.0.0.7:9000", "svc/workers", "w7", "--",
                         waiting_child(log, go)});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    CHECK(read_lines(log).at(0) == "ready svc/workers/w7");
    CHECK(members(f, "svc/workers") == "w7=10.0.0.7:9000\n");
    REQUIRE(poll_until([&] { return has(watch->out(), "+ w7=10.0.0.7:9000\n"); }, 30s));

    { std::ofstream{go} << "go\n"; }
    const int code = member->wait();
    INFO(member->err());
    CHECK(code == 0);
    CHECK(members(f, "svc/workers").empty());
    CHECK(watch->wait() == 0); // its third report: the leave
    CHECK(has(watch->out(), "- w7\n"));
}

TEST_CASE("group: watch ends with 0 on SIGINT", "[group]") {
    cli_fixture f;
    auto watch = f.run({"group", "watch", "svc/quiet"});
    REQUIRE(poll_until([&] { return has(watch->out(), "index "); }, 30s));
    watch->signal(SIGINT);
    CHECK(watch->wait() == 0); // as `conclave watch`: interrupting is how it ends
}

TEST_CASE("group: join exits with lock's codes for the command's status", "[group]") {
    cli_fixture f;
    auto plain = f.run({"group", "join", "svc/codes", "a", "exit 7"});
    CHECK(plain->wait() == 0); // as `conclave lock`: the command's status is not conclave's
    auto told = f.run({"group", "join", "-child-exit-code", "svc/codes", "a", "exit 7"});
    CHECK(told->wait() == 2);
    auto missing = f.run({"group", "join", "-shell=false", "svc/codes", "a", "/nonexistent/x"});
    CHECK(missing->wait() == 1);
    CHECK(has(missing->err(), "Error starting child '/nonexistent/x'"));
}

TEST_CASE("group: a lost membership stops the command and exits 3", "[group]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto member = f.run({"group", "join", "svc/lost", "w1",
                         waiting_child(log, f.path("never")) + "; echo done >> " + log});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    // Someone deletes the member's key.
    auto deleted = f.run({"kv", "delete", "svc/lost/w1"});
    CHECK(deleted->wait() == 0);
    const int code = member->wait(30s);
    INFO(member->err());
    CHECK(code == 3);
    CHECK(has(member->err(), "Membership lost"));
    CHECK(read_lines(log).size() == 1); // the command did not run to its end
}

TEST_CASE("group: SIGTERM is forwarded to the command, then the member leaves", "[group]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto member = f.run({"group", "join", "svc/term", "w1",
                         "trap 'echo got TERM >> " + log + "; exit 0' TERM; echo ready >> " + log +
                             "; while :; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    member->signal(SIGTERM);
    const int code = member->wait(30s);
    INFO(member->err());
    CHECK(code == 128 + SIGTERM);
    CHECK(read_lines(log).size() == 2);
    CHECK(members(f, "svc/term").empty());
}

TEST_CASE("group: an id held by a live member and another recipe's key are refused", "[group]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto go = f.path("go");
    auto first = f.run({"group", "join", "svc/dup", "w1", waiting_child(log, go)});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    auto second = f.run({"group", "join", "svc/dup", "w1", "echo ran >> " + log});
    CHECK(second->wait() == 1);
    CHECK(has(second->err(), "a live member already has that id"));
    { std::ofstream{go} << "go\n"; }
    CHECK(first->wait() == 0);
    CHECK(read_lines(log).size() == 1); // the refused one's command never ran

    CHECK(f.run({"kv", "put", "-flags=3304740253564472344", "svc/other/x", "1"})->wait() == 0);
    auto lock_key = f.run({"group", "join", "svc/other", "x", "true"});
    CHECK(lock_key->wait() == 1);
    CHECK(has(lock_key->err(), "key svc/other/x is a lock's key, not a group member's"));
    CHECK(f.run({"kv", "delete", "svc/other/x"})->wait() == 0);
}

TEST_CASE("group: bad arguments are refused before Consul is asked", "[group][args]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"group"}, "Error! Missing operation: join, members or watch\n", true},
        {{"group", "frob", "p"},
         "Error! Unknown operation 'frob': use join, members or watch\n",
         true},
        {{"group", "members"}, "Error! Missing PREFIX argument\n", true},
        {{"group", "members", "a", "b"}, "Too many arguments (expected 1, got 2)\n", true},
        {{"group", "members", "-value=x", "p"}, "Error! -value is for join\n", true},
        {{"group", "watch", "-child-exit-code", "p"},
         "Error! -child-exit-code is for join\n",
         true},
        {{"group", "members", "-count=1", "p"}, "Error! -count is for watch\n", true},
        {{"group", "join", "-count=1", "p", "w", "true"}, "Error! -count is for watch\n", true},
        {{"group", "join", "p", "w"},
         "Error! Key prefix, member id and child command must be specified\n",
         true},
        {{"group", "join", "p", "w", "--"},
         "Error! Key prefix, member id and child command must be specified\n",
         true},
        {{"group", "join", "p", "a/b", "true"},
         "Error! Member id 'a/b' must be non-empty, without '/'\n",
         true},
        {{"group", "join", "/", "w", "true"}, "Error! Key prefix '/' names no key\n", true},
        {{"group", "join", "-session-file=/tmp/x", "p", "w", "true"},
         "Error! -session-file is for lock and elect\n",
         true},
        {{"group", "members", "-health-ttl=5s", "p"}, "Error! -health-ttl is for join\n", true},
        {{"group", "join", "-health-ttl=500ms", "p", "w", "true"},
         "-health-ttl must be 0 (no check) or at least 1s\n",
         false},
        {{"group", "join", "-ttl=1s", "p", "w", "true"},
         "Session TTL must be between 10s and 24h, not 1s\n",
         false},
    };
    check_refused(f, cases, "Usage: conclave group");
    CHECK(f.keys().empty());
}

} // namespace conclave::test::cli
