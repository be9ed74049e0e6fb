// SPDX-License-Identifier: BSL-1.0
// `conclave lock` as a separate process against the dev agent: mutual exclusion, the
// semaphore's limit, lock loss, signals, and nothing left behind.
#include "cli/cli_fixture.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace conclave::test::cli {

namespace {

// A child that logs "S <ns> <token> <held>" when it starts and "E <ns> <token>" when it ends.
std::string logging_child(const std::string& log, const std::string& middle) {
    return "echo \"S $(date +%s%N) $CONCLAVE_LOCK_TOKEN $CONSUL_LOCK_HELD\" >> " + log + "; " +
           middle + "; echo \"E $(date +%s%N) $CONCLAVE_LOCK_TOKEN\" >> " + log;
}

struct interval {
    long long start = 0, end = -1;
    std::string token, held;
};

// The intervals of the log, by token, sorted by start.
std::vector<interval> intervals(const std::string& log) {
    std::map<std::string, interval> by_token;
    for (const auto& line : read_lines(log)) {
        std::istringstream in(line);
        std::string kind, token, held;
        long long ns = 0;
        in >> kind >> ns >> token >> held;
        auto& i = by_token[token];
        i.token = token;
        if (kind == "S") {
            i.start = ns;
            i.held = held;
        } else {
            i.end = ns;
        }
    }
    std::vector<interval> out;
    for (auto& [t, i] : by_token)
        out.push_back(i);
    std::sort(out.begin(), out.end(),
              [](const interval& a, const interval& b) { return a.start < b.start; });
    return out;
}

std::size_t count_prefix(const std::string& path, const std::string& prefix) {
    std::size_t n = 0;
    for (const auto& line : read_lines(path))
        n += line.rfind(prefix, 0) == 0;
    return n;
}

} // namespace

TEST_CASE("lock: two processes on one prefix never overlap", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto child = logging_child(log, "sleep 0.3");
    std::vector<std::unique_ptr<process>> procs;
    for (int i = 0; i < 3; ++i)
        procs.push_back(f.run({"lock", "svc/exclusive", child}));
    for (auto& p : procs) {
        const int code = p->wait();
        INFO(p->err());
        CHECK(code == 0);
    }
    const auto runs = intervals(log);
    REQUIRE(runs.size() == 3);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        CHECK(runs[i].held == "true");
        CHECK(runs[i].end > runs[i].start);
        CHECK(token_session(runs[i].token).size() == 36);
        CHECK(runs[i].token.find(":svc/exclusive/.lock") != std::string::npos);
        if (i > 0) {
            CHECK(runs[i].start > runs[i - 1].end); // disjoint
            // Fencing tokens grow in grant order.
            CHECK(token_modify_index(runs[i].token) > token_modify_index(runs[i - 1].token));
        }
    }
}

TEST_CASE("lock: -n 3 admits exactly three at once", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    const auto child = logging_child(log, "while [ ! -e " + gate + " ]; do sleep 0.05; done");
    std::vector<std::unique_ptr<process>> procs;
    for (int i = 0; i < 5; ++i)
        procs.push_back(f.run({"lock", "-n", "3", "svc/pool", child}));
    REQUIRE(poll_until([&] { return count_prefix(log, "S ") >= 3; }, 60s));
    // The other two keep waiting: a negative, so observed for a while (not a sync point).
    std::this_thread::sleep_for(1s);
    CHECK(count_prefix(log, "S ") == 3);
    std::ofstream{gate};
    for (auto& p : procs) {
        const int code = p->wait();
        INFO(p->err());
        CHECK(code == 0);
    }
    const auto runs = intervals(log);
    REQUIRE(runs.size() == 5);
    // Largest number of children running at the same time.
    std::vector<std::pair<long long, int>> events;
    for (const auto& r : runs) {
        CHECK(r.held == "true");
        CHECK(r.end > r.start);
        events.emplace_back(r.start, +1);
        events.emplace_back(r.end, -1);
    }
    std::sort(events.begin(), events.end());
    int running = 0, most = 0;
    for (const auto& e : events)
        most = std::max(most, running += e.second);
    CHECK(most == 3);
}

