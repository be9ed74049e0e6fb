// SPDX-License-Identifier: BSL-1.0
// handover: how long an elector's leadership takes to pass from one candidate to another
// when the leader steps down on purpose.
//   resign     leader a (default options) calls async_resign while b campaigns: a's task is
//              cancelled, a releases the key, b's blocking query wakes, b writes its acquire.
//   preferred  every candidate has elector_options::preferred = "b": a leads, then b starts
//              campaigning; a sees b's contender key, ends its term, and its releasing
//              transaction writes b in as the holder, so b only has to wake up.
// Measured the same way in both: a's leader task sees its cancellation -> b's leader task
// starts (both include a's task returning and a's release). Before each run, a GET sent
// after the same idle time as the handover is timed (`idle_rtt_*`), the yardstick.
#include "harness/scenarios.hpp"

#include <conclave/elector.hpp>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <algorithm>

namespace conclave::bench {

namespace {

struct handover_times {
    std::int64_t stepped_down_ns = 0; ///< a's task saw its cancellation
    std::int64_t took_over_ns = 0;    ///< b's task started
    std::int64_t idle_rtt_ns = 0;
};

// One candidate: its session, elector and async_run, stopped by stop().
struct candidate {
    candidate(client c, const std::string& key, elector_options o)
        : consul(std::move(c))
        , el(consul, key, std::move(o)) {}

    client consul;
    elector el;
    session s;
    asio::cancellation_signal stop_run;
    bool leading = false;
    bool run_ended = false;
    asio::steady_timer changed{consul.get_executor(), asio::steady_timer::time_point::max()};

    // Runs `task` as the leader task; returns once async_run is under way.
    asio::awaitable<void> start(leader_task task) {
        session_config cfg;
        cfg.with_lock_delay(std::chrono::milliseconds(0));
        s = co_await start_session(consul, cfg, "handover");
        el.async_run(s, std::move(task),
                     asio::bind_cancellation_slot(stop_run.slot(), [this](error_code) {
                         run_ended = true;
                         changed.cancel();
                     }));
    }

    asio::awaitable<void> wait_until(const std::function<bool()>& done) {
        while (!done()) {
            changed.expires_at(asio::steady_timer::time_point::max());
            co_await changed.async_wait(use_tuple);
        }
    }

    // Ends async_run (releasing the key when leading), then the session.
    asio::awaitable<void> stop() {
        stop_run.emit(asio::cancellation_type::terminal);
        co_await wait_until([this] { return run_ended; });
        co_await s.async_destroy(use_tuple);
    }
};

// A leader task that leads until cancelled; `on_step_down` gets the time it saw that.
leader_task lead_until_cancelled(candidate& self, std::int64_t* stepped_down_ns,
                                 std::int64_t* took_over_ns) {
    return [&self, stepped_down_ns, took_over_ns](leadership) -> asio::awaitable<void> {
        if (took_over_ns && *took_over_ns == 0)
            *took_over_ns = monotonic_ns();
        self.leading = true;
        self.changed.cancel();
        asio::steady_timer forever{self.consul.get_executor(),
                                   asio::steady_timer::time_point::max()};
        co_await forever.async_wait(use_tuple); // ends when the term is cancelled
        if (stepped_down_ns && *stepped_down_ns == 0)
            *stepped_down_ns = monotonic_ns();
        self.leading = false;
        self.changed.cancel();
    };
}

asio::awaitable<void> handover_once(client ca, client cb, std::string key, bool preferred,
                                    handover_times& out) {
    elector_options oa = elector_options{}.with_value("a");
    elector_options ob = elector_options{}.with_value("b");
    if (preferred) {
        oa.with_preferred("b");
        ob.with_preferred("b");
    }
    candidate a{ca, key, oa};
    candidate b{cb, key, ob};
    co_await a.start(lead_until_cancelled(a, &out.stepped_down_ns, nullptr));
    co_await a.wait_until([&] { return a.leading; });
    out.idle_rtt_ns = co_await idle_round_trip(ca, key);
    co_await sleep_for_us(idle_settle_us);
    co_await b.start(lead_until_cancelled(b, nullptr, &out.took_over_ns));
    if (!preferred) {
        co_await sleep_for_us(idle_settle_us); // b parks in its blocking query
        auto [ec] = co_await a.el.async_resign(use_tuple);
        if (ec)
            throw boost::system::system_error(ec, "handover: resign");
    }
    co_await b.wait_until([&] { return b.leading; });
    if (out.stepped_down_ns == 0 || out.took_over_ns < out.stepped_down_ns)
        throw std::runtime_error("handover: b led before a stepped down");
    co_await b.stop();
    co_await a.stop();
}

record summarize_variant(harness& h, const std::string& variant,
                         const std::vector<handover_times>& runs, std::int64_t cpu_us) {
    std::vector<std::chrono::nanoseconds> samples, idle;
    for (const auto& x : runs) {
        samples.emplace_back(x.took_over_ns - x.stepped_down_ns);
        idle.emplace_back(x.idle_rtt_ns);
    }
    record r = h.base_record("handover", "conclave", 2);
    r.set("variant", variant);
    const auto sum = add_latencies(r, samples);
    const auto yardstick = bench::summarize(idle);
    r.set("ops", double(sum.count));
    r.set("latency", std::string("leader's task cancelled -> successor's task started"));
    r.set("p50_us", sum.p50_us);
    r.set("p99_us", sum.p99_us);
    r.set("max_us", sum.max_us);
    r.set("mean_us", sum.mean_us);
    r.set("idle_rtt_p50_us", yardstick.p50_us);
    r.set("handover_rtts_p50", yardstick.p50_us > 0 ? sum.p50_us / yardstick.p50_us : 0.0);
    r.set("ops_per_s", sum.mean_us > 0 ? 1e6 / sum.mean_us : 0.0);
    r.set("cpu_us_per_op", sum.count ? double(cpu_us) / double(sum.count) : 0.0);
    return r;
}

} // namespace

void scenario_handover(harness& h) {
    // Fresh clients for every run: stopping a candidate drops its blocking queries'
    // connections, and a pool keeps their slots until Consul's wait would have ended (see
    // client_config::max_connections), so one pool would run out after a few runs.
    auto fresh = [&h] {
        return client{h.ioc.get_executor(), h.target.make_config(h.pool_size(8))};
    };
    // Alternating, so that both variants see the same machine state.
    std::vector<handover_times> resigns(h.opt.repeat), preferred(h.opt.repeat);
    std::int64_t cpu_resign = 0, cpu_preferred = 0;
    for (std::size_t i = 0; i < h.opt.repeat; ++i) {
        std::int64_t cpu0 = process_cpu_time().count();
        run_sync(h.ioc, handover_once(fresh(), fresh(), h.fresh_prefix("handover") + "/leader",
                                      false, resigns[i]));
        const std::int64_t cpu1 = process_cpu_time().count();
        cpu_resign += cpu1 - cpu0;
        run_sync(h.ioc, handover_once(fresh(), fresh(), h.fresh_prefix("handover") + "/leader",
                                      true, preferred[i]));
        cpu_preferred += process_cpu_time().count() - cpu1;
    }
    h.out.add(summarize_variant(h, "resign", resigns, cpu_resign));
    h.out.add(summarize_variant(h, "preferred", preferred, cpu_preferred));
}

} // namespace conclave::bench
