// SPDX-License-Identifier: BSL-1.0
// conclave::metrics: counters, gauges and histograms kept by name and labels, and their
// Prometheus text.
#include <conclave/metrics.hpp>

#include <boost/asio/error.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace conclave {

namespace {

// Seconds. Requests and renewals: a loopback round trip is well under a millisecond, a
// cluster's write a few, a struggling server seconds (the default request timeout is 10 s).
const std::vector<double> request_buckets{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                          0.1,    0.25,  0.5,    1,     2.5,  5,     10};
// An acquire waits as long as the holders ahead of it hold, from nothing to minutes.
const std::vector<double> wait_buckets{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1,
                                       5,     10,    30,   60,   300, 1800};

enum class family_type { counter, gauge, histogram };

struct family_info {
    std::string_view name; // without the prefix
    family_type type;
    std::string_view help;
    const std::vector<double>* buckets = nullptr;
    bool labelled = true; // without labels, it is written (as 0) before anything is counted
};

// Every family, in the order they are written.
const family_info families[] = {
    {"http_requests_total", family_type::counter,
     "Requests to Consul that ended, by endpoint and HTTP status (or timeout, cancelled, "
     "failed when no reply came)."},
    {"http_request_duration_seconds", family_type::histogram,
     "Time of requests that are not blocking queries, from the call to the reply.",
     &request_buckets},
    {"http_blocking_queries", family_type::gauge, "Blocking queries in flight.", nullptr, false},
    {"http_connections", family_type::gauge, "Connections to Consul open.", nullptr, false},
    {"http_connections_opened_total", family_type::counter, "Connections to Consul opened.",
     nullptr, false},
    {"session_renewals_total", family_type::counter, "Session renewals, by result."},
    {"session_renew_duration_seconds", family_type::histogram, "Time of session renewals.",
     &request_buckets},
    {"acquires_total", family_type::counter,
     "Acquires that ended, by kind and outcome (handed_over: a handoff)."},
    {"acquire_wait_seconds", family_type::histogram, "Wait of the acquires that were granted.",
     &wait_buckets},
    {"jeopardy_total", family_type::counter,
     "Sessions and grants that entered jeopardy, by kind and reason."},
    {"lost_total", family_type::counter, "Sessions and grants lost, by kind and reason."},
    {"recovered_total", family_type::counter,
     "Sessions and grants back from jeopardy to held, by kind."},
    {"leadership_changes_total", family_type::counter,
     "Leaderships that began or ended (with the cause)."},
    {"leading", family_type::gauge, "Elections this process leads now.", nullptr, false},
};

using label_list = std::vector<std::pair<std::string, std::string>>;

// {a="x",b="y"}, sorted by name, so that a sample has one key whatever order it was given.
std::string label_text(label_list labels) {
    if (labels.empty())
        return {};
    std::sort(labels.begin(), labels.end());
    std::string out = "{";
    for (const auto& [name, value] : labels) {
        if (out.size() > 1)
            out += ',';
        out += name;
        out += "=\"";
        for (char c : value) {
            if (c == '\\' || c == '"')
                out += '\\';
            if (c == '\n') {
                out += "\\n";
                continue;
            }
            out += c;
        }
        out += '"';
    }
    out += '}';
    return out;
}

std::string number(double v) {
    std::array<char, 32> buf{};
    // (general: "0.0005", as Prometheus' Go clients write bucket bounds, not "5e-04")
    auto r = std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::general);
    return std::string(buf.data(), r.ptr);
}

double seconds(std::chrono::nanoseconds d) {
    return std::chrono::duration<double>(d).count();
}

struct histogram {
    std::vector<std::uint64_t> counts; // per bucket, not cumulative; the last: +Inf
    double sum = 0;
    std::uint64_t count = 0;
};

} // namespace

struct metrics::store {
    // family name -> label text -> value
    std::map<std::string, std::map<std::string, double>, std::less<>> values;
    std::map<std::string, std::map<std::string, histogram>, std::less<>> histograms;

