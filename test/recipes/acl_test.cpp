// SPDX-License-Identifier: BSL-1.0
// Consul with ACLs on and a default policy of "deny" (on a real Consul only: the dev agent has
// no ACLs). The policy docs/howto/cluster.md ("ACLs") documents is enough for every recipe;
// without a permission, each fails at once with errc::permission_denied and says which
// permission is missing; the token itself is never part of an error.
#include "recipes_fixture.hpp"
#include "support/acl.hpp"

#include <conclave/elector.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/post.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

struct acl_fixture {
    asio::io_context ioc;
    std::unique_ptr<consul_server> consul = acl_consul();
    std::string p = "conclave-acl-test/" + random_uuid() + "/";

    client make_client(std::string token) {
        client_config cfg;
        cfg.host = "127.0.0.1";
        cfg.port = consul->http_port();
        cfg.token = std::move(token);
        return client{ioc.get_executor(), cfg};
    }
    client admin() { return make_client(acl_master_token); }

    // The failure of `op` (an operation awaited with the default token), as thrown.
    template <class Op>
    static asio::awaitable<std::optional<conclave::error>> failure_of(Op op) {
        try {
            co_await std::move(op);
        } catch (const conclave::error& e) {
            co_return e;
        }
        co_return std::nullopt;
    }

    // Sessions and keys left on the server (none is the only right answer).
    asio::awaitable<std::pair<std::size_t, std::size_t>> leftovers() {
        client a = admin();
        auto sessions = co_await a.async_session_list();
        auto keys = co_await a.async_kv_keys(p);
        co_return std::pair<std::size_t, std::size_t>{sessions.sessions.size(), keys.keys.size()};
    }
};

} // namespace

TEST_CASE_METHOD(acl_fixture,
                 "with ACLs on, the documented policy is enough for lock, semaphore, elector "
                 "and watch",
                 "[acl][real-consul]") {
    if (!consul)
        return;
    const auto token = make_token(*consul, "conclave-minimal", minimal_rules(p));
    client consul_app = make_client(token);
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul_app, quick(10s));

        lock mutex{consul_app, p + "lock"};
        auto lease = co_await mutex.async_acquire(s);
        CHECK(lease.held());
        co_await lease.async_release();
        co_await mutex.async_destroy();

        semaphore sem{consul_app, p + "sem", 2};
        auto permit = co_await sem.async_acquire(s);
        CHECK(permit.held());
        co_await permit.async_release();
        co_await sem.async_destroy();

        // One term, then the campaign is cancelled (from outside the task).
        elector el{consul_app, p + "leader"};
        asio::cancellation_signal stop;
        bool led = false;
        leader_task task = [&](leadership) -> asio::awaitable<void> {
            led = true;
            asio::post(ioc, [&] { stop.emit(asio::cancellation_type::terminal); });
            asio::steady_timer forever{ioc, 1h};
            co_await forever.async_wait(asio::use_awaitable);
        };
        auto [run_ec] = co_await el.async_run(
            s, task, asio::bind_cancellation_slot(stop.slot(), awaitable_tuple));
        CHECK(led);
        CHECK(run_ec == asio::error::operation_aborted);
        co_await lock{consul_app, p + "leader"}.async_destroy();

        watch w{consul_app, watch::key(p + "watched")};
        auto first = co_await w.async_next();
        CHECK(first.entries.empty());
        co_await consul_app.async_kv_put(p + "watched", "v");
        auto second = co_await w.async_next();
        REQUIRE(second.entries.size() == 1);
        CHECK(second.entries.front().value == "v");
        co_await consul_app.async_kv_delete(p + "watched");

        co_await s.async_destroy();
        const auto left = co_await leftovers();
        CHECK(left.first == 0);
        CHECK(left.second == 0);
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(acl_fixture,
                 "with ACLs on, a missing permission fails at once and says which, never "
                 "showing the token",
                 "[acl][real-consul]") {
    if (!consul)
        return;
    // Reads of the prefix and sessions, but no writes.
    const auto read_only = make_token(*consul, "conclave-read-only",
                                      "key_prefix \"" + p +
                                          "\" { policy = \"read\" }\n"
                                          "session_prefix \"\" { policy = \"write\" }\n");
    const auto nothing = make_token(*consul, "conclave-nothing", "");
    const std::string unknown = random_uuid();
    std::vector<std::string> texts; // every error text, checked for the tokens below
    auto body = [&]() -> asio::awaitable<void> {
        client reader = make_client(read_only);
        auto s = co_await session::async_create(reader, quick(10s));

        lock mutex{reader, p + "lock"};
        auto denied = co_await failure_of(mutex.async_acquire(s));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("key write on \"" + p + "lock\"") !=
              std::string::npos);
        texts.push_back(denied->what());

        // Fair mode writes a contender key first: its refusal is the same error.
        lock fair{reader, p + "fair", lock_options{}.with_fair()};
        denied = co_await failure_of(fair.async_acquire(s));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        texts.push_back(denied->what());

        semaphore sem{reader, p + "sem", 2};
        denied = co_await failure_of(sem.async_acquire(s));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("key write on \"" + p + "sem/") !=
              std::string::npos);
        texts.push_back(denied->what());

        // A try within a budget fails the same way: at once, saying what the token lacks.
        const auto asked = std::chrono::steady_clock::now();
        denied = co_await failure_of(mutex.async_try_acquire(s, 20s));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("key write on \"" + p + "lock\"") !=
              std::string::npos);
        texts.push_back(denied->what());
        denied = co_await failure_of(sem.async_try_acquire(s, 20s));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("key write on \"" + p + "sem/") !=
              std::string::npos);
        texts.push_back(denied->what());
        CHECK(std::chrono::steady_clock::now() - asked < 10s); // not retried until the budget
        co_await s.async_destroy();

        // No read permission: the waiter gives up at once instead of retrying.
        client blind = make_client(nothing);
        denied = co_await failure_of(session::async_create(blind, quick(10s)));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("session write") != std::string::npos);
        texts.push_back(denied->what());

        watch w{blind, watch::key(p + "watched")};
        denied = co_await failure_of(w.async_next());
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("key read on \"" + p + "watched\"") !=
              std::string::npos);
        texts.push_back(denied->what());

        client stranger = make_client(unknown);
        denied = co_await failure_of(stranger.async_kv_get(p + "k"));
        REQUIRE(denied);
        CHECK(denied->code() == errc::permission_denied);
        CHECK(std::string(denied->what()).find("does not know the ACL token") != std::string::npos);
        texts.push_back(denied->what());

        client anonymous = make_client("");
        denied = co_await failure_of(anonymous.async_kv_get(p + "k"));
        REQUIRE(denied);
        CHECK(std::string(denied->what()).find("no token was sent") != std::string::npos);
        texts.push_back(denied->what());

        const auto left = co_await leftovers();
        CHECK(left.first == 0);
        CHECK(left.second == 0);
    };
    run(ioc, body(), 60s);
    for (const auto& text : texts) {
        INFO(text);
        CHECK(text.find(read_only) == std::string::npos);
        CHECK(text.find(nothing) == std::string::npos);
        CHECK(text.find(unknown) == std::string::npos);
        CHECK(text.find(acl_master_token) == std::string::npos);
    }
}

