// SPDX-License-Identifier: BSL-1.0
// KV endpoints against the backend (dev agent, or CONCLAVE_TEST_CONSUL_ADDR).
#include "client_fixture.hpp"
#include "support/catch.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

TEST_CASE_METHOD(client_fixture, "KV put, get and delete round-trip", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto r0 =
            co_await consul.async_kv_put(p + "k", "test", kv_put_options{}.with_flags(42));
        CHECK(r0);
        auto r = co_await consul.async_kv_get(p + "k");
        REQUIRE(r.entry);
        CHECK(r.entry->key == p + "k");
        CHECK(r.entry->value == "test");
        CHECK(r.entry->flags == 42);
        CHECK(r.entry->lock_index == 0);
        CHECK(r.entry->session.empty());
        CHECK(r.entry->create_index == r.entry->modify_index);
        CHECK(r.meta.index == r.entry->modify_index);
        CHECK(r.meta.known_leader);
        const auto r1 = co_await consul.async_kv_delete(p + "k");
        CHECK(r1);
        auto gone = co_await consul.async_kv_get(p + "k");
        CHECK_FALSE(gone.entry);
        CHECK(gone.meta.index >= 1);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "values and flags round-trip exactly", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string binary("\0\x01\xff\xfe text \"quoted\"\n", 20);
        const auto r2 = co_await consul.async_kv_put(
            p + "bin", binary, kv_put_options{}.with_flags(semaphore_flag_value));
        CHECK(r2);
        auto r = co_await consul.async_kv_get(p + "bin");
        REQUIRE(r.entry);
        CHECK(r.entry->value == binary);
        CHECK(r.entry->flags == semaphore_flag_value);

        const auto r3 = co_await consul.async_kv_put(
            p + "max", "", kv_put_options{}.with_flags(~std::uint64_t{0}));
        CHECK(r3);
        auto m = co_await consul.async_kv_get(p + "max");
        REQUIRE(m.entry);
        CHECK(m.entry->flags == ~std::uint64_t{0});
        CHECK(m.entry->value.empty());

        auto raw = co_await consul.async_kv_get_raw(p + "bin");
        REQUIRE(raw.value);
        CHECK(*raw.value == binary);
        CHECK(raw.meta.index == r.entry->modify_index);
        auto no_raw = co_await consul.async_kv_get_raw(p + "nothing");
        CHECK_FALSE(no_raw.value);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "keys needing URL escaping round-trip", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        const std::string key = p + "a b/c?d&e=f%g#h+i";
        const auto r4 = co_await consul.async_kv_put(key, "v");
        CHECK(r4);
        auto r = co_await consul.async_kv_get(key);
        REQUIRE(r.entry);
        CHECK(r.entry->key == key);
        auto keys = co_await consul.async_kv_keys(p);
        REQUIRE(keys.keys.size() == 1);
        CHECK(keys.keys[0] == key);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a flagless write resets flags to 0", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "f", "a", kv_put_options{}.with_flags(42));
        co_await consul.async_kv_put(p + "f", "b");
        auto r = co_await consul.async_kv_get(p + "f");
        REQUIRE(r.entry);
        CHECK(r.entry->flags == 0);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "recurse lists sorted entries, keys collapse at the separator",
                 "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        for (const char* k : {"zip", "foo/sub2", "bar", "foo/sub1", "baz"})
            co_await consul.async_kv_put(p + k, k);
        auto list = co_await consul.async_kv_list(p);
        std::vector<std::string> keys;
        for (const auto& e : list.entries)
            keys.push_back(e.key.substr(p.size()));
        CHECK(keys == std::vector<std::string>{"bar", "baz", "foo/sub1", "foo/sub2", "zip"});
        CHECK(list.entries[0].value == "bar");
        std::uint64_t max_index = 0;
        for (const auto& e : list.entries)
            max_index = std::max(max_index, e.modify_index);
        CHECK(list.meta.index == max_index);

        auto collapsed = co_await consul.async_kv_keys(p, kv_keys_options{}.with_separator("/"));
        std::vector<std::string> names;
        for (const auto& k : collapsed.keys)
            names.push_back(k.substr(p.size()));
        CHECK(names == std::vector<std::string>{"bar", "baz", "foo/", "zip"});

        auto empty = co_await consul.async_kv_list(p + "nothing-here/");
        CHECK(empty.entries.empty());
        CHECK(empty.meta.index >= 1);
        auto no_keys = co_await consul.async_kv_keys(p + "nothing-here/");
        CHECK(no_keys.keys.empty());

        const auto r5 =
            co_await consul.async_kv_delete(p + "foo/", kv_delete_options{}.with_recurse(true));
        CHECK(r5);
        auto after = co_await consul.async_kv_keys(p);
        CHECK(after.keys.size() == 3);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "check-and-set writes and deletes", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto r6 = co_await consul.async_kv_put(p + "c", "one", kv_put_options{}.with_cas(0));
        CHECK(r6);
        const auto r7 = co_await consul.async_kv_put(p + "c", "two", kv_put_options{}.with_cas(0));
        CHECK_FALSE(r7);
        auto r = co_await consul.async_kv_get(p + "c");
        REQUIRE(r.entry);
        const auto idx = r.entry->modify_index;
        const auto r8 =
            co_await consul.async_kv_put(p + "c", "stale", kv_put_options{}.with_cas(idx - 1));
        CHECK_FALSE(r8);
        const auto r9 =
            co_await consul.async_kv_put(p + "c", "three", kv_put_options{}.with_cas(idx));
        CHECK(r9);
        auto r2 = co_await consul.async_kv_get(p + "c");
        REQUIRE(r2.entry);
        CHECK(r2.entry->value == "three");
        CHECK(r2.entry->create_index == r.entry->create_index);
        CHECK(r2.entry->modify_index > idx);
        const auto r10 =
            co_await consul.async_kv_put(p + "absent", "x", kv_put_options{}.with_cas(5));
        CHECK_FALSE(r10);
        auto r11 = co_await consul.async_kv_get(p + "absent");
        CHECK_FALSE(r11.entry);

        const auto r12 = co_await consul.async_kv_delete(
            p + "c", kv_delete_options{}.with_cas(r2.entry->modify_index - 1));
        CHECK_FALSE(r12);
        const auto r13 = co_await consul.async_kv_delete(
            p + "c", kv_delete_options{}.with_cas(r2.entry->modify_index));
        CHECK(r13);
        auto r14 = co_await consul.async_kv_get(p + "c");
        CHECK_FALSE(r14.entry);
        const auto r15 = co_await consul.async_kv_delete(p + "c", kv_delete_options{}.with_cas(7));
        CHECK(r15); // absent: true
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "concurrent CAS writes on one index: exactly one wins",
                 "[client][kv]") {
    auto body = [&]() -> asio::awaitable<int> {
        co_await consul.async_kv_put(p + "race", "0");
        auto r = co_await consul.async_kv_get(p + "race");
        const auto idx = r.entry->modify_index;
        using namespace asio::experimental::awaitable_operators;
        auto [a, b, c] =
            co_await (consul.async_kv_put(p + "race", "a", kv_put_options{}.with_cas(idx),
                                          asio::use_awaitable) &&
                      consul.async_kv_put(p + "race", "b", kv_put_options{}.with_cas(idx),
                                          asio::use_awaitable) &&
                      consul.async_kv_put(p + "race", "c", kv_put_options{}.with_cas(idx),
                                          asio::use_awaitable));
        co_return int(a) + int(b) + int(c);
    };
    CHECK(run(ioc, body()) == 1);
}

