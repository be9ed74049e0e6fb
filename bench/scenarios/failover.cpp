// SPDX-License-Identifier: BSL-1.0
// failover: how long a waiter waits when the holder goes away.
//   crash   the holder is a child process (`_holder`) killed with SIGKILL: its renewals stop
//           and its connections drop, as on a host crash. Measured: kill -> the waiter's
//           acquire ack. Bound: 2 x TTL (Consul's expiry) + lock-delay + one rtt + 10 ms.
//   crash-health  the same, with the holder's session bound to a TTL check it passes
//           (session_config::health_ttl): the agent turns the check critical health TTL
//           after the last pass, which invalidates the session. Bound: health TTL +
//           lock-delay + one rtt + 200 ms (the agent's sync of the check to the servers,
//           and the waiter's retries through the lock-delay, 25 ms doubling).
//   resign  the holder (another client in this process, as another service would be)
//           watches its lease while it holds it, as a holder does, then releases: release
//           call -> the waiter's acquire ack. Bound: 3 round trips, against the median of
//           GETs sent in the same state (every process idle for idle_settle_us first): an idle pair
//           of processes answers slower than the back-to-back `rtt` loop, and a handoff
//           always starts from idle. The ratio to the `rtt` mean is reported too.
#include "harness/piped_child.hpp"
#include "harness/scenarios.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <csignal>

