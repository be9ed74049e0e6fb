// SPDX-License-Identifier: BSL-1.0
// Herd-free waiting: local waiters on one key share one blocking query, wait in arrival
// order, and a local release hands the key to the next waiter in its own transaction.
// Proven by counting the requests the agent served.
#include "recipes_fixture.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <thread>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

TEST_CASE_METHOD(recipes_fixture, "many local waiters share one blocking query on the key",
                 "[lock][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t waiters = 16;
        auto holder_session = co_await session::async_create(consul, quick(5s));
        lock holder_lock{consul, p + "k"};
        auto held = co_await holder_lock.async_acquire(holder_session);

        contenders<lock> c{waiters};
        countdown granted{ioc.get_executor(), waiters};
        for (std::size_t i = 0; i < waiters; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<lock>(consul, p + "k"));
        }
        countdown released{ioc.get_executor(), waiters};
        // (A coroutine lambda must outlive its coroutines: one closure, the index passed.)
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            auto lease = co_await c.objects[i]->async_acquire(c.sessions[i]);
            granted.count_down();
            co_await lease.async_release();
            released.count_down();
        };
        server.reset_stats();
        for (std::size_t i = 0; i < waiters; ++i)
            asio::co_spawn(ioc, one(i), asio::detached);
        // Nothing to await for an absence of requests: let the waiters settle, then look.
        co_await sleep(300ms);
        const auto waiting = server.stats();
        CHECK(waiting.blocking_queries_waiting == 1); // one query for 16 waiters
        CHECK(waiting.requests <= 2);                 // that query (and at most one re-read)
        CHECK(granted.left() == waiters);

        co_await held.async_release();
        co_await released.wait();
        // Every waiter got the key by a handoff: one transaction each, plus the release.
        const auto after = server.stats();
        CHECK(count(after, "PUT /v1/txn") == waiters + 1);
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        co_await holder_lock.async_destroy();
        co_await holder_session.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture, "local waiters get the lock in arrival order", "[lock][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t waiters = 8;
        auto holder_session = co_await session::async_create(consul, quick(5s));
        lock holder_lock{consul, p + "k"};
        auto held = co_await holder_lock.async_acquire(holder_session);

        contenders<lock> c{waiters};
        std::vector<std::size_t> order;
        countdown done{ioc.get_executor(), waiters};
        for (std::size_t i = 0; i < waiters; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<lock>(consul, p + "k"));
        }
        auto one = [&](std::size_t i) -> asio::awaitable<void> {
            auto lease = co_await c.objects[i]->async_acquire(c.sessions[i]);
            order.push_back(i);
            co_await lease.async_release();
            done.count_down();
        };
        for (std::size_t i = 0; i < waiters; ++i) {
            asio::co_spawn(ioc, one(i), asio::detached);
            co_await sleep(5ms); // arrival order = spawn order, spaced out
        }
        co_await held.async_release();
        co_await done.wait();
        std::vector<std::size_t> expected(waiters);
        for (std::size_t i = 0; i < waiters; ++i)
            expected[i] = i;
        CHECK(order == expected);
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        co_await holder_lock.async_destroy();
        co_await holder_session.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "contenders that re-acquire in a loop take turns and cost few requests per "
                 "handoff",
                 "[lock][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t n = 8;
        constexpr int rounds = 20;
        contenders<lock> c{n};
        for (std::size_t i = 0; i < n; ++i) {
            c.sessions[i] = co_await session::async_create(consul, quick(5s));
            c.objects.push_back(std::make_unique<lock>(consul, p + "k"));
        }
        server.reset_stats();
        std::vector<std::size_t> grants; // who got it, in order
        countdown finished{ioc.get_executor(), n};
        auto loop = [&](std::size_t i) -> asio::awaitable<void> {
            for (int r = 0; r < rounds; ++r) {
                auto lease = co_await c.objects[i]->async_acquire(c.sessions[i]);
                grants.push_back(i);
                co_await lease.async_release();
            }
            finished.count_down();
        };
        for (std::size_t i = 0; i < n; ++i)
            asio::co_spawn(ioc, loop(i), asio::detached);
        co_await finished.wait();
        REQUIRE(grants.size() == n * rounds);
        // Nobody starves while others re-acquire: once all are queued, every window of n
        // consecutive grants names every contender once.
        for (std::size_t start = n; start + n <= grants.size() - n; ++start) {
            std::vector<std::size_t> window(grants.begin() + static_cast<long>(start),
                                            grants.begin() + static_cast<long>(start + n));
            std::sort(window.begin(), window.end());
            CHECK(std::unique(window.begin(), window.end()) == window.end());
        }
        const auto stats = server.stats();
        const double per_handoff = static_cast<double>(stats.requests) / (n * rounds);
        CHECK(per_handoff <= 2.5);
        CHECK(count(stats, "PUT /v1/txn") <= n * rounds + n); // no refused attempts
        for (auto& s : c.sessions)
            co_await s.async_destroy();
        lock cleanup{consul, p + "k"};
        co_await cleanup.async_destroy();
    };
    // 160 handoffs: on a three-server cluster and a loaded machine, each Raft commit may
    // take a tenth of a second. The limit only catches a hang.
    run(ioc, body(), std::chrono::minutes{3});
}

