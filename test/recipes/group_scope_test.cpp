// SPDX-License-Identifier: BSL-1.0
// with_membership: the body runs while a member, the scope leaves however the body ends, and
// a lost membership cancels the body and is thrown as its loss reason.
#include "recipes_fixture.hpp"

#include <conclave/group.hpp>
#include <conclave/hold_scope.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;
using namespace boost::asio::experimental::awaitable_operators;

TEST_CASE_METHOD(recipes_fixture, "with_membership runs the body as a member, then leaves",
                 "[group][scope]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        group workers{consul, p + "workers"};
        auto work = [&](membership m) -> asio::awaitable<std::size_t> {
            CHECK(m.held());
            auto members = co_await workers.async_members();
            REQUIRE(members.size() == 1);
            CHECK(members.front().id == "w1");
            CHECK(members.front().value == "10.0.0.1:9000");
            co_return members.size();
        };
        const auto seen = co_await with_membership(workers, s, "w1", "10.0.0.1:9000", work);
        CHECK(seen == 1);
        auto after = co_await workers.async_members();
        CHECK(after.empty());
        co_await s.async_destroy();
    };
    run(ioc, body());
}

TEST_CASE_METHOD(recipes_fixture,
                 "with_membership cancels the body when the membership is lost and throws "
                 "lock_lost",
                 "[group][scope]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto s = co_await session::async_create(consul, quick());
        group workers{consul, p + "workers"};
        change_event joined{ioc.get_executor()};
        bool member = false;
        bool cancelled = false;
        auto work = [&](membership) -> asio::awaitable<void> {
            member = true;
            joined.notify();
            asio::steady_timer forever{ioc, std::chrono::steady_clock::time_point::max()};
            auto [ec] = co_await forever.async_wait(awaitable_tuple);
            cancelled = ec == asio::error::operation_aborted;
        };
        auto scope = [&]() -> asio::awaitable<error_code> {
            try {
                co_await with_membership(workers, s, "w1", "v", work);
            } catch (const conclave::error& e) {
                co_return e.code();
            }
            co_return error_code{};
        };
        auto take_key_away = [&]() -> asio::awaitable<bool> {
            while (!member)
                co_await joined.wait();
            const bool deleted = co_await consul.async_kv_delete(p + "workers/w1");
            co_return deleted;
        };
        auto [ec, deleted] = co_await (scope() && take_key_away());
        CHECK(deleted);
        CHECK(ec == errc::lock_lost);
        CHECK(cancelled);
        co_await s.async_destroy();
    };
    run(ioc, body());
}
