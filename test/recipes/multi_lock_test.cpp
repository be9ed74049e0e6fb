// SPDX-License-Identifier: BSL-1.0
// conclave::multi_lock: every key in one transaction or none, one token for the set, no
// deadlock between sets in any order, conflicts, loss of any key, cancellation, the local
// grants of one session, guarded writes, hold scopes, and bad input.
#include "recipes_fixture.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/metrics.hpp>
#include <conclave/multi_lock.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <functional>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// The error a multi_lock's constructor throws for `keys` (none when it accepts them).
error_code refusal_of(client& c, std::vector<std::string> keys) {
    try {
        multi_lock m{c, std::move(keys)};
        return {};
    } catch (const boost::system::system_error& e) {
        return e.code();
    }
}

struct multi_fixture : recipes_fixture {
    std::vector<std::string> keys(std::initializer_list<const char*> names) const {
        std::vector<std::string> out;
        for (const char* n : names)
            out.push_back(p + n);
        return out;
    }
    // The entry of `key`, or none.
    asio::awaitable<std::optional<kv_entry>> entry(const std::string& key) {
        auto r = co_await consul.async_kv_get(key);
        co_return r.entry;
    }
    // Whether `key` is held by some session.
    asio::awaitable<bool> held(const std::string& key) {
        auto e = co_await entry(key);
        co_return e && !e->session.empty();
    }
    asio::awaitable<void> clean() {
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
    }
};

} // namespace

TEST_CASE_METHOD(multi_fixture, "a multi-lock takes every key in one transaction, one token",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"c", "a", "b"}), multi_lock_options{}.with_value("w1")};
        CHECK(set.keys() == keys({"a", "b", "c"})); // sorted
        auto lease = co_await set.async_acquire(s);
        const auto t = lease.token();
        CHECK(t.key == p + "a");
        CHECK(t.session == s.id());
        CHECK(t.lock_index == 1);
        CHECK(lease.held() == t);
        for (const auto& k : set.keys()) {
            auto e = co_await entry(k);
            REQUIRE(e);
            CHECK(e->flags == lock_flag_value); // an api.Lock key
            CHECK(e->session == s.id());
            CHECK(e->value == "w1");
            CHECK(e->modify_index == t.modify_index); // one write for all
        }
        co_await lease.async_release();
        CHECK_FALSE(lease.held());
        for (const auto& k : set.keys()) {
            auto e = co_await entry(k);
            REQUIRE(e);
            CHECK(e->session.empty());
            CHECK(e->flags == lock_flag_value); // kept for Go peers
            CHECK(e->value == "w1");
        }
        auto [ec] = co_await lease.async_wait_lost(asio::as_tuple(asio::deferred));
        CHECK(ec == errc::lock_lost);
        co_await lease.async_release(); // retry-safe
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "bad keys are refused before anything is sent", "[multi_lock]") {
    CHECK(refusal_of(consul, {}) == errc::invalid_argument);
    CHECK(refusal_of(consul, {p + "a", p + "b", p + "a"}) == errc::invalid_argument);
    CHECK(refusal_of(consul, {p + "a", ""}) == errc::invalid_argument);
    std::vector<std::string> many;
    for (int i = 0; i < 33; ++i)
        many.push_back(p + "k" + std::to_string(i));
    CHECK(refusal_of(consul, many) == errc::invalid_argument);
    many.pop_back();
    CHECK_FALSE(refusal_of(consul, many)); // 32: a check and a lock each fill 64 operations
}

