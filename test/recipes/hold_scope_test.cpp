// SPDX-License-Identifier: BSL-1.0
// with_lock, with_permit, with_leadership: the body's outcome, release however it ends, loss
// cancelling the body with a distinct error, cancellation at every point leaving nothing held.
#include "recipes_fixture.hpp"

#include <conclave/hold_scope.hpp>

#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>

#include <stdexcept>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

struct hold_fixture : recipes_fixture {
    /// Waits (blocking queries) until `key` is held by no session; false after `limit`.
    asio::awaitable<bool> wait_free(const std::string& key, std::chrono::milliseconds limit) {
        const auto end = std::chrono::steady_clock::now() + limit;
        std::uint64_t index = 0;
        while (std::chrono::steady_clock::now() < end) {
            auto r = co_await consul.async_kv_get(key, query_options::blocking(index, 500ms));
            if (!r.entry || r.entry->session.empty())
                co_return true;
            index = r.meta.index;
        }
        co_return false;
    }

    /// Who holds `key` now ("" when nobody).
    asio::awaitable<std::string> holder(const std::string& key) {
        auto r = co_await consul.async_kv_get(key);
        co_return r.entry ? r.entry->session : std::string{};
    }
};

/// The error code of what `aw` threw, or success.
template <class T>
asio::awaitable<error_code> code_of(asio::awaitable<T> aw) {
    try {
        co_await std::move(aw);
    } catch (const boost::system::system_error& e) {
        co_return e.code();
    }
    co_return error_code{};
}

} // namespace

