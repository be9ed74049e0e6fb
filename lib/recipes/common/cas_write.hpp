// SPDX-License-Identifier: BSL-1.0
// A write of one key by check-and-set, decided on a fresh read and retried after a random
// pause when another writer came between the read and the write: the counter's, the latch's
// and the barrier's writes. Failures say whether the write may have been applied.
#pragma once

#include <conclave/client.hpp>
#include <conclave/consul/kv.hpp>

#include <boost/asio/awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

namespace conclave::detail {

/// What a write does with the key it read.
struct cas_step {
    enum class action {
        finish, ///< complete without writing
        put,    ///< write `value` with `flags` (create-only when the key was missing)
        remove, ///< delete the key (only as it was read)
        fail,   ///< complete with `ec`, described in `why`; nothing written
    };
    cas_step() = default;

    static cas_step finish() { return cas_step{}; }
    static cas_step put(std::string v, std::uint64_t f) {
        cas_step s;
        s.act = action::put;
        s.value = std::move(v);
        s.flags = f;
        return s;
    }
    static cas_step remove() {
        cas_step s;
        s.act = action::remove;
        return s;
    }
    static cas_step failure(error_code e, std::string w) {
        cas_step s;
        s.act = action::fail;
        s.ec = e;
        s.why = std::move(w);
        return s;
    }

    action act = action::finish;
    std::string value;
    std::uint64_t flags = 0;
    error_code ec;
    std::string why;
};

/// One write: what it is, for messages ("add +5 to key k"), and its rule, called with each
/// fresh read of the key (empty: missing). A rule that has a result to give stores it where
/// its caller reads it once the write completed: its last call is the one that counted.
struct cas_op {
    cas_op(std::string w, std::function<cas_step(const std::optional<kv_entry>&)> d)
        : what(std::move(w))
        , decide(std::move(d)) {}
    std::string what;
    std::function<cas_step(const std::optional<kv_entry>&)> decide;
};

/// Runs `op` on `key` within `budget` (0: the client's request_timeout): errc::timeout when
/// other writers won every race until it ran out. A failure is described in `diag` (when
/// not null; cleared on success): what failed, and for a write without an answer, that its
/// outcome is unknown. A cancellation before the write completes with operation_aborted and
/// says nothing was written.
asio::awaitable<error_code> run_cas(client c, std::string key, std::chrono::milliseconds budget,
                                    cas_op op, diagnostics* diag);

/// Puts `ours` before what the client said about the request that failed (its method, URL
/// and error), keeping both.
void describe_failure(diagnostics& said, std::string ours);

} // namespace conclave::detail
