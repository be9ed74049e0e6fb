// SPDX-License-Identifier: BSL-1.0
// A multi-lock and `consul lock` (Go's api.Lock) on one key of the set exclude each other:
// on a real Consul only (the test runs the consul executable the server came from).
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"
#include "recipes_fixture.hpp"
#include "support/test_child.hpp"

#include <conclave/multi_lock.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// The consul executable of the real Consul the tests run on, or empty.
std::string consul_executable() {
    for (const char* name : {"CONCLAVE_TEST_CONSUL_BIN", "CONCLAVE_TEST_CONSUL_CLUSTER"})
        if (const char* bin = std::getenv(name); bin && *bin)
            return bin;
    return {};
}

// Destroys the sessions named `name` (consul lock destroys its own from a goroutine that can
// lose the race with its exit).
asio::awaitable<void> destroy_sessions_named(client& c, const std::string& name) {
    auto list = co_await c.async_session_list();
    for (const auto& s : list.sessions)
        if (s.name == name)
            co_await c.async_session_destroy(s.id);
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a multi-lock and consul lock on one of its keys exclude",
                 "[multi_lock][real-consul]") {
    const auto bin = consul_executable();
    if (bin.empty() || !server.consul())
        return; // (the dev agent has no consul lock to run against)
    const auto addr = "-http-addr=127.0.0.1:" + std::to_string(server.consul()->http_port(0));
    const std::string session_name = "conclave-multi-interop";
    // consul lock PREFIX holds PREFIX/.lock, an api.Lock key.
    const std::string prefix = p + "job";
    const std::string stop_file = "/tmp/conclave-multi-interop-" + random_uuid();
    auto body = [&]() -> asio::awaitable<void> {
        multi_lock set{consul, {prefix + "/.lock", p + "other"}};
        auto s = co_await session::async_create(consul, quick());
        {
            // consul lock holds the key until its child sees the stop file.
            auto options =
                test_child({bin, "lock", addr, "-name", session_name, prefix,
                            "echo held; while [ ! -e " + stop_file + " ]; do sleep 0.05; done"},
                           {"SHELL=/bin/sh"});
            options.stdout_pipe = true;
            programs::child_process holder{options};
            std::string line;
            REQUIRE(holder.read_line(line)); // its child runs: it holds the key
            CHECK(line == "held");
            auto none = co_await set.async_try_acquire(s, 0ms);
            CHECK_FALSE(none);
            auto other = co_await consul.async_kv_get(p + "other");
            CHECK_FALSE(other.entry); // no partial hold
            std::ofstream{stop_file}.put('\n');
            auto got = co_await set.async_acquire(s); // after consul lock's release
            CHECK(got.token().session == s.id());
            REQUIRE(programs::wait_exit_for(holder, 10s));
            CHECK(programs::shell_status(holder.reap()) == 0);
            std::remove(stop_file.c_str());

            // While the set is held, consul lock cannot have the key.
            programs::child_process blocked{test_child(
                {bin, "lock", addr, "-name", session_name, "-timeout", "500ms", prefix, "true"},
                {"SHELL=/bin/sh"})};
            REQUIRE(programs::wait_exit_for(blocked, 10s));
            CHECK(programs::shell_status(blocked.reap()) != 0);
            co_await got.async_release();
            programs::child_process after{test_child(
                {bin, "lock", addr, "-name", session_name, "-timeout", "5s", prefix, "true"},
                {"SHELL=/bin/sh"})};
            REQUIRE(programs::wait_exit_for(after, 10s));
            CHECK(programs::shell_status(after.reap()) == 0);
        }
        co_await destroy_sessions_named(consul, session_name);
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await s.async_destroy();
    };
    run(ioc, body());
}
