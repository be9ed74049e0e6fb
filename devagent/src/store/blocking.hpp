// SPDX-License-Identifier: BSL-1.0
// Blocking queries: Consul's query options (index, wait, consistency modes), the waiting
// timeout (default 5 min, max 10 min, jitter in [0, wait/16)), a hub that wakes waiting
// queries when a write closes a channel they watch, and the loop of Consul 1.8's
// blockingQuery (re-evaluate on wake-up, return the last evaluation on timeout).
#pragma once

#include "devagent/src/server/http_types.hpp"
#include "devagent/src/store/state.hpp"

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace conclave::dev::detail {

/// The read options Consul's HTTP layer parses for every /v1/kv and session read.
struct query_opts {
    bool stale = false;
    bool consistent = false;
    std::uint64_t min_index = 0;
    std::chrono::nanoseconds wait{0};
};

struct query_opts_parse {
    query_opts opts;
    std::string error; ///< non-empty: answer 400 with this text
};

/// agent/http.go parse(): consistency flags, then wait, then index.
query_opts_parse parse_query_opts(const query_params& q);

inline constexpr std::chrono::seconds default_query_time{300};
inline constexpr std::chrono::seconds max_query_time{600};

/// The time a blocking query may wait: wait clamped to max_query_time (default_query_time
/// when absent or <= 0), plus a random jitter in [0, wait/16).
std::chrono::nanoseconds query_timeout(std::chrono::nanoseconds wait, std::mt19937_64& rng);

/// Keeps the blocking queries currently waiting, by the channels they watch.
class watch_hub {
public:
    class waiter {
    public:
        virtual void wake(bool reset) = 0;

    protected:
        ~waiter() = default;
    };

    void add(waiter* w, const watch_set& channels);
    void remove(waiter* w, const watch_set& channels);
    /// A write closed these channels: wake every waiter watching one of them.
    void notify(const std::vector<std::uint64_t>& closed);
    /// Wakes everything (reset = the state was replaced, stop = the agent is stopping).
    void wake_all(bool reset);
    std::size_t size() const { return waiters_.size(); }

private:
    std::unordered_multimap<std::uint64_t, waiter*> by_channel_;
    std::unordered_set<waiter*> waiters_;
};

/// Tells a waiting query that its client went away (implemented by the HTTP server).
class disconnect_probe {
public:
    virtual ~disconnect_probe() = default;
    /// Starts watching the connection; on_gone is called at most once.
    virtual void arm(std::function<void()> on_gone) = 0;
    /// Stops watching; on_gone will not be called afterwards.
    virtual void disarm() = 0;
    /// The client went away during a wait that would have lasted until `until`: Consul
    /// keeps such a query, and counts its connection against the per-client limit, until
    /// then (the dev agent ends the wait at once but keeps the count).
    virtual void counted_until(std::chrono::steady_clock::time_point until) = 0;
};

/// Evaluates a query: fills the caller's result and returns its index; collects the
/// channels to watch when given a set.
using query_eval = std::function<std::uint64_t(watch_set*)>;

/// Consul 1.8's blockingQuery: without an index, one evaluation. Otherwise evaluate; while
/// the index is not above opts.min_index wait for a watched change (re-evaluating each time)
/// until the timeout, then keep the last evaluation. Returns the index to report (never 0).
boost::asio::awaitable<std::uint64_t> run_blocking(watch_hub& hub, std::mt19937_64& rng,
                                                   disconnect_probe* probe, const query_opts& opts,
                                                   const query_eval& eval);

} // namespace conclave::dev::detail
