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

TEST_CASE_METHOD(recipes_fixture, "concurrent fenced writers: the newest token's write stays",
                 "[fence]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string resource = p + "counter";
        // Writers with increasing tokens race; whatever the interleaving, the key ends with
        // the newest token, and no older token is written over it.
        using namespace boost::asio::experimental::awaitable_operators;
        auto write = [&](std::uint64_t index) -> asio::awaitable<error_code> {
            auto [ec] = co_await async_fenced_put(consul, resource, std::to_string(index),
                                                  token_at(index), awaitable_tuple);
            co_return ec;
        };
        auto [e1, e2, e3] = co_await (write(30) && write(10) && write(20));
        CHECK_FALSE(e1);
        CHECK((!e2 || e2 == errc::lock_lost));
        CHECK((!e3 || e3 == errc::lock_lost));
        auto stored = co_await consul.async_kv_get(resource);
        REQUIRE(stored.entry);
        CHECK(stored.entry->value == "30");
        CHECK(stored.entry->flags == 30);
        co_await consul.async_kv_delete(resource);
    };
    run(ioc, body());
}
