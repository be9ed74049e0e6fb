// SPDX-License-Identifier: BSL-1.0
// conclave-cycle-driver: N lock cycles (acquire + release, optionally watched) and nothing
// else, for instruction counts. conclave-bench's `cycle` interleaves raw GETs and runs a
// synchronous floor client in the same process, which a profiler would count too; here the
// difference of two runs (N and 4N cycles) under `valgrind --tool=callgrind` is the
// client's cost of 3N cycles (docs/benchmarks.md). --gets runs two GETs per cycle instead:
// what a cycle of two round trips is compared with (`cycle`'s rate_vs_rtt). --txns sends the
// lock's own two transactions (acquire, release) through the client with no recipe around
// them, and --writes two raw writes (`write`'s request: a lock on a key the session holds):
// on Consul, what separates the recipe from its requests. --floor sends the lock's two
// transactions from the cheapest synchronous client (bench/tools/sync_floor.hpp) instead of ours.
//
//   conclave-cycle-driver [--cycles N] [--monitor | --gets | --txns | --writes | --floor]
//                         [--agent HOST:PORT]
//
// Without --agent, a dev agent runs in a child process (callgrind does not follow it).
#include "harness/agent_process.hpp"
#include "tools/sync_floor.hpp"

#include <conclave/client.hpp>
#include <conclave/lock.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace asio = boost::asio;
using namespace conclave;
using namespace boost::asio::experimental::awaitable_operators;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

struct options {
    long cycles = 1000;
    bool monitor = false;
    bool gets = false;   ///< two GETs per cycle instead (the rate a cycle is compared with)
    bool txns = false;   ///< the lock's two transactions, without the recipe
    bool writes = false; ///< two raw writes (a lock the session already holds)
    bool floor = false;  ///< the lock's two transactions from the synchronous floor client
    std::string agent;   ///< empty: a dev agent in a child process
};

// The holder's work: one turn of the loop (as conclave-bench cycle's, with no hold).
asio::awaitable<void> work() {
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
}

using seconds = std::chrono::duration<double>;

// Two GETs of one key per cycle; the time of the loop.
asio::awaitable<seconds> get_pairs(client c, long cycles) {
    const std::string key = "conclave-cycle-driver/get";
    auto [pec, put] = co_await c.async_kv_put(key, "x", kv_put_options{}, use_tuple);
    if (pec)
        throw boost::system::system_error(pec, "put");
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < cycles; ++i) {
        for (int n = 0; n < 2; ++n) {
            auto [gec, r] = co_await c.async_kv_get(key, query_options{}, use_tuple);
            if (gec)
                throw boost::system::system_error(gec, "get");
            if (!r.entry)
                throw std::runtime_error("get: the key vanished");
        }
    }
    const seconds took = std::chrono::steady_clock::now() - start;
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
    co_return took;
}

// The lock's acquire and release transactions (or two re-acquires of a held key, with
// `writes`) sent by the client alone; the time of the loop.
asio::awaitable<seconds> txn_cycles(client c, long cycles, bool writes) {
    session_config cfg;
    cfg.with_name("cycle-driver").with_lock_delay(std::chrono::milliseconds(0));
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "session create");
    s.async_run(asio::detached);
    const std::string key = "conclave-cycle-driver/txn";
    std::uint64_t index = 0; // the key's ModifyIndex after our last write (0: absent)
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < cycles; ++i) {
        for (int n = 0; n < 2; ++n) {
            std::vector<txn_op> ops;
            if (writes || n == 0) {
                if (!writes)
                    ops.push_back(index ? txn_op::check_index(key, index)
                                        : txn_op::check_not_exists(key));
                ops.push_back(txn_op::lock(key, s.id(), "", lock_flag_value));
            } else {
                ops.push_back(txn_op::unlock(key, s.id(), "", lock_flag_value));
            }
            auto [tec, r] = co_await c.async_txn(std::move(ops), txn_options{}, use_tuple);
            if (tec || !r.committed || r.results.empty())
                throw std::runtime_error("txn not committed");
            index = r.results.back().modify_index;
        }
    }
    const seconds took = std::chrono::steady_clock::now() - start;
    co_await s.async_destroy(use_tuple);
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
    co_return took;
}