// After its last user left, a key's query lingers (100 ms) without waking for holders that
// come and go; a waiter that needs it meanwhile must still start it at once.
TEST_CASE_METHOD(recipes_fixture,
                 "a waiter that comes while the key's idle query lingers starts it",
                 "[lock][hub]") {
    auto body = [&]() -> asio::awaitable<void> {
        client other{ioc.get_executor(), server.client_config()};
        auto mine = co_await session::async_create(consul, quick(5s));
        auto theirs = co_await session::async_create(other, quick(5s));
        lock here{consul, p + "k"};
        lock there{other, p + "k"};
        // Our hub knows the key (free, as our release left it) and lingers.
        auto first = co_await here.async_acquire(mine);
        co_await first.async_release();
        auto held = co_await there.async_acquire(theirs);
        // Our next attempt is refused (the key changed since): it needs the query now.
        countdown acquired{ioc.get_executor(), 1};
        std::optional<lock_lease> second;
        auto acquire = [&]() -> asio::awaitable<void> {
            second = co_await here.async_acquire(mine);
            acquired.count_down();
        };
        const auto start = std::chrono::steady_clock::now();
        asio::co_spawn(ioc, acquire(), asio::detached);
        while (server.stats().blocking_queries_waiting == 0 &&
               std::chrono::steady_clock::now() - start < 2s)
            co_await sleep(2ms);
        // Parked well before the grace ends (a query left lingering parks only after it,
        // about 100 ms after our first acquire).
        CHECK(std::chrono::steady_clock::now() - start < 70ms);
        CHECK(server.stats().blocking_queries_waiting == 1);
        co_await held.async_release();
        co_await acquired.wait();
        REQUIRE(second);
        co_await second->async_release();
        co_await mine.async_destroy();
        co_await theirs.async_destroy();
        co_await here.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a waiter cancelled while the key is handed to it does not keep it",
                 "[lock][hub][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(5s));
        auto b = co_await session::async_create(consul, quick(5s));
        lock mutex_a{consul, p + "h"};
        lock mutex_b{consul, p + "h"};
        for (auto delay : {0ms, 1ms, 2ms, 3ms, 5ms, 8ms}) {
            auto held = co_await mutex_a.async_acquire(a);
            cancel_after cancel{ioc.get_executor(), delay};
            auto waiter = mutex_b.async_acquire(b, cancel.bind(awaitable_tuple));
            auto release = held.async_release(awaitable_tuple);
            // (&& flattens the first result: error, lease, then the release's tuple)
            auto [ec, lease, released] = co_await (std::move(waiter) && std::move(release));
            cancel.disarm();
            CHECK_FALSE(std::get<0>(released));
            if (!ec) {
                CHECK(lease.held());
                co_await lease.async_release();
            } else {
                CHECK(ec == asio::error::operation_aborted);
            }
            // Whatever happened, nobody holds the key once the background undo of an
            // abandoned handoff (if any) is through: follow the key with blocking reads.
            auto key = co_await consul.async_kv_get(mutex_a.key());
            for (int i = 0; i < 10 && key.entry && !key.entry->session.empty(); ++i)
                key = co_await consul.async_kv_get(mutex_a.key(),
                                                   query_options::blocking(key.meta.index, 1s));
            CHECK((!key.entry || key.entry->session.empty()));
        }
        co_await mutex_a.async_destroy();
        co_await b.async_destroy();
        co_await a.async_destroy();
    };
    run(ioc, body());
}

