// SPDX-License-Identifier: BSL-1.0
#include "harness/piped_child.hpp"
#include "peers/go_peer.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>

#include <cstdlib>
#include <optional>
#include <sys/stat.h>

namespace conclave::bench {

namespace json = boost::json;

namespace {

bool executable(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IXUSR) != 0;
}

// The first line a command prints, when it exits with 0.
std::optional<std::string> first_line_of(std::vector<std::string> argv) {
    child_process child(piped(std::move(argv)));
    std::string first, line;
    bool got = child.read_line(first);
    while (child.read_line(line)) {
    }
    if (!got || shell_status(child.reap()) != 0)
        return std::nullopt;
    while (!first.empty() && (first.back() == '\n' || first.back() == '\r'))
        first.pop_back();
    return first;
}

std::string resolve(const options& o) {
    if (o.go_peer == "none")
        return {};
    if (!o.go_peer.empty())
        return o.go_peer;
    if (const char* env = std::getenv("GOLOCK"); env && *env)
        return env;
    // Our own machines keep the peer beside the project (../shared, as CI sees it); its
    // `path` script unpacks it on first use and prints where. Users have neither.
    const std::string script = CONCLAVE_BENCH_GO_PEER_SCRIPT;
    if (!executable(script))
        return {};
    return first_line_of({script}).value_or("");
}

// Lands golock's numbers, strings and booleans in `r` (its arrays are left out).
void copy_fields(const json::object& from, record& r) {
    for (const auto& [k, v] : from) {
        const std::string name(k);
        if (name == "scenario" || name == "impl" || name == "contenders")
            continue;
        if (v.is_number())
            r.set(name, v.to_number<double>());
        else if (v.is_string())
            r.set(name, std::string(v.as_string()));
        else if (v.is_bool())
            r.set(name, v.as_bool());
    }
}

// The record conclave wrote for this scenario and N, if it ran.
const record* ours_for(const harness& h, const std::string& scenario, std::size_t n) {
    const auto& all = h.out.records();
    for (auto it = all.rbegin(); it != all.rend(); ++it)
        if (it->text("scenario") == scenario && it->text("impl") == "conclave" &&
            it->number("contenders").value_or(0) == double(n) && it->text("error").empty())
            return &*it;
    return nullptr;
}

} // namespace

const std::string& go_peer_executable(const options& o) {
    static const std::string path = resolve(o);
    return path;
}

void run_go_beside(harness& h, const std::string& scenario, std::size_t n) {
    const std::string& exe = go_peer_executable(h.opt);
    if (exe.empty())
        return;
    record r = h.base_record(scenario, "go-api", n);
    if (!executable(exe)) {
        r.set("error", "the Go peer " + exe + " is not an executable");
        h.out.add(std::move(r));
        return;
    }
    // golock's own defaults differ from ours: give it the same sizes and window.
    std::vector<std::string> argv{exe,           scenario,
                                  "-addr",       h.target.address(),
                                  "-duration",   std::to_string(h.opt.duration_s),
                                  "-warmup",     std::to_string(h.opt.warmup_fraction),
                                  "-contenders", std::to_string(n),
                                  "-limit",      std::to_string(h.opt.limit),
                                  "-key",        h.fresh_prefix("go-" + scenario)};
    child_process peer(piped(std::move(argv)));
    std::optional<json::object> result;
    for (std::string line; peer.read_line(line);) {
        boost::system::error_code ec;
        auto v = json::parse(line, ec);
        if (!ec && v.is_object())
            result = v.as_object();
    }
    const int status = shell_status(peer.reap());
    if (!result || status != 0) {
        r.set("error", "the Go peer failed (exit " + std::to_string(status) + ")");
        h.out.add(std::move(r));
        return;
    }
    copy_fields(*result, r);
    // golock counts its requests in its client (renewals and monitors included), as
    // client_requests_per_op counts ours.
    if (auto q = r.number("http_requests_per_op"))
        r.set("client_requests_per_op", *q);
    if (r.text("metric") == "get_rtt")
        r.set("latency", std::string("request"));
    else if (r.text("metric") == "lock_unlock_cycle")
        r.set("latency", std::string("cycle"));
    else if (!r.text("metric").empty())
        r.set("latency", r.text("metric"));
    if (const record* ours = ours_for(h, scenario, n))
        set_peer_ratios(r, *ours);
    h.out.add(std::move(r));
}

void set_peer_ratios(record& peer, const record& ours) {
    auto ratio = [](std::optional<double> a, std::optional<double> b) -> std::optional<double> {
        if (!a || !b || *b == 0)
            return std::nullopt;
        return *a / *b;
    };
    // >1 is better for ours in each.
    if (auto x = ratio(ours.number("ops_per_s"), peer.number("ops_per_s")))
        peer.set("ours_ops_ratio", *x);
    if (auto x = ratio(peer.number("cpu_us_per_op"), ours.number("cpu_us_per_op")))
        peer.set("ours_cpu_advantage", *x);
    if (auto x = ratio(peer.number("p99_us"), ours.number("p99_us")))
        peer.set("ours_p99_advantage", *x);
    if (auto x = ratio(peer.number("requests_per_handoff"), ours.number("requests_per_handoff")))
        peer.set("ours_requests_advantage", *x);
    else if (auto y = ratio(peer.number("client_requests_per_op"),
                            ours.number("client_requests_per_op")))
        peer.set("ours_requests_advantage", *y);
}

} // namespace conclave::bench
