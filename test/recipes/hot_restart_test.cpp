// SPDX-License-Identifier: BSL-1.0
// Hot restart: a process hands its session over (session::hand_over, elector::hand_over) and
// writes nothing more for it; its successor resumes the session (session::async_resume,
// session_config::with_resume) and has its lock or leadership again with the same token, and
// nothing is written that observers could see.
#include "elector_candidate.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

// The key as Consul has it now (it must exist).
asio::awaitable<kv_entry> read_key(client& c, std::string key) {
    auto r = co_await c.async_kv_get(std::move(key));
    REQUIRE(r.entry);
    co_return *r.entry;
}

// What a failed operation threw: its code and text.
template <class Op>
asio::awaitable<std::pair<error_code, std::string>> failure_of(Op op) {
    try {
        co_await op();
    } catch (const conclave::error& e) {
        co_return std::pair{e.code(), std::string(e.what())};
    }
    co_return std::pair{error_code{}, std::string()};
}

} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "a lock whose session is handed over is had again by the successor with the "
                 "same token and no write",
                 "[lock][hot-restart]") {
    client successor{ioc.get_executor(), server.client_config()};
    const std::string key = p + "lock";
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        fencing_token token;
        kv_entry before;
        {
            // The predecessor: holds the lock, then hands its session over and goes away.
            auto s = co_await session::async_create(consul, quick(10s));
            lock mutex{consul, key};
            auto lease = co_await mutex.async_acquire(s);
            token = lease.token();
            id = s.id();
            before = co_await read_key(consul, key);

            auto handing = [&]() -> asio::awaitable<bool> { co_return s.hand_over(); };
            auto [ran, handed] = co_await (s.async_run(awaitable_tuple) && handing());
            CHECK(handed);
            CHECK_FALSE(ran); // the run ends with success
            CHECK(s.lost());
            CHECK(s.loss_reason() == errc::session_handed_over);
            CHECK_FALSE(lease.held());
            auto [lost] = co_await lease.async_wait_lost(awaitable_tuple);
            CHECK(lost == errc::session_handed_over);
            auto [released] = co_await lease.async_release(awaitable_tuple);
            CHECK_FALSE(released);      // at once, with nothing sent
            co_await s.async_destroy(); // does nothing either
            CHECK_FALSE(s.hand_over()); // once only
        } // (its last handles go: the session is not destroyed in the background)

        auto s = co_await session::async_resume(successor, id);
        CHECK(s.resumed());
        CHECK(s.id() == id);
        CHECK(s.ttl() >= 10s);
        CHECK(s.config().lock_delay == 0ms);
        lock mutex{successor, key};
        auto lease = co_await mutex.async_acquire(s);
        CHECK(lease.token() == token);
        const auto after = co_await read_key(successor, key);
        CHECK(after.session == id);
        CHECK(after.lock_index == before.lock_index);
        CHECK(after.modify_index == before.modify_index); // nothing written: observers saw nothing

        co_await lease.async_release();
        co_await s.async_destroy();
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a hold scope whose session is handed over ends with session_handed_over and "
                 "leaves the lock held",
                 "[lock][hot-restart]") {
    const std::string key = p + "lock";
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, key};
        fencing_token token;
        auto work = [&](lock_lease lease) -> asio::awaitable<void> {
            token = lease.token();
            CHECK(s.hand_over());
            // Cancelled by the hand-over at its next wait.
            asio::steady_timer forever{ioc, std::chrono::steady_clock::time_point::max()};
            co_await forever.async_wait(asio::use_awaitable);
        };
        const auto [ec, text] = co_await failure_of([&] { return with_lock(mutex, s, work); });
        CHECK(ec == errc::session_handed_over);
        const auto entry = co_await read_key(consul, key);
        CHECK(entry.session == s.id()); // not released: the successor's now
        CHECK(entry.modify_index == token.modify_index);

        // (Clean up as the successor would.)
        auto again = co_await session::async_resume(consul, s.id());
        co_await again.async_destroy();
        co_await mutex.async_destroy();

        // An acquire still waiting when its session is handed over ends with that reason.
        auto holder = co_await session::async_create(consul, quick(10s));
        auto waiter = co_await session::async_create(consul, quick(10s));
        auto held = co_await mutex.async_acquire(holder);
        lock other{consul, key};
        auto hand_over_soon = [&]() -> asio::awaitable<bool> {
            co_await sleep(50ms); // (either way: waiting or not yet, the acquire must fail)
            co_return waiter.hand_over();
        };
        auto [acquired, not_held, handed] =
            co_await (other.async_acquire(waiter, awaitable_tuple) && hand_over_soon());
        CHECK(handed);
        CHECK(acquired == errc::session_handed_over);
        CHECK_FALSE(not_held.valid());
        co_await held.async_release();
        co_await holder.async_destroy();
        auto resumed = co_await session::async_resume(consul, waiter.id());
        co_await resumed.async_destroy();
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a leader hands over and its successor leads on in the same term: observers "
                 "see no change",
                 "[elector][hot-restart]") {
    client successor{ioc.get_executor(), server.client_config()};
    client watcher{ioc.get_executor(), server.client_config()};
    const std::string key = p + "leader";
    auto body = [&]() -> asio::awaitable<void> {
        elector seen{watcher, key};
        auto observer = seen.observe();

        // The predecessor leads with a session of its own, then hands it over.
        candidate first{*this, consul, elector_options{}.with_value("10.0.0.1:80")};
        error_code first_ended = make_error_code(errc::timeout);
        bool first_done = false;
        first.el.async_run(quick(10s), first.lead_forever(), [&](error_code ec) {
            first_ended = ec;
            first_done = true;
            first.changed.notify();
        });
        co_await first.wait_until([&] { return first.terms == 1; });
        const auto token = first.tokens.front();
        auto leader = co_await observer.async_next();
        REQUIRE(leader);
        CHECK(leader->lock_index == token.lock_index);
        const auto before = co_await read_key(watcher, key);

        const std::string id = first.el.hand_over();
        CHECK(id == token.session);
        co_await first.wait_until([&] { return first_done && first.tasks_returned == 1; });
        CHECK_FALSE(first_ended); // success: handed over
        CHECK_FALSE(first.el.is_leader());
        CHECK(first.el.hand_over().empty()); // nothing running any more

        // The successor resumes the session and leads at once with the same token.
        std::vector<bool> resumed;
        candidate second{*this, successor,
                         elector_options{}
                             .with_value("10.0.0.1:80")
                             .with_on_session([&](const session_event& e) {
                                 if (e.what == session_event::kind::created)
                                     resumed.push_back(e.current->resumed());
                             })};
        std::optional<error_code> second_ended;
        auto cfg = quick(10s).with_resume(id);
        second.el.async_run(cfg, second.lead_forever(),
                            asio::bind_cancellation_slot(second.stop.slot(), [&](error_code ec) {
                                second_ended = ec;
                                second.changed.notify();
                            }));
        co_await second.wait_until([&] { return second.terms == 1; });
        CHECK(second.tokens.front() == token);
        CHECK(resumed == std::vector<bool>{true});
        const auto during = co_await read_key(watcher, key);
        CHECK(during.modify_index == before.modify_index);
        CHECK(during.lock_index == before.lock_index);

        // The observer's next report is the successor's stop (the key released): nothing in
        // between.
        second.stop.emit(asio::cancellation_type::terminal);
        co_await second.wait_until([&] { return second_ended.has_value(); });
        CHECK(*second_ended == asio::error::operation_aborted);
        auto next = co_await observer.async_next();
        CHECK_FALSE(next);
        co_await consul.async_kv_delete(key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "resuming a session Consul no longer knows is refused with a clear error: "
                 "with_resume creates a new one instead",
                 "[session][hot-restart]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto gone = co_await session::async_create(consul, quick(10s));
        const std::string id = gone.id();
        co_await gone.async_destroy();

        const auto [ec, text] =
            co_await failure_of([&] { return session::async_resume(consul, id); });
        CHECK(ec == errc::session_invalidated);
        CHECK(text.find("no longer knows session " + id) != std::string::npos);
        const auto [empty_ec, empty_text] =
            co_await failure_of([&] { return session::async_resume(consul, ""); });
        CHECK(empty_ec == errc::invalid_argument);

        auto fresh = co_await session::async_create(consul, quick(10s).with_resume(id));
        CHECK_FALSE(fresh.resumed());
        CHECK(fresh.id() != id);
        CHECK(fresh.ttl() >= 10s);
        co_await fresh.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "a permit whose session is handed over is had again by the successor without "
                 "another slot",
                 "[semaphore][hot-restart]") {
    client successor{ioc.get_executor(), server.client_config()};
    const std::string prefix = p + "pool";
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        fencing_token token;
        kv_entry before;
        {
            auto s = co_await session::async_create(consul, quick(10s));
            semaphore pool{consul, prefix, 2};
            auto permit = co_await pool.async_acquire(s);
            token = permit.token();
            id = s.id();
            before = co_await read_key(consul, prefix + "/.lock");
            CHECK(s.hand_over());
            auto [released] = co_await permit.async_release(awaitable_tuple);
            CHECK_FALSE(released);
        }
        auto s = co_await session::async_resume(successor, id);
        semaphore pool{successor, prefix, 2};
        auto permit = co_await pool.async_acquire(s);
        CHECK(permit.token() == token);
        const auto after = co_await read_key(successor, prefix + "/.lock");
        CHECK(after.modify_index == before.modify_index); // .lock unwritten
        auto status = co_await pool.async_status();
        CHECK(status.free_slots == 1); // the same slot, not a second one

        co_await permit.async_release();
        co_await s.async_destroy();
        co_await pool.async_destroy();
    };
    run(ioc, body());
}
