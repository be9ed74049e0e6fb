// SPDX-License-Identifier: BSL-1.0
// conclave::read_write_lock: readers together, one writer, served in order (a writer is not
// starved), upgrade and downgrade, tokens, conflicts with other recipes, a crashed holder,
// loss, cancellation, hold scopes, and one blocking query for a client's waiters.
#include "recipes_fixture.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/metrics.hpp>
#include <conclave/read_write_lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <functional>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

struct rw_fixture : recipes_fixture {
    std::string k = p + "table";

    asio::awaitable<void> clean() {
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
    }
    // Contender keys under the lock, live or not.
    asio::awaitable<std::size_t> contenders() {
        auto r = co_await consul.async_kv_keys(k + "/.rwlock/");
        co_return r.keys.size();
    }
    // Waits (blocking queries) until there are `n` contender keys.
    asio::awaitable<void> wait_for_contenders(std::size_t n) {
        std::uint64_t index = 0;
        for (;;) {
            auto r = co_await consul.async_kv_keys(
                k + "/.rwlock/",
                kv_keys_options{}.with_query(query_options::blocking(index, 1000ms)));
            if (r.keys.size() == n)
                co_return;
            index = r.meta.index;
        }
    }
};

} // namespace

TEST_CASE_METHOD(rw_fixture, "readers hold together, a writer alone, and tokens are ordered",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        auto c = co_await session::async_create(consul, quick(10s));
        read_write_lock rw_a{consul, k, read_write_lock_options{}.with_value("a")};
        read_write_lock rw_b{consul, k};
        read_write_lock rw_c{consul, k};
        auto ra = co_await rw_a.async_acquire_read(a);
        auto rb = co_await rw_b.async_acquire_read(b); // readers together
        CHECK_FALSE(ra.writing());
        CHECK(ra.held());
        CHECK(rb.held());
        CHECK(ra.token().key.rfind(k + "/.rwlock/", 0) == 0); // its contender key
        auto none = co_await rw_c.async_try_acquire_write(c, 0ms);
        CHECK_FALSE(none);
        {
            const auto left = co_await contenders();
            CHECK(left == 2); // the try left no contender key behind
        }
        auto releaser = [&]() -> asio::awaitable<void> {
            co_await ra.async_release();
            co_await rb.async_release();
        };
        auto writer = [&]() -> asio::awaitable<read_write_lease> {
            co_return co_await rw_c.async_acquire_write(c, asio::use_awaitable);
        };
        auto w = co_await (writer() && releaser());
        CHECK(w.writing());
        CHECK(w.token().modify_index > ra.token().modify_index);
        CHECK(w.token().modify_index > rb.token().modify_index);
        auto blocked = co_await rw_a.async_try_acquire_read(a, 0ms);
        CHECK_FALSE(blocked); // no reader while the writer holds
        co_await w.async_release();
        auto after = co_await rw_a.async_try_acquire_read(a, 0ms);
        REQUIRE(after);
        CHECK(after->token().modify_index > w.token().modify_index);
        co_await after->async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
        co_await c.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a waiting writer is not starved by readers that keep coming",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        auto c = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto first = co_await rw.async_acquire_read(a);
        std::optional<read_write_lease> w;
        auto writer = [&]() -> asio::awaitable<void> { w = co_await rw.async_acquire_write(b); };
        // The writer queues behind the first reader; a reader that comes after it waits.
        auto queue_then_check = [&]() -> asio::awaitable<void> {
            co_await wait_for_contenders(2); // the writer is in line
            auto late = co_await rw.async_try_acquire_read(c, 300ms);
            CHECK_FALSE(late); // behind the waiting writer, though only a reader holds
            CHECK_FALSE(w);
            co_await first.async_release();
        };
        co_await (writer() && queue_then_check());
        REQUIRE(w);
        CHECK(w->writing());
        co_await w->async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
        co_await c.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "the sole reader upgrades and downgrades without letting go",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto lease = co_await rw.async_acquire_read(a);
        const auto read_token = lease.token();
        auto [uec, upgraded] = co_await lease.async_try_upgrade(0ms, tuple_token);
        CHECK_FALSE(uec);
        CHECK(upgraded);
        CHECK(lease.writing());
        CHECK(lease.held());
        CHECK(lease.token().modify_index > read_token.modify_index);
        auto reader = co_await rw.async_try_acquire_read(b, 0ms);
        CHECK_FALSE(reader); // a writer now
        co_await lease.async_downgrade();
        CHECK_FALSE(lease.writing());
        CHECK(lease.held());
        auto joined = co_await rw.async_try_acquire_read(b, 0ms);
        REQUIRE(joined); // readers together again
        co_await joined->async_release();
        co_await lease.async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "two readers that both try to upgrade keep reading, no deadlock",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto ra = co_await rw.async_acquire_read(a);
        auto rb = co_await rw.async_acquire_read(b);
        auto try_a = [&]() -> asio::awaitable<bool> {
            auto [ec, up] = co_await ra.async_try_upgrade(300ms, tuple_token);
            CHECK_FALSE(ec);
            co_return up;
        };
        auto try_b = [&]() -> asio::awaitable<bool> {
            auto [ec, up] = co_await rb.async_try_upgrade(300ms, tuple_token);
            CHECK_FALSE(ec);
            co_return up;
        };
        auto [up_a, up_b] = co_await (try_a() && try_b());
        CHECK_FALSE(up_a);
        CHECK_FALSE(up_b);
        CHECK(ra.held());
        CHECK(rb.held());
        co_await rb.async_release();
        auto [ec, up] = co_await ra.async_try_upgrade(0ms, tuple_token);
        CHECK_FALSE(ec);
        CHECK(up); // alone now
        co_await ra.async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a key a lock or a semaphore uses is a conflict, nothing written",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock plain{consul, k};
        auto held = co_await plain.async_acquire(s);
        read_write_lock rw{consul, k};
        std::string said;
        try {
            co_await rw.async_acquire_read(s);
        } catch (const conclave::error& e) {
            CHECK(e.code() == errc::conflict);
            said = e.what();
        }
        CHECK_THAT(said, contains_text("a lock uses"));
        {
            const auto n = co_await contenders();
            CHECK(n == 0);
        }
        co_await held.async_release();
        semaphore sem{consul, p + "sem", 2};
        auto permit = co_await sem.async_acquire(s);
        read_write_lock on_sem{consul, p + "sem"};
        auto [sec, none] = co_await on_sem.async_try_acquire_write(s, 0ms, tuple_token);
        CHECK(sec == errc::conflict);
        CHECK_FALSE(none);
        co_await permit.async_release();
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a crashed reader's place goes with its session", "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto reader = co_await rw.async_acquire_read(a);
        auto crash = [&]() -> asio::awaitable<void> {
            CHECK(server.expire_session(a.id())); // as if its holder died and the TTL ran out
            co_return;
        };
        auto writer = [&]() -> asio::awaitable<read_write_lease> {
            co_return co_await rw.async_acquire_write(b, asio::use_awaitable);
        };
        auto w = co_await (writer() && crash());
        CHECK(w.writing());
        auto [lost] = co_await reader.async_wait_lost(tuple_token);
        CHECK((lost == errc::session_invalidated || lost == errc::lock_lost));
        co_await w.async_release();
        co_await clean();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a grant whose contender key is deleted is lost", "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto w = co_await rw.async_acquire_write(a);
        co_await consul.async_kv_delete(k + "/.rwlock/", kv_delete_options{}.with_recurse());
        auto [lost] = co_await w.async_wait_lost(tuple_token);
        CHECK(lost == errc::lock_lost);
        auto [dec] = co_await w.async_downgrade(tuple_token);
        CHECK(dec == errc::lock_lost);
        co_await w.async_release();
        co_await clean();
        co_await a.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a cancelled wait leaves no contender key", "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto w = co_await rw.async_acquire_write(a);
        cancel_after cancel{ioc.get_executor(), 200ms};
        auto [ec, lease] = co_await rw.async_acquire_read(b, cancel.bind(awaitable_tuple));
        CHECK(ec == asio::error::operation_aborted);
        CHECK_FALSE(lease.valid());
        {
            const auto n = co_await contenders();
            CHECK(n == 1); // the writer's only
        }
        co_await w.async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "hold scopes for reading and writing", "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        const int read =
            co_await with_read_lock(rw, a, [&](read_write_lease lease) -> asio::awaitable<int> {
                // Another reader joins; a writer is skipped.
                bool joined = co_await try_with_read_lock(
                    rw, b, 0ms, [](read_write_lease) -> asio::awaitable<void> { co_return; });
                CHECK(joined);
                bool wrote = co_await try_with_write_lock(
                    rw, b, 0ms, [](read_write_lease) -> asio::awaitable<void> { co_return; });
                CHECK_FALSE(wrote);
                co_return lease.writing() ? 2 : 1;
            });
        CHECK(read == 1);
        const int wrote =
            co_await with_write_lock(rw, b, [](read_write_lease lease) -> asio::awaitable<int> {
                co_return lease.writing() ? 2 : 1;
            });
        CHECK(wrote == 2);
        {
            const auto n = co_await contenders();
            CHECK(n == 0); // every scope released
        }
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "readers waiting on one client share one blocking query",
                 "[rwlock][observe]") {
    auto m = std::make_shared<metrics>();
    auto cfg = server.client_config();
    cfg.observer = m;
    client c{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t readers = 8;
        auto w_session = co_await session::async_create(c, quick(10s));
        read_write_lock rw{c, k};
        auto w = co_await rw.async_acquire_write(w_session);
        std::vector<session> sessions;
        for (std::size_t i = 0; i < readers; ++i)
            sessions.push_back(co_await session::async_create(c, quick(10s)));
        std::vector<std::unique_ptr<read_write_lock>> objects;
        std::size_t granted = 0;
        auto reader = [&](std::size_t i) -> asio::awaitable<void> {
            auto lease = co_await objects[i]->async_acquire_read(sessions[i]);
            ++granted;
            co_await lease.async_release();
        };
        auto watch_then_release = [&]() -> asio::awaitable<void> {
            // Every reader is in line (its contender key written), waiting.
            const bool in_line = co_await eventually(ioc, [&] {
                return m->value("http_requests_total", {{"endpoint", "txn"}, {"code", "200"}}) >=
                       1 + readers;
            });
            CHECK(in_line);
            const bool waiting =
                co_await eventually(ioc, [&] { return m->value("http_blocking_queries") >= 1; });
            CHECK(waiting);
            CHECK(m->value("http_blocking_queries") == 1); // one query for all of them
            co_await w.async_release();
        };
        for (std::size_t i = 0; i < readers; ++i)
            objects.push_back(std::make_unique<read_write_lock>(c, k));
        auto all = reader(0) && reader(1) && reader(2) && reader(3) && reader(4) && reader(5) &&
                   reader(6) && reader(7);
        co_await (std::move(all) && watch_then_release());
        CHECK(granted == readers);
        CHECK(m->value("acquires_total", {{"kind", "read_write_lock"}, {"outcome", "taken"}}) ==
              1 + readers);
        co_await c.async_kv_delete(p, kv_delete_options{}.with_recurse());
        for (auto& s : sessions)
            co_await s.async_destroy();
        co_await w_session.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "an empty key is refused", "[rwlock]") {
    auto make = [&] { read_write_lock rw{consul, ""}; };
    CHECK_THROWS_AS(make(), boost::system::system_error);
}

TEST_CASE_METHOD(rw_fixture, "a writer that waited through an upgrade gets a larger token",
                 "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        auto reader = co_await rw.async_acquire_read(a);
        std::optional<read_write_lease> w;
        auto writer = [&]() -> asio::awaitable<void> { w = co_await rw.async_acquire_write(b); };
        std::uint64_t upgraded_index = 0;
        auto upgrade_then_release = [&]() -> asio::awaitable<void> {
            co_await wait_for_contenders(2); // the writer waits behind the reader
            auto [ec, up] = co_await reader.async_try_upgrade(0ms, tuple_token);
            CHECK_FALSE(ec);
            CHECK(up); // a waiting writer does not hold: the reader is the sole one
            upgraded_index = reader.token().modify_index;
            co_await reader.async_release();
        };
        co_await (writer() && upgrade_then_release());
        REQUIRE(w);
        // Fencing stays ordered: the writer after the upgraded writer has the larger token.
        CHECK(w->token().modify_index > upgraded_index);
        co_await w->async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(rw_fixture, "a dropped grant's contender key is deleted", "[rwlock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        read_write_lock rw{consul, k};
        {
            auto dropped = co_await rw.async_acquire_write(a);
        } // dropped without a release: a writer behind it must not wait for the session's end
        auto next = co_await rw.async_try_acquire_write(b, 5000ms);
        REQUIRE(next);
        co_await next->async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}
