// SPDX-License-Identifier: BSL-1.0
// When `conclave elect` runs its command again after a term the command ended by itself
// (cli/restart_policy): durations in, decisions out, no clocks or processes.
#include "cli/elect/restart_policy.hpp"
#include "support/catch.hpp"

#include <csignal>
#include <sys/wait.h>

using conclave::cli::restart_policy;
using namespace std::chrono_literals;

namespace {

constexpr int exited(int code) {
    return W_EXITCODE(code, 0);
}
constexpr int success = exited(0);
constexpr int failure = exited(1);
constexpr int killed = SIGKILL; // the wait status of a process killed by SIGKILL

} // namespace

TEST_CASE("restart: a success is restarted at most once a second", "[restart]") {
    restart_policy p{-1};
    auto d = p.after_exit(success, 200ms);
    CHECK_FALSE(d.failed);
    CHECK_FALSE(d.give_up);
    CHECK(d.restart == 0);
    CHECK(d.delay == 800ms); // 1 s after the command started
    CHECK(p.after_exit(success, 1s).delay == 0s);
    CHECK(p.after_exit(success, 1h).delay == 0s);
}

TEST_CASE("restart: failures in a row double the delay from 1 s up to 60 s", "[restart]") {
    restart_policy p{-1};
    for (const auto expected : {1s, 2s, 4s, 8s, 16s, 32s, 60s, 60s}) {
        const auto d = p.after_exit(failure, 10ms);
        CHECK(d.failed);
        CHECK(d.delay == expected);
    }
    // A long run of failures stays at the cap (the doubling does not overflow).
    restart_policy::decision d;
    for (int i = 0; i < 1000; ++i)
        d = p.after_exit(failure, 10ms);
    CHECK(d.delay == 60s);
    CHECK(d.restart == 1008);
    CHECK_FALSE(d.give_up); // no limit
}

TEST_CASE("restart: death by a signal and a non-zero exit are failures", "[restart]") {
    restart_policy p{-1};
    CHECK(p.after_exit(killed, 10ms).failed);
    CHECK(p.after_exit(exited(3), 10ms).failed);
    CHECK(p.after_exit(exited(3), 10ms).restart == 3);
}

TEST_CASE("restart: a success starts the failures in a row again", "[restart]") {
    restart_policy p{2};
    p.after_exit(failure, 10ms);
    CHECK(p.after_exit(failure, 10ms).delay == 2s);
    p.after_exit(success, 10ms);
    const auto d = p.after_exit(failure, 10ms);
    CHECK(d.restart == 1);
    CHECK(d.delay == 1s);
    CHECK_FALSE(d.give_up);
}

TEST_CASE("restart: a failure after a run of 60 s or more counts as the first", "[restart]") {
    restart_policy p{1};
    p.after_exit(failure, 10ms);
    // Just under: still in a crash loop, and the limit of 1 restart is used up.
    auto d = p.after_exit(failure, 60s - 1ms);
    CHECK(d.restart == 2);
    CHECK(d.delay == 2s);
    CHECK(d.give_up);

    restart_policy q{1};
    q.after_exit(failure, 10ms);
    q.after_exit(failure, 10ms);
    d = q.after_exit(failure, 60s);
    CHECK(d.restart == 1);
    CHECK(d.delay == 1s);
    CHECK_FALSE(d.give_up);
    CHECK(q.after_exit(failure, 10ms).restart == 2);
}

TEST_CASE("restart: -max-restarts=0 gives up at the first failure, never after a success",
          "[restart]") {
    restart_policy p{0};
    for (int i = 0; i < 5; ++i)
        CHECK_FALSE(p.after_exit(success, 10ms).give_up);
    const auto d = p.after_exit(failure, 10ms);
    CHECK(d.give_up);
    CHECK(d.restart == 1);
}

TEST_CASE("restart: -max-restarts=N gives up at failure N + 1 in a row", "[restart]") {
    restart_policy p{3};
    CHECK(p.max_restarts() == 3);
    for (int i = 1; i <= 3; ++i) {
        const auto d = p.after_exit(failure, 10ms);
        CHECK(d.restart == i);
        CHECK_FALSE(d.give_up);
    }
    const auto d = p.after_exit(failure, 10ms);
    CHECK(d.restart == 4);
    CHECK(d.give_up);
}
