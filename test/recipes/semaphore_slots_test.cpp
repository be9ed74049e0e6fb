// SPDX-License-Identifier: BSL-1.0
// conclave::semaphore acquires of many slots at once: all or nothing, written as a count in
// `.lock`, first come first served, never above the limit, bad counts refused.
#include "recipes_fixture.hpp"
#include "semaphore_waits.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/semaphore.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(recipes_fixture,
                 "an acquire of n slots holds them in one permit and its release frees them all",
                 "[semaphore][slots]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "pool", 5};
        auto three = co_await sem.async_acquire(a, 3);
        CHECK(three.held());
        CHECK(three.slots() == 3);
        auto record = co_await consul.async_kv_get(p + "pool/.lock");
        REQUIRE(record.entry);
        CHECK(record.entry->value == R"({"Limit":5,"Holders":{")" + a.id() + R"(":3}})");
        CHECK(three.token().modify_index == record.entry->modify_index);
        auto status = co_await sem.async_status();
        REQUIRE(status.holders.size() == 1);
        CHECK(status.holders[0].slots == 3);
        CHECK(status.free_slots == 2);

        // All or nothing: 3 more do not fit in the 2 left, 2 do.
        auto too_many = co_await sem.async_try_acquire(b, 3, 300ms);
        CHECK_FALSE(too_many);
        auto gone = co_await consul.async_kv_get(p + "pool/" + b.id());
        CHECK_FALSE(gone.entry); // the timed-out acquire left no contender key
        auto two = co_await sem.async_try_acquire(b, 2, 5s);
        REQUIRE(two);
        CHECK(two->slots() == 2);
        auto full = co_await sem.async_status();
        CHECK(full.free_slots == 0);

        co_await three.async_release();
        auto after = co_await sem.async_status();
        CHECK(after.free_slots == 3);
        co_await two->async_release();
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a waiter for many slots is not overtaken by a smaller one that came after it",
                 "[semaphore][slots]") {
    // Without the first-come rule the later waiter of one slot would take the free slot at
    // once, and the waiter of two could wait for ever behind such ones.
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "line";
        auto holder = co_await session::async_create(consul, quick(10s));
        auto big = co_await session::async_create(consul, quick(10s));
        auto small = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, prefix, 2};
        auto held = co_await sem.async_acquire(holder); // 1 of 2: one slot left

        granted_in_order g;
        g.acquire(ioc, sem, big, "big", 2);
        co_await wait_in_line(consul, prefix, big.id());
        g.acquire(ioc, sem, small, "small", 1);
        co_await wait_in_line(consul, prefix, small.id());

        co_await held.async_release();
        const bool both = co_await g.release_all(ioc, 2);
        REQUIRE(both);
        CHECK(g.order == std::vector<std::string>{"big", "small"});
        co_await sem.async_destroy();
        co_await holder.async_destroy();
        co_await big.async_destroy();
        co_await small.async_destroy();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(recipes_fixture,
                 "acquires of many slots from two processes never hold more than the limit",
                 "[semaphore][slots][stress]") {
    constexpr std::uint32_t limit = 4;
    constexpr unsigned workers = 6;
    constexpr unsigned rounds = 3;
    client elsewhere{ioc.get_executor(), server.client_config()}; // another process
    std::uint32_t inside = 0, max_inside = 0;
    unsigned done = 0;
    auto worker = [&](unsigned id) -> asio::awaitable<void> {
        auto& c = id % 2 ? elsewhere : consul;
        auto s = co_await session::async_create(c, quick(5s));
        semaphore sem{c, p + "weights", limit};
        const std::uint32_t slots = 1 + id % 3;
        for (unsigned r = 0; r < rounds; ++r) {
            auto got = co_await sem.async_acquire(s, slots);
            inside += got.slots();
            max_inside = std::max(max_inside, inside);
            co_await sleep(std::chrono::milliseconds{5 + (id * 7) % 20});
            inside -= got.slots();
            co_await got.async_release();
        }
        co_await s.async_destroy();
        ++done;
    };
    for (unsigned i = 0; i < workers; ++i)
        asio::co_spawn(ioc, worker(i), [](std::exception_ptr e) {
            if (e)
                std::rethrow_exception(e);
        });
    run_until(
        ioc, [&] { return done == workers; }, 90s);
    CHECK(done == workers);
    CHECK(max_inside <= limit);
    CHECK(max_inside >= 2); // it really ran concurrently
    auto cleanup = [&]() -> asio::awaitable<void> {
        semaphore sem{consul, p + "weights", limit};
        co_await sem.async_destroy();
    };
    run(ioc, cleanup());
}

