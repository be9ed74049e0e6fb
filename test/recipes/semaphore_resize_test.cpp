// SPDX-License-Identifier: BSL-1.0
// A resizable semaphore (semaphore_options::resizable): its limit changed at run time by
// async_set_limit; growing lets waiters in, shrinking drains; fixed-limit users see a
// conflict.
#include "recipes_fixture.hpp"
#include "semaphore_waits.hpp"

#include <conclave/semaphore.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

const auto resizable = semaphore_options{}.with_resizable();

} // namespace

TEST_CASE_METHOD(recipes_fixture, "growing a resizable semaphore lets its waiter in",
                 "[semaphore][resize]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "grow";
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, prefix, 1, resizable};
        auto held = co_await sem.async_acquire(a);
        granted_in_order g;
        g.acquire(ioc, sem, b, "b");
        co_await wait_in_line(consul, prefix, b.id());

        co_await sem.async_set_limit(2);
        const bool in = co_await eventually(ioc, [&] { return g.order.size() == 1; });
        REQUIRE(in);
        CHECK(held.held()); // nobody lost anything
        auto status = co_await sem.async_status();
        CHECK(status.limit == 2);
        CHECK(status.free_slots == 0);
        auto record = co_await consul.async_kv_get(prefix + "/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->value.starts_with(R"({"Limit":2,)"));
        co_await g.permits["b"]->async_release();
        co_await held.async_release();
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "shrinking a resizable semaphore keeps its permits and admits nobody until "
                 "the holders fit",
                 "[semaphore][resize]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        auto c = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "shrink", 2, resizable};
        auto first = co_await sem.async_acquire(a);
        auto second = co_await sem.async_acquire(b);
        co_await sem.async_set_limit(1);
        CHECK(first.held());
        CHECK(second.held());
        co_await first.async_release();
        // One holder left, limit 1: still full.
        auto none = co_await sem.async_try_acquire(c, 300ms);
        CHECK_FALSE(none);
        co_await second.async_release();
        auto got = co_await sem.async_try_acquire(c, 5s);
        REQUIRE(got);
        co_await got->async_release();
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
        co_await c.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a resize needs the opt-in and a positive limit and fixed-limit users of a "
                 "resized semaphore see a limit conflict",
                 "[semaphore][resize]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        semaphore fixed{consul, p + "mixed", 2};
        auto [refused] = co_await fixed.async_set_limit(3, awaitable_tuple);
        CHECK(refused == errc::invalid_argument);
        semaphore sem{consul, p + "mixed", 2, resizable};
        auto [zero] = co_await sem.async_set_limit(0, awaitable_tuple);
        CHECK(zero == errc::invalid_argument);
        auto keys = co_await consul.async_kv_keys(p + "mixed/");
        CHECK(keys.keys.empty()); // nothing written so far

        co_await sem.async_set_limit(3); // creates `.lock`
        auto [conflict, none] = co_await fixed.async_acquire(s, awaitable_tuple);
        CHECK(conflict == errc::limit_conflict);
        CHECK_FALSE(none.valid());
        // The resizable one follows `.lock`: 3 slots at once fit, 4 do not.
        auto three = co_await sem.async_acquire(s, 3);
        CHECK(three.slots() == 3);
        co_await three.async_release();
        diagnostics diag;
        semaphore asks{consul, p + "mixed", 2, semaphore_options{resizable}.with_diag(&diag)};
        auto [above, none2] = co_await asks.async_acquire(s, 4, awaitable_tuple);
        CHECK(above == errc::invalid_argument);
        CHECK_FALSE(none2.valid());
        CHECK(diag.client_message == "a semaphore acquire of 4 slots, above its limit of 3");
        co_await sem.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}