TEST_CASE("lock: loss terminates the child and exits 3", "[lock]") {
    cli_fixture f;
    const auto tok = f.path("token");
    const auto log = f.path("log");
    auto p = f.run({"lock", "svc/lost",
                    "echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60 & echo $! > " +
                        f.path("sleeper") + "; wait; echo finished >> " + log});
    REQUIRE(poll_until([&] { return read_lines(f.path("sleeper")).size() == 1; }, 30s));
    const auto token = read_lines(tok).at(0);
    const pid_t sleeper = std::stoi(read_lines(f.path("sleeper")).at(0));
    REQUIRE(f.agent.expire_session(token_session(token)));
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 3);
    CHECK(p->err().find("Lock lost") != std::string::npos);
    CHECK(read_file(log).empty()); // the child did not run to its end
    // Its whole process group went, the background sleep included.
    CHECK(poll_until([&] { return !process_alive(sleeper); }, 10s));
}

TEST_CASE("lock: a child ignoring SIGTERM is killed after the grace period", "[lock]") {
    cli_fixture f;
    const auto tok = f.path("token");
    auto p = f.run({"lock", "svc/stubborn",
                    "trap '' TERM; echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60"});
    REQUIRE(poll_until([&] { return read_lines(tok).size() == 1; }, 30s));
    const auto started = std::chrono::steady_clock::now();
    REQUIRE(f.agent.expire_session(token_session(read_lines(tok).at(0))));
    const int code = p->wait(40s);
    const auto took = std::chrono::steady_clock::now() - started;
    INFO(p->err());
    CHECK(code == 3);
    CHECK(took >= 4500ms); // SIGTERM was ignored: SIGKILL came after the 5 s grace
    CHECK(took < 30s);
    CHECK(p->err().find("SIGKILL") != std::string::npos);
}

TEST_CASE("lock: semaphore slot loss terminates the child and cleans up", "[lock]") {
    cli_fixture f;
    const auto tok = f.path("token");
    auto p = f.run(
        {"lock", "-n=2", "svc/sem-lost", "echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60"});
    REQUIRE(poll_until([&] { return read_lines(tok).size() == 1; }, 30s));
    const auto token = read_lines(tok).at(0);
    CHECK(token.find(":svc/sem-lost/.lock") != std::string::npos);
    REQUIRE(f.agent.expire_session(token_session(token)));
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 3);
}

TEST_CASE("lock: semaphore contenders killed with SIGKILL leave no contender key", "[lock]") {
    cli_fixture f;
    const std::string prefix = "svc/sem-killed";
    const auto tok = f.path("tokens");
    auto under_prefix = [&] {
        std::vector<std::string> keys;
        for (const auto& e : f.keys())
            if (e.key.starts_with(prefix + "/"))
                keys.push_back(e.key);
        return keys;
    };
    // Two holders and a waiter, killed: nothing of theirs can clean up.
    std::vector<std::unique_ptr<process>> killed;
    for (int i = 0; i < 3; ++i)
        killed.push_back(
            f.run({"lock", "-n=2", prefix, "echo $CONCLAVE_LOCK_TOKEN >> " + tok + "; sleep 600"}));
    REQUIRE(
        poll_until([&] { return read_lines(tok).size() == 2 && f.sessions().size() == 3; }, 30s));
    REQUIRE(poll_until([&] { return under_prefix().size() == 4; }, 30s)); // .lock, 3 contenders
    for (auto& p : killed) {
        p->signal(SIGKILL);
        CHECK(p->wait(30s) == 128 + SIGKILL);
    }
    CHECK(under_prefix().size() == 4);
    // Their sessions end as their TTLs would make them end. The CLI's semaphore sessions
    // have behavior "delete" (as Go's api.Semaphore's own): Consul deletes their keys.
    for (const auto& s : f.sessions())
        REQUIRE(f.agent.expire_session(s.id));
    CHECK(under_prefix() == std::vector<std::string>{prefix + "/.lock"});
    // A live contender takes a slot, then deletes what it created: nothing is left.
    auto live = f.run({"lock", "-n=2", prefix, "true"});
    const int code = live->wait(30s);
    INFO(live->err());
    CHECK(code == 0);
    CHECK(under_prefix().empty());
}

