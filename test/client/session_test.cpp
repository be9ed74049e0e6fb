// SPDX-License-Identifier: BSL-1.0
// Session endpoints and session-bound locks against the backend.
#include "client_fixture.hpp"
#include "support/catch.hpp"

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(client_fixture, "a session with explicit options is stored as asked",
                 "[client][session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto id = co_await new_session(session_options{}
                                           .with_name("explicit")
                                           .with_ttl(10s)
                                           .with_lock_delay(0ms)
                                           .with_behavior(session_behavior::delete_keys)
                                           .without_node_checks());
        CHECK(id.size() == 36);
        auto info = co_await consul.async_session_info(id);
        REQUIRE(info.session);
        CHECK(info.session->id == id);
        CHECK(info.session->name == "explicit");
        CHECK(info.session->lock_delay == 0ns);
        CHECK(info.session->behavior == session_behavior::delete_keys);
        CHECK(info.session->ttl == 10s);
        CHECK(info.session->ttl_text == "10s");
        CHECK(info.session->node_checks.empty());
        CHECK(info.meta.index >= info.session->create_index);
        CHECK(info.meta.known_leader);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a session with defaults gets serfHealth and 15 s lock-delay",
                 "[client][session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto id = co_await consul.async_session_create();
        sessions.push_back(id);
        auto info = co_await consul.async_session_info(id);
        REQUIRE(info.session);
        CHECK(info.session->lock_delay == 15s);
        CHECK(info.session->node_checks == std::vector<std::string>{"serfHealth"});
        CHECK(info.session->behavior == session_behavior::release);
        CHECK(info.session->ttl == 0ns);
        auto self = co_await consul.async_agent_self();
        CHECK(info.session->node == self.node_name);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "renew returns the entry, a destroyed session cannot be renewed",
                 "[client][session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto id = co_await new_session(session_options{}.with_ttl(10s));
        auto renewed = co_await consul.async_session_renew(id);
        CHECK(renewed.id == id);
        CHECK(renewed.ttl == 10s);
        const auto r0 = co_await consul.async_session_destroy(id);
        CHECK(r0);
        diagnostics diag;
        auto [ec, entry] =
            co_await consul.async_session_renew(id, write_options{}.with_diag(&diag), tuple_token);
        CHECK(ec == errc::session_invalidated);
        CHECK_FALSE(is_retryable(ec));
        CHECK(diag.http_status == 404);
        CHECK(diag.server_message == "Session id '" + id + "' not found");
        // Destroy is idempotent; info of an unknown session is empty, not an error.
        const auto r1 = co_await consul.async_session_destroy(id);
        CHECK(r1);
        auto info = co_await consul.async_session_info(id);
        CHECK_FALSE(info.session);
        CHECK(info.meta.index >= 1);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "list and node list the session", "[client][session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto id = co_await new_session(session_options{}.with_name("listed"));
        auto self = co_await consul.async_agent_self();
        auto all = co_await consul.async_session_list();
        auto on_node = co_await consul.async_session_node(self.node_name);
        auto has = [&](const session_list_result& r) {
            return std::any_of(r.sessions.begin(), r.sessions.end(),
                               [&](const session_entry& s) { return s.id == id; });
        };
        CHECK(has(all));
        CHECK(has(on_node));
        CHECK(all.meta.index >= 1);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "invalid session options are rejected with Consul's text",
                 "[client][session]") {
    auto body = [&]() -> asio::awaitable<void> {
        diagnostics diag;
        auto [ec, id] = co_await consul.async_session_create(
            session_options{}.with_ttl(100h).without_node_checks().with_diag(&diag), tuple_token);
        CHECK(ec == errc::server_error);
        CHECK(diag.http_status == 500);
        CHECK(diag.server_message.find("Invalid Session TTL") != std::string::npos);
        std::vector<std::string> unknown_check{"no-such-check"};
        auto [ec2, id2] = co_await consul.async_session_create(
            session_options{}.with_node_checks(unknown_check).with_diag(&diag), tuple_token);
        CHECK(ec2 == errc::check_critical); // final: not server_error, which is retried
        CHECK(diag.server_message.find("Missing check 'no-such-check' registration") !=
              std::string::npos);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a TTL session expires when not renewed, not before its TTL",
                 "[client][session][ttl]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = std::chrono::steady_clock::now();
        auto id = co_await new_session(session_options{}.with_ttl(1s));
        auto info = co_await consul.async_session_info(id);
        REQUIRE(info.session);
        // Watch the session with blocking reads until it disappears.
        auto idx = info.meta.index;
        for (;;) {
            auto r = co_await consul.async_session_info(
                id, query_options{}.with_index(idx).with_wait(5s));
            if (!r.session)
                break;
            idx = r.meta.index;
            REQUIRE(std::chrono::steady_clock::now() - start < 10s);
        }
        const auto elapsed = std::chrono::steady_clock::now() - start;
        CHECK(elapsed >= 1s);         // never before TTL
        CHECK(elapsed < 2s + 1500ms); // Consul: about 2 x TTL
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "acquire, contention, release and LockIndex",
                 "[client][session][lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s1 = co_await new_session(session_options{}.with_lock_delay(0ms));
        auto s2 = co_await new_session(session_options{}.with_lock_delay(0ms));
        const auto r2 =
            co_await consul.async_kv_put(p + "l", "one", kv_put_options{}.with_acquire(s1));
        CHECK(r2);
        auto held = co_await consul.async_kv_get(p + "l");
        REQUIRE(held.entry);
        CHECK(held.entry->session == s1);
        CHECK(held.entry->lock_index == 1);
        const auto r3 =
            co_await consul.async_kv_put(p + "l", "two", kv_put_options{}.with_acquire(s2));
        CHECK_FALSE(r3);
        const auto r4 =
            co_await consul.async_kv_put(p + "l", "", kv_put_options{}.with_release(s2));
        CHECK_FALSE(r4);
        const auto r5 =
            co_await consul.async_kv_put(p + "l", "one", kv_put_options{}.with_release(s1));
        CHECK(r5);
        auto released = co_await consul.async_kv_get(p + "l");
        REQUIRE(released.entry);
        CHECK(released.entry->session.empty());
        CHECK(released.entry->lock_index == 1);
        const auto r6 =
            co_await consul.async_kv_put(p + "l", "two", kv_put_options{}.with_acquire(s2));
        CHECK(r6);
        auto again = co_await consul.async_kv_get(p + "l");
        CHECK(again.entry->lock_index == 2);
        CHECK(again.entry->session == s2);

        diagnostics diag;
        auto [ec, ok] = co_await consul.async_kv_put(
            p + "l2", "", kv_put_options{}.with_acquire(random_uuid()).with_diag(&diag),
            tuple_token);
        CHECK(ec == errc::server_error);
        CHECK(diag.server_message.find("invalid session") != std::string::npos);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "destroying a holder arms its lock-delay",
                 "[client][session][lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s1 = co_await new_session(session_options{}.with_lock_delay(1s));
        auto s2 = co_await new_session(session_options{}.with_lock_delay(0ms));
        const auto r7 =
            co_await consul.async_kv_put(p + "ld", "v", kv_put_options{}.with_acquire(s1));
        CHECK(r7);
        co_await consul.async_session_destroy(s1);
        const auto destroyed = std::chrono::steady_clock::now();
        auto after = co_await consul.async_kv_get(p + "ld");
        REQUIRE(after.entry);
        CHECK(after.entry->session.empty()); // release behaviour: key kept, unlocked
        const auto r8 =
            co_await consul.async_kv_put(p + "ld", "v", kv_put_options{}.with_acquire(s2));
        CHECK_FALSE(r8);
        // Reads and plain writes are not affected by the lock-delay.
        const auto r9 = co_await consul.async_kv_put(p + "ld", "plain");
        CHECK(r9);
        bool acquired = false;
        while (!acquired && std::chrono::steady_clock::now() - destroyed < 5s) {
            co_await sleep(100ms);
            acquired =
                co_await consul.async_kv_put(p + "ld", "v", kv_put_options{}.with_acquire(s2));
        }
        CHECK(acquired);
        CHECK(std::chrono::steady_clock::now() - destroyed >= 900ms);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a delete-behaviour session deletes its keys when destroyed",
                 "[client][session][lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await new_session(
            session_options{}.with_lock_delay(0ms).with_behavior(session_behavior::delete_keys));
        const auto r10 =
            co_await consul.async_kv_put(p + "eph", "v", kv_put_options{}.with_acquire(s));
        CHECK(r10);
        co_await consul.async_session_destroy(s);
        auto r11 = co_await consul.async_kv_get(p + "eph");
        CHECK_FALSE(r11.entry);
    };
    run(ioc, body());
}
