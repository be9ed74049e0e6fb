// SPDX-License-Identifier: BSL-1.0
// keys: one process watches K different keys (a conclave::watch each, as an application
// would), with the client's default pool unless --connections says otherwise, and a writer
// writes every key once per round (a burst). Measured per key: the write's ack -> the
// watcher's notification; per run: connections opened, Consul's refusals, requests. Consul
// holds at most limits.http_max_conns_per_client connections of one address, and each
// waiting blocking query holds one: this is where that budget shows.
#include "harness/scenarios.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <deque>

namespace conclave::bench {

namespace {

// A round waits this long for its notifications: past it, the rest count as undelivered.
constexpr std::int64_t round_cap_ns = 30'000'000'000;
constexpr std::size_t rounds = 3;

struct keys_run {
    std::string prefix;
    std::size_t keys = 0;
    std::size_t round = 0;             ///< the value being written ("<round>")
    std::vector<std::int64_t> ack_ns;  ///< per key: the current round's write ack
    std::vector<std::int64_t> seen_ns; ///< per key: the current round's notification
    std::size_t seen = 0;              ///< notifications of the current round
    std::unique_ptr<asio::steady_timer> all_seen;
    std::deque<asio::cancellation_signal> stop;
    std::size_t watching = 0; ///< watchers not ended yet
    std::unique_ptr<asio::steady_timer> all_ended;
    std::size_t errors = 0;
};

std::string key_name(const keys_run& run, std::size_t i) {
    return run.prefix + "/k" + std::to_string(i);
}

asio::awaitable<void> watcher(client c, keys_run& run, std::size_t i) {
    watch w{c, watch::key(key_name(run, i))};
    for (;;) {
        auto [ec, snap] = co_await w.async_next(use_tuple);
        if (ec) {
            if (ec != asio::error::operation_aborted)
                ++run.errors;
            break;
        }
        if (!snap.entries.empty() && snap.entries.front().value == std::to_string(run.round) &&
            run.seen_ns[i] == 0) {
            run.seen_ns[i] = monotonic_ns();
            if (++run.seen == run.keys && run.all_seen)
                run.all_seen->cancel();
        }
    }
    if (--run.watching == 0 && run.all_ended)
        run.all_ended->cancel();
}

asio::awaitable<void> write_round(client& c, keys_run& run) {
    for (std::size_t i = 0; i < run.keys; ++i) {
        auto [ec, ok] = co_await c.async_kv_put(key_name(run, i), std::to_string(run.round),
                                                kv_put_options{}, use_tuple);
        run.ack_ns[i] = monotonic_ns();
        if (ec || !ok)
            ++run.errors;
    }
}

} // namespace

void scenario_keys(harness& h) {
    const std::size_t k = h.opt.watchers;
    // The default pool (32), as an application gets it, unless --connections says.
    client c{h.ioc.get_executor(),
             h.target.make_config(h.pool_size(client_config{}.max_connections))};
    keys_run run;
    run.prefix = h.fresh_prefix("keys");
    run.keys = k;
    run.ack_ns.assign(k, 0);
    run.seen_ns.assign(k, 0);
    run.stop.resize(k);
    const auto before = c.stats();
    std::optional<agent_counters> a0 = h.target.counters(), a1;
    run.watching = k;
    for (std::size_t i = 0; i < k; ++i)
        asio::co_spawn(h.ioc, watcher(c, run, i),
                       asio::bind_cancellation_slot(run.stop[i].slot(), asio::detached));

    std::vector<std::chrono::nanoseconds> samples;
    std::size_t undelivered = 0, within_1s = 0;
    const std::int64_t t0 = monotonic_ns();
    const std::int64_t cpu0 = process_cpu_time().count();
    for (std::size_t r = 1; r <= rounds; ++r) {
        run.round = r;
        run.seen = 0;
        std::fill(run.seen_ns.begin(), run.seen_ns.end(), 0);
        run.all_seen =
            std::make_unique<asio::steady_timer>(h.ioc, std::chrono::nanoseconds(round_cap_ns));
        {
            progress pr(h.ioc, "keys K=" + std::to_string(k) + " round " + std::to_string(r),
                        double(round_cap_ns) / 1e9, [&] { return run.seen; });
            run_sync(h.ioc, [&]() -> asio::awaitable<void> {
                co_await write_round(c, run);
                if (run.seen < run.keys)
                    co_await run.all_seen->async_wait(use_tuple);
            }());
        }
        for (std::size_t i = 0; i < k; ++i) {
            if (run.seen_ns[i] == 0) {
                ++undelivered;
                continue;
            }
            const auto d =
                std::chrono::nanoseconds(std::max<std::int64_t>(0, run.seen_ns[i] - run.ack_ns[i]));
            samples.push_back(d);
            if (d <= std::chrono::seconds(1))
                ++within_1s;
        }
    }
    const double secs = double(monotonic_ns() - t0) / 1e9;
    const std::int64_t cpu1 = process_cpu_time().count();
    const auto after = c.stats();
    a1 = h.target.counters();
    // The watchers end before `run` goes.
    run.all_ended = std::make_unique<asio::steady_timer>(h.ioc, std::chrono::hours(1));
    for (auto& s : run.stop)
        s.emit(asio::cancellation_type::terminal);
    if (run.watching > 0)
        run_sync(h.ioc, [&]() -> asio::awaitable<void> {
            co_await run.all_ended->async_wait(use_tuple);
        }());
    run_sync(h.ioc, c.async_kv_delete(run.prefix + "/", kv_delete_options{}.with_recurse(true),
                                      asio::use_awaitable));

    record rec = h.base_record("keys", "conclave", k);
    const auto sum = add_latencies(rec, samples);
    rec.set("keys", double(k));
    rec.set("rounds", double(rounds));
    rec.set("latency", std::string("write ack -> notification"));
    rec.set("ops", double(sum.count));
    rec.set("ops_per_s", double(sum.count) / secs);
    rec.set("cpu_us_per_op", sum.count ? double(cpu1 - cpu0) / double(sum.count) : 0.0);
    rec.set("p50_us", sum.p50_us);
    rec.set("p90_us", sum.p90_us);
    rec.set("p99_us", sum.p99_us);
    rec.set("max_us", sum.max_us);
    rec.set("within_1s", double(within_1s) / double(k * rounds));
    rec.set("undelivered_after_30s", double(undelivered));
    rec.set("connection_limit", double(after.connection_limit));
    rec.set("blocking_query_limit", double(after.blocking_query_limit));
    rec.set("connects", double(after.connects - before.connects));
    rec.set("refused_connects", double(after.refused_connects - before.refused_connects));
    rec.set("errors", double(run.errors));
    if (a0 && a1)
        rec.set("requests", double(a1->since(*a0).requests));
    h.out.add(std::move(rec));
}

} // namespace conclave::bench
