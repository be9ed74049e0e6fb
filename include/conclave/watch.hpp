// SPDX-License-Identifier: BSL-1.0
/// \file
/// The latest state of a KV key, prefix or key listing, over blocking queries: class watch.
#pragma once

#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/options_base.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace conclave {

namespace detail {
struct watch_state;
}

/// What a watch looks at. Build one with watch::key, watch::prefix or watch::keys.
class CONCLAVE_DECL watch_target {
public:
    /// What the path names.
    enum class kind {
        key,    ///< one key: 0 or 1 entry
        prefix, ///< every entry under a prefix, with values (?recurse)
        keys,   ///< key names under a prefix (?keys[&separator=])
    };

    /// `separator` is for keys targets only. watch::key, watch::prefix and watch::keys say
    /// the same more briefly.
    watch_target(kind k, std::string path, std::string separator = {})
        : kind_(k)
        , path_(std::move(path))
        , separator_(std::move(separator)) {}

    /// A key, a prefix or a key listing.
    kind what() const noexcept { return kind_; }
    /// The key, or the prefix.
    const std::string& path() const noexcept { return path_; }
    /// keys targets: where names are collapsed (empty: they are not).
    const std::string& separator() const noexcept { return separator_; }

private:
    kind kind_;
    std::string path_;
    std::string separator_;
};

/// How a watch queries Consul. Not an aggregate (see conclave/consul/request.hpp): set fields with
/// with_*.
struct watch_options : detail::options_base<watch_options> {
    watch_options() = default;

    /// Blocking wait of each query (Consul caps it at 10 min and adds up to wait/16).
    /// The client's request deadline is this plus its request_timeout.
    std::chrono::milliseconds wait{300000};
    consistency mode = consistency::default_mode; ///< consistency of every query
    /// Two queries start at least this far apart: when the data churns, one snapshot per
    /// interval at most (the latest one). 0: no limit beyond the blocking query itself.
    std::chrono::milliseconds min_interval{0};
    /// First retry delay after an error (or an early reply without news); it doubles up
    /// to max_backoff, each delay drawn in [b/2, b].
    std::chrono::milliseconds backoff{100};
    std::chrono::milliseconds max_backoff{10000}; ///< the longest retry delay
    std::string datacenter;                       ///< ?dc= (empty: the client's default)
    diagnostics* diag = nullptr;                  ///< Consul's text of the last failed query

    watch_options& with_wait(std::chrono::milliseconds v) { return set(wait, v); }
    watch_options& with_mode(consistency v) { return set(mode, v); }
    watch_options& with_min_interval(std::chrono::milliseconds v) { return set(min_interval, v); }
    watch_options& with_backoff(std::chrono::milliseconds v) { return set(backoff, v); }
    watch_options& with_max_backoff(std::chrono::milliseconds v) { return set(max_backoff, v); }
    watch_options& with_datacenter(std::string v) { return set(datacenter, std::move(v)); }
    watch_options& with_diag(diagnostics* v) { return set(diag, v); }
};

/// The state a watch reported.
struct watch_snapshot {
    /// key and prefix watches: the entries, sorted by key. A key watch has 0 entries when
    /// the key does not exist ("no value"), 1 otherwise.
    std::vector<kv_entry> entries;
    /// keys watches: the key names (collapsed at the separator when one is set).
    std::vector<std::string> keys;
    /// The X-Consul-Index this state was read at. It can go backwards once, when Consul's
    /// history was replaced (restore, restart); see watch.
    std::uint64_t index = 0;
};

/// Follows a key, a prefix or a key listing with blocking queries and reports its latest
/// state.
///
///     watch w{consul, watch::prefix("config/app/")};
///     for (;;) {
///         auto snap = co_await w.async_next();   // first: the current state, at once
///         apply(snap.entries);                    // then: each change, latest wins
///     }
///
/// Queries run only while async_next is in progress: between two calls nothing is sent.
/// The next call blocks on the index last seen, so whatever changed meanwhile, however
/// many times, comes back at once as one snapshot holding the latest state (coalescing).
/// A wake-up that leaves the data as reported before (same entries, same keys) is not
/// reported; async_next keeps waiting.
///
/// Failures: transient errors (network, timeouts, 429, 500, 502-504) are retried with a
/// jittered exponential backoff (watch_options::backoff .. max_backoff) and never surface;
/// async_next just completes later. Final errors (403, 400, invalid key, a closed client)
/// complete async_next with that error; the watch stays usable and the next call queries
/// again after the backoff. When Consul's index goes backwards the watch re-reads the
/// current state without blocking and reports it if it differs from the last report.
///
/// A watch is move-only, lives on its client's executor and is not thread-safe. One
/// async_next at a time: a second concurrent call completes with errc::invalid_argument.
class CONCLAVE_DECL watch {
public:
    /// One key: its entry, or none while it does not exist.
    static watch_target key(std::string k) {
        return watch_target{watch_target::kind::key, std::move(k)};
    }
    /// Every entry whose key starts with `p`, with values.
    static watch_target prefix(std::string p) {
        return watch_target{watch_target::kind::prefix, std::move(p)};
    }
    /// The names of the keys that start with `p`, collapsed at the first `separator` after
    /// `p` when one is given (`"/"`: one level of a folder tree).
    static watch_target keys(std::string p, std::string separator = {}) {
        return watch_target{watch_target::kind::keys, std::move(p), std::move(separator)};
    }

    /// Watches `target` through `c`. Sends nothing until the first async_next.
    watch(client c, watch_target target, watch_options opts = {});
    ~watch();
    /// Takes over the other watch, which is then not valid().
    watch(watch&&) noexcept;
    /// Takes over the other watch, which is then not valid().
    watch& operator=(watch&&) noexcept;
    watch(const watch&) = delete;
    watch& operator=(const watch&) = delete;

    /// Completes with `void(error_code, watch_snapshot)`: the first call with the current
    /// state, each later one with the latest state once it differs from the last reported.
    ///
    /// Cancellation: terminal, partial and total. A cancelled call completes with
    /// operation_aborted and changes nothing: the next call continues from the last reply
    /// seen (and reports what changed in between).
    template <class Token = default_token_t>
    auto async_next(Token&& token = {}) {
        return detail::initiate<void(error_code, watch_snapshot)>(token, &watch::next_impl, state_);
    }

    /// False for a moved-from watch (every other call is then invalid).
    bool valid() const noexcept { return state_ != nullptr; }
    /// What it watches.
    const watch_target& target() const noexcept;
    /// How it queries.
    const watch_options& options() const noexcept;
    /// The X-Consul-Index the next query blocks on (0: it will be a non-blocking read).
    std::uint64_t index() const noexcept;
    /// Failed queries since the last successful one (retried or reported).
    unsigned consecutive_failures() const noexcept;
    /// The last query error, retried or not (cleared by a successful query).
    error_code last_error() const noexcept;

private:
    using state_ptr = std::shared_ptr<detail::watch_state>;
    static void next_impl(state_ptr s, detail::diagnostics_route* route,
                          asio::any_completion_handler<void(error_code, watch_snapshot)> h);

    state_ptr state_;
};

} // namespace conclave
