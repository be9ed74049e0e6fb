// SPDX-License-Identifier: BSL-1.0
// A loss whose cleanup then fails (Consul answers nothing but errors): `conclave lock` and
// `conclave elect -once` still exit 3, the loss, and report the failed cleanup. So does
// `elect` giving up (4); a command's own exit status 3 is no loss.
#include "cli/cli_fixture.hpp"
#include "cli/proxy_thread.hpp"

namespace conclave::test::cli {

namespace {

// `args` run through the proxy with a child that writes `started` and then sleeps; once it
// runs, Consul fails. Returns conclave's stderr after checking that it exited 3.
std::string lose_with_failing_cleanup(cli_fixture& f, std::vector<std::string> args) {
    proxy_thread proxy(f.agent.address());
    const auto started = f.path("started");
    args.insert(args.begin() + 1, "-http-addr=" + proxy.address());
    args.push_back("echo started > " + started + "; sleep 600");
    auto p = f.run(args);
    REQUIRE(poll_until([&] { return read_lines(started).size() == 1; }, 30s));
    proxy.fail_everything();
    // Lost at the latest when the session's TTL (10 s) passes without a renewal; the
    // cleanup's requests are bounded by the client's request timeout.
    const int code = p->wait(120s);
    const auto err = p->err();
    INFO(err);
    CHECK(code == 3);
    // Left on the server (the cleanup failed): the test's to remove.
    f.agent.reset_state();
    return err;
}

struct outcome {
    int code = 0;
    std::string err;
};

// `args` run through the proxy, every session destroy failing (the final cleanup).
outcome run_with_failing_destroy(cli_fixture& f, std::vector<std::string> args) {
    proxy_thread proxy(f.agent.address());
    proxy.fail_next("/v1/session/destroy", 1'000'000);
    args.insert(args.begin() + 1, "-http-addr=" + proxy.address());
    auto p = f.run(args);
    outcome o;
    o.code = p->wait(120s);
    o.err = p->err();
    // Left on the server (the cleanup failed): the test's to remove.
    f.agent.reset_state();
    return o;
}

} // namespace

TEST_CASE("lock: a loss still exits 3 when the cleanup fails", "[lock]") {
    cli_fixture f;
    const auto err = lose_with_failing_cleanup(f, {"lock", "-ttl=10s", "svc/unreachable"});
    CHECK(err.find("Lock lost") != std::string::npos);
    CHECK(err.find("Session cleanup failed") != std::string::npos);
}

TEST_CASE("elect: -once still exits 3 after a loss when the cleanup fails", "[elect]") {
    cli_fixture f;
    const auto err =
        lose_with_failing_cleanup(f, {"elect", "-once", "-ttl=10s", "svc/unreachable", "--"});
    CHECK(err.find("Leadership lost") != std::string::npos);
    CHECK(err.find("Session cleanup failed") != std::string::npos);
}

TEST_CASE("elect: giving up still exits 4 when the cleanup fails", "[elect]") {
    cli_fixture f;
    const auto o =
        run_with_failing_destroy(f, {"elect", "-max-restarts=0", "svc/give-up", "--", "exit 1"});
    INFO(o.err);
    // A supervisor waiting for 4 (stop restarting this node) must see it.
    CHECK(o.code == 4);
    CHECK(o.err.find("giving up") != std::string::npos);
    CHECK(o.err.find("Session cleanup failed") != std::string::npos);
}

TEST_CASE("elect: -once with a command exiting 3 is no loss: a failed cleanup exits 1", "[elect]") {
    cli_fixture f;
    const auto o = run_with_failing_destroy(f, {"elect", "-once", "svc/three", "--", "exit 3"});
    INFO(o.err);
    CHECK(o.code == 1);
    CHECK(o.err.find("Leadership lost") == std::string::npos);
    CHECK(o.err.find("Session cleanup failed") != std::string::npos);
}

} // namespace conclave::test::cli
