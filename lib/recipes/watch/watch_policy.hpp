// SPDX-License-Identifier: BSL-1.0
// When a watch sends its next blocking query, with which index, and what a reply means:
// pure decisions, no I/O, no clock (the caller passes `now`).
#pragma once

#include "consul/blocking/stall_pacing.hpp"

#include <conclave/error.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace conclave::detail {

/// The blocking-query loop of one watch (consul-spec §4.3).
///
/// Index rules:
/// - the next query blocks on the index of the last usable reply;
/// - an index of 0 in a reply counts as 1 (Consul never sends 0, a proxy might);
/// - a reply whose index is lower than the one we blocked on means the server's history
///   was replaced (dev agent restart, snapshot restore, tombstone reaping): the reply is
///   not used and the index is reset to 0, so the next query is a non-blocking re-read;
/// - 0 is never sent as a blocking index: index 0 always means a non-blocking read.
///
/// Pacing (nothing may make the loop spin):
/// - two queries start at least `min_interval` apart;
/// - a reply with the same index that took at least the blocking wait (and at least
///   initial_backoff) is a normal timeout: the next query may start at once;
/// - any other reply that did not advance the index (the same index returned early, or an
///   index that went backwards) is a *stall*: consecutive stalls space the next start from
///   the stalled query's start by a jittered exponential backoff (initial_backoff doubling
///   up to max_backoff). A server that answers at once with the same index is slowed down
///   to one query per max_backoff; one that keeps moving its index back likewise;
/// - after a failed query the next one is a non-blocking read (a restarted server has a
///   lower index: blocking on the old one would wait out the whole wait); it reports only a
///   changed index;
/// - a failed query (any error) is retried after a jittered exponential backoff from the
///   moment it failed; the failure count survives until a query succeeds, so a caller that
///   retries after a final error is paced too.
///
/// Jitter: a backoff b is drawn uniformly in [b/2, b], so it never exceeds max_backoff.
class watch_policy {
public:
    using clock = std::chrono::steady_clock;
    using duration = clock::duration;

    /// What a reply means for the data it carries.
    enum class verdict {
        advanced, ///< the index moved forward, or a non-blocking read: use the data
        same,     ///< the index did not move (timeout or spurious wake-up): data unchanged
        reset,    ///< the index went backwards: discard the data, re-read with index 0
    };

    /// `wait` is the blocking wait sent with each query (<= 0: Consul's default, 5 min).
    watch_policy(duration wait, duration min_interval, duration initial_backoff,
                 duration max_backoff, std::uint64_t seed = std::random_device{}())
        : wait_(effective_wait(wait))
        , min_interval_(std::max(min_interval, duration::zero()))
        , backoff_(initial_backoff, max_backoff, seed) {}

    /// The index to send with the next query: 0 is a non-blocking read.
    std::uint64_t query_index() const noexcept { return reread_ ? 0 : index_; }
    /// The next query must not start before this.
    clock::time_point next_start() const noexcept { return next_start_; }
    unsigned consecutive_failures() const noexcept { return failures_; }
    unsigned consecutive_stalls() const noexcept { return stalls_; }

    /// A query is being sent at `now`.
    void on_start(clock::time_point now) noexcept {
        started_ = now;
        next_start_ = now + min_interval_;
    }

    /// A reply with X-Consul-Index `index` arrived at `now` for the query started last.
    verdict on_reply(std::uint64_t index, clock::time_point now) {
        failures_ = 0;
        index = std::max<std::uint64_t>(index, 1);
        if (reread_) {
            // The non-blocking read after a failure: a restarted server's state (a lower
            // index) is the new state; the same index, nothing new.
            reread_ = false;
            const std::uint64_t before = index_;
            index_ = index;
            return index == before ? verdict::same : verdict::advanced;
        }
        const std::uint64_t sent = index_;
        if (sent == 0) {
            // Non-blocking read (first read or re-read after a reset): always usable. Stalls
            // are kept, so a server that keeps moving its index back is still slowed down.
            index_ = index;
            return verdict::advanced;
        }
        if (index > sent) {
            index_ = index;
            stalls_ = 0;
            return verdict::advanced;
        }
        if (index < sent) {
            stall();
            index_ = 0;
            return verdict::reset;
        }
        if (now - started_ >= std::max(wait_, backoff_.initial()))
            stalls_ = 0; // a normal timeout: nothing changed during the whole wait
        else
            stall(); // answered early without news: a wake-up for nothing, or a bad server
        return verdict::same;
    }

    /// The query started last failed at `now`. Returns true when it should be retried
    /// (the error is transient), false when it is final for the caller. Either way the next
    /// query waits for the backoff.
    bool on_error(const error_code& ec, clock::time_point now) {
        ++failures_;
        // The server may have restarted with less history: blocking on the old index there
        // would wait out the whole wait for nothing. Read without blocking first.
        reread_ = index_ != 0;
        next_start_ = std::max(next_start_, now + backoff_.draw(failures_));
        return is_retryable(ec);
    }

    /// The un-jittered backoff after `n` consecutive failures or stalls (n >= 1).
    duration backoff(unsigned n) const noexcept { return backoff_.nominal(n); }

    /// The wait Consul applies: its default (5 min) for <= 0, capped at 10 min.
    static duration effective_wait(duration wait) noexcept {
        if (wait <= duration::zero())
            return std::chrono::minutes{5};
        return std::min<duration>(wait, std::chrono::minutes{10});
    }

private:
    void stall() {
        ++stalls_;
        next_start_ = std::max(next_start_, started_ + backoff_.draw(stalls_));
    }

    duration wait_;
    duration min_interval_;
    doubling_backoff backoff_; ///< failures and stalls
    std::uint64_t index_ = 0;
    bool reread_ = false; ///< the next query is a non-blocking read after a failure
    clock::time_point started_{};
    clock::time_point next_start_{};
    unsigned failures_ = 0;
    unsigned stalls_ = 0;
};

} // namespace conclave::detail
