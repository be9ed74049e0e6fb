// SPDX-License-Identifier: BSL-1.0
// Hidden subcommands: the bench runs itself as a child process.
//   _contend-worker  a share of the contend scenario's contenders (P processes); prints its
//                    grants and its CPU time over the measured window as JSON lines
//   _holder          takes a lock, says so, and keeps its session alive until it is killed
//                    (the failover scenario's crash: SIGKILL stops renewals and drops its
//                    connections at once, as a crashed host would); with --health-ttl-ms,
//                    its session is bound to a TTL check it passes (crash-health)
#include "harness/scenarios.hpp"

#include <conclave/session.hpp>

#include <boost/asio/detached.hpp>

#include <cstdio>
#include <map>

namespace conclave::bench {

namespace {

std::map<std::string, std::string> flags(int argc, char** argv) {
    std::map<std::string, std::string> f;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0)
            continue;
        const bool has_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
        f[a.substr(2)] = has_value ? argv[++i] : "1";
    }
    return f;
}

std::int64_t num(const std::map<std::string, std::string>& f, const std::string& k) {
    const auto it = f.find(k);
    return it == f.end() ? 0 : std::stoll(it->second);
}

int contend_worker(const std::map<std::string, std::string>& f) {
    asio::io_context ioc;
    client_config cfg;
    apply_http_addr(cfg, f.at("address"));
    cfg.max_connections = std::size_t(num(f, "connections"));
    client c{ioc.get_executor(), cfg};
    contend_params p;
    p.prefix = f.at("prefix");
    p.contenders = std::size_t(num(f, "contenders"));
    p.first_id = std::size_t(num(f, "first"));
    p.keys = std::size_t(num(f, "keys"));
    p.start_ns = num(f, "start-ns");
    p.end_ns = num(f, "t1-ns");
    p.hold_us = long(num(f, "hold-us"));
    p.fair = f.count("fair") > 0;
    if (f.count("local-turn"))
        set_local_turn(unsigned(num(f, "local-turn")));
    window w;
    std::vector<grant> grants;
    std::string error;
    try {
        run_sync(ioc, measure_window(c, num(f, "t0-ns"), p.end_ns, w,
                                     [&] { return contend_core(c, p, grants); }));
    } catch (const std::exception& e) {
        error = e.what();
    }
    for (const auto& g : grants)
        std::printf("%s\n", grant_line(g).c_str());
    std::printf("{\"summary\":{\"cpu_us\":%lld,\"grants\":%zu%s%s%s}}\n",
                static_cast<long long>(w.cpu_us()), grants.size(),
                error.empty() ? "" : ",\"error\":\"", error.empty() ? "" : error.c_str(),
                error.empty() ? "" : "\"");
    return error.empty() ? 0 : 1;
}

asio::awaitable<void> hold_forever(client c, std::string key, session_config cfg) {
    auto [ec, s] = co_await session::async_create(c, cfg, use_tuple);
    if (ec)
        throw boost::system::system_error(ec, "holder: session create");
    s.async_run(asio::detached);
    lock l{c, key};
    auto [aec, lease] = co_await l.async_acquire(s, use_tuple);
    if (aec)
        throw boost::system::system_error(aec, "holder: acquire");
    std::printf("{\"acquired\":%lld,\"session\":\"%s\",\"check\":\"%s\"}\n",
                static_cast<long long>(monotonic_ns()), s.id().c_str(),
                s.health_check_id().c_str());
    std::fflush(stdout);
    co_await lease.async_wait_lost(use_tuple); // until killed
}

int holder(const std::map<std::string, std::string>& f) {
    asio::io_context ioc;
    client_config cfg;
    apply_http_addr(cfg, f.at("address"));
    client c{ioc.get_executor(), cfg};
    session_config scfg;
    scfg.with_name("bench-holder")
        .with_ttl(std::chrono::milliseconds(num(f, "ttl-ms")))
        .with_lock_delay(std::chrono::milliseconds(num(f, "lock-delay-ms")))
        .with_health_ttl(std::chrono::milliseconds(num(f, "health-ttl-ms")));
    try {
        run_sync(ioc, hold_forever(c, f.at("key"), scfg));
    } catch (const std::exception& e) {
        std::printf("{\"error\":\"%s\"}\n", e.what());
        return 1;
    }
    return 0;
}

} // namespace

int worker_main(int argc, char** argv) {
    const std::string cmd = argv[1];
    const auto f = flags(argc, argv);
    if (cmd == "_contend-worker")
        return contend_worker(f);
    if (cmd == "_holder")
        return holder(f);
    std::fprintf(stderr, "conclave-bench: unknown subcommand %s\n", cmd.c_str());
    return 2;
}

} // namespace conclave::bench