TEST_CASE_METHOD(multi_fixture, "32 keys fit one transaction", "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        std::vector<std::string> many;
        for (int i = 0; i < 32; ++i)
            many.push_back(p + "k" + std::to_string(i));
        multi_lock set{consul, many};
        auto lease = co_await set.async_acquire(s);
        for (const auto& k : many) {
            auto e = co_await entry(k);
            REQUIRE(e);
            CHECK(e->session == s.id());
            CHECK(e->modify_index == lease.token().modify_index);
        }
        // A guarded write of 32 more operations fills the transaction; one more is refused.
        std::vector<txn_op> ops;
        for (int i = 0; i < 32; ++i)
            ops.push_back(txn_op::set(p + "data" + std::to_string(i), "v"));
        auto [ec, t] = co_await lease.async_guarded_txn(ops, tuple_token);
        CHECK_FALSE(ec);
        CHECK(t.committed);
        ops.push_back(txn_op::set(p + "data-extra", "v"));
        auto [too_many, none] = co_await lease.async_guarded_txn(ops, tuple_token);
        CHECK(too_many == errc::invalid_argument);
        {
            auto seen = co_await entry(p + "data-extra");
            CHECK_FALSE(seen);
        }
        co_await lease.async_release();
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "one key held elsewhere: no key is taken until it is free",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        lock single{consul, p + "b"};
        auto one = co_await single.async_acquire(a);
        multi_lock set{consul, keys({"a", "b", "c"})};
        auto none = co_await set.async_try_acquire(b, 0ms);
        CHECK_FALSE(none);
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        {
            auto seen = co_await held(p + "c");
            CHECK_FALSE(seen);
        }
        auto later = co_await set.async_try_acquire(b, 300ms);
        CHECK_FALSE(later);
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        // Waiting: the release of the one key lets the set through.
        auto releaser = [&]() -> asio::awaitable<void> { co_await one.async_release(); };
        auto waiter = [&]() -> asio::awaitable<multi_lock_lease> {
            co_return co_await set.async_acquire(b, asio::use_awaitable);
        };
        auto got = co_await (waiter() && releaser());
        CHECK(got.token().session == b.id());
        CHECK(got.token().modify_index > one.token().modify_index);
        co_await got.async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "sets over the same keys in any order exclude and never deadlock",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(5000ms));
        auto b = co_await session::async_create(consul, quick(5000ms));
        multi_lock ab{consul, keys({"x", "y", "z"})};
        multi_lock ba{consul, keys({"z", "y", "x"})};
        int inside = 0, overlaps = 0, cycles = 0;
        auto worker = [&](multi_lock& set, session& s) -> asio::awaitable<void> {
            for (int i = 0; i < 10; ++i) {
                auto lease = co_await set.async_acquire(s);
                if (++inside > 1)
                    ++overlaps;
                co_await asio::post(ioc, asio::use_awaitable); // let the other one run
                --inside;
                ++cycles;
                co_await lease.async_release();
            }
        };
        co_await (worker(ab, a) && worker(ba, b));
        CHECK(cycles == 20);
        CHECK(overlaps == 0);
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "a key with other flags is a conflict, and nothing is written",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        co_await consul.async_kv_put(p + "b", "not a lock", kv_put_options{}.with_flags(7));
        multi_lock set{consul, keys({"a", "b"})};
        auto [ec, lease] = co_await set.async_acquire(s, tuple_token);
        CHECK(ec == errc::conflict);
        CHECK_FALSE(lease.valid());
        {
            auto seen = co_await entry(p + "a");
            CHECK_FALSE(seen);
        }
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "losing any key loses the set, and the release frees the rest",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"a", "b", "c"})};
        auto lease = co_await set.async_acquire(s);
        auto remover = [&]() -> asio::awaitable<void> {
            co_await consul.async_kv_delete(p + "b"); // someone deletes one key
        };
        auto watcher = [&]() -> asio::awaitable<error_code> {
            auto [ec] = co_await lease.async_wait_lost(tuple_token);
            co_return ec;
        };
        auto lost = co_await (watcher() && remover());
        CHECK(lost == errc::lock_lost);
        CHECK_FALSE(lease.held());
        {
            auto seen = co_await held(p + "a");
            CHECK(seen);
        }
        co_await lease.async_release();
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        {
            auto seen = co_await held(p + "c");
            CHECK_FALSE(seen);
        }
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "a cancelled acquire leaves no key held", "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        lock single{consul, p + "c"};
        auto one = co_await single.async_acquire(a);
        multi_lock set{consul, keys({"a", "b", "c"})};
        cancel_after cancel{ioc.get_executor(), 200ms};
        auto [ec, lease] = co_await set.async_acquire(b, cancel.bind(awaitable_tuple));
        CHECK(ec == asio::error::operation_aborted);
        CHECK_FALSE(lease.valid());
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        {
            auto seen = co_await held(p + "b");
            CHECK_FALSE(seen);
        }
        co_await one.async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture,
                 "one session: a lock and a multi-lock of this process exclude, in fair mode too",
                 "[multi_lock]") {
    // (A fair-mode lock reads its key on a query of its own: the grant held here is shared
    // all the same.)
    const bool fair = GENERATE(false, true);
    INFO("fair mode: " << fair);
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"a", "b"})};
        lock single{consul, p + "b", lock_options{}.with_fair(fair)};
        auto all = co_await set.async_acquire(s);
        // Consul would let the session take its own key again: the lock waits instead.
        {
            auto seen = co_await single.async_try_acquire(s, 0ms);
            CHECK_FALSE(seen);
        }
        co_await all.async_release();
        auto one = co_await single.async_try_acquire(s, 0ms);
        REQUIRE(one);
        {
            auto seen = co_await set.async_try_acquire(s, 0ms);
            CHECK_FALSE(seen);
        }
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        co_await one->async_release();
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "keys the session holds with no grant left are taken over",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"a", "b"})};
        std::uint64_t first = 0;
        {
            auto dropped = co_await set.async_acquire(s);
            first = dropped.token().modify_index;
        } // dropped without a release: the keys stay held by the session
        auto again = co_await set.async_try_acquire(s, 0ms);
        REQUIRE(again);
        CHECK(again->token().modify_index == first); // no write
        co_await again->async_release();
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "guarded writes stop once a key changed hands", "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"a", "b"})};
        auto lease = co_await set.async_acquire(s);
        std::vector<txn_op> write_1{txn_op::set(p + "data", "1")};
        auto [ec, t] = co_await lease.async_guarded_txn(write_1, tuple_token);
        CHECK_FALSE(ec);
        CHECK(t.committed);
        REQUIRE(t.results.size() == 1); // the checks' entries are not the caller's
        CHECK(t.results[0].key == p + "data");
        co_await consul.async_kv_put(p + "b", "", kv_put_options{}.with_release(s.id()));
        std::vector<txn_op> write_2{txn_op::set(p + "data", "2")};
        auto [lost, t2] = co_await lease.async_guarded_txn(write_2, tuple_token);
        CHECK(lost == errc::lock_lost);
        CHECK_FALSE(lease.held());
        auto data = co_await entry(p + "data");
        REQUIRE(data);
        CHECK(data->value == "1");
        co_await lease.async_release();
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "with_lock and try_with_lock hold the whole set", "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        multi_lock set_a{consul, keys({"a", "b"})};
        multi_lock set_b{consul, keys({"b", "c"})};
        int value =
            co_await with_lock(set_a, a, [&](multi_lock_lease lease) -> asio::awaitable<int> {
                {
                    auto seen = co_await held(p + "a");
                    CHECK(seen);
                }
                {
                    auto seen = co_await held(p + "b");
                    CHECK(seen);
                }
                // Another set sharing a key is skipped while this one holds it.
                bool ran = co_await try_with_lock(
                    set_b, b, 0ms, [](multi_lock_lease) -> asio::awaitable<void> { co_return; });
                CHECK_FALSE(ran);
                co_return static_cast<int>(lease.token().lock_index);
            });
        CHECK(value == 1);
        {
            auto seen = co_await held(p + "a");
            CHECK_FALSE(seen);
        }
        bool ran = co_await try_with_lock(
            set_b, b, 0ms, [](multi_lock_lease) -> asio::awaitable<void> { co_return; });
        CHECK(ran);
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "a holder that acquires again comes after the waiter here",
                 "[multi_lock]") {
    auto m = std::make_shared<metrics>();
    auto cfg = server.client_config();
    cfg.observer = m;
    client c{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(c, quick(10s));
        auto b = co_await session::async_create(c, quick(10s));
        multi_lock set_a{c, keys({"x", "y"})};
        multi_lock set_b{c, keys({"y", "z"})};
        for (int round = 0; round < 3; ++round) {
            auto held = co_await set_a.async_acquire(a);
            std::uint64_t b_index = 0;
            auto waiter = [&]() -> asio::awaitable<void> {
                auto got = co_await set_b.async_acquire(b);
                b_index = got.token().modify_index;
                co_await got.async_release();
            };
            auto again = [&]() -> asio::awaitable<std::uint64_t> {
                // The waiter is in line once its keys' queries wait.
                const bool waiting = co_await eventually(
                    ioc, [&] { return m->value("http_blocking_queries") >= 1; });
                CHECK(waiting);
                co_await held.async_release();
                auto second = co_await set_a.async_acquire(a); // behind the waiter
                const auto index = second.token().modify_index;
                co_await second.async_release();
                co_return index;
            };
            const auto a_index = co_await (again() && waiter());
            CHECK(b_index != 0);
            CHECK(a_index > b_index); // the waiter went first
        }
        co_await c.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "an older acquire waiting for a key held here holds nobody back",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        multi_lock only_b{consul, keys({"b"})};
        multi_lock both{consul, keys({"a", "b"})};
        multi_lock only_a{consul, keys({"a"})};
        auto holding_b = co_await only_b.async_acquire(a);
        std::optional<multi_lock_lease> got_both;
        auto older = [&]() -> asio::awaitable<void> {
            got_both = co_await both.async_acquire(b); // waits for b, held by the task below
        };
        auto task = [&]() -> asio::awaitable<void> {
            co_await asio::post(ioc, asio::use_awaitable); // the older acquire is in line
            // Holding b, the task asks for a: it must not wait behind the acquire of {a, b},
            // which waits for this task's b (that would be a deadlock).
            auto held_a = co_await only_a.async_try_acquire(a, 2000ms);
            CHECK(held_a);
            if (held_a)
                co_await held_a->async_release();
            co_await holding_b.async_release();
        };
        co_await (older() && task());
        REQUIRE(got_both);
        co_await got_both->async_release();
        co_await clean();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(multi_fixture, "a re-entrant lock does not join a multi-lock's grant",
                 "[multi_lock]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        multi_lock set{consul, keys({"a", "b"})};
        lock single{consul, p + "a", lock_options{}.with_reentrant()};
        auto all = co_await set.async_acquire(s);
        auto joined = co_await single.async_try_acquire(s, 0ms);
        CHECK_FALSE(joined); // another recipe's grant: waited for, not joined
        co_await all.async_release();
        auto one = co_await single.async_try_acquire(s, 0ms);
        REQUIRE(one);
        co_await one->async_release();
        co_await clean();
        co_await s.async_destroy();
    };
    run(ioc, body());
}
