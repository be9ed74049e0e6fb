// SPDX-License-Identifier: BSL-1.0
// scale: W contenders (default 10,000) wait on one held key. Measured while they wait: client
// memory per waiter (RSS and malloc'd bytes), connections, blocking queries parked on the
// agent; then the first handoffs: requests and latency per handoff. The rest are cancelled.
#include "harness/scenarios.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <deque>

namespace conclave::bench {

namespace {

struct scale_run {
    std::string key;
    std::size_t waiters = 0;
    std::size_t wanted_handoffs = 100;
    bool fair = false;
    std::vector<session> sessions; ///< [0] the first holder, then one per waiter
    std::deque<asio::cancellation_signal> cancel;
    std::vector<grant> grants;
    std::size_t ended = 0;
    bool stopping = false;
};

void waiter_ended(scale_run& run) {
    ++run.ended;
    if (!run.stopping && run.grants.size() >= run.wanted_handoffs) {
        run.stopping = true; // enough handoffs: the others give up
        for (auto& s : run.cancel)
            s.emit(asio::cancellation_type::terminal);
    }
}

// One waiter: a pending async_acquire whose completion handler releases at once. Plain
// handlers, not a coroutine per waiter: what is measured is the library's cost of a pending
// acquire (an application coroutine around it would add its own frame on top).
void start_waiter(client& c, scale_run& run, std::size_t i) {
    lock l{c, run.key, bench_lock_options(run.fair)}; // the pending acquire keeps its state
    grant g;
    g.contender = std::uint32_t(i);
    g.start_ns = monotonic_ns();
    auto acquired = [&run, g](error_code ec, lock_lease lease) mutable {
        if (ec) {
            waiter_ended(run);
            return;
        }
        g.acquired_ns = monotonic_ns();
        lease.async_release([&run, g](error_code) mutable {
            g.released_ns = monotonic_ns();
            run.grants.push_back(g);
            waiter_ended(run);
        });
    };
    l.async_acquire(run.sessions[i + 1],
                    asio::bind_cancellation_slot(run.cancel[i].slot(), std::move(acquired)));
}

// Returns when the agent's request count stopped moving (every waiter parked), or at `limit`.
asio::awaitable<void> settle(harness& h, std::int64_t limit_ns) {
    std::uint64_t last = ~0ull;
    while (monotonic_ns() < limit_ns) {
        co_await sleep_for_us(300'000);
        const auto a = h.target.counters();
        if (!a)
            co_return; // no counters: the time limit alone
        if (a->requests <= last + 2 && last != ~0ull)
            co_return;
        last = a->requests;
    }
}

} // namespace

void scenario_scale(harness& h) {
    const std::size_t w = h.opt.waiters;
    scale_run run;
    run.key = h.fresh_prefix("scale") + "/lock";
    run.waiters = w;
    run.fair = h.opt.fair;
    run.wanted_handoffs = std::min<std::size_t>(w, 100);
    run.sessions.resize(w + 1);
    for (std::size_t i = 0; i < w; ++i)
        run.cancel.emplace_back();

    // Sessions live on their own client, so 10,000 renewals and creates never queue behind
    // the waiters' requests in the pool under test. A long TTL: no renewals during the run.
    client sc{h.ioc.get_executor(), h.target.make_config(32)};
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(64))};
    session_config cfg = bench_session_config("bench-scale");
    cfg.with_ttl(std::chrono::seconds(300));
    std::function<asio::awaitable<void>(std::size_t)> create =
        [&](std::size_t i) -> asio::awaitable<void> {
        run.sessions[i] = co_await start_session(sc, cfg, "scale");
    };
    {
        progress pr(h.ioc, "scale: sessions", 2.0, [&] { return std::size_t(0); });
        run_sync(h.ioc, for_each_bounded(w + 1, 32, create));
    }
    // The first holder is another service: its own client (the sessions' one).
    lock first{sc, run.key};
    lock_lease held;
    std::function<asio::awaitable<void>(std::size_t)> take =
        [&](std::size_t) -> asio::awaitable<void> {
        auto [ec, lease] = co_await first.async_acquire(run.sessions[0], use_tuple);
        if (ec)
            throw boost::system::system_error(ec, "scale: first holder");
        held = lease;
    };
    run_sync(h.ioc, spawn_all(1, take));

