// SPDX-License-Identifier: BSL-1.0
#include "harness/contention.hpp"
#include "harness/stats.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <algorithm>
#include <map>

namespace conclave::bench {

namespace json = boost::json;

contention_result analyze(std::vector<grant> grants, std::size_t contenders, std::int64_t t0,
                          std::int64_t t1) {
    contention_result r;
    std::vector<double> per_contender(contenders, 0.0);
    std::map<std::uint32_t, std::vector<const grant*>> by_key;
    for (const auto& g : grants) {
        if (g.released_ns >= t0 && g.released_ns < t1)
            ++r.releases;
        if (g.acquired_ns < t0 || g.acquired_ns >= t1)
            continue;
        ++r.grants;
        if (g.contender < per_contender.size())
            per_contender[g.contender] += 1;
        r.waits.emplace_back(g.acquired_ns - g.start_ns);
        r.max_wait_us = std::max(r.max_wait_us, double(g.acquired_ns - g.start_ns) / 1000.0);
    }
    for (const auto& g : grants)
        by_key[g.key].push_back(&g);
    for (auto& [key, list] : by_key) {
        std::sort(list.begin(), list.end(),
                  [](const grant* a, const grant* b) { return a->acquired_ns < b->acquired_ns; });
        for (std::size_t i = 1; i < list.size(); ++i) {
            const grant& prev = *list[i - 1];
            const grant& cur = *list[i];
            if (cur.acquired_ns < t0 || cur.acquired_ns >= t1 || prev.released_ns == 0)
                continue;
            // The next holder's ack can be processed before the releaser's (one loop, or
            // two processes): that handoff took no time after the release ack.
            r.handoffs.emplace_back(std::max<std::int64_t>(0, cur.acquired_ns - prev.released_ns));
        }
    }
    r.ops_per_s = double(r.grants) / (double(t1 - t0) / 1e9);
    r.jain = jain_index(per_contender);
    return r;
}

void fill_contention(record& r, contention_result& c, const std::optional<agent_counters>& d,
                     std::int64_t cpu_us) {
    auto waits = summarize(c.waits);
    for (const auto& h : c.handoffs)
        r.latencies_us.push_back(double(h.count()) / 1000.0);
    std::sort(r.latencies_us.begin(), r.latencies_us.end());
    auto h = summarize(c.handoffs);
    r.set("ops", double(c.grants));
    r.set("ops_per_s", c.ops_per_s);
    r.set("latency", std::string("handoff"));
    r.set("handoffs", double(h.count));
    set_percentiles(r, h);
    r.set("wait_p50_us", waits.p50_us);
    r.set("wait_p99_us", waits.p99_us);
    r.set("max_wait_us", c.max_wait_us);
    r.set("jain", c.jain);
    r.set("cpu_us_per_op", c.grants ? double(cpu_us) / double(c.grants) : 0.0);
    if (d && c.grants) {
        const double g = double(c.grants);
        r.set("requests_per_handoff", double(d->requests) / g);
        // Writes that were not releases: acquire attempts, won or refused. Below 1 when
        // grants were handed over inside the releasing transaction.
        const double attempts = double(d->kv_writes()) - double(c.releases);
        r.set("acquire_attempts_per_handoff", std::max(0.0, attempts) / g);
        r.set("blocking_reads_per_handoff", double(d->endpoint("GET /v1/kv")) / g);
        r.set("connections_accepted", double(d->connections_accepted));
    }
}

std::optional<double> parse_child_line(const std::string& line, std::vector<grant>& out,
                                       std::string* error) {
    if (line.empty() || line[0] != '{')
        return std::nullopt;
    boost::system::error_code ec;
    const json::value v = json::parse(line, ec);
    if (ec || !v.is_object())
        return std::nullopt;
    const auto& o = v.as_object();
    if (const auto* g = o.if_contains("grant")) {
        const auto& a = g->as_array();
        if (a.size() == 5) {
            grant x;
            x.contender = a[0].to_number<std::uint32_t>();
            x.key = a[1].to_number<std::uint32_t>();
            x.start_ns = a[2].to_number<std::int64_t>();
            x.acquired_ns = a[3].to_number<std::int64_t>();
            x.released_ns = a[4].to_number<std::int64_t>();
            out.push_back(x);
        }
        return std::nullopt;
    }
    if (const auto* s = o.if_contains("summary")) {
        const auto& so = s->as_object();
        if (error)
            if (const auto* e = so.if_contains("error"); e && e->is_string())
                *error = std::string(e->as_string());
        if (const auto* c = so.if_contains("cpu_us"))
            return c->to_number<double>();
        return 0.0;
    }
    return std::nullopt;
}

std::string grant_line(const grant& g) {
    return "{\"grant\":[" + std::to_string(g.contender) + "," + std::to_string(g.key) + "," +
           std::to_string(g.start_ns) + "," + std::to_string(g.acquired_ns) + "," +
           std::to_string(g.released_ns) + "]}";
}

void set_client_requests(record& r, std::uint64_t requests) {
    const double grants = r.number("ops").value_or(0);
    if (grants > 0)
        r.set("client_requests_per_op", double(requests) / grants);
}

} // namespace conclave::bench
