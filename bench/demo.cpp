// SPDX-License-Identifier: BSL-1.0
// The demo: start the embedded dev agent, take and release a lock through the raw client,
// and say what happened at each step.
#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

constexpr auto use = asio::use_awaitable;
const std::string key = "service/demo/leader";

void say(const std::string& line) {
    std::printf("  %s\n", line.c_str());
}

asio::awaitable<void> walkthrough(conclave::client& consul) {
    conclave::session_options opts;
    opts.name = "demo";
    opts.ttl = 10s;
    opts.lock_delay = 0ms;
    opts.node_checks = std::vector<std::string>{};
    const auto alice = co_await consul.async_session_create(opts, use);
    const auto bob = co_await consul.async_session_create(opts, use);
    say("sessions: alice=" + alice + " bob=" + bob + " (TTL 10s, lock-delay 0s)");

    conclave::kv_put_options acquire;
    acquire.flags = conclave::lock_flag_value; // Consul's Go api.Lock flags: interoperable
    acquire.acquire = alice;
    const bool got = co_await consul.async_kv_put(key, "alice:8080", acquire, use);
    auto held = co_await consul.async_kv_get(key, {}, use);
    say("alice acquires " + key + ": " + (got ? "true" : "false") + " (LockIndex " +
        std::to_string(held.entry->lock_index) + ", ModifyIndex " +
        std::to_string(held.entry->modify_index) + " = fencing token)");

    acquire.acquire = bob;
    const bool bob_got = co_await consul.async_kv_put(key, "bob:8080", acquire, use);
    say(std::string("bob tries while alice holds it: ") + (bob_got ? "true" : "false"));

    conclave::kv_put_options release;
    release.flags = conclave::lock_flag_value;
    release.release = alice;
    co_await consul.async_kv_put(key, "alice:8080", release, use);
    say("alice releases (flags kept, so Go clients still recognise the lock)");

    const bool bob_now = co_await consul.async_kv_put(key, "bob:8080", acquire, use);
    auto now = co_await consul.async_kv_get(key, {}, use);
    say(std::string("bob acquires: ") + (bob_now ? "true" : "false") + " (LockIndex " +
        std::to_string(now.entry->lock_index) + ", ModifyIndex " +
        std::to_string(now.entry->modify_index) + ": larger than alice's)");

    co_await consul.async_session_destroy(bob, {}, use);
    auto after = co_await consul.async_kv_get(key, {}, use);
    say("bob's session destroyed: key " +
        std::string(after.entry && after.entry->session.empty() ? "released" : "still held") +
        " (release behaviour)");
    co_await consul.async_session_destroy(alice, {}, use);
    co_await consul.async_kv_delete(key, {}, use);
    say("cleaned up: sessions destroyed, key deleted");
}

} // namespace

int main() {
    asio::io_context ioc;
    conclave::dev::agent_config acfg;
    acfg.port = 0;
    conclave::dev::agent agent{ioc.get_executor(), acfg};
    agent.start();
    std::printf("conclave demo: embedded dev agent on %s\n", agent.http_address().c_str());

    conclave::client_config cfg;
    conclave::apply_http_addr(cfg, agent.http_address());
    conclave::client consul{ioc.get_executor(), cfg};

    int status = 1;
    asio::co_spawn(ioc, walkthrough(consul), [&](std::exception_ptr e) {
        status = 0;
        if (e) {
            try {
                std::rethrow_exception(e);
            } catch (const std::exception& ex) {
                std::fprintf(stderr, "demo failed: %s\n", ex.what());
                status = 1;
            }
        }
        agent.stop();
    });
    ioc.run();
    return status;
}
