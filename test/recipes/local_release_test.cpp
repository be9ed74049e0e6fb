// SPDX-License-Identifier: BSL-1.0
// A grant released in this process is free at once for a one-attempt try of another session:
// the release's own answer updates this process's view, and no read that left before the
// release (answered after it, on a cluster's slower path) may bring the old state back.
#include "recipes_fixture.hpp"

#include <conclave/lock.hpp>
#include <conclave/semaphore.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {
constexpr int rounds = 30;
} // namespace

TEST_CASE_METHOD(recipes_fixture,
                 "a semaphore slot released here is had by a one-attempt try right after",
                 "[semaphore][local-release]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto a = co_await session::async_create(consul, quick(10s));
        auto b = co_await session::async_create(consul, quick(10s));
        semaphore sem{consul, p + "sem", 1};
        int had = 0;
        for (int i = 0; i < rounds; ++i) {
            auto& first = i % 2 ? a : b;
            auto& second = i % 2 ? b : a;
            auto held = co_await sem.async_acquire(first);
            co_await held.async_release();
            auto next = co_await sem.async_try_acquire(second, 0ms);
            if (next) {
                ++had;
                co_await next->async_release();
            }
        }
        CHECK(had == rounds);
        co_await sem.async_destroy();
        co_await a.async_destroy();
        co_await b.async_destroy();
    };
    run(ioc, body(), 60s);
}

namespace {

asio::awaitable<int> lock_rounds(recipes_fixture& f, lock_options opts) {
    auto a = co_await session::async_create(f.consul, quick(10s));
    auto b = co_await session::async_create(f.consul, quick(10s));
    lock mutex{f.consul, f.p + "lock", std::move(opts)};
    int had = 0;
    for (int i = 0; i < rounds; ++i) {
        auto& first = i % 2 ? a : b;
        auto& second = i % 2 ? b : a;
        auto held = co_await mutex.async_acquire(first);
        co_await held.async_release();
        auto next = co_await mutex.async_try_acquire(second, 0ms);
        if (next) {
            ++had;
            co_await next->async_release();
        }
    }
    co_await mutex.async_destroy();
    co_await a.async_destroy();
    co_await b.async_destroy();
    co_return had;
}

} // namespace

TEST_CASE_METHOD(recipes_fixture, "a lock released here is had by a one-attempt try right after",
                 "[lock][local-release]") {
    CHECK(run(ioc, lock_rounds(*this, {}), 60s) == rounds);
}

TEST_CASE_METHOD(recipes_fixture,
                 "a fair lock released here is had by a one-attempt try right after (its line "
                 "entry has the time an attempt has)",
                 "[lock][local-release]") {
    CHECK(run(ioc, lock_rounds(*this, lock_options{}.with_fair()), 60s) == rounds);
}