    void add(std::string_view family, label_list labels, double delta) {
        values[std::string(family)][label_text(std::move(labels))] += delta;
    }
    void observe(std::string_view family, label_list labels, double v) {
        const auto* info = find(family);
        auto& h = histograms[std::string(family)][label_text(std::move(labels))];
        const auto& bounds = *info->buckets;
        if (h.counts.empty())
            h.counts.assign(bounds.size() + 1, 0);
        const auto at = std::lower_bound(bounds.begin(), bounds.end(), v) - bounds.begin();
        ++h.counts[static_cast<std::size_t>(at)];
        h.sum += v;
        ++h.count;
    }
    static const family_info* find(std::string_view name) {
        for (const auto& f : families)
            if (f.name == name)
                return &f;
        return nullptr;
    }
};

metrics::metrics()
    : store_(std::make_unique<store>()) {
    // The series an alert watches start at 0: Prometheus' increase() does not count the
    // first sample of a series, so a loss that created its series would go unnoticed.
    for (std::string_view kind :
         {"session", "lock", "semaphore", "multi_lock", "read_write_lock", "group_member"})
        for (std::string_view reason : {"session_invalidated", "session_expired", "lock_lost"})
            if (kind != "session" || reason != "lock_lost")
                store_->add("lost_total",
                            {{"kind", std::string(kind)}, {"reason", std::string(reason)}}, 0);
    store_->add("session_renewals_total", {{"result", "ok"}}, 0);
    store_->add("session_renewals_total", {{"result", "failed"}}, 0);
    store_->add("recovered_total", {{"kind", "session"}}, 0);
}
metrics::~metrics() = default;

double metrics::value(std::string_view name,
                      std::vector<std::pair<std::string, std::string>> labels) const {
    const std::string key = label_text(std::move(labels));
    std::lock_guard lock{mutex_};
    if (auto f = store_->values.find(name); f != store_->values.end()) {
        auto s = f->second.find(key);
        return s == f->second.end() ? 0 : s->second;
    }
    for (std::string_view suffix : {"_count", "_sum"}) {
        if (name.size() <= suffix.size() || !name.ends_with(suffix))
            continue;
        auto f = store_->histograms.find(name.substr(0, name.size() - suffix.size()));
        if (f == store_->histograms.end())
            return 0;
        auto s = f->second.find(key);
        if (s == f->second.end())
            return 0;
        return suffix == "_count" ? static_cast<double>(s->second.count) : s->second.sum;
    }
    return 0;
}

void metrics::request_started(std::string_view, bool blocking) {
    if (!blocking)
        return;
    std::lock_guard lock{mutex_};
    store_->add("http_blocking_queries", {}, 1);
}

void metrics::request_finished(const request_event& e) {
    std::string code;
    if (e.status != 0)
        code = std::to_string(e.status);
    else if (e.error == errc::timeout)
        code = "timeout";
    else if (e.error == boost::asio::error::operation_aborted)
        code = "cancelled";
    else
        code = "failed";
    std::lock_guard lock{mutex_};
    store_->add("http_requests_total", {{"endpoint", std::string(e.endpoint)}, {"code", code}}, 1);
    if (e.blocking)
        store_->add("http_blocking_queries", {}, -1);
    else
        store_->observe("http_request_duration_seconds", {{"endpoint", std::string(e.endpoint)}},
                        seconds(e.duration));
}

void metrics::connection_opened() {
    std::lock_guard lock{mutex_};
    store_->add("http_connections", {}, 1);
    store_->add("http_connections_opened_total", {}, 1);
}

void metrics::connection_closed() {
    std::lock_guard lock{mutex_};
    store_->add("http_connections", {}, -1);
}

void metrics::session_renewed(const renew_event& e) {
    std::lock_guard lock{mutex_};
    store_->add("session_renewals_total", {{"result", e.error ? "failed" : "ok"}}, 1);
    store_->observe("session_renew_duration_seconds", {}, seconds(e.duration));
}

void metrics::health_changed(const health_event& e) {
    const std::string kind(to_string(e.kind));
    std::lock_guard lock{mutex_};
    switch (e.health) {
    case hold_health::jeopardy:
        store_->add("jeopardy_total",
                    {{"kind", kind}, {"reason", std::string(error_label(e.reason))}}, 1);
        break;
    case hold_health::lost:
        store_->add("lost_total", {{"kind", kind}, {"reason", std::string(error_label(e.reason))}},
                    1);
        break;
    case hold_health::held:
        store_->add("recovered_total", {{"kind", kind}}, 1);
        break;
    }
}

