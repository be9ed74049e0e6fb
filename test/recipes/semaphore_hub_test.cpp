// SPDX-License-Identifier: BSL-1.0
// Herd-free semaphore waiting: local waiters on one prefix share one blocking query, wait in
// arrival order, free slots are filled by one CAS, and a local release hands its slot to the
// next waiter in its own transaction. Proven by counting the requests the agent served.
#include "recipes_fixture.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>

#include <algorithm>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// Keys under `prefix` held by a session: the contender keys.
std::size_t held_keys(const kv_list_result& r) {
    return static_cast<std::size_t>(std::count_if(
        r.entries.begin(), r.entries.end(), [](const kv_entry& e) { return !e.session.empty(); }));
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "many local semaphore waiters share one blocking query and get slots by handoff",
                 "[semaphore][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t waiters = 16;
        constexpr std::uint32_t limit = 2;
        const auto prefix = p + "pool";
        contenders<semaphore> holders{limit};
        std::vector<permit> held;
        for (std::size_t i = 0; i < limit; ++i) {
            holders.sessions[i] = co_await session::async_create(consul, quick(5s));
            holders.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
            held.push_back(co_await holders.objects[i]->async_acquire(holders.sessions[i]));
        }

        contenders<semaphore> c{waiters};
        for (std::size_t i = 0; i < waiters; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
        }
        countdown granted{ioc.get_executor(), waiters};
        countdown released{ioc.get_executor(), waiters};
        unsigned inside = limit, max_inside = limit;
        // (A coroutine lambda must outlive its coroutines: one closure, the index passed.)
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            auto got = co_await c.objects[i]->async_acquire(c.sessions[i]);
            max_inside = std::max(max_inside, ++inside);
            granted.count_down();
            --inside;
            co_await got.async_release();
            released.count_down();
        };
        server.reset_stats();
        for (std::size_t i = 0; i < waiters; ++i)
            asio::co_spawn(ioc, one(i), asio::detached);
        // Every contender key written (followed with blocking reads of our own)...
        auto keys = co_await consul.async_kv_list(prefix + "/");
        while (held_keys(keys) < limit + waiters)
            keys = co_await consul.async_kv_list(prefix + "/",
                                                 query_options::blocking(keys.meta.index, 2s));
        // ...then, nothing to await for an absence of requests: let the waiters settle.
        co_await sleep(200ms);
        const auto waiting = server.stats();
        CHECK(waiting.blocking_queries_waiting == 1); // one query for 16 waiters
        // The shared query's reads (it wakes once per contender key written) and ours.
        CHECK(count(waiting, "GET /v1/kv") <= 2 * waiters + 4);
        CHECK(count(waiting, "PUT /v1/txn") == 0); // nobody tried on a full semaphore
        CHECK(granted.left() == waiters);

        server.reset_stats();
        for (auto& h : held) {
            --inside;
            co_await h.async_release();
        }
        co_await released.wait();
        // Every release handed its slot over in its own transaction: one each, nothing else.
        const auto after = server.stats();
        CHECK(count(after, "PUT /v1/txn") <= waiters + limit + 2);
        CHECK(max_inside <= limit);
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        for (auto& s : holders.sessions)
            co_await s.async_destroy();
        semaphore cleanup{consul, prefix, limit};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "local semaphore waiters get slots in arrival order",
                 "[semaphore][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t waiters = 8;
        constexpr std::uint32_t limit = 2;
        const auto prefix = p + "fifo";
        contenders<semaphore> holders{limit};
        std::vector<permit> held;
        for (std::size_t i = 0; i < limit; ++i) {
            holders.sessions[i] = co_await session::async_create(consul, quick(5s));
            holders.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
            held.push_back(co_await holders.objects[i]->async_acquire(holders.sessions[i]));
        }
        contenders<semaphore> c{waiters};
        for (std::size_t i = 0; i < waiters; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
        }
        std::vector<std::size_t> order;
        countdown done{ioc.get_executor(), waiters};
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            auto got = co_await c.objects[i]->async_acquire(c.sessions[i]);
            order.push_back(i);
            co_await got.async_release();
            done.count_down();
        };
        // Arrival order = spawn order: the next waiter comes once this one's contender key
        // is written.
        for (std::size_t i = 0; i < waiters; ++i) {
            asio::co_spawn(ioc, one(i), asio::detached);
            auto key = co_await consul.async_kv_get(prefix + "/" + c.sessions[i].id());
            while (!key.entry)
                key = co_await consul.async_kv_get(prefix + "/" + c.sessions[i].id(),
                                                   query_options::blocking(key.meta.index, 2s));
        }
        if (server.isolated())
            server.reset_stats();
        for (auto& h : held)
            co_await h.async_release();
        co_await done.wait();
        // Each release handed its slot to the next waiter: no attempt of their own, no
        // refused CAS.
        if (server.isolated())
            CHECK(count(server.stats(), "PUT /v1/txn") == waiters + limit);
        std::vector<std::size_t> expected(waiters);
        for (std::size_t i = 0; i < waiters; ++i)
            expected[i] = i;
        CHECK(order == expected);
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        for (auto& s : holders.sessions)
            co_await s.async_destroy();
        semaphore cleanup{consul, prefix, limit};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "k free slots go to k queued local waiters in one transaction, never more than "
                 "the limit",
                 "[semaphore][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::uint32_t limit = 4;
        constexpr std::size_t waiters = 10;
        const auto prefix = p + "batch";
        // Another process holds every slot: four sessions, each with its contender key.
        std::vector<std::string> foreign;
        std::string holders_json;
        for (std::uint32_t i = 0; i < limit; ++i) {
            auto id = co_await consul.async_session_create(
                session_options{}.with_ttl(15s).without_node_checks());
            co_await consul.async_kv_put(
                prefix + "/" + id, "",
                kv_put_options{}.with_acquire(id).with_flags(semaphore_flag_value));
            holders_json += (i ? ",\"" : "\"") + id + "\":true";
            foreign.push_back(id);
        }
        co_await consul.async_kv_put(prefix + "/.lock",
                                     R"({"Limit":4,"Holders":{)" + holders_json + "}}",
                                     kv_put_options{}.with_flags(semaphore_flag_value));

        contenders<semaphore> c{waiters};
        for (std::size_t i = 0; i < waiters; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
        }
        std::vector<permit> permits(waiters);
        countdown first_round{ioc.get_executor(), limit};
        countdown done{ioc.get_executor(), waiters};
        change_event release_now{ioc.get_executor()};
        bool may_release = false;
        unsigned inside = 0, max_inside = 0;
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            permits[i] = co_await c.objects[i]->async_acquire(c.sessions[i]);
            max_inside = std::max(max_inside, ++inside);
            first_round.count_down();
            while (!may_release)
                co_await release_now.wait();
            --inside;
            co_await permits[i].async_release();
            done.count_down();
        };
        for (std::size_t i = 0; i < waiters; ++i)
            asio::co_spawn(ioc, one(i), asio::detached);
        auto keys = co_await consul.async_kv_list(prefix + "/");
        while (held_keys(keys) < limit + waiters)
            keys = co_await consul.async_kv_list(prefix + "/",
                                                 query_options::blocking(keys.meta.index, 2s));

        // The foreign holders die at once (their contender keys go in one transaction):
        // four slots free in one change.
        server.reset_stats();
        std::vector<txn_op> gone;
        for (const auto& id : foreign)
            gone.push_back(txn_op::remove(prefix + "/" + id));
        co_await consul.async_txn(std::move(gone));
        co_await first_round.wait();
        const auto stats = server.stats();
        // That transaction, and one CAS that added the four front waiters.
        CHECK(count(stats, "PUT /v1/txn") == 2);
        CHECK(max_inside == limit);
        // Arrival order: the first four spawned got them.
        for (std::size_t i = 0; i < limit; ++i)
            CHECK(permits[i].valid());
        auto record = co_await consul.async_kv_get(prefix + "/.lock");
        REQUIRE(record.entry);
        for (std::size_t i = 0; i < waiters; ++i)
            CHECK((record.entry->value.find(c.sessions[i].id()) != std::string::npos) ==
                  (i < limit));

        may_release = true;
        release_now.notify();
        co_await done.wait();
        CHECK(max_inside <= limit);
        for (const auto& id : foreign)
            co_await consul.async_session_destroy(id);
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        semaphore cleanup{consul, prefix, limit};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "semaphore contenders that re-acquire in a loop take turns at a few requests "
                 "per grant",
                 "[semaphore][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t n = 8;
        constexpr std::uint32_t limit = 2;
        constexpr int rounds = 20;
        const auto prefix = p + "loop";
        contenders<semaphore> c{n};
        for (std::size_t i = 0; i < n; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<semaphore>(consul, prefix, limit));
        }
        server.reset_stats();
        std::vector<std::size_t> grants; // who got a slot, in order
        unsigned inside = 0, max_inside = 0;
        countdown finished{ioc.get_executor(), n};
        auto loop = [&](std::size_t i) -> asio::awaitable<void> {
            for (int r = 0; r < rounds; ++r) {
                auto got = co_await c.objects[i]->async_acquire(c.sessions[i]);
                grants.push_back(i);
                max_inside = std::max(max_inside, ++inside);
                --inside;
                co_await got.async_release();
            }
            finished.count_down();
        };
        for (std::size_t i = 0; i < n; ++i)
            asio::co_spawn(ioc, loop(i), asio::detached);
        co_await finished.wait();
        REQUIRE(grants.size() == n * rounds);
        CHECK(max_inside <= limit);
        // Nobody waits while others go round again and again (a release that waited for
        // its turn behind a stream of others would hold its slot all the while): between
        // two grants of one contender, at most two rounds of the others.
        std::vector<std::size_t> last(n, 0);
        std::size_t longest = 0;
        for (std::size_t k = 0; k < grants.size(); ++k) {
            if (last[grants[k]] != 0)
                longest = std::max(longest, k - last[grants[k]]);
            last[grants[k]] = k + 1;
        }
        CHECK(longest <= 2 * n);
        // Per grant: the contender key, one transaction (handoff in the release), and the
        // shared query's read that the contender key wakes.
        const auto stats = server.stats();
        const double per_grant = static_cast<double>(stats.requests) / (n * rounds);
        CHECK(per_grant <= 3.0);
        CHECK(count(stats, "PUT /v1/txn") <= n * rounds + n); // no refused attempts
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        semaphore cleanup{consul, prefix, limit};
        co_await cleanup.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a semaphore waiter cancelled while a release hands it the slot keeps nothing",
                 "[semaphore][hub][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(consul, quick(5s));
        const auto prefix = p + "h";
        semaphore sem_a{consul, prefix, 1};
        semaphore sem_b{consul, prefix, 1};
        // The last delay is never reached: the handoff completes, in the release's own
        // transaction.
        for (auto delay : {0ms, 1ms, 2ms, 3ms, 5ms, 8ms, 10000ms}) {
            auto held = co_await sem_a.async_acquire(a);
            cancel_after cancel{ioc.get_executor(), delay};
            bool waiter_done = false;
            auto waiter = [&]() -> asio::awaitable<std::tuple<error_code, permit>> {
                auto r = co_await sem_b.async_acquire(b, cancel.bind(awaitable_tuple));
                waiter_done = true;
                co_return r;
            };
            auto wait_then_release = [&]() -> asio::awaitable<error_code> {
                // B's contender key is written: a release may hand it the slot. (A waiter
                // cancelled early writes and deletes it before we look: then it is done.)
                auto key = co_await consul.async_kv_get(prefix + "/" + b.id());
                while (!key.entry && !waiter_done)
                    key = co_await consul.async_kv_get(
                        prefix + "/" + b.id(), query_options::blocking(key.meta.index, 200ms));
                server.reset_stats();
                auto [ec] = co_await held.async_release(awaitable_tuple);
                co_return ec;
            };
            // (&& flattens the first result: error, permit, then the release's error)
            auto [ec, got, released] = co_await (waiter() && wait_then_release());
            cancel.disarm();
            CHECK_FALSE(released);
            if (!ec) {
                CHECK(got.held());
                // Handed over in A's release's transaction; or, when B's contender write
                // was answered after the test saw the key (real Consul), the release only
                // freed the slot and B took it in a CAS of its own.
                CHECK(count(server.stats(), "PUT /v1/txn") <= 2);
                co_await got.async_release();
            } else {
                CHECK(ec == asio::error::operation_aborted);
                CHECK_FALSE(got.valid());
            }
            if (delay == 10000ms)
                CHECK_FALSE(ec);
            // Whatever happened, B holds nothing once its acquire completed (or once the
            // background undo of an abandoned handoff is through): follow `.lock`.
            auto contender = co_await consul.async_kv_get(prefix + "/" + b.id());
            CHECK_FALSE(contender.entry);
            auto record = co_await consul.async_kv_get(prefix + "/.lock");
            for (int i = 0;
                 i < 10 && record.entry && record.entry->value.find(b.id()) != std::string::npos;
                 ++i)
                record = co_await consul.async_kv_get(
                    prefix + "/.lock", query_options::blocking(record.meta.index, 1s));
            REQUIRE(record.entry);
            CHECK(record.entry->value == R"({"Limit":1,"Holders":{}})");
        }
        co_await sem_a.async_destroy();
        co_await b.async_destroy();
        co_await a.async_destroy();
    };
    run(ioc, body());
}