namespace {

// The server on a thread of its own: the client's io_context then holds only the client's
// work, and runs out of it once that is done.
struct server_thread {
    asio::io_context ioc;
    std::unique_ptr<backend> server = std::make_unique<backend>(ioc, recipes_agent_config());
    asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
    std::thread thread{[this] { ioc.run(); }};

    ~server_thread() {
        asio::post(ioc, [this] {
            server.reset();
            work.reset();
        });
        thread.join();
    }
};

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t{co_await asio::this_coro::executor, d};
    co_await t.async_wait(asio::deferred);
}

// Runs `work` on `ioc` (alone on it), then what is ready at once: whether the io_context is
// out of work by then, as a program's io_context::run() returns when its work is done. An
// event, not a duration: a query left lingering is a timer still pending.
bool out_of_work_when_done(asio::io_context& ioc, asio::awaitable<void> work) {
    bool done = false;
    std::exception_ptr failed;
    asio::co_spawn(ioc, std::move(work), [&](std::exception_ptr e) {
        done = true;
        failed = e;
    });
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!done && !ioc.stopped() && std::chrono::steady_clock::now() < deadline)
        ioc.run_one_until(deadline);
    REQUIRE(done);
    if (failed)
        std::rethrow_exception(failed);
    // Out of work once the answers to reads in flight came (prompt: our own writes outdated
    // them), not after a blocking query's wait (15 s) nor a linger.
    ioc.run_for(10s);
    return ioc.stopped();
}

} // namespace

// After the last user left, a key's query lingers for holders that come again; once no
// lock object on the key is left, nobody can, and lingering would only delay the end of
// the program (`conclave lock k true` took 100 ms longer than its work).
TEST_CASE("the query of a key ends with the last lock or semaphore object on it",
          "[lock][semaphore][hub]") {
    server_thread st;
    const auto config = st.server->client_config();
    const auto p = st.server->prefix();
    for (const std::string kind : {"lock", "monitored lock", "semaphore", "monitored semaphore"}) {
        DYNAMIC_SECTION(kind) {
            const bool monitored = kind.rfind("monitored", 0) == 0;
            asio::io_context ioc;
            client consul{ioc.get_executor(), config};
            // The lease's monitor subscribes 1 ms after it began: the query then runs.
            auto hold = [&](auto& grant) -> asio::awaitable<void> {
                if (monitored)
                    co_await (grant.async_wait_lost(awaitable_tuple) || pause(20ms));
                co_await grant.async_release();
            };
            auto work = [&]() -> asio::awaitable<void> {
                auto s = co_await session::async_create(consul, quick(5s));
                if (kind.find("lock") != std::string::npos) {
                    lock l{consul, p + "k"};
                    auto lease = co_await l.async_acquire(s);
                    co_await hold(lease);
                    co_await l.async_destroy();
                } else {
                    semaphore sem{consul, p + "sem", 2};
                    auto slot = co_await sem.async_acquire(s);
                    co_await hold(slot);
                    co_await sem.async_destroy();
                }
                co_await s.async_destroy();
            };
            CHECK(out_of_work_when_done(ioc, work()));
        }
    }
}

// Each hold on a lock object of its own, long enough for its monitor's query to start: the
// release outdates the query, whose answer then comes at once. Ending it instead would
// leave its connection counted until its wait is over, and a few holds would take every
// connection of the client.
TEST_CASE_METHOD(recipes_fixture,
                 "short holds on lock objects of their own keep the connections free",
                 "[lock][hub]") {
    auto cfg = server.client_config();
    cfg.max_connections = 4;
    client few{ioc.get_executor(), cfg};
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(few, quick(10s));
        int held = 0;
        for (int i = 0; i < 40; ++i) {
            lock task{few, p + "task-" + std::to_string(i)};
            co_await with_lock(task, s, [&](lock_lease) -> asio::awaitable<void> {
                co_await sleep(5ms); // (the monitor's query starts after 1 ms)
                ++held;
            });
        } // (the lock object goes right after its release, its query's answer still due)
        CHECK(held == 40);
        co_await s.async_destroy();
        co_await few.async_kv_delete(p + "task-", kv_delete_options{}.with_recurse());
    };
    // Forty short holds need no more than a few seconds; with connections held for a
    // query's wait (15 s) each, four connections would take minutes.
    run(ioc, body(), 60s);
}
