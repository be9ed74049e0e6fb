// SPDX-License-Identifier: BSL-1.0
// `conclave elect` as separate processes against the dev agent: the leader runs the
// command with its term's token, one child at a time across candidates, takeover after a
// session loss, terms that end by themselves, signals, -once, -leader, argument errors.
#include "cli/cli_fixture.hpp"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

namespace conclave::test::cli {

namespace {

// A child that logs "S <ns> <token>" when it starts and "E <ns> <token>" when SIGTERM (or
// SIGINT) ends it; it runs until then.
std::string logged_term(const std::string& log) {
    return "echo \"S $(date +%s%N) $CONCLAVE_LOCK_TOKEN\" >> " + log +
           "; trap 'echo \"E $(date +%s%N) $CONCLAVE_LOCK_TOKEN\" >> " + log +
           "; exit 0' TERM INT; while :; do sleep 0.05; done";
}

struct entry {
    char kind = 0;
    long long ns = 0;
    std::string token;
};

std::vector<entry> entries(const std::string& log) {
    std::vector<entry> out;
    for (const auto& line : read_lines(log)) {
        std::istringstream in(line);
        entry e;
        in >> e.kind >> e.ns >> e.token;
        out.push_back(e);
    }
    return out;
}

std::size_t count_kind(const std::string& log, char kind) {
    const auto all = entries(log);
    return static_cast<std::size_t>(
        std::count_if(all.begin(), all.end(), [&](const entry& e) { return e.kind == kind; }));
}

// Every child started (S) ended (E) before the next one started, tokens growing.
void check_one_at_a_time(const std::string& log) {
    const auto all = entries(log);
    INFO("log:\n" << read_file(log));
    std::string running;
    std::string last;
    for (const auto& e : all) {
        if (e.kind == 'S') {
            CHECK(running.empty()); // nobody else's child runs
            running = e.token;
            if (!last.empty())
                CHECK(token_modify_index(e.token) > token_modify_index(last));
            last = e.token;
        } else {
            CHECK(e.token == running);
            running.clear();
        }
    }
    CHECK(running.empty()); // every child ended
}

} // namespace

TEST_CASE("elect: the leader runs the command with its term's token", "[elect]") {
    cli_fixture f;
    const auto marker = f.path("marker");
    const auto gate = f.path("gate");
    auto p = f.run({"elect", "-once", "-name=web-1", "svc/leader", "--",
                    "echo \"$CONCLAVE_LOCK_TOKEN $CONSUL_LOCK_HELD $CONCLAVE_LEADER\" > " + marker +
                        "; while [ ! -e " + gate + " ]; do sleep 0.05; done; exit 5"});
    REQUIRE(poll_until([&] { return read_lines(marker).size() == 1; }, 30s));
    std::istringstream in(read_lines(marker).at(0));
    std::string token, held, leader;
    in >> token >> held >> leader;
    CHECK(held == "true");
    CHECK(leader == "true");
    CHECK(token_session(token).size() == 36);
    CHECK(token.size() > 6);
    CHECK(token.substr(token.size() - 11) == ":svc/leader");

    // While it leads, -leader prints what it published.
    auto who = f.run({"elect", "-leader", "svc/leader"});
    CHECK(who->wait(30s) == 0);
    CHECK(who->out() == "web-1\n");
    const auto keys = f.keys();
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].key == "svc/leader");
    CHECK(keys[0].session == token_session(token));

    std::ofstream{gate};
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 5); // -once: the command's status

    auto nobody = f.run({"elect", "-leader", "svc/leader"});
    CHECK(nobody->wait(30s) == 1);
    CHECK(nobody->err() == "no leader\n");
    CHECK(nobody->out().empty());
}

TEST_CASE("elect: one child at a time, a lost session kills it and the other takes over",
          "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    // When a session is lost, Consul frees the key at once, while the deposed leader is
    // still stopping its child: the lock-delay is what keeps the next leader out meanwhile
    // (2 s here instead of 15 s, ample for a child that exits on SIGTERM).
    auto a = f.run({"elect", "-lock-delay=2s", "-name=a", "svc/pair", "--", logged_term(log)});
    auto b = f.run({"elect", "-lock-delay=2s", "-name=b", "svc/pair", "--", logged_term(log)});
    REQUIRE(poll_until([&] { return count_kind(log, 'S') == 1; }, 30s));
    // The other candidate keeps waiting: a negative, so observed for a while.
    std::this_thread::sleep_for(1s);
    CHECK(count_kind(log, 'S') == 1);

    const auto first = entries(log).at(0).token;
    REQUIRE(f.agent.expire_session(token_session(first)));
    // The deposed leader's child is terminated, and the other candidate leads.
    REQUIRE(poll_until([&] { return count_kind(log, 'S') == 2; }, 30s));
    const auto all = entries(log);
    REQUIRE(all.size() >= 3);
    CHECK(all[1].kind == 'E');
    CHECK(all[1].token == first);
    CHECK(all[2].kind == 'S');
    CHECK(token_session(all[2].token) != token_session(first));

    // Both are still running: the deposed one campaigns again with a new session.
    CHECK(process_alive(a->pid()));
    CHECK(process_alive(b->pid()));
    REQUIRE(poll_until([&] { return f.sessions().size() == 2; }, 30s));

    a->signal(SIGTERM);
    b->signal(SIGTERM);
    const int code_a = a->wait(30s);
    const int code_b = b->wait(30s);
    INFO("a:\n" << a->err() << "b:\n" << b->err());
    CHECK(code_a == 128 + SIGTERM);
    CHECK(code_b == 128 + SIGTERM);
    const auto deposed =
        a->err().find("Leadership lost") != std::string::npos ? a->err() : b->err();
    CHECK(deposed.find("Leadership lost, killing child") != std::string::npos);
    CHECK(deposed.find("Session lost, campaigning again") != std::string::npos);
    check_one_at_a_time(log);
}