namespace conclave::bench {

namespace {

struct handover {
    std::int64_t event_ns = 0; ///< kill, or the release call
    std::int64_t acquired_ns = 0;
    std::int64_t idle_rtt_ns = 0; ///< resign: a GET after the same idle time, just before
};

asio::awaitable<void> wait_and_take(client c, std::string key, bool fair, session s,
                                    handover& out) {
    lock l{c, key, bench_lock_options(fair)};
    auto [ec, lease] = co_await l.async_try_acquire(s, std::chrono::seconds(120), use_tuple);
    out.acquired_ns = monotonic_ns();
    if (ec || !lease)
        throw std::runtime_error("failover: the waiter did not get the lock");
    co_await lease->async_release(use_tuple);
}

asio::awaitable<void> kill_later(child_process& holder, handover& out) {
    co_await sleep_for_us(idle_settle_us);
    out.event_ns = monotonic_ns();
    holder.signal(SIGKILL);
}

asio::awaitable<void> crash_once(harness& h, client c, std::string key, child_process& holder,
                                 handover& out) {
    session s = co_await start_session(c, "bench-failover-waiter", "failover");
    std::function<asio::awaitable<void>(std::size_t)> parts = [&](std::size_t i) {
        return i == 0 ? wait_and_take(c, key, h.opt.fair, s, out) : kill_later(holder, out);
    };
    co_await spawn_all(2, parts);
    co_await s.async_destroy(use_tuple);
}

// While the waiter parks: idle, one GET timed from idle, idle again.
asio::awaitable<void> idle_then_measure(client c, std::string key, handover& out) {
    out.idle_rtt_ns = co_await idle_round_trip(c, key);
    co_await sleep_for_us(idle_settle_us);
}

asio::awaitable<void> resign_later(client c, std::string key, lock_lease lease, handover& out) {
    {
        // The holder watches its lease the whole time, as holders do (in fair mode that is
        // also how it knows whom to hand the key to).
        using namespace asio::experimental::awaitable_operators;
        auto held = co_await (lease.async_wait_lost(use_tuple) || idle_then_measure(c, key, out));
        if (held.index() == 0)
            throw std::runtime_error("resign: the holder lost the lock while holding it");
    }
    out.event_ns = monotonic_ns();
    auto [ec] = co_await lease.async_release(use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "resign: release");
}

asio::awaitable<void> resign_once(harness& h, client holder_client, client waiter_client,
                                  std::string key, handover& out) {
    session hs = co_await start_session(holder_client, "bench-resign-holder", "resign");
    session ws = co_await start_session(waiter_client, "bench-resign-waiter", "resign");
    lock l{holder_client, key, bench_lock_options(h.opt.fair)};
    auto [ec, lease] = co_await l.async_acquire(hs, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "resign: acquire");
    std::function<asio::awaitable<void>(std::size_t)> parts = [&](std::size_t i) {
        return i == 0 ? wait_and_take(waiter_client, key, h.opt.fair, ws, out)
                      : resign_later(holder_client, key, lease, out);
    };
    co_await spawn_all(2, parts);
    co_await hs.async_destroy(use_tuple);
    co_await ws.async_destroy(use_tuple);
}

record summarize_handovers(harness& h, const std::string& variant,
                           const std::vector<handover>& runs, std::int64_t cpu_us) {
    std::vector<std::chrono::nanoseconds> samples;
    for (const auto& x : runs)
        samples.emplace_back(x.acquired_ns - x.event_ns);
    record r = h.base_record("failover", "conclave", 2);
    r.set("variant", variant);
    const auto sum = add_latencies(r, samples);
    r.set("ops", double(sum.count));
    r.set("latency", std::string(variant == "resign" ? "release -> acquire" : "kill -> acquire"));
    r.set("p50_us", sum.p50_us);
    r.set("p99_us", sum.p99_us);
    r.set("max_us", sum.max_us);
    r.set("failover_ms", sum.max_us / 1000.0);
    // One handover at a time: the rate is 1 / mean handover time.
    r.set("ops_per_s", sum.mean_us > 0 ? 1e6 / sum.mean_us : 0.0);
    r.set("cpu_us_per_op", sum.count ? double(cpu_us) / double(sum.count) : 0.0);
    return r;
}

} // namespace

namespace {

// `repeat` crashes of a holder started with `extra` arguments: the kill -> acquire times.
// A holder's health check is left critical on the agent by the kill: deregistered here.
std::vector<handover> crashes(harness& h, client c, const std::vector<std::string>& extra,
                              double expected_s) {
    std::vector<handover> runs(h.opt.repeat);
    for (auto& x : runs) {
        const std::string key = h.fresh_prefix("failover") + "/lock";
        std::vector<std::string> args{h.self_exe(),      "_holder",
                                      "--address",       h.target.address(),
                                      "--key",           key,
                                      "--ttl-ms",        std::to_string(h.opt.ttl_ms),
                                      "--lock-delay-ms", std::to_string(h.opt.lock_delay_ms)};
        args.insert(args.end(), extra.begin(), extra.end());
        child_process holder(piped(args));
        std::string line;
        if (!holder.read_line(line) || line.find("\"acquired\"") == std::string::npos)
            throw std::runtime_error("failover: the holder did not take the lock: " + line);
        progress pr(h.ioc, "failover crash", expected_s, [] { return std::size_t(0); });
        run_sync(h.ioc, crash_once(h, c, key, holder, x));
        holder.reap();
        const auto at = line.find("\"check\":\"");
        const auto check = at == std::string::npos
                               ? std::string()
                               : line.substr(at + 9, line.find('"', at + 9) - (at + 9));
        if (!check.empty())
            run_sync(h.ioc, [](client c, std::string id) -> asio::awaitable<void> {
                co_await c.async_agent_check_deregister(id, write_options{}, use_tuple);
            }(c, check));
    }
    return runs;
}

// The crash record: its bound and whether it was met.
void add_crash(harness& h, const std::string& variant, const std::vector<handover>& runs,
               std::int64_t cpu_us, double bound_ms, const std::string& target) {
    record crash = summarize_handovers(h, variant, runs, cpu_us);
    crash.set("ttl_ms", double(h.opt.ttl_ms));
    crash.set("lock_delay_ms", double(h.opt.lock_delay_ms));
    if (variant == "crash-health")
        crash.set("health_ttl_ms", double(h.opt.health_ttl_ms));
    crash.set("bound_ms", bound_ms);
    crash.set("target", target);
    crash.set("target_met", crash.number("failover_ms").value_or(1e18) <= bound_ms);
    h.out.add(std::move(crash));
}

} // namespace

void scenario_failover(harness& h) {
    const rtt_baseline base = h.baseline();
    client c{h.ioc.get_executor(), h.target.make_config(h.pool_size(8))};

    std::int64_t cpu0 = process_cpu_time().count();
    const auto ttl_only = crashes(h, c, {}, double(2 * h.opt.ttl_ms + h.opt.lock_delay_ms) / 1e3);
    add_crash(h, "crash", ttl_only, process_cpu_time().count() - cpu0,
              double(2 * h.opt.ttl_ms + h.opt.lock_delay_ms) + base.mean_us / 1000.0 + 10.0,
              "kill -> acquire <= 2 x TTL + lock-delay + rtt + 10 ms");

    cpu0 = process_cpu_time().count();
    const auto bound = crashes(h, c, {"--health-ttl-ms", std::to_string(h.opt.health_ttl_ms)},
                               double(h.opt.health_ttl_ms + h.opt.lock_delay_ms) / 1e3);
    add_crash(h, "crash-health", bound, process_cpu_time().count() - cpu0,
              double(h.opt.health_ttl_ms + h.opt.lock_delay_ms) + base.mean_us / 1000.0 + 200.0,
              "kill -> acquire <= health TTL + lock-delay + rtt + 200 ms");

    client other{h.ioc.get_executor(), h.target.make_config(h.pool_size(8))};
    std::vector<handover> resigns(h.opt.repeat);
    cpu0 = process_cpu_time().count();
    for (auto& x : resigns)
        run_sync(h.ioc, resign_once(h, other, c, h.fresh_prefix("resign") + "/lock", x));
    record resign = summarize_handovers(h, "resign", resigns, process_cpu_time().count() - cpu0);
    // The slowest handoff against the median GET sent from the same idle state (a pair's
    // own GET is a noisy yardstick: one slow GET would excuse its handoff).
    std::vector<std::chrono::nanoseconds> idle_rtts;
    for (const auto& x : resigns)
        idle_rtts.emplace_back(x.idle_rtt_ns);
    const auto idle = summarize(idle_rtts);
    const double max_ms = resign.number("failover_ms").value_or(0);
    resign.set("idle_rtt_p50_us", idle.p50_us);
    resign.set("idle_rtt_max_us", idle.max_us);
    const double rtts = idle.p50_us > 0 ? max_ms * 1000.0 / idle.p50_us : 0.0;
    resign.set("handoff_rtts", rtts);
    resign.set("handoff_rtts_vs_rtt_loop", base.mean_us > 0 ? max_ms * 1000.0 / base.mean_us : 0.0);
    resign.set("bound_ms", 3 * idle.p50_us / 1000.0);
    resign.set("target",
               std::string("release -> acquire <= 3 round trips (a GET from the same idle state)"));
    resign.set("target_met", rtts > 0 && rtts <= 3.0);
    h.out.add(std::move(resign));
}

} // namespace conclave::bench
