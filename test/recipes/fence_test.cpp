// SPDX-License-Identifier: BSL-1.0
// Fencing on the resource side: conclave::fence and async_fenced_put refuse a holder whose
// lock was taken over while it was paused.
#include "recipes_fixture.hpp"

#include <conclave/fence.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

fencing_token token_at(std::uint64_t index) {
    fencing_token t;
    t.key = "locks/report";
    t.session = "s";
    t.modify_index = index;
    return t;
}

/// The paused-holder case: A holds the lock, is paused past its session's TTL (its session
/// expires), B acquires, and A wakes up with its old token.
struct takeover {
    fencing_token paused;
    fencing_token successor;
};

} // namespace

TEST_CASE("a fence admits tokens in grant order, per resource", "[fence]") {
    fence f;
    CHECK(f.last("a") == 0);
    CHECK(f.admit("a", token_at(10)));
    CHECK(f.admit("a", token_at(10))); // the same grant writes again
    CHECK(f.admit("a", token_at(12)));
    CHECK_FALSE(f.admit("a", token_at(11))); // an older grant, after a newer one
    CHECK(f.last("a") == 12);
    CHECK(f.admit("b", token_at(11))); // resources are fenced apart
    CHECK_FALSE(f.admit("c", token_at(0)));
    f.forget("a");
    CHECK(f.last("a") == 0);
    CHECK(f.admit("a", token_at(1)));
}

TEST_CASE_METHOD(recipes_fixture, "a holder paused past its TTL is fenced out by its successor",
                 "[fence]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string lock_key = p + "lock";
        const std::string resource = p + "report";
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        lock mutex_a{consul, lock_key};
        lock mutex_b{consul, lock_key};
        takeover t;
        auto lease_a = co_await mutex_a.async_acquire(a);
        t.paused = lease_a.token();
        co_await async_fenced_put(consul, resource, "from A, before the pause", t.paused);

        // A is paused: its session expires on the server, B takes the lock and writes.
        server.expire_session(a.id());
        auto lease_b = co_await mutex_b.async_acquire(b);
        t.successor = lease_b.token();
        CHECK(t.successor.modify_index > t.paused.modify_index);
        co_await async_fenced_put(consul, resource, "from B", t.successor);

        // A wakes up and writes with the token it still has: refused.
        auto [ec] = co_await async_fenced_put(consul, resource, "from A, after the pause", t.paused,
                                              awaitable_tuple);
        CHECK(ec == errc::lock_lost);
        auto stored = co_await consul.async_kv_get(resource);
        REQUIRE(stored.entry);
        CHECK(stored.entry->value == "from B");
        CHECK(stored.entry->flags == t.successor.modify_index);

        // The same story against an in-memory fence.
        fence f;
        CHECK(f.admit(resource, t.paused));
        CHECK(f.admit(resource, t.successor));
        CHECK_FALSE(f.admit(resource, t.paused));

        // The successor may write again; the lock's own key is not a resource.
        co_await async_fenced_put(consul, resource, "from B again", t.successor);
        auto [own] = co_await async_fenced_put(consul, lock_key, "x", t.successor, awaitable_tuple);
        CHECK(own == errc::invalid_argument);
        auto [empty] =
            co_await async_fenced_put(consul, resource, "x", fencing_token{}, awaitable_tuple);
        CHECK(empty == errc::invalid_argument);

        co_await lease_b.async_release();
        co_await consul.async_kv_delete(resource);
        co_await mutex_b.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "concurrent fenced writers: the holder's writes race, a stale one is refused",
                 "[fence]") {
    auto body = [&]() -> asio::awaitable<void> {
        using namespace boost::asio::experimental::awaitable_operators;
        const std::string lock_key = p + "lock";
        const std::string resource = p + "counter";
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        lock mutex{consul, lock_key};
        auto first = co_await mutex.async_acquire(a);
        const fencing_token old = first.token();
        co_await async_fenced_put(consul, resource, "a", old);
        co_await first.async_release();
        auto second = co_await mutex.async_acquire(b);
        const fencing_token now = second.token();
        auto write = [&](fencing_token t, std::string v) -> asio::awaitable<error_code> {
            auto [ec] = co_await async_fenced_put(consul, resource, std::move(v), std::move(t),
                                                  awaitable_tuple);
            co_return ec;
        };
        // Two writes of the holder race for the key (each retries after a lost
        // check-and-set); the released grant's write is refused whatever the interleaving.
        auto [e1, e2, e3] = co_await (write(now, "b1") && write(now, "b2") && write(old, "a2"));
        CHECK_FALSE(e1);
        CHECK_FALSE(e2);
        CHECK(e3 == errc::lock_lost);
        auto stored = co_await consul.async_kv_get(resource);
        REQUIRE(stored.entry);
        CHECK((stored.entry->value == "b1" || stored.entry->value == "b2"));
        CHECK(stored.entry->flags == now.modify_index);

        // Keys a fenced write must not take over: a lock's key, one under it, a held key.
        auto [own] =
            co_await async_fenced_put(consul, lock_key + "/.queue/x", "v", now, awaitable_tuple);
        CHECK(own == errc::invalid_argument);
        co_await consul.async_kv_put(p + "held", "x", kv_put_options{}.with_acquire(b.id()));
        auto [held] = co_await async_fenced_put(consul, p + "held", "v", now, awaitable_tuple);
        CHECK(held == errc::conflict);

        co_await second.async_release();
        co_await consul.async_kv_delete(p, kv_delete_options{}.with_recurse());
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body());
}