TEST_CASE_METHOD(hold_fixture, "with_lock returns the body's value and releases the lock",
                 "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "l"};
        std::string seen_holder;
        const int got = co_await with_lock(mutex, s, [&](lock_lease lease) -> asio::awaitable<int> {
            CHECK(lease.held());
            CHECK(lease.health() == hold_health::held);
            seen_holder = co_await holder(p + "l");
            co_return 42;
        });
        CHECK(got == 42);
        CHECK(seen_holder == s.id());
        CHECK((co_await holder(p + "l")).empty());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "with_lock rethrows the body's exception after releasing",
                 "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        lock mutex{consul, p + "l"};
        bool threw = false;
        try {
            co_await with_lock(mutex, s, [&](lock_lease) -> asio::awaitable<void> {
                co_await sleep(10ms);
                throw std::runtime_error("the body failed");
            });
        } catch (const std::runtime_error& e) {
            threw = std::string(e.what()) == "the body failed";
        }
        CHECK(threw);
        CHECK((co_await holder(p + "l")).empty());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "a lost lock cancels the body and with_lock throws lock_lost",
                 "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        bool body_cancelled = false;
        auto scope = with_lock(mutex, s, [&](lock_lease) -> asio::awaitable<void> {
            try {
                // Taken away under the body (the loss may be seen, and the body cancelled,
                // before the delete's own answer arrives).
                co_await consul.async_kv_delete(p + "l");
                co_await sleep(20s);
            } catch (const boost::system::system_error& e) {
                body_cancelled = e.code() == asio::error::operation_aborted;
                throw;
            }
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK(ec == errc::lock_lost);
        CHECK(body_cancelled);
        CHECK_FALSE(s.lost()); // only the lock was lost
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "a lost session cancels the body with the session's reason",
                 "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        auto scope = with_lock(mutex, s, [&](lock_lease) -> asio::awaitable<void> {
            server.expire_session(s.id());
            co_await sleep(20s);
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK((ec == errc::session_invalidated || ec == errc::lock_lost));
        CHECK(ec != asio::error::operation_aborted);
        CHECK(co_await wait_free(p + "l", 5s));
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

// Cancellation reaches with_lock after `steps` turns of the event loop: while it acquires,
// while the body runs (between any two of its awaits), while it releases. Whatever the
// moment: a success means the body ran to its end, a cancellation is operation_aborted, and
// the lock ends up released.
TEST_CASE_METHOD(hold_fixture, "cancelling with_lock at any point leaves nothing held",
                 "[hold][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        auto ex = co_await asio::this_coro::executor;
        int cancellations = 0;
        for (int steps = 0; steps <= 120; steps += 3) {
            asio::cancellation_signal signal;
            int parts_done = 0;
            auto scope = with_lock(mutex, s, [&](lock_lease lease) -> asio::awaitable<int> {
                for (int i = 0; i < 3; ++i) {
                    co_await asio::post(ex, asio::use_awaitable);
                    co_await consul.async_kv_get(p + "l");
                    ++parts_done;
                }
                co_return static_cast<int>(lease.token().lock_index);
            });
            bool done = false;
            asio::steady_timer finished{ex, asio::steady_timer::time_point::max()};
            error_code ec;
            int value = 0;
            asio::co_spawn(
                ex, std::move(scope),
                asio::bind_cancellation_slot(signal.slot(), [&](std::exception_ptr e, int v) {
                    done = true;
                    finished.cancel();
                    value = v;
                    if (e) {
                        try {
                            std::rethrow_exception(e);
                        } catch (const boost::system::system_error& se) {
                            ec = se.code();
                        }
                    }
                }));
            for (int i = 0; i < steps && !done; ++i)
                co_await asio::post(ex, asio::use_awaitable);
            if (!done)
                signal.emit(asio::cancellation_type::terminal);
            if (!done)
                co_await finished.async_wait(awaitable_tuple);
            if (ec) {
                CHECK(ec == asio::error::operation_aborted);
                ++cancellations;
            } else {
                CHECK(parts_done == 3);
                CHECK(value > 0);
            }
            CHECK(co_await wait_free(p + "l", 5s));
        }
        // Cancelled before anything ran, at least the first one ends that way; how many
        // turns a whole scope takes depends on the server's latency, so whether the later
        // ones complete does too: the one below is never cancelled.
        CHECK(cancellations > 0);
        const int whole =
            co_await with_lock(mutex, s, [&](lock_lease lease) -> asio::awaitable<int> {
                co_return static_cast<int>(lease.token().lock_index);
            });
        CHECK(whole > 0);
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body(), 60s);
}

TEST_CASE_METHOD(hold_fixture, "cancelling while waiting for the lock leaves the holder alone",
                 "[hold][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick());
        auto b = co_await session::async_create(consul, quick());
        lock mutex_a{consul, p + "l"};
        lock mutex_b{consul, p + "l"};
        auto held = co_await mutex_a.async_acquire(a);
        bool ran = false;
        auto scope = with_lock(mutex_b, b, [&](lock_lease) -> asio::awaitable<void> {
            ran = true;
            co_return;
        });
        auto outcome = co_await (code_of(std::move(scope)) || sleep(200ms));
        CHECK(outcome.index() == 1); // still waiting when the timer cancelled it
        CHECK_FALSE(ran);
        CHECK((co_await holder(p + "l")) == a.id());
        co_await held.async_release();
        co_await mutex_a.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "a release that fails is retried until the lock is free", "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        co_await with_lock(mutex, s, [&](lock_lease) -> asio::awaitable<void> {
            // The release (a /v1/txn) and the first retry meet a closed connection.
            server.inject_disconnects("/v1/txn", 2);
            co_return;
        });
        CHECK(co_await wait_free(p + "l", 10s));
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "with_permit holds one slot for the body", "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "sem", 1};
        auto got = co_await with_permit(sem, s, [&](permit slot) -> asio::awaitable<std::string> {
            CHECK(slot.held());
            co_return slot.token().session;
        });
        CHECK(got == s.id());
        // The slot is free again: another session gets it at once.
        auto other = co_await session::async_create(consul, quick());
        auto next = co_await sem.async_try_acquire(other, 5s);
        REQUIRE(next);
        co_await next->async_release();
        co_await other.async_destroy();

        // Lost while held: the body is cancelled, the loss reported.
        auto scope = with_permit(sem, s, [&](permit) -> asio::awaitable<void> {
            server.expire_session(s.id());
            co_await sleep(20s);
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK((ec == errc::session_invalidated || ec == errc::lock_lost));
        co_await sem.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "with_leadership runs one term and steps down", "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        elector el{consul, p + "leader", elector_options{}.with_value("node-1")};
        auto during = co_await with_leadership(
            el, s, [&](leadership term) -> asio::awaitable<std::optional<leader_info>> {
                CHECK(term.health() == hold_health::held);
                CHECK(term.token().session == s.id());
                co_return co_await el.async_leader();
            });
        REQUIRE(during);
        CHECK(during->value == "node-1");
        CHECK(during->session == s.id());
        CHECK_FALSE(co_await el.async_leader());
        co_await consul.async_kv_delete(p + "leader");
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "async_campaign is refused while async_run campaigns", "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        elector el{consul, p + "leader"};
        error_code refused;
        asio::steady_timer tried{ioc, asio::steady_timer::time_point::max()};
        auto leading = [&](leadership) -> asio::awaitable<void> {
            auto [ec, term] = co_await el.async_campaign(s, awaitable_tuple);
            refused = ec;
            tried.cancel();
            co_await sleep(20s);
        };
        auto outcome = co_await (el.async_run(s, leading, awaitable_tuple) ||
                                 tried.async_wait(awaitable_tuple));
        CHECK(outcome.index() == 1);
        CHECK(refused == errc::invalid_argument);
        co_await consul.async_kv_delete(p + "leader");
        co_await s.async_destroy();
    };
    run(ioc, body());
}

// The scope runs as a coroutine of its own: the caller's cancellation settings are left as
// they were, so a loop of scopes stays cancellable after its first pass.
TEST_CASE_METHOD(hold_fixture, "a loop of with_lock stays cancellable", "[hold][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        int passes = 0;
        asio::steady_timer passed{ioc, asio::steady_timer::time_point::max()};
        auto loop = [&]() -> asio::awaitable<void> {
            for (;;) {
                co_await with_lock(mutex, s,
                                   [&](lock_lease) -> asio::awaitable<void> { co_return; });
                ++passes;
                passed.cancel(); // (cancelling the loop from the other side of the `||`)
                // Between scopes, an await that only cancellation ends.
                asio::steady_timer idle{ioc, asio::steady_timer::time_point::max()};
                co_await idle.async_wait(asio::use_awaitable);
            }
        };
        auto outcome = co_await (code_of(loop()) || [&]() -> asio::awaitable<void> {
            co_await passed.async_wait(awaitable_tuple);
        }());
        CHECK(outcome.index() == 1); // the loop was cancelled at its idle wait
        CHECK(passes == 1);
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "losing the outer lock cancels a body nested in an inner scope",
                 "[hold]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock outer{consul, p + "outer"};
        lock inner{consul, p + "inner"};
        bool inner_cancelled = false;
        auto scope = with_lock(outer, s, [&](lock_lease) -> asio::awaitable<void> {
            co_await with_lock(inner, s, [&](lock_lease) -> asio::awaitable<void> {
                try {
                    // The outer lock is taken away (its loss may be seen, and this body
                    // cancelled, before the delete's own answer arrives).
                    co_await consul.async_kv_delete(p + "outer");
                    co_await sleep(20s);
                } catch (const boost::system::system_error& e) {
                    inner_cancelled = e.code() == asio::error::operation_aborted;
                    throw;
                }
            });
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK(ec == errc::lock_lost);
        CHECK(inner_cancelled);
        CHECK(co_await wait_free(p + "inner", 5s)); // the inner scope released its lock
        co_await inner.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "try_with_lock skips the body while another session holds the lock",
                 "[hold][try]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        auto other = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        auto theirs = co_await mutex.async_acquire(other);
        bool ran = false;
        const bool had =
            co_await try_with_lock(mutex, s, 0ms, [&](lock_lease) -> asio::awaitable<void> {
                ran = true;
                co_return;
            });
        CHECK_FALSE(had);
        CHECK_FALSE(ran);
        CHECK((co_await holder(p + "l")) == other.id()); // left to its holder

        // Within a budget: the body runs once the holder lets go.
        asio::steady_timer waiting{ioc, 50ms};
        auto let_go = [&]() -> asio::awaitable<void> {
            co_await waiting.async_wait(asio::use_awaitable);
            co_await theirs.async_release();
        };
        auto got = co_await (try_with_lock(mutex, s, 10s,
                                           [&](lock_lease lease) -> asio::awaitable<std::string> {
                                               co_return lease.token().session;
                                           }) &&
                             let_go());
        REQUIRE(got);
        CHECK(*got == s.id());
        CHECK((co_await holder(p + "l")).empty()); // released after the body
        co_await mutex.async_destroy();
        co_await s.async_destroy();
        co_await other.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "try_with_lock releases however the body ends", "[hold][try]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, p + "l"};
        // A body that throws: the exception comes out after the release.
        bool threw = false;
        try {
            co_await try_with_lock(mutex, s, 0ms, [&](lock_lease) -> asio::awaitable<void> {
                co_await sleep(10ms);
                throw std::runtime_error("the body failed");
            });
        } catch (const std::runtime_error& e) {
            threw = std::string(e.what()) == "the body failed";
        }
        CHECK(threw);
        CHECK((co_await holder(p + "l")).empty());

        // A lock lost under the body: the body is cancelled, and the loss is the error.
        bool body_cancelled = false;
        auto scope = try_with_lock(mutex, s, 0ms, [&](lock_lease) -> asio::awaitable<void> {
            try {
                co_await consul.async_kv_delete(p + "l");
                co_await sleep(20s);
            } catch (const boost::system::system_error& e) {
                body_cancelled = e.code() == asio::error::operation_aborted;
                throw;
            }
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK(ec == errc::lock_lost);
        CHECK(body_cancelled);
        CHECK_FALSE(s.lost());
        co_await mutex.async_destroy();
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "try_with_permit skips the body while every slot is taken",
                 "[hold][try]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick(10s));
        auto other = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "sem", 1};
        auto theirs = co_await sem.async_acquire(other);
        const auto skipped = co_await try_with_permit(
            sem, s, 0ms, [&](permit) -> asio::awaitable<int> { co_return 1; });
        CHECK_FALSE(skipped);
        co_await theirs.async_release();
        // Within a budget: the release reaches this process's view of the semaphore through
        // its query.
        const auto ran =
            co_await try_with_permit(sem, s, 5s, [&](permit slot) -> asio::awaitable<int> {
                CHECK(slot.held());
                co_return 2;
            });
        REQUIRE(ran);
        CHECK(*ran == 2);
        // The slot is free again.
        auto again = co_await sem.async_try_acquire(other, 5s);
        REQUIRE(again);
        co_await again->async_release();
        co_await sem.async_destroy();
        co_await s.async_destroy();
        co_await other.async_destroy();
    };
    run(ioc, body());
}

namespace {

/// Whether Consul still knows session `id`.
asio::awaitable<bool> session_exists(client& consul, const std::string& id) {
    auto info = co_await consul.async_session_info(id);
    co_return info.session.has_value();
}

} // namespace

TEST_CASE_METHOD(hold_fixture, "with_session runs the body in a renewed session, then destroys it",
                 "[hold][with-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        lock mutex{consul, p + "l"};
        // A TTL shorter than the body: only the renewals beside it keep the session.
        const int got =
            co_await with_session(consul, quick(300ms), [&](session& s) -> asio::awaitable<int> {
                id = s.id();
                co_await sleep(1s);
                CHECK_FALSE(s.lost());
                co_return co_await with_lock(mutex, s,
                                             [&](lock_lease lease) -> asio::awaitable<int> {
                                                 CHECK(lease.token().session == s.id());
                                                 co_return 7;
                                             });
            });
        CHECK(got == 7);
        CHECK_FALSE(co_await session_exists(consul, id)); // destroyed before the return
        co_await mutex.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "with_session destroys the session when the body throws",
                 "[hold][with-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        // Many bodies that throw: none leaves its session behind.
        for (int i = 0; i < 50; ++i) {
            bool threw = false;
            try {
                co_await with_session(consul, quick(), [&](session&) -> asio::awaitable<void> {
                    co_await asio::post(ioc, asio::use_awaitable);
                    throw std::runtime_error("the body failed");
                });
            } catch (const std::runtime_error& e) {
                threw = std::string(e.what()) == "the body failed";
            }
            CHECK(threw);
        }
        auto left = co_await consul.async_session_list();
        CHECK(left.sessions.empty());
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "a lost session cancels the body of with_session with its reason",
                 "[hold][with-session]") {
    auto body = [&]() -> asio::awaitable<void> {
        bool body_cancelled = false;
        auto scope = with_session(consul, quick(10s), [&](session& s) -> asio::awaitable<void> {
            try {
                server.expire_session(s.id());
                co_await sleep(20s);
            } catch (const boost::system::system_error& e) {
                body_cancelled = e.code() == asio::error::operation_aborted;
                throw;
            }
        });
        const error_code ec = co_await code_of(std::move(scope));
        CHECK(ec == errc::session_invalidated);
        CHECK(body_cancelled);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(hold_fixture, "cancelling with_session cancels the body and destroys the session",
                 "[hold][with-session][cancel]") {
    auto body = [&]() -> asio::awaitable<void> {
        std::string id;
        bool body_cancelled = false;
        asio::steady_timer started{ioc, asio::steady_timer::time_point::max()};
        auto scope = with_session(consul, quick(10s), [&](session& s) -> asio::awaitable<void> {
            id = s.id();
            started.cancel();
            try {
                co_await sleep(20s);
            } catch (const boost::system::system_error& e) {
                body_cancelled = e.code() == asio::error::operation_aborted;
                throw;
            }
        });
        auto stop = [&]() -> asio::awaitable<void> {
            co_await started.async_wait(awaitable_tuple);
        };
        auto outcome = co_await (code_of(std::move(scope)) || stop());
        CHECK(outcome.index() == 1);
        CHECK(body_cancelled);
        REQUIRE_FALSE(id.empty());
        CHECK_FALSE(co_await session_exists(consul, id)); // destroyed before it completed
    };
    run(ioc, body());
}
