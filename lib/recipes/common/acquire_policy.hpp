// SPDX-License-Identifier: BSL-1.0
// Decisions of the lock acquire loop, without I/O: what a refused transaction means, how
// long to wait after a lock-delay refusal, and whether an existing key may be used.
#pragma once

#include <conclave/consul/txn.hpp>
#include <conclave/error.hpp>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>

namespace conclave::detail {

/// Why an acquire transaction was rolled back.
enum class refusal {
    lock_delay,   ///< the key is inside its lock-delay (Consul names it)
    held,         ///< another session holds the key
    stale,        ///< our view of the key is out of date (index check, exists, missing)
    session_gone, ///< the session is unknown to Consul
    denied,       ///< Consul's ACLs refuse the token a write (no retry can succeed)
    other,        ///< anything else: read the key and decide again
};

inline refusal classify_refusal(const std::vector<txn_error>& errors) {
    bool stale = false;
    for (const auto& e : errors) {
        const std::string_view w = e.what;
        if (w.find("due to lock delay") != std::string_view::npos)
            return refusal::lock_delay;
        if (w.find("invalid session") != std::string_view::npos)
            return refusal::session_gone;
        if (w.find("Permission denied") != std::string_view::npos)
            return refusal::denied;
        if (w.find("lock is already held") != std::string_view::npos)
            return refusal::held;
        if (w.find("index is stale") != std::string_view::npos ||
            w.find("modify index") != std::string_view::npos ||
            w.find("doesn't exist") != std::string_view::npos ||
            w.find("\" exists") != std::string_view::npos)
            stale = true;
    }
    return stale ? refusal::stale : refusal::other;
}

/// errc::permission_denied for an acquire whose transaction Consul's ACLs refused (the
/// token may not write `key`), said in `diag` when given.
inline error_code write_denied(const std::string& key, diagnostics* diag) {
    if (diag) {
        diag->http_status = 409;
        diag->server_message = "Permission denied";
        diag->client_message = "the ACL token lacks key write on \"" + key + "\"";
    }
    return make_error_code(errc::permission_denied);
}

/// What an existing key says about acquiring it with `session`.
enum class key_verdict {
    free,          ///< absent or unlocked with our flags: try to take it
    ours,          ///< already held by this session: a lease without a write
    held_by_other, ///< wait for it to change
    conflict,      ///< other flags: a semaphore or a foreign key (Go: ErrLockConflict)
};

inline key_verdict judge_key(const kv_entry* e, std::string_view session, std::uint64_t flags) {
    if (e == nullptr)
        return key_verdict::free;
    if (e->flags != flags)
        return key_verdict::conflict;
    if (e->session.empty())
        return key_verdict::free;
    return e->session == session ? key_verdict::ours : key_verdict::held_by_other;
}

/// Waits after lock-delay refusals: Consul does not say how much of the delay is left, so
/// the waits double from 25 ms up to `cap` (the delay is passed at most `cap` late).
class lock_delay_backoff {
public:
    explicit lock_delay_backoff(std::chrono::milliseconds cap)
        : cap_(cap) {}
    std::chrono::milliseconds next() {
        const auto d = std::min(current_, cap_);
        current_ = std::min(current_ * 2, cap_);
        return d;
    }
    void reset() { current_ = std::chrono::milliseconds{25}; }

private:
    std::chrono::milliseconds cap_;
    std::chrono::milliseconds current_{25};
};

/// Waits between retries of transient failures (network, 5xx) while acquiring: 50 ms,
/// doubling up to 2 s.
class retry_backoff {
public:
    std::chrono::steady_clock::duration next() {
        const auto d = current_;
        current_ =
            std::min<std::chrono::steady_clock::duration>(current_ * 2, std::chrono::seconds{2});
        return d;
    }
    void reset() { current_ = std::chrono::milliseconds{50}; }

private:
    std::chrono::steady_clock::duration current_ = std::chrono::milliseconds{50};
};

/// How long an acquire transaction may take even when the budget is (nearly) spent, so
/// that try_acquire with a budget of 0 means "one attempt, no waiting" (locks and
/// semaphores alike).
inline constexpr auto minimum_attempt_time = std::chrono::milliseconds{500};

} // namespace conclave::detail
