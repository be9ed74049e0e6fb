// SPDX-License-Identifier: BSL-1.0
// conclave::lock: acquire/release, fencing tokens, contention, conflicts, loss detection,
// lock-delay, cancellation, and interop with Go api.Lock's key layout.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>

#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;
using steady = std::chrono::steady_clock;

TEST_CASE_METHOD(recipes_fixture, "acquire, token, held, release and destroy", "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "job", lock_options{}.with_value("worker-1")};
        auto lease = co_await mutex.async_acquire(s);
        const auto t = lease.token();
        CHECK(t.key == p + "job");
        CHECK(t.session == s.id());
        CHECK(t.lock_index == 1);
        CHECK(t.modify_index > 0);
        CHECK(lease.held() == t);
        auto key = co_await consul.async_kv_get(p + "job");
        REQUIRE(key.entry);
        CHECK(key.entry->flags == lock_flag_value);
        CHECK(key.entry->session == s.id());
        CHECK(key.entry->value == "worker-1");
        CHECK(key.entry->modify_index == t.modify_index);

        co_await lease.async_release();
        CHECK_FALSE(lease.held());
        auto after = co_await consul.async_kv_get(p + "job");
        REQUIRE(after.entry);
        CHECK(after.entry->session.empty());
        CHECK(after.entry->flags == lock_flag_value); // kept for Go peers
        CHECK(after.entry->value == "worker-1");
        auto [ec] = co_await lease.async_wait_lost(asio::as_tuple(asio::deferred));
        CHECK(ec == errc::lock_lost);
        co_await lease.async_release(); // retry-safe

        co_await mutex.async_destroy();
        auto gone = co_await consul.async_kv_get(p + "job");
        CHECK_FALSE(gone.entry);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a later grant has a larger token, the holder's session is no second holder",
                 "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto first = co_await mutex_a.async_acquire(a);
        // Consul would let session a acquire its own key again: the lock does not.
        auto again = co_await mutex_a.async_try_acquire(a, 0ms);
        CHECK_FALSE(again);
        CHECK(first.held());
        co_await first.async_release();
        auto second = co_await mutex_b.async_acquire(b);
        CHECK(second.token().modify_index > first.token().modify_index);
        CHECK(second.token().lock_index == first.token().lock_index + 1);
        co_await second.async_release();
        co_await mutex_b.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a waiter gets the lock when the holder releases", "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto held = co_await mutex_a.async_acquire(a);
        steady::time_point released_at{};
        auto holder = [&]() -> asio::awaitable<void> {
            co_await sleep(200ms);
            released_at = steady::now();
            co_await held.async_release();
        };
        auto waiter = [&]() -> asio::awaitable<lock_lease> {
            co_return co_await mutex_b.async_acquire(b, asio::use_awaitable);
        };
        auto got = co_await (waiter() && holder());
        CHECK(got.token().session == b.id());
        CHECK(steady::now() >= released_at);
        CHECK(steady::now() - released_at < 1s);
        co_await got.async_release();
        co_await mutex_b.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "try_acquire returns empty after one budget", "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "l"};
        auto held = co_await mutex.async_acquire(a);
        lock other{consul, p + "l"};
        const auto start = steady::now();
        auto maybe = co_await other.async_try_acquire(b, 400ms);
        const auto elapsed = steady::now() - start;
        CHECK_FALSE(maybe);
        CHECK(elapsed >= 400ms);
        CHECK(elapsed < 400ms + 300ms);
        co_await held.async_release();
        auto now = co_await other.async_try_acquire(b, 400ms);
        REQUIRE(now);
        co_await now->async_release();
        co_await mutex.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "try_acquire with a budget of 0 makes exactly one attempt",
                 "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "z"};
        auto first = co_await mutex.async_try_acquire(a, 0ms); // free: taken
        REQUIRE(first);
        CHECK(first->held());
        lock other{consul, p + "z"};
        auto second = co_await other.async_try_acquire(b, 0ms); // held: empty, at once
        CHECK_FALSE(second);
        co_await first->async_release();
        auto third = co_await other.async_try_acquire(b, 0ms); // free again
        REQUIRE(third);
        co_await third->async_release();
        co_await mutex.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an uncontended acquire and release cost one transaction each",
                 "[lock][cheap]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "cheap"};
        auto warm = co_await mutex.async_acquire(s); // the first look at the key is a read
        co_await warm.async_release();
        server.reset_stats();
        constexpr int cycles = 10;
        for (int i = 0; i < cycles; ++i) {
            auto lease = co_await mutex.async_acquire(s);
            CHECK(lease.token().lock_index == static_cast<std::uint64_t>(i + 2));
            co_await lease.async_release();
        }
        const auto stats = server.stats();
        const auto txns =
            stats.by_endpoint.count("PUT /v1/txn") ? stats.by_endpoint.at("PUT /v1/txn") : 0;
        CHECK(txns == 2 * cycles); // acquire (with its read-back) and release: one each
        // Reads are the key's shared blocking query, off the critical path: at most one
        // per cycle.
        CHECK(stats.requests <= 3 * cycles);
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a lease watched for a short section costs no query",
                 "[lock][cheap]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "short"};
        auto warm = co_await mutex.async_acquire(s);
        co_await warm.async_release();
        server.reset_stats();
        constexpr int cycles = 10;
        for (int i = 0; i < cycles; ++i) {
            auto lease = co_await mutex.async_acquire(s);
            // A section of one loop turn, watched as holders do.
            auto section = [&]() -> asio::awaitable<void> {
                co_await asio::post(ioc, asio::use_awaitable);
            };
            auto watched = co_await (lease.async_wait_lost(awaitable_tuple) || section());
            CHECK(watched.index() == 1);
            co_await lease.async_release();
        }
        const auto stats = server.stats();
        CHECK(count(stats, "PUT /v1/txn") == 2 * cycles);
        // Released before the monitor's query was due: no query, no wake-up (was one per
        // cycle). Two allow for a loaded machine stretching a loop turn past the delay.
        CHECK(count(stats, "GET /v1/kv") <= 2);
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a cancelled wait for loss says so and the lease stays held",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "watched"};
        auto lease = co_await mutex.async_acquire(s);
        for (const auto delay : {0ms, 20ms}) { // before and after the monitor's query starts
            cancel_after stop{ioc.get_executor(), delay};
            auto [ec] = co_await lease.async_wait_lost(stop.bind(awaitable_tuple));
            stop.disarm();
            CHECK(ec == asio::error::operation_aborted);
            CHECK(lease.held());
        }
        co_await lease.async_release();
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a key with other flags is a conflict and is left alone",
                 "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        co_await consul.async_kv_put(p + "sem/.lock", R"({"Limit":2,"Holders":{}})",
                                     kv_put_options{}.with_flags(semaphore_flag_value));
        co_await consul.async_kv_put(p + "plain", "data"); // flags 0: someone else's key
        lock on_semaphore{consul, p + "sem/.lock"};
        lock on_plain{consul, p + "plain"};
        auto [ec1, l1] = co_await on_semaphore.async_acquire(s, asio::as_tuple(asio::deferred));
        auto [ec2, l2] = co_await on_plain.async_acquire(s, asio::as_tuple(asio::deferred));
        CHECK(ec1 == errc::conflict);
        CHECK(ec2 == errc::conflict);
        auto sem = co_await consul.async_kv_get(p + "sem/.lock");
        auto plain = co_await consul.async_kv_get(p + "plain");
        REQUIRE(sem.entry);
        REQUIRE(plain.entry);
        CHECK(sem.entry->flags == semaphore_flag_value);
        CHECK(sem.entry->session.empty());
        CHECK(plain.entry->value == "data");
        CHECK(plain.entry->session.empty());
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a key written as Go's api.Lock writes it is honoured both ways",
                 "[lock][interop]") {
    auto body = [&]() -> asio::awaitable<void> {
        // A Go holder: its own session, PUT ?acquire=<s>&flags=3304740253564472344.
        auto go_session = co_await consul.async_session_create(
            session_options{}.with_name("Consul API Lock").with_ttl(15s).without_node_checks());
        const bool go_got = co_await consul.async_kv_put(
            p + "shared", "go-value",
            kv_put_options{}.with_acquire(go_session).with_flags(lock_flag_value));
        CHECK(go_got);
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "shared"};
        auto maybe = co_await mutex.async_try_acquire(s, 200ms);
        CHECK_FALSE(maybe); // held by the Go client: we wait, no conflict
        // Go's Unlock: PUT ?release=<s>&flags=... with its value.
        co_await consul.async_kv_put(
            p + "shared", "go-value",
            kv_put_options{}.with_release(go_session).with_flags(lock_flag_value));
        auto lease = co_await mutex.async_acquire(s);
        // What a Go api.Lock would read: our session, its flag value, LockIndex bumped.
        auto key = co_await consul.async_kv_get(p + "shared");
        REQUIRE(key.entry);
        CHECK(key.entry->flags == lock_flag_value);
        CHECK(key.entry->session == s.id());
        CHECK(key.entry->lock_index == 2);
        // A Go contender's acquire fails while we hold it.
        const bool go_again = co_await consul.async_kv_put(
            p + "shared", "go-value",
            kv_put_options{}.with_acquire(go_session).with_flags(lock_flag_value));
        CHECK_FALSE(go_again);
        co_await lease.async_release();
        co_await mutex.async_destroy();
        co_await consul.async_session_destroy(go_session);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

// async_wait_lost is a hand-written operation (no coroutine): on a grant already lost it
// completes at once, but never inside the initiating call (Asio's rule), and its handler
// runs once.
TEST_CASE_METHOD(recipes_fixture,
                 "waiting for a released lease's loss completes after the call returns",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "k"};
        auto lease = co_await mutex.async_acquire(s);
        co_await lease.async_release();
        countdown finished{ioc.get_executor(), 1};
        int calls = 0;
        error_code got;
        lease.async_wait_lost([&](error_code ec) {
            ++calls;
            got = ec;
            finished.count_down();
        });
        CHECK(calls == 0); // not from inside async_wait_lost
        co_await finished.wait();
        CHECK(calls == 1);
        CHECK(got == errc::lock_lost);
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "forced session invalidation fires the lost signal within 1 s",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        auto expire = [&]() -> asio::awaitable<steady::time_point> {
            co_await sleep(100ms);
            server.expire_session(s.id());
            co_return steady::now();
        };
        auto lost = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await lease.async_wait_lost(awaitable_tuple);
            co_return ec;
        };
        auto [ec, at] = co_await (lost() && expire());
        CHECK((ec == errc::lock_lost || ec == errc::session_invalidated));
        CHECK(steady::now() - at < 1s);
        CHECK_FALSE(lease.held());
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "deleting the key fires the lost signal within 1 s",
                 "[lock][lost]") {
    // At once is before the monitor's query starts (1 ms after it): still seen.
    const auto delay = std::chrono::milliseconds{GENERATE(0, 100)};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        auto remove = [&]() -> asio::awaitable<steady::time_point> {
            if (delay.count() > 0)
                co_await sleep(delay);
            co_await consul.async_kv_delete(p + "l");
            co_return steady::now();
        };
        auto lost = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await lease.async_wait_lost(awaitable_tuple);
            co_return ec;
        };
        auto [ec, at] = co_await (lost() && remove());
        CHECK(ec == errc::lock_lost);
        CHECK(steady::now() - at < 1s);
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "monitoring survives injected 500s up to its retry budget",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(5s));
        lock mutex{consul, p + "l", lock_options{}.with_monitor_retries(3, 50ms)};
        auto lease = co_await mutex.async_acquire(s);
        // The monitor's blocking read in flight is not affected by injected errors: a
        // write by the holder itself (through /v1/txn, not /v1/kv) makes it return, and the
        // reads after it fail.
        int touches = 0; // a different value each time: an identical write changes nothing
        auto touch = [&]() -> asio::awaitable<void> {
            std::vector<txn_op> ops;
            ops.push_back(
                txn_op::lock(mutex.key(), s.id(), std::to_string(++touches), lock_flag_value));
            co_await consul.async_txn(std::move(ops));
        };
        // Within the budget: 3 failed reads are retried, the lease stays.
        server.inject_errors("/v1/kv/", 3, 500);
        co_await touch();
        auto survived = co_await (lease.async_wait_lost(awaitable_tuple) || sleep(600ms));
        CHECK(survived.index() == 1);
        CHECK(lease.held());
        // Beyond it (4 failures in a row with a budget of 3): reported as lost.
        server.inject_errors("/v1/kv/", 4, 500);
        co_await touch();
        const auto start = steady::now();
        auto [ec] = co_await lease.async_wait_lost(awaitable_tuple);
        CHECK(ec == errc::lock_lost);
        CHECK(steady::now() - start < 2s);
        CHECK_FALSE(lease.held());
        // Consul still has it under our session: release works (and is needed) after loss.
        co_await lease.async_release();
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a holder whose renewals are blocked learns it lost the lock before anyone "
                 "else can acquire it",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(400ms));
        auto b = co_await session::async_create(consul, quick(2s));
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto lease = co_await mutex_a.async_acquire(a);
        // A's renewals fail from now on; B renews normally and waits for the lock.
        server.inject_errors("/v1/session/renew/" + a.id(), 1000, 500);
        steady::time_point a_lost{}, b_acquired{};
        auto holder = [&]() -> asio::awaitable<void> {
            auto run_a = [&]() -> asio::awaitable<void> { co_await a.async_run(awaitable_tuple); };
            auto watch_a = [&]() -> asio::awaitable<void> {
                co_await lease.async_wait_lost(awaitable_tuple);
                a_lost = steady::now();
            };
            co_await (run_a() && watch_a());
        };
        auto contender = [&]() -> asio::awaitable<void> {
            auto run_b = [&]() -> asio::awaitable<void> { co_await b.async_run(awaitable_tuple); };
            auto take = [&]() -> asio::awaitable<void> {
                auto got = co_await mutex_b.async_acquire(b, asio::use_awaitable);
                b_acquired = steady::now();
                co_await got.async_release(asio::use_awaitable);
            };
            co_await (take() || run_b());
        };
        co_await (holder() && contender());
        REQUIRE(a_lost != steady::time_point{});
        REQUIRE(b_acquired != steady::time_point{});
        CHECK(a_lost < b_acquired);
        CHECK_FALSE(lease.held());
        co_await mutex_b.async_destroy();
        co_await b.async_destroy();
        co_await a.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "after a lock-delay refusal the waiter retries soon, not after 5 s",
                 "[lock][lock-delay]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(
            consul, session_config{}.with_ttl(10s).with_lock_delay(500ms));
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto lease = co_await mutex_a.async_acquire(a);
        server.expire_session(a.id()); // arms a 500 ms lock-delay
        const auto expired = steady::now();
        const auto before = server.stats().requests;
        auto got = co_await mutex_b.async_acquire(b);
        const auto waited = steady::now() - expired;
        CHECK(waited >= 450ms);
        CHECK(waited < 500ms + 1200ms); // the remaining delay, plus at most one capped wait
        CHECK(server.stats().requests - before < 20); // backoff, not a busy loop
        co_await got.async_release();
        co_await mutex_b.async_destroy();
        co_await b.async_destroy();
        co_await a.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "cancelling an acquire at any point never reports success and leaves the lock "
                 "free",
                 "[lock][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (auto delay : {0ms, 1ms, 2ms, 3ms, 5ms, 8ms, 13ms, 50ms}) {
            auto s = co_await session::async_create(consul, quick());
            lock mutex{consul, p + "c" + std::to_string(delay.count())};
            cancel_after cancel{ioc.get_executor(), delay};
            auto [ec, lease] = co_await mutex.async_acquire(s, cancel.bind(awaitable_tuple));
            cancel.disarm();
            if (!ec) {
                // It completed before the cancellation: a real, held lease.
                CHECK(lease.held());
                co_await lease.async_release();
            } else {
                CHECK(ec == asio::error::operation_aborted);
                CHECK_FALSE(lease.valid());
            }
            auto key = co_await consul.async_kv_get(mutex.key());
            if (key.entry)
                CHECK(key.entry->session.empty()); // never left held by the cancelled acquire
            co_await mutex.async_destroy();
            co_await s.async_destroy();
        }
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "cancelling a waiting acquire leaves the holder untouched",
                 "[lock][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto held = co_await mutex_a.async_acquire(a);
        auto outcome = co_await (mutex_b.async_acquire(b, awaitable_tuple) || sleep(200ms));
        CHECK(outcome.index() == 1);
        CHECK(held.held());
        auto key = co_await consul.async_kv_get(p + "l");
        REQUIRE(key.entry);
        CHECK(key.entry->session == a.id());
        co_await held.async_release();
        co_await mutex_a.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "held() turns false by itself once the session's local deadline passes",
                 "[lock][lost]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(300ms)); // never renewed
        lock mutex{consul, p + "l"};
        auto lease = co_await mutex.async_acquire(s);
        CHECK(lease.held());
        co_await sleep(350ms);
        CHECK_FALSE(lease.held());
        auto [ec] = co_await lease.async_wait_lost(asio::as_tuple(asio::deferred));
        CHECK(ec == errc::session_expired); // (not invalidated: Consul may still have it)
        co_await lease.async_release();     // Consul still holds it for up to 2 x TTL
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "an acquire with a lost session fails with session_invalidated",
                 "[lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        co_await s.async_destroy();
        lock mutex{consul, p + "l"};
        auto [ec, lease] = co_await mutex.async_acquire(s, asio::as_tuple(asio::deferred));
        CHECK(ec == errc::session_invalidated);
        CHECK_FALSE(lease.valid());
        auto key = co_await consul.async_kv_get(p + "l");
        CHECK_FALSE(key.entry);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "a guarded write applies only while the lock is still ours",
                 "[lock][fencing]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto lease_a = co_await mutex_a.async_acquire(a);
        std::vector<txn_op> write1{txn_op::set(p + "data", "by a")};
        auto ok = co_await lease_a.async_guarded_txn(std::move(write1));
        CHECK(ok.committed);
        REQUIRE(ok.results.size() == 1);
        CHECK(ok.results[0].key == p + "data");

        // A stalls; the lock changes hands behind its back (an operator releases it).
        co_await consul.async_kv_put(
            p + "l", "", kv_put_options{}.with_release(a.id()).with_flags(lock_flag_value));
        auto lease_b = co_await mutex_b.async_acquire(b);
        std::vector<txn_op> write2{txn_op::set(p + "data", "by a, too late")};
        auto [ec, refused] =
            co_await lease_a.async_guarded_txn(std::move(write2), asio::as_tuple(asio::deferred));
        CHECK(ec == errc::lock_lost);
        CHECK_FALSE(refused.committed);
        CHECK_FALSE(lease_a.held());
        auto data = co_await consul.async_kv_get(p + "data");
        REQUIRE(data.entry);
        CHECK(data.entry->value == "by a");

        // The new holder's own failing op is reported at its position, not as a loss.
        std::vector<txn_op> write3{txn_op::set(p + "data", "by b"),
                                   txn_op::cas(p + "data", "x", 1)};
        auto mixed = co_await lease_b.async_guarded_txn(std::move(write3));
        CHECK_FALSE(mixed.committed);
        REQUIRE(mixed.errors.size() == 1);
        CHECK(mixed.errors[0].op_index == 1);
        CHECK(lease_b.held());

        co_await lease_b.async_release();
        co_await mutex_b.async_destroy();
        co_await consul.async_kv_delete(p + "data");
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

