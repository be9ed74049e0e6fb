// SPDX-License-Identifier: BSL-1.0
/// \file
/// The resource side of fencing: refusing writes from a holder that lost its lock.
///
/// A lock holder can be paused (GC, SIGSTOP, a VM migration) past its session's TTL, lose the
/// lock, and wake up still believing it holds it: nothing it can check locally tells it
/// otherwise in time. The resource it writes to can: every grant carries a fencing token, later
/// grants carry larger ones, so a resource that remembers the largest token it accepted
/// refuses the paused holder's late writes. docs/howto/locks.md ("Fence your writes") has a
/// worked example.
#pragma once

#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/initiate.hpp>
#include <conclave/lock.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>

namespace conclave {

/// An in-memory fence for a service that owns resources (files, rows, devices) written by
/// lock holders: per resource, the largest token index accepted so far.
///
///     if (!fences.admit("report.csv", token)) throw stale_writer{};   // then write
///
/// Tokens are compared by `modify_index`, Consul's Raft index of the acquiring write: one
/// clock for the whole cluster, so a later grant always compares larger. Guard each resource
/// with one lock. (Not for semaphore permits: holders admitted together share an index, and
/// a holder admitted earlier is still valid while a later one writes.) Not thread-safe.
class CONCLAVE_DECL fence {
public:
    /// True, and remembered, when `token` is at least as new as every token accepted for
    /// `resource` (the same grant may write again); false for an older grant. A zero index
    /// (an empty token) is never admitted.
    bool admit(const std::string& resource, const fencing_token& token);
    /// The largest index admitted for `resource`, 0 when none.
    std::uint64_t last(const std::string& resource) const;
    /// Forgets `resource` (deleted, or handed to a store of its own).
    void forget(const std::string& resource);

private:
    std::unordered_map<std::string, std::uint64_t> last_;
};

namespace detail {
CONCLAVE_DECL void fenced_put_impl(client c, std::string key, std::string value, fencing_token t,
                                   diagnostics_route* route,
                                   asio::any_completion_handler<void(error_code)> h);
} // namespace detail

/// A fenced write to Consul's KV store: writes `value` to `key` unless the key was written
/// with a newer token or the token's session no longer holds its lock. The token's index is
/// kept in the key's flags; value and fence are written in one transaction with a
/// check-session on the lock (a read, then the transaction, retried after a short random
/// pause when another writer came between). Every writer of `key` must write it this way: a
/// plain PUT resets its flags, and a delete forgets the fence. For lock and leadership
/// tokens.
///
/// Completes with `void(error_code)`: success when written; errc::lock_lost ("fenced out")
/// for an older token or a grant that no longer holds its lock; errc::conflict for a key held
/// by a session or carrying a lock's or semaphore's flags; errc::invalid_argument for an empty
/// token or one of the lock's own keys; errc::timeout when other writers kept winning the
/// race for the client's request timeout; the requests' errors otherwise.
template <class Token = default_token_t>
auto async_fenced_put(client& c, std::string key, std::string value, fencing_token t,
                      Token&& token = {}) {
    return detail::initiate<void(error_code)>(token, &detail::fenced_put_impl, c, std::move(key),
                                              std::move(value), std::move(t));
}

} // namespace conclave