TEST_CASE("lock: a server restart with empty state kills the child and exits 3", "[lock]") {
    for (const std::string limit : {"-n=1", "-n=2"}) {
        DYNAMIC_SECTION(limit) {
            cli_fixture f;
            const auto tok = f.path("token");
            const auto log = f.path("log");
            auto p = f.run(
                {"lock", limit, "svc/restart",
                 "echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60; echo finished >> " + log});
            REQUIRE(poll_until([&] { return read_lines(tok).size() == 1; }, 30s));
            f.agent.reset_state(); // its session and keys are gone
            // (within the session's TTL, 15 s, of the reset's end)
            const auto code = p->wait_for(60s);
            INFO(p->err());
            REQUIRE(code);
            CHECK(*code == 3);
            CHECK(p->err().find("lost") != std::string::npos);
            CHECK(read_file(log).empty()); // the child did not run to its end
        }
    }
}

TEST_CASE("lock: SIGTERM is forwarded to the child, then the lock released", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto p = f.run({"lock", "svc/term",
                    "trap 'echo got TERM >> " + log + "; exit 0' TERM; echo ready >> " + log +
                        "; while :; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return count_prefix(log, "ready") == 1; }, 30s));
    p->signal(SIGTERM);
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 128 + SIGTERM);
    CHECK(count_prefix(log, "got TERM") == 1);
}

TEST_CASE("lock: SIGINT is forwarded to the child, then the lock released", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto p = f.run({"lock", "svc/int",
                    "trap 'echo got INT >> " + log + "; exit 0' INT; echo ready >> " + log +
                        "; while :; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return count_prefix(log, "ready") == 1; }, 30s));
    p->signal(SIGINT);
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 128 + SIGINT);
    CHECK(count_prefix(log, "got INT") == 1);
}

TEST_CASE("lock: -timeout gives up on a held lock, a signal ends a wait", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    auto holder =
        f.run({"lock", "svc/busy",
               "echo held >> " + log + "; while [ ! -e " + gate + " ]; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return count_prefix(log, "held") == 1; }, 30s));

    // 5, not 1: a script tells "someone else holds it" from "Consul is down".
    auto impatient = f.run({"lock", "-timeout=200ms", "svc/busy", "echo never >> " + log});
    const int code = impatient->wait(30s);
    INFO(impatient->err());
    CHECK(code == 5);
    CHECK(impatient->err() ==
          "Timeout during lock acquisition: 'svc/busy/.lock' was not free within 200ms\n");
    CHECK(f.sessions().size() == 1); // its session is gone, the holder's remains
    auto unreachable =
        f.run({"lock", "-timeout=200ms", "-http-addr=127.0.0.1:1", "svc/busy", "true"});
    CHECK(unreachable->wait(30s) == 1);

    auto waiter = f.run({"lock", "svc/busy", "echo never >> " + log});
    REQUIRE(poll_until([&] { return f.sessions().size() == 2; }, 30s));
    waiter->signal(SIGTERM);
    const int waiter_code = waiter->wait(30s);
    INFO(waiter->err());
    CHECK(waiter_code == 128 + SIGTERM);
    CHECK(waiter->err().find("Shutdown triggered during lock acquisition") != std::string::npos);
    CHECK(f.sessions().size() == 1);

    std::ofstream{gate};
    CHECK(holder->wait() == 0);
    CHECK(count_prefix(log, "never") == 0);
}

TEST_CASE("lock: a semaphore without a free slot within -timeout exits 5", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    std::vector<std::unique_ptr<process>> holders;
    for (int i = 0; i < 2; ++i)
        holders.push_back(
            f.run({"lock", "-n=2", "svc/full",
                   "echo held >> " + log + "; while [ ! -e " + gate + " ]; do sleep 0.05; done"}));
    REQUIRE(poll_until([&] { return count_prefix(log, "held") == 2; }, 30s));
    auto impatient = f.run({"lock", "-n=2", "-timeout=200ms", "svc/full", "echo never >> " + log});
    CHECK(impatient->wait(30s) == 5);
    CHECK(impatient->err().find("Timeout during lock acquisition") != std::string::npos);
    std::ofstream{gate};
    for (auto& h : holders)
        CHECK(h->wait() == 0);
    CHECK(count_prefix(log, "never") == 0);
}

TEST_CASE("lock: -lock-delay is the session's, and with 0 a lost lock is free at once", "[lock]") {
    cli_fixture f;
    const auto tok = f.path("token");
    auto hold = [&](std::vector<std::string> flags) {
        std::remove(tok.c_str());
        std::vector<std::string> args{"lock"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"svc/delay", "echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60"});
        auto p = f.run(args);
        REQUIRE(poll_until([&] { return read_lines(tok).size() == 1; }, 30s));
        return std::pair{std::move(p), token_session(read_lines(tok).at(0))};
    };
    auto lock_delay = [&](const std::string& session) {
        const auto info = f.session_info(session);
        REQUIRE(info);
        return info->lock_delay;
    };
    {
        auto [p, session] = hold({});
        CHECK(lock_delay(session) == 15s); // consul lock's
        p->signal(SIGTERM);
        CHECK(p->wait(30s) == 128 + SIGTERM);
    }
    {
        auto [p, session] = hold({"-lock-delay=2500ms"});
        CHECK(lock_delay(session) == 2500ms);
        p->signal(SIGTERM);
        CHECK(p->wait(30s) == 128 + SIGTERM);
    }
    auto [p, session] = hold({"-lock-delay=0"});
    CHECK(lock_delay(session) == 0s);
    // Lost, not released: a lock-delay would keep the next holder out for its length.
    REQUIRE(f.agent.expire_session(session));
    CHECK(p->wait(30s) == 3);
    auto next = f.run({"lock", "-timeout=5s", "svc/delay", "true"});
    const int code = next->wait(30s);
    INFO(next->err());
    CHECK(code == 0);
}

TEST_CASE("lock: a prefix used with another layout or limit is refused", "[lock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    auto holder =
        f.run({"lock", "-n=2", "svc/mixed",
               "echo held >> " + log + "; while [ ! -e " + gate + " ]; do sleep 0.05; done"});
    REQUIRE(poll_until([&] { return count_prefix(log, "held") == 1; }, 30s));

    auto as_lock = f.run({"lock", "svc/mixed", "echo never >> " + log});
    CHECK(as_lock->wait() == 1);
    CHECK(as_lock->err() == "Lock acquisition failed: Existing key does not match lock use\n");
    auto other_limit = f.run({"lock", "-n=3", "svc/mixed", "echo never >> " + log});
    CHECK(other_limit->wait() == 1);
    CHECK(other_limit->err() ==
          "Lock acquisition failed: semaphore limit conflict (lock: 2, local: 3)\n");
    CHECK(f.sessions().size() == 1); // only the holder's

    std::ofstream{gate};
    CHECK(holder->wait() == 0);
    CHECK(count_prefix(log, "never") == 0);
}

TEST_CASE("lock: the child's exit status, with and without -child-exit-code", "[lock]") {
    cli_fixture f;
    auto plain = f.run({"lock", "svc/status", "exit 7"});
    CHECK(plain->wait() == 0); // as consul lock: not propagated by default
    auto flagged = f.run({"lock", "-child-exit-code", "svc/status", "exit 7"});
    CHECK(flagged->wait() == 2);
    auto fine = f.run({"lock", "-child-exit-code", "-verbose", "svc/status", "true"});
    CHECK(fine->wait() == 0);
    CHECK(fine->err().find("Lock released") != std::string::npos);
    // -shell=false runs the arguments directly; a missing program is an error (1).
    auto direct = f.run({"lock", "-shell=false", "svc/status", "/bin/sh", "-c", "exit 0"});
    CHECK(direct->wait() == 0);
    auto missing = f.run({"lock", "-shell=false", "svc/status", "/nonexistent/program"});
    CHECK(missing->wait() == 1);
    CHECK(missing->err().find("Error starting child") != std::string::npos);
}

} // namespace conclave::test::cli
