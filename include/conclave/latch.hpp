// SPDX-License-Identifier: BSL-1.0
/// \file
/// A countdown latch shared across processes in one KV key: class countdown_latch.
#pragma once

#include <conclave/barrier.hpp>
#include <conclave/client.hpp>
#include <conclave/detail/export.hpp>

#include <cstdint>
#include <memory>
#include <string>

namespace conclave {

/// Flags of a conclave::countdown_latch's key (a random number, like the barriers').
inline constexpr std::uint64_t latch_flag_value = 18246042045473295685ULL;

namespace detail {
struct latch_state;
}

/// How a countdown latch writes and watches its key (the barriers' options).
using latch_options = barrier_options;

/// A countdown latch in one KV key, like Redisson's RCountDownLatch: a count set once
/// (async_try_set_count), counted down by any process (async_count_down), and waited for
/// until it reaches 0 (async_wait).
///
///     conclave::countdown_latch loaded{consul, "jobs/loaded"};
///     co_await loaded.async_try_set_count(3); // in one process
///     co_await loaded.async_count_down();     // in each of 3 loaders
///     co_await loaded.async_wait();           // anywhere: until the 3 counted down
///
/// The key has flags latch_flag_value and the count as decimal text; no session is
/// involved. A missing key is a count of 0: the count down to 0 deletes it, so a latch at
/// rest leaves no key behind. Every change is a check-and-set on the key's ModifyIndex,
/// retried after a random pause when another writer came between the read and the write,
/// so concurrent count downs never lose one and never go below 0.
///
/// Errors: errc::conflict when the key is not a latch's (other flags, a session's hold, a
/// value that is not a count), the message naming the key and what it holds;
/// errc::invalid_argument for a count of 0; errc::timeout when the budget ran out; the
/// request's own errors. A write whose reply never came may or may not have been applied:
/// it fails, and its diagnostics say that the outcome is unknown.
///
/// Cancellation: terminal for the writes, as for the client's requests; every type for
/// async_get_count and async_wait. A cancelled operation completes with operation_aborted.
/// A latch lives on its client's executor and is not thread-safe; copies share the key, the
/// options and the query of async_wait.
class CONCLAVE_DECL countdown_latch {
public:
    /// The latch in `key`, used through `c`. Sends nothing. Throws
    /// boost::system::system_error (errc::invalid_argument) for an empty key.
    countdown_latch(client& c, std::string key, latch_options opts = {});

    /// The KV key it lives in.
    const std::string& key() const noexcept;

    /// Sets the count to `n` if the latch is open (its count is 0): `void(error_code,
    /// bool)`, false when a count is set already (nothing written). errc::invalid_argument
    /// for n = 0.
    template <class Token = default_token_t>
    auto async_try_set_count(std::uint64_t n, Token&& token = {}) {
        return detail::initiate<void(error_code, bool)>(token, &countdown_latch::set_count_impl,
                                                        state_, n);
    }

    /// Counts down by one: `void(error_code, std::uint64_t)`, the count this write left (0
    /// when it opened the latch). A latch at 0 stays at 0 (nothing written).
    template <class Token = default_token_t>
    auto async_count_down(Token&& token = {}) {
        return detail::initiate<void(error_code, std::uint64_t)>(
            token, &countdown_latch::count_down_impl, state_);
    }

    /// One read: `void(error_code, std::uint64_t)`, the count (0 for a missing key).
    template <class Token = default_token_t>
    auto async_get_count(Token&& token = {}) const {
        return detail::initiate<void(error_code, std::uint64_t)>(
            token, &countdown_latch::get_count_impl, state_);
    }

    /// Waits until the count is 0: `void(error_code)`, at once when it is. Every wait of one
    /// client on one key shares one blocking query. Failed reads are retried every
    /// retry_wait, without surfacing; errc::permission_denied ends the wait, and
    /// errc::conflict when the key stops being a latch.
    template <class Token = default_token_t>
    auto async_wait(Token&& token = {}) {
        return detail::initiate<void(error_code)>(token, &countdown_latch::wait_impl, state_);
    }

private:
    using state_ptr = std::shared_ptr<detail::latch_state>;
    static void set_count_impl(state_ptr, std::uint64_t, detail::diagnostics_route*,
                               asio::any_completion_handler<void(error_code, bool)>);
    static void count_down_impl(state_ptr, detail::diagnostics_route*,
                                asio::any_completion_handler<void(error_code, std::uint64_t)>);
    static void get_count_impl(state_ptr, detail::diagnostics_route*,
                               asio::any_completion_handler<void(error_code, std::uint64_t)>);
    static void wait_impl(state_ptr, detail::diagnostics_route*,
                          asio::any_completion_handler<void(error_code)>);

    state_ptr state_;
};

} // namespace conclave