TEST_CASE_METHOD(client_fixture, "a blocking get is woken by a write", "[client][kv][blocking]") {
    auto body = [&]() -> asio::awaitable<void> {
        auto missing = co_await consul.async_kv_get(p + "w");
        CHECK_FALSE(missing.entry);
        auto writer = [&]() -> asio::awaitable<void> {
            co_await sleep(200ms);
            co_await consul.async_kv_put(p + "w", "new", kv_put_options{}.with_flags(42));
        };
        const auto start = std::chrono::steady_clock::now();
        using namespace asio::experimental::awaitable_operators;
        // Consul may return early for unrelated writes near a missing key: loop until seen.
        auto watcher = [&]() -> asio::awaitable<kv_get_result> {
            auto idx = missing.meta.index;
            for (;;) {
                auto r = co_await consul.async_kv_get(
                    p + "w", query_options{}.with_index(idx).with_wait(10s));
                if (r.entry)
                    co_return r;
                idx = r.meta.index;
            }
        };
        auto seen = co_await (watcher() && writer());
        const auto elapsed = std::chrono::steady_clock::now() - start;
        REQUIRE(seen.entry);
        CHECK(seen.entry->value == "new");
        CHECK(seen.meta.index > missing.meta.index);
        CHECK(elapsed >= 150ms);
        CHECK(elapsed < 5s);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a blocking get with no change times out after its wait",
                 "[client][kv][blocking]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "still", "v");
        auto r = co_await consul.async_kv_get(p + "still");
        const auto start = std::chrono::steady_clock::now();
        auto again = co_await consul.async_kv_get(
            p + "still", query_options{}.with_index(r.meta.index).with_wait(500ms));
        const auto elapsed = std::chrono::steady_clock::now() - start;
        CHECK(again.meta.index == r.meta.index);
        CHECK(elapsed >= 480ms);
        CHECK(elapsed < 500ms + 500ms / 16 + 400ms);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a blocking list is woken by a write under its prefix",
                 "[client][kv][blocking]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "dir/a", "1");
        auto first = co_await consul.async_kv_list(p + "dir/");
        auto writer = [&]() -> asio::awaitable<void> {
            co_await sleep(150ms);
            co_await consul.async_kv_put(p + "dir/b", "2");
        };
        using namespace asio::experimental::awaitable_operators;
        auto next =
            co_await (consul.async_kv_list(
                          p + "dir/", query_options{}.with_index(first.meta.index).with_wait(10s),
                          asio::use_awaitable) &&
                      writer());
        CHECK(next.entries.size() == 2);
        CHECK(next.meta.index > first.meta.index);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "a blocking get is woken by a delete", "[client][kv][blocking]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "d", "v");
        auto r = co_await consul.async_kv_get(p + "d");
        auto deleter = [&]() -> asio::awaitable<void> {
            co_await sleep(150ms);
            co_await consul.async_kv_delete(p + "d");
        };
        using namespace asio::experimental::awaitable_operators;
        auto gone = co_await (
            consul.async_kv_get(p + "d", query_options{}.with_index(r.meta.index).with_wait(10s),
                                asio::use_awaitable) &&
            deleter());
        CHECK_FALSE(gone.entry);
        CHECK(gone.meta.index > r.meta.index);
    };
    run(ioc, body());
}

TEST_CASE_METHOD(client_fixture, "consistency modes are accepted", "[client][kv]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await consul.async_kv_put(p + "m", "v");
        auto a = co_await consul.async_kv_get(p + "m",
                                              query_options{}.with_mode(consistency::consistent));
        REQUIRE(a.entry);
        // A stale read may come from a follower that has not applied the write yet: it
        // blocks until its state passes the write's index.
        auto b = co_await consul.async_kv_get(
            p + "m",
            query_options::blocking(a.entry->modify_index - 1, 5s).with_mode(consistency::stale));
        CHECK(b.entry);
    };
    run(ioc, body());
}
