// SPDX-License-Identifier: BSL-1.0
// peers: the contend loop, side by side on the same agent in the same run, written with
// conclave (this process), python-consul (bench/peers/python_lock.py) and the npm consul
// client (bench/peers/node/lock_peer.js). Every implementation logs its grants with the same
// clock, so handoffs, fairness and requests per handoff are computed the same way; each peer
// record carries the ratios against ours.
#include "harness/piped_child.hpp"
#include "harness/scenarios.hpp"
#include "peers/go_peer.hpp"

#include <boost/json/parse.hpp>

#include <sys/stat.h>
#include <thread>

namespace conclave::bench {

namespace {

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

std::string peers_dir() {
    return CONCLAVE_BENCH_PEERS_DIR;
}

// Why this peer cannot run here (empty when it can).
std::string missing(const std::string& which) {
    if (which == "python") {
        child_process probe(piped({"/usr/bin/python3", "-c", "import consul"}));
        std::string line;
        while (probe.read_line(line)) {
        }
        return shell_status(probe.reap()) == 0
                   ? ""
                   : "python3-consul is not installed (scripts/setup.sh)";
    }
    if (!exists(peers_dir() + "/node/node_modules/consul/package.json"))
        return "bench/peers/node has no node_modules (scripts/setup.sh runs npm ci)";
    return "";
}

record run_peer(harness& h, const std::string& which, std::size_t n) {
    const std::string name = which == "python" ? "python-consul" : "node-consul";
    record r = h.base_record("contend", name, n);
    r.set("keys", double(std::min(key_count(h), n)));
    r.set("processes", 1.0);
    r.set("hold_us", double(h.opt.hold_us));
    if (auto why = missing(which); !why.empty()) {
        r.set("error", why);
        return r;
    }
    // The peer chooses the window once its interpreter, imports and N sessions are ready,
    // however long that took on a busy machine, and says it on its first line:
    // {"window": [start, t0, t1]} (CLOCK_MONOTONIC, ns; node writes them as strings).
    const std::int64_t lead = 50'000'000 + std::int64_t(n) * 5'000'000;
    const std::int64_t warmup = std::int64_t(h.opt.duration_s * 1e8);
    const std::int64_t duration = std::int64_t(h.opt.duration_s * 1e9);
    std::vector<std::string> argv;
    if (which == "python")
        argv = {"/usr/bin/python3", peers_dir() + "/python_lock.py"};
    else
        argv = {"node", peers_dir() + "/node/lock_peer.js"};
    const std::vector<std::string> common{
        "--addr",        h.target.address(),
        "--prefix",      h.fresh_prefix("peer-" + which),
        "--contenders",  std::to_string(n),
        "--keys",        std::to_string(std::min(key_count(h), n)),
        "--lead-ns",     std::to_string(lead),
        "--warmup-ns",   std::to_string(warmup),
        "--duration-ns", std::to_string(duration),
        "--hold-us",     std::to_string(h.opt.hold_us)};
    argv.insert(argv.end(), common.begin(), common.end());
    child_process peer(piped(std::move(argv)));

    auto sleep_until = [](std::int64_t t) {
        const std::int64_t left = t - monotonic_ns();
        if (left > 0)
            std::this_thread::sleep_for(std::chrono::nanoseconds(left));
    };
    std::int64_t t0 = 0, t1 = 0;
    for (std::string line; t1 == 0 && peer.read_line(line);) {
        boost::system::error_code ec;
        auto v = boost::json::parse(line, ec);
        if (ec || !v.is_object() || !v.as_object().contains("window"))
            continue;
        auto at = [&](std::size_t i) -> std::int64_t {
            const auto& x = v.at("window").at(i);
            return x.is_string() ? std::stoll(std::string(x.as_string()))
                                 : x.to_number<std::int64_t>();
        };
        t0 = at(1);
        t1 = at(2);
    }
    if (t1 == 0) { // (it ended, or wrote something else: its error, below)
        t0 = t1 = monotonic_ns();
    }
    sleep_until(t0);
    const auto a0 = h.target.counters();
    sleep_until(t1);
    const auto a1 = h.target.counters();
    std::vector<grant> grants;
    std::string error;
    double cpu_us = 0;
    for (std::string line; peer.read_line(line);)
        if (auto cpu = parse_child_line(line, grants, &error))
            cpu_us = *cpu;
    if (shell_status(peer.reap()) != 0 && error.empty())
        error = name + " exited with an error";
    if (!error.empty()) {
        r.set("error", error);
        return r;
    }
    auto res = analyze(grants, n, t0, t1);
    std::optional<agent_counters> d;
    if (a0 && a1)
        d = a1->since(*a0);
    record body;
    fill_contention(body, res, d, std::int64_t(cpu_us));
    for (const auto& [k, v] : body.fields())
        r.set(k, v);
    r.latencies_us = std::move(body.latencies_us);
    return r;
}

} // namespace

void scenario_peers(harness& h) {
    h.baseline();
    for (std::size_t n : contender_counts(h, {1, 4, 16, 64})) {
        record ours = run_contend(h, n, 1);
        judge_contend(h, ours);
        ours.set("variant", std::string("peers"));
        std::vector<record> peers;
        for (const auto& which : h.opt.peers) {
            record p = run_peer(h, which, n);
            if (p.text("error").empty())
                set_peer_ratios(p, ours);
            peers.push_back(std::move(p));
        }
        // Client CPU per handoff lower than every peer's (the last target).
        bool cheaper = true;
        for (const auto& p : peers)
            if (auto adv = p.number("ours_cpu_advantage"))
                cheaper = cheaper && *adv > 1.0;
        ours.set("cpu_lower_than_peers", cheaper);
        h.out.add(std::move(ours));
        for (auto& p : peers)
            h.out.add(std::move(p));
        if (key_count(h) == 1) // (golock contends on one key)
            run_go_beside(h, "contend", n);
    }
}

} // namespace conclave::bench
