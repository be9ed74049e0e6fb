// SPDX-License-Identifier: BSL-1.0
// The state of a barrier or a latch (one key, its options, the key's shared query), and
// the wait of both: until the key says so, on the query every waiter of the client shares.
#pragma once

#include "recipes/common/keyed_state.hpp"
#include "recipes/common/kv_query.hpp"

#include <conclave/barrier.hpp>

#include <boost/asio/awaitable.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace conclave::detail {

/// One key of recipe `kind` ("barrier", "latch"): its hub is shared by the client's
/// objects of that kind on the key.
struct watched_key_state : keyed_state<barrier_options, key_query> {
    watched_key_state(client& c, const char* kind, const std::string& k, const barrier_options& o)
        : keyed_state(
              c, k, o,
              key_query::of(c, kind, k, shared_query::settings{o.wait, o.retry_wait, false})) {}
};

/// What a wait makes of the key (empty: missing): done waiting, or why the key is not the
/// recipe's (errc::conflict).
struct key_verdict {
    bool done = false;
    std::string problem;
};
using key_rule = std::function<key_verdict(const std::optional<kv_entry>&)>;

/// One read of the key now: its entry, judged by `rule` (errc::conflict with the problem in
/// `diag`), for a read operation (is_set, get_count). Any cancellation type ends it.
asio::awaitable<std::pair<error_code, std::optional<kv_entry>>>
read_judged(std::shared_ptr<watched_key_state> st, key_rule rule, diagnostics* diag);

/// Waits until `rule` says done: a read now (done at once when it says so), then the
/// shared query's readings at least as recent as it (an older one may predate the caller's
/// own write). operation_aborted when cancelled (any type), errc::conflict, and
/// errc::permission_denied when Consul's ACLs refuse the query; `diag` says what failed.
asio::awaitable<error_code> wait_for_key(std::shared_ptr<watched_key_state> st, key_rule rule,
                                         diagnostics* diag);

} // namespace conclave::detail
