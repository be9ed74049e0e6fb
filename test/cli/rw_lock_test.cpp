// SPDX-License-Identifier: BSL-1.0
// `conclave lock -shared` and `-exclusive` (a read-write lock's read and write grants) as
// separate processes: readers together, a writer alone, arrival order, the token, the loss,
// -timeout, flags refused, and nothing left behind.
#include "cli/cli_fixture.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

namespace conclave::test::cli {

namespace {

// A child that logs "S <ns> <tag> <token>" when it starts and "E <ns> <tag>" when it ends,
// and in between waits for `gate` to exist (none: sleeps 0.2 s).
std::string logged(const std::string& log, const std::string& tag, const std::string& gate = {}) {
    const std::string middle =
        gate.empty() ? "sleep 0.2" : "while [ ! -e " + gate + " ]; do sleep 0.05; done";
    return "echo \"S $(date +%s%N) " + tag + " $CONCLAVE_LOCK_TOKEN\" >> " + log + "; " + middle +
           "; echo \"E $(date +%s%N) " + tag + "\" >> " + log;
}

struct span {
    long long start = 0, end = -1;
    std::string token;
};

std::map<std::string, span> spans(const std::string& log) {
    std::map<std::string, span> by_tag;
    for (const auto& line : read_lines(log)) {
        std::istringstream in(line);
        std::string kind, tag, token;
        long long ns = 0;
        in >> kind >> ns >> tag >> token;
        auto& s = by_tag[tag];
        if (kind == "S") {
            s.start = ns;
            s.token = token;
        } else {
            s.end = ns;
        }
    }
    return by_tag;
}

bool started(const std::string& log, const std::string& tag) {
    return spans(log).count(tag) != 0;
}

// Contender keys (held or waiting) of the read-write lock at `key`.
std::size_t contenders(cli_fixture& f, const std::string& key) {
    std::size_t n = 0;
    for (const auto& e : f.keys())
        n += e.key.starts_with(key + "/.rwlock/");
    return n;
}

bool overlap(const span& a, const span& b) {
    return a.start < b.end && b.start < a.end;
}

} // namespace

TEST_CASE("lock: -shared holders overlap, an -exclusive holder waits for them and keeps "
          "them out",
          "[lock][rwlock]") {
    cli_fixture f;
    const std::string key = "svc/rw";
    const auto log = f.path("log");
    const auto readers_done = f.path("readers-done");
    const auto writer_done = f.path("writer-done");
    auto r1 = f.run({"lock", "-shared", key, logged(log, "r1", readers_done)});
    auto r2 = f.run({"lock", "-shared", key, logged(log, "r2", readers_done)});
    // Both hold at once: each waits for a gate only this test opens.
    REQUIRE(poll_until([&] { return started(log, "r1") && started(log, "r2"); }, 60s));

    auto w = f.run({"lock", "-exclusive", key, logged(log, "w", writer_done)});
    REQUIRE(poll_until([&] { return contenders(f, key) == 3; }, 30s));
    // A reader that comes after the waiting writer waits behind it (arrival order).
    auto r3 = f.run({"lock", "-shared", key, logged(log, "r3")});
    REQUIRE(poll_until([&] { return contenders(f, key) == 4; }, 30s));
    // Negatives, so observed for a while (not a sync point).
    std::this_thread::sleep_for(1s);
    CHECK_FALSE(started(log, "w"));
    CHECK_FALSE(started(log, "r3"));

    std::ofstream{readers_done};
    CHECK(r1->wait() == 0);
    CHECK(r2->wait() == 0);
    REQUIRE(poll_until([&] { return started(log, "w"); }, 30s));
    // Readers cannot start while the writer holds: r3, and one that comes now.
    auto r4 = f.run({"lock", "-shared", key, logged(log, "r4")});
    REQUIRE(poll_until([&] { return contenders(f, key) == 3; }, 30s)); // w, r3, r4
    std::this_thread::sleep_for(1s);
    CHECK_FALSE(started(log, "r3"));
    CHECK_FALSE(started(log, "r4"));

    std::ofstream{writer_done};
    for (auto* p : {&w, &r3, &r4}) {
        const int code = (*p)->wait();
        INFO((*p)->err());
        CHECK(code == 0);
    }
    const auto s = spans(log);
    REQUIRE(s.size() == 5);
    CHECK(overlap(s.at("r1"), s.at("r2")));
    for (const auto* r : {"r1", "r2", "r3", "r4"}) {
        INFO(r);
        CHECK(s.at(r).end > s.at(r).start);
        CHECK_FALSE(overlap(s.at(r), s.at("w")));
    }
    // The writer's token is above the readers' before it; those after it are above it.
    const auto index = [&](const char* tag) { return token_modify_index(s.at(tag).token); };
    CHECK(index("w") > std::max(index("r1"), index("r2")));
    CHECK(index("r3") > index("w"));
    CHECK(index("r4") > index("w"));
}

TEST_CASE("lock: -exclusive holders never overlap", "[lock][rwlock]") {
    cli_fixture f;
    const auto log = f.path("log");
    std::vector<std::unique_ptr<process>> procs;
    for (int i = 0; i < 3; ++i)
        procs.push_back(
            f.run({"lock", "-exclusive", "svc/rw-writers", logged(log, "w" + std::to_string(i))}));
    for (auto& p : procs) {
        const int code = p->wait();
        INFO(p->err());
        CHECK(code == 0);
    }
    auto s = spans(log);
    REQUIRE(s.size() == 3);
    std::vector<span> runs;
    for (auto& [tag, sp] : s)
        runs.push_back(sp);
    std::sort(runs.begin(), runs.end(),
              [](const span& a, const span& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < runs.size(); ++i) {
        CHECK(runs[i].start > runs[i - 1].end);
        CHECK(token_modify_index(runs[i].token) > token_modify_index(runs[i - 1].token));
    }
}

TEST_CASE("lock: -shared and -exclusive give the child the grant's token", "[lock][rwlock]") {
    cli_fixture f;
    for (const std::string mode : {"-shared", "-exclusive"}) {
        DYNAMIC_SECTION(mode) {
            const auto env = f.path("env" + mode);
            auto p = f.run({"lock", mode, "-verbose", "/svc//rw-env/",
                            "echo \"$CONCLAVE_LOCK_TOKEN $CONSUL_LOCK_HELD "
                            "$CONCLAVE_SESSION_TTL\" > " +
                                env});
            const int code = p->wait();
            INFO(p->err());
            REQUIRE(code == 0);
            std::istringstream in(read_file(env));
            std::string token, held, ttl;
            in >> token >> held >> ttl;
            CHECK(held == "true");
            CHECK(ttl == "15");
            // "<modify index>:0:<session>:<key>": the key is the cleaned prefix.
            CHECK(token_modify_index(token) > 0);
            CHECK(token_session(token).size() == 36);
            CHECK(token.find(":svc/rw-env/.rwlock/") != std::string::npos);
            CHECK(p->err().find("Lock acquired (" + token + ")") != std::string::npos);
            CHECK(p->err().find("Lock released") != std::string::npos);
        }
    }
}

TEST_CASE("lock: the loss of an -exclusive or -shared grant stops the child, exit 3",
          "[lock][rwlock]") {
    for (const std::string mode : {"-exclusive", "-shared"}) {
        DYNAMIC_SECTION(mode) {
            cli_fixture f;
            const auto tok = f.path("token");
            const auto log = f.path("log");
            auto p = f.run({"lock", mode, "svc/rw-lost",
                            "echo $CONCLAVE_LOCK_TOKEN > " + tok + "; sleep 60 & echo $! > " +
                                f.path("sleeper") + "; wait; echo finished >> " + log});
            REQUIRE(poll_until([&] { return read_lines(f.path("sleeper")).size() == 1; }, 30s));
            const pid_t sleeper = std::stoi(read_lines(f.path("sleeper")).at(0));
            REQUIRE(f.agent.expire_session(token_session(read_lines(tok).at(0))));
            const int code = p->wait(30s);
            INFO(p->err());
            CHECK(code == 3);
            CHECK(p->err().find("Lock lost") != std::string::npos);
            CHECK(read_file(log).empty());
            CHECK(poll_until([&] { return !process_alive(sleeper); }, 10s));
            // The next writer gets it (the lost grant's key went with its session).
            auto next = f.run({"lock", "-exclusive", "-timeout=10s", "svc/rw-lost", "true"});
            const int next_code = next->wait(30s);
            INFO(next->err());
            CHECK(next_code == 0);
        }
    }
}

TEST_CASE("lock: -timeout and signals while waiting for a read-write lock", "[lock][rwlock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    auto reader = f.run({"lock", "-shared", "svc/rw-busy", logged(log, "r", gate)});
    REQUIRE(poll_until([&] { return started(log, "r"); }, 30s));
    // Another reader is welcome; a writer is not.
    auto reader2 = f.run({"lock", "-shared", "-timeout=10s", "svc/rw-busy", "true"});
    CHECK(reader2->wait(30s) == 0);
    auto writer =
        f.run({"lock", "-exclusive", "-timeout=200ms", "svc/rw-busy", "echo never >> " + log});
    const int code = writer->wait(30s);
    INFO(writer->err());
    CHECK(code == 5);
    CHECK(writer->err() ==
          "Timeout during lock acquisition: 'svc/rw-busy' was not free within 200ms\n");
    auto waiter = f.run({"lock", "-exclusive", "svc/rw-busy", "echo never >> " + log});
    REQUIRE(poll_until([&] { return contenders(f, "svc/rw-busy") == 2; }, 30s));
    waiter->signal(SIGINT);
    CHECK(waiter->wait(30s) == 128 + SIGINT);
    CHECK(waiter->err().find("Shutdown triggered during lock acquisition") != std::string::npos);
    CHECK(f.sessions().size() == 1);
    std::ofstream{gate};
    CHECK(reader->wait() == 0);
    CHECK(read_file(log).find("never") == std::string::npos);
}

TEST_CASE("lock: a prefix held as a plain lock is not a read-write lock", "[lock][rwlock]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto gate = f.path("release");
    auto holder = f.run({"lock", "svc/rw-mixed", logged(log, "plain", gate)});
    REQUIRE(poll_until([&] { return started(log, "plain"); }, 30s));
    auto rw = f.run({"lock", "-exclusive", "svc/rw-mixed", "echo never >> " + log});
    CHECK(rw->wait() == 1);
    CHECK(rw->err() == "Lock acquisition failed: Existing key does not match read-write lock use "
                       "(not a read-write lock's key: a semaphore or consul lock uses "
                       "\"svc/rw-mixed/.lock\")\n");
    CHECK(f.sessions().size() == 1);
    std::ofstream{gate};
    CHECK(holder->wait() == 0);
    CHECK(read_file(log).find("never") == std::string::npos);
}

TEST_CASE("args: -shared and -exclusive refuse each other and -n", "[args][rwlock]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"lock", "-shared", "-exclusive", "p", "true"},
         "-shared and -exclusive cannot be combined: a holder reads or writes\n",
         false},
        {{"lock", "-n=2", "-shared", "p", "true"},
         "-n=2 cannot be combined with -shared: a read-write lock has no holder limit\n",
         false},
        {{"lock", "-exclusive", "-n", "3", "p", "true"},
         "-n=3 cannot be combined with -exclusive: a read-write lock has no holder limit\n",
         false},
        {{"lock", "-shared=maybe", "p", "true"},
         "invalid boolean value \"maybe\" for -shared: parse error\n",
         true},
        // After `consul lock`'s own checks.
        {{"lock", "-shared", "-exclusive", "p"},
         "Key prefix and child command must be specified\n",
         false},
    };
    check_refused(f, cases, "Usage: conclave lock");
    CHECK(f.sessions().empty());
}

} // namespace conclave::test::cli