TEST_CASE_METHOD(acl_fixture,
                 "with ACLs on, a semaphore acquire whose token may not delete a crashed "
                 "contender's key still acquires",
                 "[acl][real-consul][semaphore]") {
    if (!consul)
        return;
    const std::string prefix = p + "sem";
    const std::string dead_key = prefix + "/" + random_uuid();
    // The documented policy, except that the crashed contender's key may only be read.
    const auto token =
        make_token(*consul, "conclave-no-sweep",
                   minimal_rules(p) + "key \"" + dead_key + "\" { policy = \"read\" }\n");
    auto body = [&]() -> asio::awaitable<void> {
        client root = admin();
        // A contender whose session ended: its key stays, with no session.
        auto dead = co_await root.async_session_create(
            session_options{}.with_ttl(15s).without_node_checks());
        auto contender = kv_put_options{}.with_flags(semaphore_flag_value).with_acquire(dead);
        co_await root.async_kv_put(dead_key, "", contender);
        co_await root.async_session_destroy(dead);

        client consul_app = make_client(token);
        auto s = co_await session::async_create(consul_app, quick(10s));
        semaphore sem{consul_app, prefix, 2};
        for (int round = 0; round < 2; ++round) {
            auto permit = co_await sem.async_acquire(s);
            CHECK(permit.held());
            co_await permit.async_release();
        }
        auto kept = co_await root.async_kv_get(dead_key);
        CHECK(kept.entry); // not deleted: the token may not
        co_await root.async_kv_delete(dead_key);
        co_await sem.async_destroy();
        co_await s.async_destroy();
        const auto left = co_await leftovers();
        CHECK(left.first == 0);
        CHECK(left.second == 0);
    };
    run(ioc, body(), 60s);
}
