// SPDX-License-Identifier: BSL-1.0
/// \file
/// conclave::metrics: an observer that counts, and its rendering in Prometheus' text format.
#pragma once

#include <conclave/detail/export.hpp>
#include <conclave/observer.hpp>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave {

/// Counts what clients and recipes report: an observer to set in client_config::observer
/// (one may serve several clients, on any threads), read with to_prometheus() or value().
///
/// The metrics (each name prefixed with `conclave_`; labels in braces):
/// - `http_requests_total{endpoint,code}`: requests ended, by the reply's HTTP status, or
///   `timeout`, `cancelled` or `failed` (no reply: connection, TLS, parse or size errors).
/// - `http_request_duration_seconds{endpoint}`: histogram of those that are not blocking
///   queries (a blocking query's time is mostly Consul's wait).
/// - `http_blocking_queries`: blocking queries in flight (gauge).
/// - `http_connections`: connections open (gauge); `http_connections_opened_total`.
/// - `session_renewals_total{result}` (`ok`, `failed`) and
///   `session_renew_duration_seconds` (histogram);
/// - `health_check_passes_total{result}` (`ok`, `failed`) and
///   `health_check_pass_duration_seconds` (histogram): passes of the checks sessions are
///   bound to (session_config::health_ttl).
/// - `acquires_total{kind,outcome}`: acquires ended, `kind` `lock` (elections too) or
///   `semaphore`, `outcome` as acquire_outcome (`taken`, `handed_over`: a handoff, ...).
/// - `acquire_wait_seconds{kind}`: histogram of the wait of acquires that were granted.
/// - `jeopardy_total{kind,reason}`, `lost_total{kind,reason}`, `recovered_total{kind}`:
///   health changes of sessions and grants; `reason` names the error (`timeout`,
///   `session_invalidated`, `session_expired`, `lock_lost`, `server_error`, ...).
/// - `leadership_changes_total{change,cause}` (`began`; `ended` with the cause of
///   leadership_event) and `leading` (gauge: elections led now).
class CONCLAVE_DECL metrics : public observer {
public:
    metrics();
    ~metrics() override;
    metrics(const metrics&) = delete;
    metrics& operator=(const metrics&) = delete;

    /// The value of one counter or gauge sample, or a histogram's `_count` or `_sum`; 0 when
    /// nothing was counted. `name` without the `conclave_` prefix, labels in any order:
    /// `value("http_requests_total", {{"endpoint", "kv_get"}, {"code", "200"}})`.
    double value(std::string_view name,
                 std::vector<std::pair<std::string, std::string>> labels = {}) const;

    void request_started(std::string_view endpoint, bool blocking) override;
    void request_finished(const request_event& e) override;
    void connection_opened() override;
    void connection_closed() override;
    void session_renewed(const renew_event& e) override;
    void check_passed(const check_pass_event& e) override;
    void health_changed(const health_event& e) override;
    void acquire_finished(const acquire_event& e) override;
    void leadership_changed(const leadership_event& e) override;

private:
    friend CONCLAVE_DECL std::string to_prometheus(const metrics& m);
    struct store;
    mutable std::mutex mutex_;
    std::unique_ptr<store> store_;
};

/// The metrics in Prometheus' text exposition format (version 0.0.4): what a `/metrics`
/// endpoint serves, with `Content-Type: text/plain; version=0.0.4`.
CONCLAVE_DECL std::string to_prometheus(const metrics& m);

/// A short name for an error, fit for a metric label: the errc's name for conclave's own
/// errors (`timeout`, `session_invalidated`, ...), `cancelled`, or `network` for the rest.
CONCLAVE_DECL std::string_view error_label(const error_code& ec) noexcept;

} // namespace conclave