// The floor client's cycles (it blocks the loop: the session is not renewed meanwhile, and
// its default TTL leaves seconds); the time it took.
asio::awaitable<seconds> floor_cycles(client c, long cycles) {
    session_config cfg;
    cfg.with_name("cycle-driver").with_lock_delay(std::chrono::milliseconds(0));
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "session create");
    const std::string key = "conclave-cycle-driver/floor";
    const auto floor = bench::measure_sync_floor(c.config(), key, s.id(), 0, cycles);
    co_await s.async_destroy(use_tuple);
    co_await c.async_kv_delete(key, kv_delete_options{}, use_tuple);
    if (!floor)
        throw std::runtime_error("the floor client failed");
    co_return seconds{floor->cycles / floor->cycles_per_s};
}

// Lock cycles with a live session; the time of the loop.
asio::awaitable<seconds> lock_cycles(client c, long cycles, bool monitor) {
    session_config cfg; // named: no temporaries inside a co_await expression (g++ 12)
    cfg.with_name("cycle-driver").with_lock_delay(std::chrono::milliseconds(0));
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "session create");
    s.async_run(asio::detached);
    lock l{c, "conclave-cycle-driver/lock", lock_options{}};
    const auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < cycles; ++i) {
        auto [aec, lease] = co_await l.async_acquire(s, use_tuple);
        if (aec)
            throw boost::system::system_error(aec, "acquire");
        if (monitor)
            co_await (lease.async_wait_lost(use_tuple) || work());
        else
            co_await work();
        auto [rec] = co_await lease.async_release(use_tuple);
        if (rec)
            throw boost::system::system_error(rec, "release");
    }
    const seconds took = std::chrono::steady_clock::now() - start;
    co_await s.async_destroy(use_tuple);
    co_await l.async_destroy(use_tuple);
    co_return took;
}

asio::awaitable<void> run(client c, const options& o) {
    seconds took{};
    if (o.gets)
        took = co_await get_pairs(c, o.cycles);
    else if (o.floor)
        took = co_await floor_cycles(c, o.cycles);
    else if (o.txns || o.writes)
        took = co_await txn_cycles(c, o.cycles, o.writes);
    else
        took = co_await lock_cycles(c, o.cycles, o.monitor);
    std::printf("%ld cycles%s in %.3f s: %.0f cycles/s\n", o.cycles,
                o.gets      ? " (two GETs)"
                : o.txns    ? " (the lock's transactions alone)"
                : o.writes  ? " (two raw writes)"
                : o.floor   ? " (the floor client)"
                : o.monitor ? " (watched)"
                            : "",
                took.count(), double(o.cycles) / took.count());
}

std::optional<options> parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--monitor") {
            o.monitor = true;
        } else if (a == "--gets") {
            o.gets = true;
        } else if (a == "--txns") {
            o.txns = true;
        } else if (a == "--writes") {
            o.writes = true;
        } else if (a == "--floor") {
            o.floor = true;
        } else if (a == "--cycles" && i + 1 < argc) {
            o.cycles = std::atol(argv[++i]);
        } else if (a == "--agent" && i + 1 < argc) {
            o.agent = argv[++i];
        } else {
            return std::nullopt;
        }
    }
    if (o.cycles <= 0 ||
        int(o.gets) + int(o.monitor) + int(o.txns) + int(o.writes) + int(o.floor) > 1)
        return std::nullopt;
    return o;
}

} // namespace

int main(int argc, char** argv) {
    const auto o = parse(argc, argv);
    if (!o) {
        std::fprintf(
            stderr,
            "usage: conclave-cycle-driver [--cycles N] [--monitor | --gets | --txns | --writes |"
            " --floor]"
            " [--agent HOST:PORT]\n");
        return 2;
    }
    try {
        std::unique_ptr<bench::agent_process> child;
        std::string address = o->agent;
        if (address.empty()) {
            child = std::make_unique<bench::agent_process>();
            address = child->address();
        }
        client_config cfg;
        if (const std::string error = apply_http_addr(cfg, address); !error.empty()) {
            std::fprintf(stderr, "conclave-cycle-driver: --agent: %s\n", error.c_str());
            return 2;
        }
        asio::io_context ioc;
        client c{ioc.get_executor(), cfg};
        std::exception_ptr failure;
        // On a failure the session's renewals would keep the loop running: stop it.
        asio::co_spawn(ioc, run(c, *o), [&](std::exception_ptr e) {
            failure = e;
            if (e)
                ioc.stop();
        });
        ioc.run();
        if (failure)
            std::rethrow_exception(failure);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conclave-cycle-driver: %s\n", e.what());
        return 1;
    }
    return 0;
}
