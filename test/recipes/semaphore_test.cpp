// SPDX-License-Identifier: BSL-1.0
// conclave::semaphore: Go api.Semaphore layout, limits, pruning, conflicts, cleanup.
#include "recipes_fixture.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

TEST_CASE_METHOD(recipes_fixture, "a permit is written exactly as Go's api.Semaphore writes it",
                 "[semaphore][interop]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "render", 2, semaphore_options{}.with_value("w1")};
        auto permit_ = co_await sem.async_acquire(s);
        CHECK(permit_.held());
        auto contender = co_await consul.async_kv_get(p + "render/" + s.id());
        REQUIRE(contender.entry);
        CHECK(contender.entry->session == s.id());
        CHECK(contender.entry->flags == semaphore_flag_value);
        CHECK(contender.entry->value == "w1");
        auto lock_key = co_await consul.async_kv_get(p + "render/.lock");
        REQUIRE(lock_key.entry);
        CHECK(lock_key.entry->flags == semaphore_flag_value);
        CHECK(lock_key.entry->session.empty());
        CHECK(lock_key.entry->value == R"({"Limit":2,"Holders":{")" + s.id() + R"(":true}})");
        CHECK(permit_.token().modify_index == lock_key.entry->modify_index);

        co_await permit_.async_release();
        CHECK_FALSE(permit_.held());
        auto gone = co_await consul.async_kv_get(p + "render/" + s.id());
        CHECK_FALSE(gone.entry); // contender key deleted
        auto after = co_await consul.async_kv_get(p + "render/.lock");
        REQUIRE(after.entry);
        CHECK(after.entry->value == R"({"Limit":2,"Holders":{}})"); // never "Holders":null
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a .lock written by a Go client is honoured",
                 "[semaphore][interop]") {
    auto body = [&]() -> asio::awaitable<void> {
        // A Go holder with its contender key, listed in the holder set (limit 1: full).
        auto go = co_await consul.async_session_create(
            session_options{}.with_ttl(15s).without_node_checks());
        co_await consul.async_kv_put(
            p + "jobs/" + go, "go",
            kv_put_options{}.with_acquire(go).with_flags(semaphore_flag_value));
        co_await consul.async_kv_put(p + "jobs/.lock",
                                     R"({"Limit":1,"Holders":{")" + go + R"(":true}})",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        auto s = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "jobs", 1};
        auto none = co_await sem.async_try_acquire(s, 300ms);
        CHECK_FALSE(none); // the Go holder is alive: no slot
        // The Go holder dies: its contender key goes, so it is pruned as dead.
        co_await consul.async_session_destroy(go);
        co_await consul.async_kv_delete(p + "jobs/" + go);
        auto got = co_await sem.async_try_acquire(s, 2s);
        REQUIRE(got);
        auto lock_key = co_await consul.async_kv_get(p + "jobs/.lock");
        REQUIRE(lock_key.entry);
        CHECK(lock_key.entry->value == R"({"Limit":1,"Holders":{")" + s.id() + R"(":true}})");
        co_await got->async_release();
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "limit disagreement and foreign flags are errors that clean up",
                 "[semaphore]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        co_await consul.async_kv_put(p + "a/.lock", R"({"Limit":3,"Holders":{}})",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        diagnostics diag;
        semaphore two{consul, p + "a", 2, semaphore_options{}.with_diag(&diag)};
        auto [ec, none] = co_await two.async_acquire(s, asio::as_tuple(asio::deferred));
        CHECK(ec == errc::limit_conflict);
        CHECK(diag.client_message == "semaphore limit conflict (lock: 3, local: 2)");
        auto contender_a = co_await consul.async_kv_get(p + "a/" + s.id());
        CHECK_FALSE(contender_a.entry);

        // With the default token, the thrown error says it, from async_acquire and from
        // async_try_acquire alike.
        semaphore plain{consul, p + "a", 2};
        auto said = [](auto op) -> asio::awaitable<std::string> {
            try {
                co_await std::move(op);
            } catch (const conclave::error& e) {
                CHECK(e.code() == errc::limit_conflict);
                co_return e.what();
            }
            co_return "no error";
        };
        const auto acquire_text = co_await said(plain.async_acquire(s));
        CHECK_THAT(acquire_text, contains_text("semaphore limit conflict (lock: 3, local: 2)"));
        const auto try_text = co_await said(plain.async_try_acquire(s, 1s));
        CHECK_THAT(try_text, contains_text("semaphore limit conflict (lock: 3, local: 2)"));
        auto contender_after = co_await consul.async_kv_get(p + "a/" + s.id());
        CHECK_FALSE(contender_after.entry);

        co_await consul.async_kv_put(p + "b/.lock", "",
                                     kv_put_options{}.with_flags(lock_flag_value));
        semaphore on_lock{consul, p + "b", 2};
        auto [ec2, none2] = co_await on_lock.async_acquire(s, asio::as_tuple(asio::deferred));
        CHECK(ec2 == errc::conflict);
        auto contender_b = co_await consul.async_kv_get(p + "b/" + s.id());
        CHECK_FALSE(contender_b.entry);

        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a semaphore of limit K never has more than K holders",
                 "[semaphore][stress]") {
    constexpr unsigned limit = 3;
    constexpr unsigned contenders = 4 * limit;
    constexpr unsigned rounds = 3;
    unsigned inside = 0, max_inside = 0, done = 0;
    auto worker = [&](unsigned id) -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(3s));
        semaphore sem{consul, p + "pool", limit};
        for (unsigned r = 0; r < rounds; ++r) {
            auto permit_ = co_await sem.async_acquire(s);
            ++inside;
            max_inside = std::max(max_inside, inside);
            co_await sleep(std::chrono::milliseconds{5 + (id * 7) % 20});
            --inside;
            co_await permit_.async_release();
        }
        co_await s.async_destroy();
        ++done;
    };
    for (unsigned i = 0; i < contenders; ++i)
        asio::co_spawn(ioc, worker(i), [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    run_until(
        ioc, [&] { return done == contenders; }, 60s);
    CHECK(max_inside <= limit);
    CHECK(max_inside >= 2); // it really ran concurrently
    auto cleanup = [&]() -> asio::awaitable<void> {
        semaphore sem{consul, p + "pool", limit};
        co_await sem.async_destroy();
    };
    run(ioc, cleanup());
}

TEST_CASE_METHOD(recipes_fixture, "cancelled or timed-out waiters leave no contender key",
                 "[semaphore][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "one", 1};
        auto held = co_await sem.async_acquire(a);
        auto none = co_await sem.async_try_acquire(b, 200ms);
        CHECK_FALSE(none);
        auto after_timeout = co_await consul.async_kv_get(p + "one/" + b.id());
        CHECK_FALSE(after_timeout.entry);
        auto outcome = co_await (sem.async_acquire(b, awaitable_tuple) || sleep(200ms));
        CHECK(outcome.index() == 1);
        auto after_cancel = co_await consul.async_kv_get(p + "one/" + b.id());
        CHECK_FALSE(after_cancel.entry);
        auto keys = co_await consul.async_kv_keys(p + "one/");
        CHECK(keys.keys.size() == 2); // .lock and a's contender key only
        co_await held.async_release();
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "cancelling a semaphore acquire at any point never reports success and leaves "
                 "no trace",
                 "[semaphore][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (auto delay : {0ms, 1ms, 2ms, 3ms, 5ms, 8ms, 13ms, 21ms, 50ms}) {
            auto s = co_await session::async_create(consul, quick());
            semaphore sem{consul, p + "c" + std::to_string(delay.count()), 1};
            cancel_after cancel{ioc.get_executor(), delay};
            auto [ec, got] = co_await sem.async_acquire(s, cancel.bind(awaitable_tuple));
            cancel.disarm();
            if (!ec) {
                // It completed before the cancellation: a real permit.
                CHECK(got.held());
                co_await got.async_release();
            } else {
                CHECK(ec == asio::error::operation_aborted);
                CHECK_FALSE(got.valid());
            }
            // Neither a contender key nor a holder entry is left for this session.
            auto contender = co_await consul.async_kv_get(sem.prefix() + "/" + s.id());
            CHECK_FALSE(contender.entry);
            auto record = co_await consul.async_kv_get(sem.prefix() + "/.lock");
            if (record.entry)
                CHECK(record.entry->value.find(s.id()) == std::string::npos);
            co_await sem.async_destroy();
            co_await s.async_destroy();
        }
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a permit whose contender key vanishes is reported lost",
                 "[semaphore][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "x", 2};
        auto permit_ = co_await sem.async_acquire(s);
        auto remove = [&]() -> asio::awaitable<void> {
            co_await sleep(100ms);
            co_await consul.async_kv_delete(p + "x/" + s.id());
        };
        auto lost = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await permit_.async_wait_lost(awaitable_tuple);
            co_return ec;
        };
        auto ec = co_await (lost() && remove());
        CHECK(ec == errc::lock_lost);
        CHECK_FALSE(permit_.held());
        co_await permit_.async_release(); // still listed in .lock: release removes it
        auto lock_key = co_await consul.async_kv_get(p + "x/.lock");
        REQUIRE(lock_key.entry);
        CHECK(lock_key.entry->value == R"({"Limit":2,"Holders":{}})");
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a semaphore acquire rides out 500s on its first write, as during a leader "
                 "election",
                 "[semaphore][faults]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        semaphore sem{consul, p + "jobs", 2};
        // A Consul electing a leader answers writes with 500s ("No cluster leader"); the
        // contender key's write is tried again, as the lock's transactions are.
        server.inject_errors("/v1/kv/" + p + "jobs/" + s.id(), 3, 500);
        auto got = co_await sem.async_acquire(s);
        CHECK(got.held());
        auto key = co_await consul.async_kv_get(p + "jobs/" + s.id());
        REQUIRE(key.entry);
        CHECK(key.entry->session == s.id());
        co_await got.async_release();
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a semaphore acquire with a session Consul no longer knows ends with "
                 "session_invalidated and leaves nothing",
                 "[semaphore]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        co_await consul.async_session_destroy(s.id()); // behind the session object's back
        diagnostics diag;
        semaphore sem{consul, p + "jobs", 2, semaphore_options{}.with_diag(&diag)};
        auto [ec, got] = co_await sem.async_acquire(s, awaitable_tuple);
        CHECK(ec == errc::session_invalidated); // Consul's 500 "invalid session", not retried
        CHECK_FALSE(got.valid());
        CHECK(diag.server_message.find("invalid session") != std::string::npos);
        auto keys = co_await consul.async_kv_keys(p + "jobs/");
        CHECK(keys.keys.empty());
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "the contender keys of crashed holders are deleted by the next acquire",
                 "[semaphore][sweep]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string pre = p + "crash";
        // Another process's holders (conclave) and a Go-style waiter crash: their sessions
        // end on Consul (destroyed here, as a TTL expiry or an invalidation ends them), which
        // releases their contender keys (behavior "release", the default) and keeps them.
        client other{ioc.get_executor(), server.client_config()};
        semaphore theirs{other, pre, 2};
        auto a = co_await session::async_create(other, quick(5s));
        auto b = co_await session::async_create(other, quick(5s));
        auto held_a = co_await theirs.async_acquire(a);
        auto held_b = co_await theirs.async_acquire(b);
        const auto raw = session_options{}.with_ttl(15s).without_node_checks();
        auto go_waiter = co_await consul.async_session_create(raw);
        auto go_live = co_await consul.async_session_create(raw);
        const auto go_style = kv_put_options{}.with_flags(semaphore_flag_value);
        for (const auto& id : {go_waiter, go_live})
            co_await consul.async_kv_put(pre + "/" + id, "go",
                                         kv_put_options{go_style}.with_acquire(id));
        // Keys that are no dead contender's: never deleted.
        const std::string user_key = pre + "/00000000-0000-4000-8000-000000000000";
        co_await consul.async_kv_put(user_key, "flags 0, named like a session");
        co_await consul.async_kv_put(pre + "/notes", "semaphore flags, not a session's name",
                                     go_style);
        for (const auto& id : {a.id(), b.id(), go_waiter})
            co_await consul.async_session_destroy(id);
        co_await held_a.async_wait_lost(awaitable_tuple); // their keys lost their session
        co_await held_b.async_wait_lost(awaitable_tuple);

        auto before = co_await consul.async_kv_list(pre + "/");
        std::size_t released = 0;
        for (const auto& e : before.entries)
            released += e.session.empty() && e.flags == semaphore_flag_value &&
                        e.key != pre + "/.lock" && e.key != pre + "/notes";
        CHECK(released == 3); // kept by Consul, with no session: Go's api.Semaphore leaves them

        // A live contender's acquire deletes them in its own transaction on `.lock`.
        auto s = co_await session::async_create(consul, quick(5s));
        semaphore ours{consul, pre, 2};
        auto got = co_await ours.async_acquire(s);
        CHECK(got.held());
        auto after = co_await consul.async_kv_keys(pre + "/");
        std::vector<std::string> expected{pre + "/.lock", pre + "/" + s.id(), pre + "/" + go_live,
                                          user_key, pre + "/notes"};
        std::sort(expected.begin(), expected.end());
        CHECK(after.keys == expected);
        auto lock_key = co_await consul.async_kv_get(pre + "/.lock");
        REQUIRE(lock_key.entry);
        CHECK(lock_key.entry->value == R"({"Limit":2,"Holders":{")" + s.id() + R"(":true}})");

        co_await got.async_release();
        co_await consul.async_session_destroy(go_live);
        co_await consul.async_kv_delete(pre + "/", kv_delete_options{}.with_recurse());
        co_await s.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}
