// SPDX-License-Identifier: BSL-1.0
// A double barrier object's state, and its readings of the prefix: one read now, or the
// next news of the query that every enter and leave of the client on the prefix shares.
#pragma once

#include "recipes/barrier/double_barrier_rules.hpp"
#include "recipes/common/keyed_state.hpp"
#include "recipes/common/kv_query.hpp"

#include <conclave/barrier.hpp>

#include <boost/asio/awaitable.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace conclave::detail {

struct double_barrier_state : keyed_state<barrier_options, prefix_query> {
    double_barrier_state(client& c, const std::string& prefix, std::uint32_t n,
                         const barrier_options& o)
        : keyed_state(c, prefix, o,
                      prefix_query::of(c, "double-barrier", prefix + "/",
                                       shared_query::settings{o.wait, o.retry_wait, false}))
        , participants(n) {}

    const std::uint32_t participants;

    std::string key_of(const std::string& session) const { return key + "/" + session; }
    std::string ready_key() const { return key + "/" + std::string{ready_name}; }
};

/// A judged reading of the prefix and the Raft index it is as of.
struct prefix_view {
    barrier_reading reading;
    std::uint64_t index = 0;
};

/// One read of the prefix now (not blocking).
asio::awaitable<std::pair<error_code, prefix_view>> read_prefix(double_barrier_state& st,
                                                                diagnostics& said);

/// Readings of the shared query, each newer than the last one given and at least as recent
/// as the caller's own last read or write (after()). Keeps the query running while it
/// lives.
class barrier_news {
public:
    explicit barrier_news(double_barrier_state& st);

    /// Only readings as of `index` or later count (the caller's last read: one of the
    /// query's answered before it would show a state older than the caller's own write).
    void after(std::uint64_t index);
    /// The next reading: operation_aborted when cancelled, errc::permission_denied when
    /// Consul's ACLs refuse the query (its text in `said`).
    asio::awaitable<std::pair<error_code, prefix_view>> next(diagnostics& said);

private:
    double_barrier_state& st_;
    std::shared_ptr<void> subscription_;
    std::uint64_t min_index_ = 0;
    std::optional<std::uint64_t> seen_reads_; ///< none: the query's state now is news too
    std::uint64_t reads_at_after_ = 0;
};

/// Deletes, in the background, participant keys that no session holds any more.
void delete_dead(double_barrier_state& st, const barrier_reading& r);

} // namespace conclave::detail