void metrics::acquire_finished(const acquire_event& e) {
    const std::string kind(to_string(e.kind));
    std::lock_guard lock{mutex_};
    store_->add("acquires_total", {{"kind", kind}, {"outcome", std::string(to_string(e.outcome))}},
                1);
    const bool granted = e.outcome == acquire_outcome::taken ||
                         e.outcome == acquire_outcome::handed_over ||
                         e.outcome == acquire_outcome::already_held;
    if (granted)
        store_->observe("acquire_wait_seconds", {{"kind", kind}}, seconds(e.waited));
}

void metrics::leadership_changed(const leadership_event& e) {
    std::lock_guard lock{mutex_};
    if (e.leading)
        store_->add("leadership_changes_total", {{"change", "began"}}, 1);
    else
        store_->add("leadership_changes_total",
                    {{"change", "ended"}, {"cause", std::string(e.cause)}}, 1);
    store_->add("leading", {}, e.leading ? 1 : -1);
}

std::string to_prometheus(const metrics& m) {
    constexpr std::string_view prefix = "conclave_";
    std::string out;
    std::lock_guard lock{m.mutex_};
    for (const auto& f : families) {
        const std::string name = std::string(prefix) + std::string(f.name);
        out += "# HELP " + name + " " + std::string(f.help) + "\n";
        out += "# TYPE " + name + " " +
               (f.type == family_type::counter ? "counter"
                : f.type == family_type::gauge ? "gauge"
                                               : "histogram") +
               "\n";
        if (f.type == family_type::histogram) {
            auto h = m.store_->histograms.find(f.name);
            if (h == m.store_->histograms.end())
                continue;
            for (const auto& [labels, hist] : h->second) {
                // The bucket's label goes last inside the braces the others opened.
                const std::string inner =
                    labels.empty() ? std::string{} : labels.substr(1, labels.size() - 2) + ",";
                std::uint64_t cumulative = 0;
                const auto& bounds = *f.buckets;
                for (std::size_t i = 0; i <= bounds.size(); ++i) {
                    cumulative += hist.counts[i];
                    const std::string le = i < bounds.size() ? number(bounds[i]) : "+Inf";
                    out += name + "_bucket{" + inner + "le=\"" + le + "\"} " +
                           std::to_string(cumulative) + "\n";
                }
                out += name + "_sum" + labels + " " + number(hist.sum) + "\n";
                out += name + "_count" + labels + " " + std::to_string(hist.count) + "\n";
            }
            continue;
        }
        auto v = m.store_->values.find(f.name);
        if (v == m.store_->values.end()) {
            if (!f.labelled)
                out += name + " 0\n";
            continue;
        }
        for (const auto& [labels, value] : v->second)
            out += name + labels + " " + number(value) + "\n";
    }
    return out;
}

std::string_view error_label(const error_code& ec) noexcept {
    if (ec == boost::asio::error::operation_aborted)
        return "cancelled";
    if (ec.category() != category())
        return "network";
    switch (static_cast<errc>(ec.value())) {
    case errc::timeout:
        return "timeout";
    case errc::session_invalidated:
        return "session_invalidated";
    case errc::lock_lost:
        return "lock_lost";
    case errc::conflict:
        return "conflict";
    case errc::limit_conflict:
        return "limit_conflict";
    case errc::lock_delay:
        return "lock_delay";
    case errc::bad_request:
        return "bad_request";
    case errc::permission_denied:
        return "permission_denied";
    case errc::not_found:
        return "not_found";
    case errc::request_too_large:
        return "request_too_large";
    case errc::rate_limited:
        return "rate_limited";
    case errc::server_error:
        return "server_error";
    case errc::unavailable:
        return "unavailable";
    case errc::unexpected_status:
        return "unexpected_status";
    case errc::bad_response:
        return "bad_response";
    case errc::invalid_argument:
        return "invalid_argument";
    case errc::invalid_config:
        return "invalid_config";
    case errc::pool_closed:
        return "pool_closed";
    case errc::task_failed:
        return "task_failed";
    case errc::session_expired:
        return "session_expired";
    case errc::check_critical:
        return "check_critical";
    case errc::session_handed_over:
        return "session_handed_over";
    }
    return "other";
}

} // namespace conclave
