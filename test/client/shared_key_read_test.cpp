// SPDX-License-Identifier: BSL-1.0
// Blocking reads of single keys, once the blocking queries' share of connections is taken,
// share one blocking query on their folder: each is answered when its own key changes, with
// the index a read of the key would have, and they hold one connection between them.
#include "client_fixture.hpp"
#include "support/catch.hpp"
#include "support/fault_proxy.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>

#include <array>
#include <vector>

using namespace conclave;
using namespace conclave::test;
using namespace std::chrono_literals;

namespace {

// A client of four connections: three for blocking queries, of which two for reads of their
// own; any further blocking read of a key shares its folder's query.
constexpr std::size_t connections = 4;

struct shared_read_fixture {
    asio::io_context ioc;
    backend server{ioc};
    std::string p = server.prefix();
    client consul{ioc.get_executor(), small_client(server.client_config())};
    client admin{ioc.get_executor(), server.client_config()};

    static client_config small_client(client_config cfg) {
        cfg.max_connections = connections;
        return cfg;
    }

    asio::awaitable<void> yield_until(const std::function<bool()>& done) {
        while (!done()) {
            asio::steady_timer poll{ioc, 2ms}; // (no event tells when a read has joined)
            co_await poll.async_wait(asio::use_awaitable);
        }
    }

    // Two blocking reads of their own that no write wakes (an index no key will reach
    // blocks for the whole wait), until uncrowd(): the blocking reads after them share.
    std::array<asio::cancellation_signal, 2> own_stop;
    std::size_t own_done = 0;
    void crowd() {
        for (std::size_t i = 0; i < own_stop.size(); ++i)
            asio::co_spawn(
                ioc,
                consul.async_kv_get(p + "own" + std::to_string(i),
                                    query_options::blocking(1ull << 60, 120s),
                                    asio::as_tuple(asio::use_awaitable)),
                asio::bind_cancellation_slot(own_stop[i].slot(),
                                             [this](std::exception_ptr, auto) { ++own_done; }));
    }
    asio::awaitable<void> uncrowd() {
        for (auto& s : own_stop)
            s.emit(asio::cancellation_type::terminal);
        co_await yield_until([&] { return own_done == own_stop.size(); });
    }

    ~shared_read_fixture() {
        auto cleanup = [&]() -> asio::awaitable<void> {
            co_await admin.async_kv_delete(p, kv_delete_options{}.with_recurse(true), tuple_token);
        };
        try {
            run(ioc, cleanup(), 5000ms);
        } catch (...) {
        }
    }
};

} // namespace

