// SPDX-License-Identifier: BSL-1.0
/// \file
/// Error codes, the error category and the diagnostics that carry Consul's own text.
#pragma once

#include <conclave/detail/asio_mode.hpp>
#include <conclave/detail/export.hpp>

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>

#include <exception>
#include <string>
#include <type_traits>

namespace conclave {

/// What every conclave operation completes with: Boost.System's error code.
using boost::system::error_code;

/// Errors conclave reports. Cancellation is never one of these: it completes with
/// `boost::asio::error::operation_aborted`, so it cannot be mistaken for success or a timeout.
enum class errc {
    timeout = 1,         ///< a deadline passed (request timeout, acquire budget, pool wait)
    session_invalidated, ///< Consul no longer knows the session (renew 404, invalid session)
    lock_lost,           ///< a held lock, permit or leadership was lost
    conflict,            ///< the key is used by another recipe (foreign flags / layout)
    limit_conflict,      ///< semaphore holders disagree on the limit
    lock_delay,          ///< acquire refused because the key is inside its lock-delay
    bad_request,         ///< HTTP 400: Consul rejected the request
    permission_denied,   ///< HTTP 403: ACL denied or token unknown
    not_found,           ///< HTTP 404 where "no value" is not a meaningful answer
    request_too_large,   ///< HTTP 413: value or transaction too large
    rate_limited,        ///< HTTP 429: Consul's RPC rate limit
    server_error,        ///< HTTP 500: Consul's catch-all (validation, no leader, ...)
    unavailable,         ///< HTTP 502/503/504 from a proxy in front of Consul
    unexpected_status,   ///< any other HTTP status
    bad_response,        ///< a response conclave could not parse
    invalid_argument,    ///< the caller passed a value Consul cannot accept
    invalid_config,      ///< client_config / environment could not be used
    pool_closed,         ///< the client was closed while the operation waited
    task_failed,         ///< a user task run by a recipe (leader task) threw an exception
    /// The session's TTL ran out before a renewal reached Consul (Consul down, slow or
    /// unreachable): Consul may still know it for a while, but cannot be relied on to.
    session_expired,
    /// A health check a session was to be bound to is critical, or not registered on the
    /// session's node: Consul refuses to create the session (its text names the check).
    check_critical,
    /// The session was handed over to a successor process (session::hand_over): this
    /// process holds nothing with it any more, and must not act on its grants.
    session_handed_over,
};

/// The category of errc codes (named "conclave"): turns them into messages.
CONCLAVE_DECL const boost::system::error_category& category() noexcept;

/// An error_code of category() holding `e`; found by argument-dependent lookup, so that
/// `ec == errc::timeout` compiles.
inline error_code make_error_code(errc e) noexcept {
    return {static_cast<int>(e), category()};
}

/// Maps an HTTP status that is not a success to the matching errc.
CONCLAVE_DECL errc errc_from_http_status(unsigned status) noexcept;

/// True when retrying the same request later may succeed: network failures, timeouts,
/// 429, 500 and 502-504. Session invalidation, conflicts and 4xx are final.
CONCLAVE_DECL bool is_retryable(const error_code& ec) noexcept;

/// The error code an exception carries: success for none, the code of a
/// boost::system::system_error (conclave::error included). Any other exception is
/// rethrown. For code that races operations by hand (see conclave::as_outcome).
CONCLAVE_DECL error_code error_code_of(const std::exception_ptr& e);

/// What went wrong, beyond the error code. Consul's text is kept apart from ours because it
/// may echo user input (keys, values).
struct diagnostics {
    unsigned http_status = 0;   ///< 0 when no HTTP response was received
    std::string server_message; ///< Consul's response body (plain text error)
    std::string client_message; ///< conclave's own description

    /// Empties every field.
    void clear() {
        http_status = 0;
        server_message.clear();
        client_message.clear();
    }
};

/// What a failed operation throws when awaited with the default completion token
/// (with_diagnostics): the error code, as any boost::system::system_error, and the
/// diagnostics. what() is the error's message followed by Consul's text, when Consul sent
/// one, and by conclave's description of the request in brackets, when it has one. The ACL
/// token is never part of it.
class CONCLAVE_DECL error : public boost::system::system_error {
public:
    /// The error `ec` with what `diag` says about it.
    error(error_code ec, diagnostics diag);

    /// The HTTP status, Consul's text and conclave's description of the failure.
    const diagnostics& diag() const noexcept { return diag_; }
    /// `"<message>: <Consul's text> [<conclave's description>]"`, each part when present.
    const char* what() const noexcept override { return what_.c_str(); }

private:
    diagnostics diag_;
    std::string what_;
};

} // namespace conclave

template <>
struct boost::system::is_error_code_enum<conclave::errc> : std::true_type {};
template <>
struct std::is_error_code_enum<conclave::errc> : std::true_type {};
