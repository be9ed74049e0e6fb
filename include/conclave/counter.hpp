// SPDX-License-Identifier: BSL-1.0
/// \file
/// A 64-bit signed counter shared across processes in one KV key: class counter.
#pragma once

#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>
#include <conclave/detail/keyed_options.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace conclave {

namespace detail {
struct counter_state;
}

/// How a counter retries its writes (budget) and watches its key (wait, retry_wait), and
/// where a failure's text goes (diag): see detail::keyed_options. Not an aggregate (see
/// conclave/consul/request.hpp): set fields with the with_* calls.
struct counter_options : detail::keyed_options<counter_options> {
    counter_options() = default;
};

/// A counter's value as read, and the key's ModifyIndex then (0: the key does not exist).
struct counter_reading {
    counter_reading() = default;
    counter_reading(std::int64_t v, std::uint64_t i)
        : value(v)
        , index(i) {}

    std::int64_t value = 0;  ///< the number (0 for a missing key)
    std::uint64_t index = 0; ///< for async_wait_change: the key's ModifyIndex, 0 when missing

    bool operator==(const counter_reading&) const = default;
};

/// A 64-bit signed counter in one KV key, as decimal text (`consul kv get KEY` shows the
/// number, `consul kv put KEY 42` sets it), like Curator's DistributedAtomicLong and
/// Redisson's RAtomicLong. A missing key, or an empty value, reads as 0; the first write
/// creates the key. No session is involved.
///
///     conclave::counter hits{consul, "stats/hits"};
///     std::int64_t now = co_await hits.async_add(1);
///
/// Every change is a check-and-set on the key's ModifyIndex (a create-only write when the
/// key is missing), retried after a random pause when another writer came between the read
/// and the write, so concurrent adds from any number of processes never lose one.
///
/// Errors: errc::conflict when the key is not a counter (its value is not a decimal int64,
/// or it carries another recipe's flags, any flags but 0, or a session's hold: a lock's, a
/// semaphore's, a read-write lock's key), the message naming the key and what it holds;
/// errc::invalid_argument when an add would overflow int64 (nothing is written: a counter
/// never wraps); errc::timeout when the budget ran out; the request's own errors. A write
/// whose reply never came (cancelled, timed out, connection lost) may or may not have been
/// applied: the operation then fails (operation_aborted, errc::timeout, ...) and its
/// diagnostics say that the outcome is unknown; it never completes with a value it cannot
/// vouch for.
///
/// Cancellation: terminal (what `||`, parallel groups and cancellation_signal deliver) for
/// the writes, as for the client's requests; every type for async_get and async_wait_change.
/// A cancelled operation completes with operation_aborted.
///
/// A counter lives on its client's executor and is not thread-safe. Copies share the key,
/// the options and the query of async_wait_change.
class CONCLAVE_DECL counter {
public:
    /// The counter in `key`, used through `c` (a copy of the handle is kept). Sends nothing.
    /// Throws boost::system::system_error (errc::invalid_argument) for an empty key.
    counter(client& c, std::string key, counter_options opts = {});

    /// The KV key it lives in.
    const std::string& key() const noexcept;

    /// One read: `void(error_code, counter_reading)`.
    template <class Token = default_token_t>
    auto async_get(Token&& token = {}) const {
        return detail::initiate<void(error_code, counter_reading)>(token, &counter::get_impl,
                                                                   state_);
    }

    /// Adds `delta` (negative to subtract): `void(error_code, std::int64_t)`, the value this
    /// add wrote. An add of 0 reads without writing.
    template <class Token = default_token_t>
    auto async_add(std::int64_t delta, Token&& token = {}) {
        return detail::initiate<void(error_code, std::int64_t)>(token, &counter::add_impl, state_,
                                                                delta);
    }

    /// The next number of a sequence: async_add(1). Each call gets a number no other call
    /// (of any process) gets.
    template <class Token = default_token_t>
    auto async_next(Token&& token = {}) {
        return async_add(1, std::forward<Token>(token));
    }

    /// Sets the value to `v`: `void(error_code)`. Still a check-and-set: a key that another
    /// recipe uses is errc::conflict, never overwritten.
    template <class Token = default_token_t>
    auto async_set(std::int64_t v, Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &counter::set_impl, state_, v);
    }

    /// Sets the value to `desired` if it is `expected`: `void(error_code, bool)`, false when
    /// the value was something else (nothing written). A missing key is 0. When `desired`
    /// equals `expected`, nothing is written.
    template <class Token = default_token_t>
    auto async_compare_and_set(std::int64_t expected, std::int64_t desired, Token&& token = {}) {
        return detail::initiate<void(error_code, bool)>(token, &counter::compare_and_set_impl,
                                                        state_, expected, desired);
    }

    /// Waits until the key is no longer as it was at `seen_index` (a counter_reading's
    /// index: 0 waits for a missing key to be created): `void(error_code, counter_reading)`,
    /// the latest state, at once when it is already newer. A write of the same value counts
    /// (the index moves); a deleted key comes back as {0, 0}. Several changes in between
    /// come back as one (the latest).
    ///
    ///     auto r = co_await c.async_get();
    ///     for (;;)
    ///         r = co_await c.async_wait_change(r.index);
    ///
    /// Every wait of one client on one key shares one blocking query, whatever the number of
    /// waiters and counter objects; it runs while someone waits, and stops 100 ms after the
    /// last wait ended (at once when no counter object on the key is left). Failed reads are
    /// retried every retry_wait, without surfacing; errc::permission_denied ends the wait,
    /// and errc::conflict when the key stops being a counter.
    template <class Token = default_token_t>
    auto async_wait_change(std::uint64_t seen_index, Token&& token = {}) {
        return detail::initiate<void(error_code, counter_reading)>(
            token, &counter::wait_change_impl, state_, seen_index);
    }

private:
    using state_ptr = std::shared_ptr<detail::counter_state>;
    static void get_impl(state_ptr, detail::diagnostics_route*,
                         asio::any_completion_handler<void(error_code, counter_reading)>);
    static void add_impl(state_ptr, std::int64_t, detail::diagnostics_route*,
                         asio::any_completion_handler<void(error_code, std::int64_t)>);
    static void set_impl(state_ptr, std::int64_t, detail::diagnostics_route*,
                         asio::any_completion_handler<void(error_code)>);
    static void compare_and_set_impl(state_ptr, std::int64_t, std::int64_t,
                                     detail::diagnostics_route*,
                                     asio::any_completion_handler<void(error_code, bool)>);
    static void wait_change_impl(state_ptr, std::uint64_t, detail::diagnostics_route*,
                                 asio::any_completion_handler<void(error_code, counter_reading)>);

    state_ptr state_;
};

} // namespace conclave
