// conclave-bench: client round-trip rate and latency against a Consul agent.
//
//   conclave-bench rtt [--agent process|embedded|HOST:PORT] [--connections N]
//                      [--duration SECONDS] [--json]
//
// `rtt` runs N coroutines, each doing sequential GETs of one existing key through a pool of N
// connections, and reports throughput and latency percentiles. By default the dev agent runs
// in its own process (`conclave agent -dev`) so server and client do not share a CPU loop.
#include "agent_process.hpp"
#include "stats.hpp"

#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

struct options {
    std::string scenario = "rtt";
    std::string agent = "process";
    std::size_t connections = 1;
    double duration_s = 3.0;
    bool json = false;
};

[[noreturn]] void usage(int code) {
    std::fputs("usage: conclave-bench rtt [--agent process|embedded|HOST:PORT] "
               "[--connections N] [--duration SECONDS] [--json]\n",
               code == 0 ? stdout : stderr);
    std::exit(code);
}

options parse(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2);
            return argv[++i];
        };
        if (a == "--agent")
            o.agent = value();
        else if (a == "--connections")
            o.connections = std::stoul(value());
        else if (a == "--duration")
            o.duration_s = std::stod(value());
        else if (a == "--json")
            o.json = true;
        else if (a == "-h" || a == "--help")
            usage(0);
        else if (a.rfind("--", 0) != 0)
            o.scenario = a;
        else
            usage(2);
    }
    if (o.scenario != "rtt" || o.connections == 0)
        usage(2);
    return o;
}

asio::awaitable<void> rtt_worker(conclave::client& c, clock_type::time_point end,
                                 std::vector<std::chrono::nanoseconds>& samples) {
    while (clock_type::now() < end) {
        const auto t0 = clock_type::now();
        auto r = co_await c.async_kv_get("conclave-bench/rtt", {}, asio::use_awaitable);
        samples.push_back(clock_type::now() - t0);
        if (!r.entry)
            throw std::runtime_error("benchmark key vanished");
    }
}

asio::awaitable<void> prepare(conclave::client& c) {
    co_await c.async_kv_put("conclave-bench/rtt", "value", {}, asio::use_awaitable);
}

} // namespace

int main(int argc, char** argv) {
    const options opt = parse(argc, argv);
    asio::io_context ioc;

    std::unique_ptr<conclave::bench::agent_process> child;
    std::unique_ptr<conclave::dev::agent> embedded;
    conclave::client_config cfg;
    std::string target = opt.agent;
    if (opt.agent == "process") {
        child = std::make_unique<conclave::bench::agent_process>();
        target = child->address();
    } else if (opt.agent == "embedded") {
        conclave::dev::agent_config acfg;
        acfg.port = 0;
        embedded = std::make_unique<conclave::dev::agent>(ioc.get_executor(), acfg);
        embedded->start();
        target = embedded->http_address();
    }
    if (auto err = conclave::apply_http_addr(cfg, target); !err.empty()) {
        std::fprintf(stderr, "conclave-bench: --agent: %s\n", err.c_str());
        return 2;
    }
    cfg.max_connections = opt.connections;
    conclave::client c{ioc.get_executor(), cfg};

    bool ready = false;
    asio::co_spawn(ioc, prepare(c), [&](std::exception_ptr e) {
        if (e)
            std::rethrow_exception(e);
        ready = true;
    });
    while (!ready)
        ioc.run_one();

    // Warm-up: open the connections and fill caches for a tenth of the run.
    const auto warm = std::chrono::duration<double>(opt.duration_s / 10);
    std::vector<std::vector<std::chrono::nanoseconds>> per_worker(opt.connections);
    std::size_t running = 0;
    auto launch = [&](clock_type::time_point end) {
        for (auto& s : per_worker) {
            ++running;
            asio::co_spawn(ioc, rtt_worker(c, end, s), [&](std::exception_ptr e) {
                --running;
                if (e)
                    std::rethrow_exception(e);
            });
        }
        while (running > 0)
            ioc.run_one();
    };
    launch(clock_type::now() + std::chrono::duration_cast<clock_type::duration>(warm));
    for (auto& s : per_worker)
        s.clear();

    const auto cpu0 = conclave::bench::process_cpu_time();
    const auto t0 = clock_type::now();
    launch(t0 + std::chrono::duration_cast<clock_type::duration>(
                    std::chrono::duration<double>(opt.duration_s)));
    const auto wall = clock_type::now() - t0;
    const auto cpu = conclave::bench::process_cpu_time() - cpu0;

    std::vector<std::chrono::nanoseconds> all;
    for (auto& s : per_worker)
        all.insert(all.end(), s.begin(), s.end());
    const auto sum = conclave::bench::summarize(all);
    const double secs = std::chrono::duration<double>(wall).count();
    const double ops = double(sum.count) / secs;
    const double cpu_per_op = sum.count ? double(cpu.count()) / double(sum.count) : 0;
    const auto stats = c.stats();

    if (opt.json) {
        std::printf("{\"scenario\":\"rtt\",\"agent\":\"%s\",\"contenders\":%zu,\"connections\":%zu,"
                    "\"ops\":%zu,\"ops_per_s\":%.1f,\"p50_us\":%.1f,\"p90_us\":%.1f,"
                    "\"p99_us\":%.1f,\"p999_us\":%.1f,\"max_us\":%.1f,\"cpu_us_per_op\":%.2f,"
                    "\"connects\":%llu}\n",
                    opt.agent.c_str(), opt.connections, opt.connections, sum.count, ops, sum.p50_us,
                    sum.p90_us, sum.p99_us, sum.p999_us, sum.max_us, cpu_per_op,
                    static_cast<unsigned long long>(stats.connects));
    } else {
        std::printf("scenario  agent     conns  ops       ops/s     p50_us  p90_us  p99_us  "
                    "p999_us  max_us   cpu_us/op\n");
        std::printf("%-9s %-9s %-6zu %-9zu %-9.0f %-7.1f %-7.1f %-7.1f %-8.1f %-8.1f %.1f\n", "rtt",
                    opt.agent.size() > 9 ? "external" : opt.agent.c_str(), opt.connections,
                    sum.count, ops, sum.p50_us, sum.p90_us, sum.p99_us, sum.p999_us, sum.max_us,
                    cpu_per_op);
    }
    return 0;
}
