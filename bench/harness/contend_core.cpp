// SPDX-License-Identifier: BSL-1.0
// The contended loop every lock scenario runs (in this process or in a worker process):
// each contender has its own session and lock object, as separate services would, and all
// share one client (one pool) per process.
#include "harness/scenarios.hpp"

#include <type_traits>

namespace conclave::bench {

namespace {

// Detected at compile time so the harness builds before and after the library grows a
// fair mode (lock_options::with_fair).
template <class O>
concept has_fair = requires(O o) {
    o.with_fair(true);
};

template <class O>
void set_fair(O& o, bool fair) {
    if constexpr (has_fair<O>)
        o.with_fair(fair);
    else
        (void)fair;
}

} // namespace

bool lock_has_fair_mode() {
    return has_fair<lock_options>;
}

namespace {
std::optional<unsigned> local_turn_override;
} // namespace

void set_local_turn(std::optional<unsigned> grants) {
    local_turn_override = grants;
}

lock_options bench_lock_options(bool fair) {
    lock_options o;
    set_fair(o, fair);
    if (local_turn_override)
        o.with_local_turn(*local_turn_override);
    return o;
}

std::vector<std::size_t> contender_counts(const harness& h, std::vector<std::size_t> fallback) {
    return h.opt.contenders.empty() ? fallback : h.opt.contenders;
}

std::size_t key_count(const harness& h) {
    return h.opt.keys ? h.opt.keys : 1;
}

namespace {

asio::awaitable<void> contender(client c, const contend_params& p, std::size_t i, session s,
                                std::vector<grant>& out) {
    const std::size_t id = p.first_id + i;
    const std::size_t key = id % p.keys;
    lock l{c, p.prefix + "/k" + std::to_string(key), bench_lock_options(p.fair)};
    co_await sleep_until_ns(p.start_ns);
    while (monotonic_ns() < p.end_ns) {
        grant g;
        g.contender = std::uint32_t(id);
        g.key = std::uint32_t(key);
        g.start_ns = monotonic_ns();
        // A budget rather than a plain acquire, so a stuck run ends (and says so).
        auto got = co_await l.async_try_acquire(s, acquire_budget(p.end_ns), use_tuple);
        auto lease = granted(std::move(got), "contender " + std::to_string(id) + " acquire");
        co_await hold_and_release(lease, p.hold_us, g, "contender release");
        out.push_back(g);
        if (p.once)
            break;
    }
}

} // namespace

asio::awaitable<void> contend_core(client c, const contend_params& p, std::vector<grant>& out) {
    std::vector<session> sessions(p.contenders);
    std::function<asio::awaitable<void>(std::size_t)> create =
        [&](std::size_t i) -> asio::awaitable<void> {
        sessions[i] = co_await start_session(c, "bench-contender", "contend");
    };
    co_await for_each_bounded(p.contenders, 16, create);

    std::function<asio::awaitable<void>(std::size_t)> run = [&](std::size_t i) {
        return contender(c, p, i, sessions[i], out);
    };
    std::exception_ptr failure;
    try {
        co_await spawn_all(p.contenders, run);
    } catch (...) {
        failure = std::current_exception();
    }
    if (p.before_cleanup)
        p.before_cleanup();
    std::function<asio::awaitable<void>(std::size_t)> destroy =
        [&](std::size_t i) -> asio::awaitable<void> {
        co_await sessions[i].async_destroy(use_tuple);
    };
    co_await for_each_bounded(p.contenders, 16, destroy);
    if (failure)
        std::rethrow_exception(failure);
}

} // namespace conclave::bench
