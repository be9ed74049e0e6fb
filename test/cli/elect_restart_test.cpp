// SPDX-License-Identifier: BSL-1.0
// `conclave elect` restarting a command that ends its terms by itself: a failing one after
// a doubling delay, out of the race meanwhile (another candidate leads), and given up on
// after -max-restarts; a succeeding one at most once a second.
#include "cli/cli_fixture.hpp"

#include <csignal>
#include <sstream>
#include <unistd.h>

namespace conclave::test::cli {

namespace {

// "<name> <ticks>" per start of the command: the shell's process start time (/proc/$$/stat
// field 22, clock ticks since boot), not a time the shell takes after its own startup, which
// would add that startup's jitter. (The fields after the command name, which may contain
// spaces, are counted from its closing parenthesis: field 22 is the 20th after it.)
std::string logged_start(const std::string& log, const std::string& name) {
    return "echo \"" + name + " $(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)\" >> " + log;
}

// The start times are whole clock ticks (10 ms at the usual 100 per second), rounded down.
const long long tick_ns = 1'000'000'000LL / ::sysconf(_SC_CLK_TCK);

// conclave forks each command only after the delay since the previous one started (its
// restart policy measures from after the fork), so two starts are at least `gap` apart,
// less the rounding of the two start times to ticks.
bool apart(long long earlier_ns, long long later_ns, std::chrono::seconds gap) {
    return later_ns - earlier_ns > std::chrono::nanoseconds(gap).count() - tick_ns;
}

struct start {
    std::string name;
    long long ns = 0;
};

std::vector<start> starts(const std::string& log) {
    std::vector<start> out;
    for (const auto& line : read_lines(log)) {
        std::istringstream in(line);
        start s;
        long long ticks = 0;
        in >> s.name >> ticks;
        s.ns = ticks * tick_ns;
        out.push_back(s);
    }
    return out;
}

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
        ++n;
    return n;
}

} // namespace

TEST_CASE("elect: a failing command is restarted after a doubling delay, then given up on",
          "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto p = f.run(
        {"elect", "-max-restarts=2", "svc/failing", "--", logged_start(log, "a") + "; exit 7"});
    const int code = p->wait(60s);
    const auto err = p->err();
    INFO(err);
    CHECK(code == 4);
    const auto runs = starts(log);
    REQUIRE(runs.size() == 3); // the first run and two restarts
    // Lower bounds only: a loaded machine may add to the delays, never take from them.
    CHECK(apart(runs[0].ns, runs[1].ns, 1s));
    CHECK(apart(runs[1].ns, runs[2].ns, 2s));
    CHECK(count(err, "Child failed (exit status 7 after ") == 3);
    CHECK(err.find("stepping down, campaigning again in 1s (restart 1 of 2)") != std::string::npos);
    CHECK(err.find("stepping down, campaigning again in 2s (restart 2 of 2)") != std::string::npos);
    CHECK(err.find("3 times in a row; giving up (-max-restarts=2)") != std::string::npos);
}

TEST_CASE("elect: a command killed by a signal counts as failed", "[elect]") {
    cli_fixture f;
    auto p = f.run({"elect", "-max-restarts=0", "svc/killed-itself", "--", "kill -9 $$"});
    const int code = p->wait(60s);
    const auto err = p->err();
    INFO(err);
    CHECK(code == 4);
    CHECK(err.find("Child failed (killed by signal 9") != std::string::npos);
    // A single failure: not "1 times in a row".
    CHECK(err.find("); giving up (-max-restarts=0)") != std::string::npos);
    CHECK(err.find("times in a row") == std::string::npos);
}

TEST_CASE("elect: while a failing command's node backs off, another candidate leads", "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto a = f.run({"elect", "-name=a", "svc/handover", "--", logged_start(log, "a") + "; exit 1"});
    REQUIRE(poll_until([&] { return !starts(log).empty(); }, 30s));
    auto b =
        f.run({"elect", "-name=b", "svc/handover", "--", logged_start(log, "b") + "; sleep 600"});
    // b campaigns: it is elected as soon as a steps down after a failure, and keeps the
    // lead (its command runs on), so a does not run its command again.
    REQUIRE(poll_until(
        [&] {
            const auto runs = starts(log);
            return !runs.empty() && runs.back().name == "b";
        },
        60s));
    const auto runs = starts(log);
    std::size_t a_runs = 0;
    for (const auto& r : runs)
        a_runs += r.name == "a";
    // a stays out of the race while it backs off (1 s, 2 s, 4 s after its runs), so b wins
    // the first time it campaigns during a delay: a runs again only while b is still
    // starting (up to 7 s here), not once a second until b happens to win a race.
    CHECK(a_runs <= 4);
    CHECK(a->err().find("stepping down, campaigning again in") != std::string::npos);
    a->signal(SIGTERM);
    b->signal(SIGTERM);
    CHECK(a->wait(30s) == 128 + SIGTERM);
    CHECK(b->wait(30s) == 128 + SIGTERM);
}

TEST_CASE("elect: a succeeding command is restarted at most once a second, without limit",
          "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto p = f.run({"elect", "-max-restarts=0", "svc/periodic", "--", logged_start(log, "a")});
    REQUIRE(poll_until([&] { return starts(log).size() >= 3; }, 60s));
    p->signal(SIGTERM);
    const int code = p->wait(30s);
    const auto err = p->err();
    INFO(err);
    CHECK(code == 128 + SIGTERM); // successes never count against -max-restarts=0
    const auto runs = starts(log);
    for (std::size_t i = 1; i < runs.size(); ++i)
        CHECK(apart(runs[i - 1].ns, runs[i].ns, 1s));
    CHECK(err.find("Child exited (exit status 0 after ") != std::string::npos);
}

} // namespace conclave::test::cli
