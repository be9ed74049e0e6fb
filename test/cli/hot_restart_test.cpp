// SPDX-License-Identifier: BSL-1.0
// `conclave lock` and `conclave elect` with -session-file: SIGUSR2 hands the session over
// (the command stopped, exit 0, nothing released, the session left alive and its ID in the
// file); the next conclave started with the file resumes it and holds on with the same
// token, without writing the key. And -health-ttl: the session is bound to a TTL check that
// ends it soon after conclave dies.
#include "cli/cli_fixture.hpp"
#include "support/run.hpp"

#include <csignal>
#include <fstream>

namespace conclave::test::cli {

namespace {

// A command that logs its token, then runs until stopped.
std::string token_logger(const std::string& log) {
    return "echo \"$CONCLAVE_LOCK_TOKEN\" >> " + log + "; while true; do sleep 0.05; done";
}

std::optional<kv_entry> entry(cli_fixture& f, const std::string& key) {
    for (auto& e : f.keys())
        if (e.key == key)
            return e;
    return std::nullopt;
}

// Runs `args` + the logging command twice, handing over from the first run to the second:
// both have the same token, the key is not written in between, and the second's ordinary
// stop ends the session and removes the file.
void hand_over_and_resume(cli_fixture& f, std::vector<std::string> args, const std::string& key) {
    const auto log = f.path("log");
    const auto file = f.path("session");
    args.insert(args.begin() + 1, {"-session-file", file});
    args.push_back(token_logger(log));

    auto first = f.run(args);
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    const auto token = read_lines(log).front();
    const auto held = entry(f, key);
    REQUIRE(held);
    CHECK(held->session == token_session(token));
    CHECK(read_lines(file) == std::vector<std::string>{token_session(token)});

    first->signal(SIGUSR2);
    const int handed = first->wait(30s);
    INFO(first->err());
    CHECK(handed == 0);
    CHECK(first->err().find("handed over") != std::string::npos);
    CHECK(f.session_info(token_session(token)).has_value()); // alive, for the successor
    const auto kept = entry(f, key);
    REQUIRE(kept);
    CHECK(kept->session == held->session);
    CHECK(kept->modify_index == held->modify_index);

    auto second = f.run(args);
    REQUIRE(poll_until([&] { return read_lines(log).size() == 2; }, 30s));
    CHECK(read_lines(log).back() == token); // the same grant
    const auto after = entry(f, key);
    REQUIRE(after);
    CHECK(after->modify_index == held->modify_index); // nothing written: observers saw nothing

    second->signal(SIGTERM);
    const int stopped = second->wait(30s);
    INFO(second->err());
    CHECK(stopped == 128 + SIGTERM);
    CHECK_FALSE(f.session_info(token_session(token)).has_value());
    CHECK(read_lines(file).empty()); // removed: nothing left to resume
}

} // namespace

TEST_CASE("lock: SIGUSR2 with -session-file hands the lock to the next conclave with the same "
          "token",
          "[lock][hot-restart]") {
    cli_fixture f;
    hand_over_and_resume(f, {"lock", "svc/upgrade"}, "svc/upgrade/.lock");
}

TEST_CASE("elect: SIGUSR2 with -session-file hands the leadership to the next conclave in the "
          "same term",
          "[elect][hot-restart]") {
    cli_fixture f;
    hand_over_and_resume(f, {"elect", "svc/leader"}, "svc/leader");
}

TEST_CASE("lock: a -session-file whose session Consul no longer knows starts a new session",
          "[lock][hot-restart]") {
    cli_fixture f;
    const auto log = f.path("log");
    const auto file = f.path("session");
    {
        std::ofstream out(file);
        out << "5f1c33c9-0d5e-4bb4-a3cf-31a47d0e2a10\n"; // (no such session)
    }
    auto p = f.run({"lock", "-session-file", file, "svc/fresh", token_logger(log)});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    const auto id = token_session(read_lines(log).front());
    CHECK(id != "5f1c33c9-0d5e-4bb4-a3cf-31a47d0e2a10");
    CHECK(read_lines(file) == std::vector<std::string>{id});
    p->signal(SIGTERM);
    CHECK(p->wait(30s) == 128 + SIGTERM);
}

TEST_CASE("lock: -health-ttl binds the session to a check that ends it soon after conclave dies",
          "[lock][health]") {
    cli_fixture f;
    const auto log = f.path("log");
    // A TTL of 60s: only the check can end the session within the bound below.
    auto p = f.run({"lock", "-ttl", "60s", "-health-ttl", "1s", "svc/healthy", token_logger(log)});
    REQUIRE(poll_until([&] { return read_lines(log).size() == 1; }, 30s));
    const auto id = token_session(read_lines(log).front());
    const auto info = f.session_info(id);
    REQUIRE(info);
    REQUIRE(info->node_checks.size() == 2);
    CHECK(info->node_checks[0] == "serfHealth");
    CHECK(info->node_checks[1].starts_with("conclave-session-1000ms-"));

    p->signal(SIGKILL); // no cleanup: the check is no longer passed
    p->wait(30s);
    CHECK(poll_until([&] { return !f.session_info(id).has_value(); }, 30s));
    // (The check stays, critical, on the agent, and the released key too: conclave cannot
    // remove them after a SIGKILL.)
    auto deregister = [&]() -> asio::awaitable<void> {
        co_await f.consul.async_agent_check_deregister(info->node_checks[1]);
        co_await f.consul.async_kv_delete("svc/healthy/.lock");
    };
    conclave::test::run(f.ioc, deregister(), 10s);
}

TEST_CASE("lock and elect refuse a -health-ttl below 1s", "[lock][elect][health]") {
    cli_fixture f;
    for (const char* command : {"lock", "elect"}) {
        auto p = f.run({command, "-health-ttl", "100ms", "svc/x", "true"});
        CHECK(p->wait(30s) == 1);
        CHECK(p->err().find("-health-ttl must be 0 (no check) or at least 1s") !=
              std::string::npos);
    }
}

} // namespace conclave::test::cli
