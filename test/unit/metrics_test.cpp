// SPDX-License-Identifier: BSL-1.0
// conclave::metrics and its Prometheus text, fed events directly; the logger's levels.
#include "support/catch.hpp"

#include <conclave/log.hpp>
#include <conclave/metrics.hpp>

#include <boost/asio/error.hpp>

#include <sstream>

using namespace conclave;
using conclave::test::approx;
using namespace std::chrono_literals;

namespace {

// The lines of `text` that start with `start`.
std::vector<std::string> lines_starting(const std::string& text, std::string_view start) {
    std::vector<std::string> out;
    std::istringstream in{text};
    for (std::string line; std::getline(in, line);)
        if (line.starts_with(start))
            out.push_back(line);
    return out;
}

} // namespace

TEST_CASE("metrics render in Prometheus' text format", "[metrics]") {
    metrics m;
    m.request_started("kv_get", false);
    m.request_finished(request_event{"kv_get", "GET", false, 200, {}, 3ms});
    m.request_started("kv_get", false);
    m.request_finished(request_event{"kv_get", "GET", false, 404, {}, 700us});
    m.request_started("kv_put", false);
    m.request_finished(
        request_event{"kv_put", "PUT", false, 0, make_error_code(errc::timeout), 10s});
    m.request_started("kv_get", true);

    const std::string text = to_prometheus(m);
    // Every family has its help and type, prefixed.
    CHECK(lines_starting(text, "# TYPE conclave_http_requests_total counter").size() == 1);
    CHECK(lines_starting(text, "# TYPE conclave_http_request_duration_seconds histogram").size() ==
          1);
    CHECK(lines_starting(text, "# HELP conclave_leading ").size() == 1);
    // Samples, labels sorted by name.
    CHECK(text.find("conclave_http_requests_total{code=\"200\",endpoint=\"kv_get\"} 1\n") !=
          std::string::npos);
    CHECK(text.find("conclave_http_requests_total{code=\"timeout\",endpoint=\"kv_put\"} 1\n") !=
          std::string::npos);
    CHECK(text.find("conclave_http_blocking_queries 1\n") != std::string::npos);
    // A gauge nothing touched yet is written as 0.
    CHECK(text.find("conclave_leading 0\n") != std::string::npos);

    // The histogram's buckets are cumulative and end with +Inf, equal to its count.
    const auto buckets =
        lines_starting(text, "conclave_http_request_duration_seconds_bucket{endpoint=\"kv_get\"");
    REQUIRE(buckets.size() == 15);
    CHECK(buckets.front() ==
          "conclave_http_request_duration_seconds_bucket{endpoint=\"kv_get\",le=\"0.0005\"} 0");
    CHECK(buckets[1] ==
          "conclave_http_request_duration_seconds_bucket{endpoint=\"kv_get\",le=\"0.001\"} 1");
    CHECK(buckets[4] ==
          "conclave_http_request_duration_seconds_bucket{endpoint=\"kv_get\",le=\"0.01\"} 2");
    CHECK(buckets.back() ==
          "conclave_http_request_duration_seconds_bucket{endpoint=\"kv_get\",le=\"+Inf\"} 2");
    CHECK(text.find("conclave_http_request_duration_seconds_count{endpoint=\"kv_get\"} 2\n") !=
          std::string::npos);
    CHECK(m.value("http_request_duration_seconds_sum", {{"endpoint", "kv_get"}}) == approx(0.0037));
}

TEST_CASE("metrics count grants, health changes and leadership by kind and reason", "[metrics]") {
    metrics m;
    m.acquire_finished(acquire_event{grant_kind::lock, "k", acquire_outcome::handed_over, {}, 2s});
    m.acquire_finished(acquire_event{grant_kind::lock, "k", acquire_outcome::cancelled,
                                     boost::asio::error::operation_aborted, 1s});
    m.health_changed(health_event{hold_kind::session, "id", hold_health::jeopardy,
                                  make_error_code(errc::timeout)});
    m.health_changed(health_event{hold_kind::session, "id", hold_health::held, {}});
    m.health_changed(health_event{hold_kind::lock, "k", hold_health::lost,
                                  make_error_code(errc::session_expired)});
    m.leadership_changed(leadership_event{"k", true, {}});
    m.leadership_changed(leadership_event{"k", false, "lost"});
    m.session_renewed(renew_event{"id", make_error_code(errc::server_error), 5ms});

    CHECK(m.value("acquires_total", {{"outcome", "handed_over"}, {"kind", "lock"}}) == 1);
    CHECK(m.value("acquires_total", {{"kind", "lock"}, {"outcome", "cancelled"}}) == 1);
    // Only granted acquires have a wait.
    CHECK(m.value("acquire_wait_seconds_count", {{"kind", "lock"}}) == 1);
    CHECK(m.value("acquire_wait_seconds_sum", {{"kind", "lock"}}) == 2);
    CHECK(m.value("jeopardy_total", {{"kind", "session"}, {"reason", "timeout"}}) == 1);
    CHECK(m.value("recovered_total", {{"kind", "session"}}) == 1);
    CHECK(m.value("lost_total", {{"kind", "lock"}, {"reason", "session_expired"}}) == 1);
    CHECK(m.value("leadership_changes_total", {{"change", "ended"}, {"cause", "lost"}}) == 1);
    CHECK(m.value("leading") == 0);
    CHECK(m.value("session_renewals_total", {{"result", "failed"}}) == 1);
    CHECK(m.value("no_such_metric") == 0);
}

TEST_CASE("error labels name conclave's errors and group the rest", "[metrics]") {
    CHECK(error_label(make_error_code(errc::session_expired)) == "session_expired");
    CHECK(error_label(make_error_code(errc::check_critical)) == "check_critical");
    CHECK(error_label(make_error_code(errc::session_handed_over)) == "session_handed_over");
    CHECK(error_label(make_error_code(errc::lock_lost)) == "lock_lost");
    CHECK(error_label(boost::asio::error::operation_aborted) == "cancelled");
    CHECK(error_label(boost::asio::error::connection_refused) == "network");
}

TEST_CASE("a logger passes lines at or above its threshold, and is off by default", "[log]") {
    std::vector<std::string> seen;
    logger l{log_level::info, [&](log_level level, std::string_view line) {
                 seen.push_back(std::string(to_string(level)) + " " + std::string(line));
             }};
    CHECK_FALSE(l.enabled(log_level::debug));
    CHECK(l.enabled(log_level::info));
    CHECK(l.enabled(log_level::error));
    CHECK_FALSE(l.enabled(log_level::off));
    l.write(log_level::debug, "no");
    l.write(log_level::warning, "yes");
    CHECK(seen == std::vector<std::string>{"warning yes"});

    logger none;
    CHECK_FALSE(none.enabled(log_level::error));
    CHECK(none.threshold() == log_level::off);
    none.write(log_level::error, "dropped"); // no sink: nothing happens
}

TEST_CASE("log levels parse from their names", "[log]") {
    CHECK(parse_log_level("trace") == log_level::trace);
    CHECK(parse_log_level("warn") == log_level::warning);
    CHECK(parse_log_level("warning") == log_level::warning);
    CHECK(parse_log_level("off") == log_level::off);
    CHECK_FALSE(parse_log_level("loud"));
    CHECK(to_string(log_level::error) == "error");
}