TEST_CASE_METHOD(recipes_fixture,
                 "an acquire of 0 slots or more than the limit is refused at once and writes "
                 "nothing",
                 "[semaphore][slots]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        diagnostics diag;
        semaphore sem{consul, p + "bad", 3, semaphore_options{}.with_diag(&diag)};
        auto [zero, none] = co_await sem.async_acquire(s, 0, awaitable_tuple);
        CHECK(zero == errc::invalid_argument);
        CHECK_FALSE(none.valid());
        CHECK(diag.client_message == "a semaphore acquire of 0 slots");
        auto [above, none2] = co_await sem.async_try_acquire(s, 4, 1s, awaitable_tuple);
        CHECK(above == errc::invalid_argument);
        CHECK_FALSE(none2);
        CHECK(diag.client_message == "a semaphore acquire of 4 slots, above its limit of 3");
        auto keys = co_await consul.async_kv_keys(p + "bad/");
        CHECK(keys.keys.empty());

        // Re-entrant: a session's permit of 1 slot does not grow into 2.
        semaphore again{consul, p + "bad", 3,
                        semaphore_options{}.with_reentrant().with_diag(&diag)};
        auto one = co_await again.async_acquire(s, 1);
        auto [more, none3] = co_await again.async_acquire(s, 2, awaitable_tuple);
        CHECK(more == errc::invalid_argument);
        CHECK_FALSE(none3.valid());
        auto same = co_await again.async_acquire(s, 1); // one more hold of the same permit
        CHECK(same.hold_count() == 2);
        co_await same.async_release();
        co_await one.async_release();
        co_await again.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "the hold scopes take many slots at once", "[semaphore][slots]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        auto other = co_await session::async_create(consul, quick());
        semaphore sem{consul, p + "scoped", 3};
        const auto seen = co_await with_permit(sem, s, 2, [&](permit held) -> asio::awaitable<int> {
            CHECK(held.slots() == 2);
            // One slot is left: a scope asking for two does not run within its budget.
            const bool ran = co_await try_with_permit(
                sem, other, 2, 200ms, [](permit) -> asio::awaitable<void> { co_return; });
            CHECK_FALSE(ran);
            auto status = co_await sem.async_status();
            co_return static_cast<int>(status.free_slots);
        });
        CHECK(seen == 1);
        const auto ran = co_await try_with_permit(
            sem, other, 3, 5s,
            [](permit held) -> asio::awaitable<std::uint32_t> { co_return held.slots(); });
        CHECK(ran == std::optional<std::uint32_t>{3});
        co_await sem.async_destroy();
        co_await s.async_destroy();
        co_await other.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "slots a dropped permit left to its session are cut down or given back by the "
                 "session's next acquire wherever it waits",
                 "[semaphore][slots]") {
    // Without it the session's acquire of another count waits behind the front waiter, which
    // waits for the slots that session holds: neither ever moves.
    auto body = [&]() -> asio::awaitable<void> {
        const auto prefix = p + "left";
        auto x = co_await session::async_create(consul, quick(10s));
        auto y = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, prefix, 4};
        {
            auto dropped = co_await sem.async_acquire(x, 3); // dropped without a release
            CHECK(dropped.slots() == 3);
        }
        granted_in_order g;
        g.acquire(ioc, sem, y, "front", 2); // 1 slot free: it waits at the front
        co_await wait_in_line(consul, prefix, y.id());
        g.acquire(ioc, sem, x, "smaller", 2); // x's 3 slots cut down to 2
        const bool both = co_await eventually(ioc, [&] { return g.order.size() == 2; });
        REQUIRE(both);
        CHECK(g.permits["smaller"]->slots() == 2);
        auto status = co_await sem.async_status();
        CHECK(status.free_slots == 0);
        co_await g.permits["front"]->async_release();
        co_await g.permits["smaller"]->async_release();

        // Fewer than asked: given back, and the acquire waits in line for its count.
        { auto dropped = co_await sem.async_acquire(x, 1); }
        auto three = co_await sem.async_try_acquire(x, 3, 10s);
        REQUIRE(three);
        CHECK(three->slots() == 3);
        co_await three->async_release();
        co_await sem.async_destroy();
        co_await x.async_destroy();
        co_await y.async_destroy();
    };
    run(ioc, body(), 30s);
}