// Two coroutines sharing one session must not both hold the lock: Consul grants a session a
// key it already holds, so the exclusion between them is the library's.
TEST_CASE_METHOD(recipes_fixture, "coroutines sharing one session take turns on a lock",
                 "[lock][shared-session]") {
    auto shared = [&](int coroutines, int rounds) -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "shared-" + std::to_string(coroutines)};
        int inside = 0, most_inside = 0, grants = 0;
        std::uint64_t last_index = 0;
        bool tokens_grow = true;
        countdown finished{ioc.get_executor(), static_cast<std::size_t>(coroutines)};
        auto worker = [&]() -> asio::awaitable<void> {
            for (int r = 0; r < rounds; ++r) {
                auto lease = co_await mutex.async_acquire(s);
                most_inside = std::max(most_inside, ++inside);
                ++grants;
                tokens_grow = tokens_grow && lease.token().modify_index > last_index;
                last_index = lease.token().modify_index;
                co_await asio::post(ioc, asio::use_awaitable); // others run meanwhile
                --inside;
                co_await lease.async_release();
            }
            finished.count_down();
        };
        for (int i = 0; i < coroutines; ++i)
            asio::co_spawn(ioc, worker(), asio::detached);
        co_await finished.wait();
        CHECK(grants == coroutines * rounds);
        CHECK(most_inside == 1);
        CHECK(tokens_grow); // each grant is a write of its own: fences tell them apart
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    auto body = [&]() -> asio::awaitable<void> {
        co_await shared(2, 10);
        co_await shared(8, 4);
        co_await shared(64, 2);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a lease dropped without a release leaves the key to its session's next acquire",
                 "[lock][shared-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        std::optional<lock_lease> first{co_await mutex.async_acquire(s)};
        const auto token = first->token();
        // Waiting behind the first lease, until its last handle goes.
        asio::steady_timer dropping{ioc, 50ms};
        auto drop = [&]() -> asio::awaitable<void> {
            co_await dropping.async_wait(asio::use_awaitable);
            first.reset();
        };
        auto second = co_await (mutex.async_try_acquire(s, 10s) && drop());
        REQUIRE(second);
        CHECK(second->token() == token); // taken over without a write
        co_await second->async_release();
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}