TEST_CASE("elect: a command that exits ends the term, and the next term runs it again", "[elect]") {
    cli_fixture f;
    const auto runs = f.path("runs");
    auto p =
        f.run({"elect", "-verbose", "svc/again", "--", "echo $CONCLAVE_LOCK_TOKEN >> " + runs});
    REQUIRE(poll_until([&] { return read_lines(runs).size() >= 2; }, 30s));
    p->signal(SIGTERM);
    const int code = p->wait(30s);
    const auto err = p->err();
    INFO(err);
    CHECK(code == 128 + SIGTERM);
    // One line per exit, also with -verbose.
    CHECK(err.find("Child exited (exit status 0 after ") != std::string::npos);
    CHECK(err.find("ending the term") == std::string::npos);
    const auto tokens = read_lines(runs);
    REQUIRE(tokens.size() >= 2);
    // A new term each time: the key was released in between, the session kept.
    CHECK(token_modify_index(tokens[1]) > token_modify_index(tokens[0]));
    CHECK(token_session(tokens[1]) == token_session(tokens[0]));
}

TEST_CASE("elect: SIGTERM is forwarded to the child, then the key released at once", "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto a = f.run({"elect", "svc/term", "--", logged_term(log)});
    REQUIRE(poll_until([&] { return count_kind(log, 'S') == 1; }, 30s));
    auto b = f.run({"elect", "svc/term", "--", logged_term(log)});
    REQUIRE(poll_until([&] { return f.sessions().size() == 2; }, 30s));

    a->signal(SIGTERM);
    const int code = a->wait(30s);
    INFO(a->err());
    CHECK(code == 128 + SIGTERM);
    CHECK(count_kind(log, 'E') == 1); // the child got SIGTERM and ended
    // Released (not left to the session's lock-delay of 15 s): b leads well before that.
    CHECK(poll_until([&] { return count_kind(log, 'S') == 2; }, 10s));

    b->signal(SIGINT);
    const int code_b = b->wait(30s);
    INFO(b->err());
    CHECK(code_b == 128 + SIGINT);
    check_one_at_a_time(log);
}

TEST_CASE("elect: -once exits 3 when leadership is lost during the term", "[elect]") {
    cli_fixture f;
    const auto log = f.path("log");
    auto p = f.run({"elect", "-once", "svc/once", "--", logged_term(log)});
    REQUIRE(poll_until([&] { return count_kind(log, 'S') == 1; }, 30s));
    REQUIRE(f.agent.expire_session(token_session(entries(log).at(0).token)));
    const int code = p->wait(30s);
    INFO(p->err());
    CHECK(code == 3);
    CHECK(count_kind(log, 'E') == 1);
}

TEST_CASE("elect: errors", "[elect]") {
    cli_fixture f;
    const std::vector<bad_arguments> cases{
        {{"elect"}, "Key and child command must be specified\n", false},
        {{"elect", "svc/k"}, "Key and child command must be specified\n", false},
        {{"elect", "svc/k", "--"}, "Key and child command must be specified\n", false},
        {{"elect", "-leader"}, "Key must be specified\n", false},
        {{"elect", "-leader", "svc/k", "true"}, "-leader takes a key and no command\n", false},
        {{"elect", "-lock-delay=-1s", "svc/k", "true"}, "Lock delay must not be negative\n", false},
        {{"elect", "/", "--", "true"},
         "Key '/' names no key: give a path such as service/web/leader\n",
         false},
        {{"elect", "-bogus", "svc/k", "true"}, "flag provided but not defined: -bogus\n", true},
        {{"elect", "-once=maybe", "svc/k", "true"},
         "invalid boolean value \"maybe\" for -once: parse error\n",
         true},
        {{"elect", "-lock-delay=soon", "svc/k", "true"},
         "invalid value \"soon\" for flag -lock-delay: parse error\n",
         true},
    };
    check_refused(f, cases, "Usage: conclave elect");
    CHECK(f.sessions().empty()); // argument errors never reach Consul

    auto help = f.run({"elect", "-help"});
    CHECK(help->wait(30s) == 0);
    CHECK(help->out().rfind("Usage: conclave elect", 0) == 0);

    auto unreachable = f.run({"elect", "-http-addr=127.0.0.1:1", "svc/k", "--", "true"});
    CHECK(unreachable->wait(30s) == 1);
    CHECK(unreachable->err().find("Error querying Consul agent at") != std::string::npos);

    auto missing = f.run({"elect", "-shell=false", "svc/missing", "--", "/nonexistent/program"});
    CHECK(missing->wait(30s) == 1);
    CHECK(missing->err().find("Error starting child '/nonexistent/program'") != std::string::npos);

    // A key another recipe uses is refused, and left alone.
    auto put = f.run({"kv", "put", "svc/foreign", "x"});
    REQUIRE(put->wait(30s) == 0);
    auto foreign = f.run({"elect", "svc/foreign", "--", "true"});
    CHECK(foreign->wait(30s) == 1);
    CHECK(foreign->err() == "Election failed: Existing key does not match lock use\n");
    auto asked = f.run({"elect", "-leader", "svc/foreign"});
    CHECK(asked->wait(30s) == 1);
    CHECK(asked->err() == "no leader\n"); // a key without a session names no leader
    const auto keys = f.keys();
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].value == "x");
    auto del = f.run({"kv", "delete", "svc/foreign"});
    CHECK(del->wait(30s) == 0);
}

} // namespace conclave::test::cli