// Whether a read shares is decided when it runs: reads started in one go see the lane fill
// up as the ones before them enter it, instead of all queueing behind the first ones.
TEST_CASE_METHOD(shared_read_fixture,
                 "blocking reads started together share once the first ones hold the lane",
                 "[client][connections]") {
    auto body = [&]() -> asio::awaitable<void> {
        constexpr std::size_t reads = 6;
        constexpr std::size_t alone = 2; // the blocking queries' share of the connections
        std::array<asio::cancellation_signal, reads> stop;
        std::size_t ended = 0;
        for (std::size_t i = 0; i < reads; ++i) // all started before any of them runs
            consul.async_kv_get(p + "k" + std::to_string(i),
                                query_options::blocking(1ull << 60, 120s),
                                asio::bind_cancellation_slot(
                                    stop[i].slot(), [&](error_code, kv_get_result) { ++ended; }));
        co_await yield_until([&] { return consul.stats().shared_key_reads == reads - alone; });
        CHECK(consul.stats().shared_folder_queries == 1);
        for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
        co_await yield_until([&] { return ended == reads; });
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(shared_read_fixture,
                 "blocking reads beyond the blocking queries' share hear every change through "
                 "one query on their folder",
                 "[client][connections]") {
    constexpr int keys = 20;
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = co_await consul.async_kv_get(p + "k0");
        std::vector<std::optional<std::string>> seen(keys);
        int done = 0;
        bool indexes_right = true;
        asio::steady_timer all_done{ioc, 1h}; // cancelled by the last watcher
        // The reads that crowd the lane never end within the test: a read queued behind
        // them would miss its limit.
        crowd();
        auto watch = [&](int i, std::string key, query_options q) -> asio::awaitable<void> {
            for (;;) {
                auto r = co_await consul.async_kv_get(key, q);
                if (r.entry) {
                    // What a GET of the key reports: its ModifyIndex.
                    indexes_right = indexes_right && r.meta.index == r.entry->modify_index;
                    seen[i] = r.entry->value;
                    break;
                }
                q.index = r.meta.index;
            }
            if (++done == keys)
                all_done.cancel();
        };
        for (int i = 0; i < keys; ++i)
            asio::co_spawn(ioc,
                           watch(i, p + "k" + std::to_string(i),
                                 query_options::blocking(start.meta.index, 60s)),
                           asio::detached);
        co_await yield_until([&] { return consul.stats().shared_key_reads >= keys / 2; });
        auto stats = consul.stats();
        CHECK(stats.shared_folder_queries == 1);

        for (int i = 0; i < keys; ++i)
            co_await admin.async_kv_put(p + "k" + std::to_string(i), "v" + std::to_string(i));
        if (done < keys)
            co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
        for (int i = 0; i < keys; ++i)
            CHECK(seen[i] == "v" + std::to_string(i));
        CHECK(indexes_right);
        stats = consul.stats();
        CHECK(stats.shared_key_reads == 0);
        CHECK(stats.shared_folder_queries == 0); // nobody left to need it
        CHECK(stats.refused_connects == 0);
        co_await uncrowd();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(shared_read_fixture,
                 "a shared blocking read whose wait ends with no change returns the key as it is",
                 "[client][connections]") {
    auto body = [&]() -> asio::awaitable<void> {
        co_await admin.async_kv_put(p + "c", "x");
        const auto before = co_await consul.async_kv_get(p + "c");
        REQUIRE(before.entry);
        crowd(); // (they start before the read below)

        std::optional<kv_get_result> got;
        error_code got_ec;
        asio::steady_timer answered{ioc, 1h};
        auto read = [&](query_options q) -> asio::awaitable<void> {
            std::tie(got_ec, got) =
                co_await consul.async_kv_get(p + "c", q, asio::as_tuple(asio::use_awaitable));
            answered.cancel();
        };
        asio::co_spawn(ioc, read(query_options::blocking(before.meta.index, 2s)), asio::detached);
        co_await yield_until([&] { return consul.stats().shared_key_reads == 1; });
        co_await answered.async_wait(asio::as_tuple(asio::use_awaitable));
        REQUIRE_FALSE(got_ec);
        REQUIRE(got);
        REQUIRE(got->entry);
        CHECK(got->entry->value == "x");
        CHECK(got->meta.index == before.meta.index); // unchanged, as Consul answers then
        co_await uncrowd();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(shared_read_fixture,
                 "cancelled shared blocking reads end with operation_aborted, and so does their "
                 "folder's query",
                 "[client][connections]") {
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = co_await consul.async_kv_get(p + "k");
        crowd();
        constexpr int readers = 5;
        std::array<asio::cancellation_signal, readers> stop;
        std::vector<error_code> results;
        for (int i = 0; i < readers; ++i)
            asio::co_spawn(
                ioc,
                consul.async_kv_get(p + "k" + std::to_string(i),
                                    query_options::blocking(start.meta.index, 60s),
                                    asio::as_tuple(asio::use_awaitable)),
                asio::bind_cancellation_slot(stop[i].slot(), [&](std::exception_ptr, auto r) {
                    results.push_back(std::get<0>(r));
                }));
        co_await yield_until([&] { return consul.stats().shared_key_reads == readers; });
        CHECK(consul.stats().shared_folder_queries == 1);
        for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
        co_await yield_until([&] { return results.size() == readers; });
        for (const auto& ec : results)
            CHECK(ec == asio::error::operation_aborted);
        co_await yield_until([&] { return consul.stats().shared_folder_queries == 0; });
        CHECK(consul.stats().shared_key_reads == 0);
        co_await uncrowd();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(shared_read_fixture,
                 "a failed folder query fails its readers with the server's answer, naming their "
                 "keys",
                 "[client][connections]") {
    if (skip_unless_isolated())
        return;
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = co_await consul.async_kv_get(p + "k");
        crowd();
        // Once the two reads of their own are with the server, the next KV request under
        // the prefix is the folder's query.
        co_await yield_until([&] { return server.stats().blocking_queries_waiting >= 2; });
        server.inject_errors("/v1/kv/" + p, 1, 500);
        diagnostics diag;
        auto [ec, r] = co_await consul.async_kv_get(
            p + "k", query_options::blocking(start.meta.index, 60s).with_diag(&diag),
            asio::as_tuple(asio::use_awaitable));
        CHECK(ec);
        CHECK(diag.http_status == 500);
        CHECK(diag.client_message.find(p + "k,") != std::string::npos);
        co_await uncrowd();
    };
    run(ioc, body(), 30s);
}

TEST_CASE_METHOD(shared_read_fixture,
                 "a folder's shared query does not spin when the server answers it at once "
                 "without news",
                 "[client][connections][index]") {
    // The same crowded client, through a proxy that can answer blocking reads at once.
    fault_proxy proxy{ioc.get_executor(), server.client_config().host, server.client_config().port};
    proxy.start();
    client_config cfg = small_client(server.client_config());
    cfg.host = "127.0.0.1";
    cfg.port = proxy.port();
    client via{ioc.get_executor(), cfg};
    constexpr int keys = 5;
    auto body = [&]() -> asio::awaitable<void> {
        const auto start = co_await via.async_kv_get(p + "dir/k0");
        std::array<asio::cancellation_signal, 2> stop;
        std::size_t stopped = 0;
        for (std::size_t i = 0; i < stop.size(); ++i)
            asio::co_spawn(ioc,
                           via.async_kv_get(p + "own" + std::to_string(i),
                                            query_options::blocking(1ull << 60, 120s),
                                            asio::as_tuple(asio::use_awaitable)),
                           asio::bind_cancellation_slot(
                               stop[i].slot(), [&](std::exception_ptr, auto) { ++stopped; }));
        int done = 0;
        asio::steady_timer all_done{ioc, 1h};
        auto watch = [&](std::string key) -> asio::awaitable<void> {
            auto q = query_options::blocking(start.meta.index, 60s);
            for (;;) {
                auto r = co_await via.async_kv_get(key, q);
                if (r.entry)
                    break;
                q.index = r.meta.index;
            }
            if (++done == keys)
                all_done.cancel();
        };
        for (int i = 0; i < keys; ++i)
            asio::co_spawn(ioc, watch(p + "dir/k" + std::to_string(i)), asio::detached);
        co_await yield_until([&] { return via.stats().shared_key_reads >= keys; });

        proxy.misbehave_blocking("/v1/kv/" + p + "dir/", fault_proxy::index_fault::same);
        asio::steady_timer window{ioc, 2s}; // the window measured, not a synchronisation
        co_await window.async_wait(asio::use_awaitable);
        proxy.misbehave_blocking("/v1/kv/" + p + "dir/", fault_proxy::index_fault::none);
        const auto at_once = proxy.stats().by_endpoint["GET (answered at once)"];
        CHECK(at_once > 0);
        CHECK(at_once < 40); // spaced from 50 ms doubling to 2 s: a handful, not thousands

        // Still working: the writes are heard.
        for (int i = 0; i < keys; ++i)
            co_await admin.async_kv_put(p + "dir/k" + std::to_string(i), "v");
        if (done < keys)
            co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
        CHECK(done == keys);
        for (auto& s : stop)
            s.emit(asio::cancellation_type::terminal);
        co_await yield_until([&] { return stopped == stop.size(); });
    };
    run(ioc, body(), 30s);
}