    // Memory before and after the waiters start (sessions already exist: not counted).
    run_sync(h.ioc, sleep_for_us(100'000));
    const std::size_t rss0 = resident_bytes(), heap0 = heap_in_use_bytes();
    const client_stats c0 = c.stats();
    for (std::size_t i = 0; i < w; ++i)
        start_waiter(c, run, i);
    {
        progress pr(h.ioc, "scale: parking waiters", 2.0, [&] { return std::size_t(0); });
        run_sync(h.ioc, settle(h, monotonic_ns() + std::int64_t(5e9 + double(w) * 1e6)));
    }
    const std::size_t rss1 = resident_bytes(), heap1 = heap_in_use_bytes();
    const client_stats c1 = c.stats();
    const auto parked = h.target.counters();

    // Handoffs: the first holder leaves; each waiter that gets the lock releases it at once.
    const std::int64_t cpu_a = process_cpu_time().count();
    const std::int64_t release_ns = monotonic_ns();
    run_sync(h.ioc, held.async_release(use_tuple));
    const std::int64_t released_ns = monotonic_ns();
    const std::int64_t limit =
        monotonic_ns() + std::int64_t(std::max(5.0, 3 * h.opt.duration_s) * 1e9);
    std::function<asio::awaitable<void>(std::size_t)> handoffs =
        [&](std::size_t) -> asio::awaitable<void> {
        while (run.grants.size() < run.wanted_handoffs && monotonic_ns() < limit)
            co_await sleep_for_us(2'000);
        // Counters before the cancellations' cleanup requests.
        const auto after = h.target.counters();
        const std::int64_t t_end = monotonic_ns();
        const std::int64_t cpu_b = process_cpu_time().count();
        if (!run.stopping) {
            run.stopping = true;
            for (auto& s : run.cancel)
                s.emit(asio::cancellation_type::terminal);
        }
        while (run.ended < w)
            co_await sleep_for_us(2'000);

        grant g0;
        g0.contender = std::uint32_t(w);
        g0.acquired_ns = release_ns - 1;
        g0.released_ns = released_ns;
        run.grants.push_back(g0);
        auto res = analyze(run.grants, w + 1, release_ns, t_end + 1);
        record r = h.base_record("scale", "conclave", w);
        r.set("fair", run.fair && lock_has_fair_mode());
        std::optional<agent_counters> d;
        if (parked && after)
            d = after->since(*parked);
        fill_contention(r, res, d, cpu_b - cpu_a);
        r.erase("jain"); // who goes first among 10,000 is not the question here
        r.set("ops", double(res.grants));
        const double bytes = double(rss1 > rss0 ? rss1 - rss0 : 0) / double(w);
        const double heap = double(heap1 > heap0 ? heap1 - heap0 : 0) / double(w);
        r.set("bytes_per_waiter", bytes);
        r.set("heap_bytes_per_waiter", heap);
        r.set("connections_used", double(c1.open_connections));
        r.set("connects", double(c1.connects - c0.connects));
        r.set("waiting_requests_sent", double(c1.requests - c0.requests));
        if (parked)
            r.set("blocking_queries_parked", double(parked->blocking_waiting));
        r.set("target", std::string("<=4 KiB per waiter, one blocking query per key"));
        r.set("target_met",
              std::max(bytes, heap) <= 4096 && parked && parked->blocking_waiting <= 1);
        h.out.add(std::move(r));
    };
    {
        progress pr(h.ioc, "scale: handoffs", 1.0, [&] { return run.grants.size(); });
        run_sync(h.ioc, spawn_all(1, handoffs));
    }
    std::function<asio::awaitable<void>(std::size_t)> destroy =
        [&](std::size_t i) -> asio::awaitable<void> {
        co_await run.sessions[i].async_destroy(use_tuple);
    };
    run_sync(h.ioc, for_each_bounded(w + 1, 32, destroy));
}

} // namespace conclave::bench
