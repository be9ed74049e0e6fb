// SPDX-License-Identifier: BSL-1.0
// Pacing of a blocking-query loop that Consul answers without news. Consul's rules for
// blocking queries: an index below 1 counts as 1, an index that goes backwards resets, and
// a client rate-limits its queries, since nothing else keeps a loop from spinning when a
// server or proxy answers at once with the same index (or keeps moving it back).
//
// Consul itself returns a blocking query early only when the index moved; a reply with the
// same index after the whole wait is a normal timeout. Anything else that did not advance
// the index is a *stall*: consecutive stalls space the next query from the stalled one's
// start by a jittered exponential backoff. The watch's policy (recipes/watch/watch_policy.hpp)
// applies the same rule with its user's settings; the shared queries of the lock,
// semaphore and elector and the folder reads use this one.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace conclave::detail {

/// A doubling pause: up to `initial` for the first, twice as long for each next one in a
/// row, up to `most`. Each pause is drawn uniformly in [b/2, b] (it never exceeds `most`),
/// so loops that started together do not retry in lockstep.
class doubling_backoff {
public:
    using duration = std::chrono::steady_clock::duration;

    doubling_backoff(duration initial, duration most, std::uint64_t seed)
        : initial_(std::max(initial, duration{1}))
        , most_(std::max(most, initial_))
        , rng_(seed) {}

    duration initial() const noexcept { return initial_; }

    /// The un-jittered pause for the `n`th in a row (n >= 1).
    duration nominal(unsigned n) const noexcept {
        duration b = initial_;
        for (unsigned i = 1; i < n && b < most_; ++i)
            b *= 2;
        return std::min(b, most_);
    }

    /// The pause for the `n`th in a row, drawn in [nominal/2, nominal].
    duration draw(unsigned n) {
        const auto b = nominal(n);
        std::uniform_int_distribution<duration::rep> pick(b.count() / 2, b.count());
        return duration{pick(rng_)};
    }

private:
    duration initial_;
    duration most_;
    std::mt19937_64 rng_;
};

class stall_pacing {
public:
    using clock = std::chrono::steady_clock;
    using duration = clock::duration;

    /// The first stall waits up to `initial` (drawn in [initial/2, initial]), doubling with
    /// each stall in a row up to `most`.
    explicit stall_pacing(duration initial = std::chrono::milliseconds{50},
                          duration most = std::chrono::seconds{2},
                          std::uint64_t seed = std::random_device{}())
        : backoff_(initial, most, seed) {}

    /// The index to block on after a reply with `index`: never 0, which would not block.
    static std::uint64_t blocking_index(std::uint64_t index) noexcept {
        return std::max<std::uint64_t>(index, 1);
    }

    /// A query that blocked on `asked` (0: it did not block) for at most `wait`, started
    /// at `started`, was answered with `index` at `now`. Returns when the next query may
    /// start (`now` when at once).
    clock::time_point on_reply(std::uint64_t asked, std::uint64_t index, duration wait,
                               clock::time_point started, clock::time_point now) {
        if (asked == 0)
            return now; // a plain read: the answer is news (stalls are kept)
        if (index > asked || now - started >= std::max(wait, backoff_.initial())) {
            stalls_ = 0; // news, or a normal timeout: nothing changed in the whole wait
            return now;
        }
        ++stalls_;
        return started + backoff_.draw(stalls_);
    }

    /// Stalls in a row so far.
    unsigned stalls() const noexcept { return stalls_; }

    /// The un-jittered pause after `n` stalls in a row (n >= 1).
    duration backoff(unsigned n) const noexcept { return backoff_.nominal(n); }

private:
    doubling_backoff backoff_;
    unsigned stalls_ = 0;
};

} // namespace conclave::detail
