// SPDX-License-Identifier: BSL-1.0
#include "harness/cli_options.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace conclave::bench {

namespace {

const char* const usage_text = R"(usage: conclave-bench SCENARIO... [options]

Scenarios: rtt write cycle contend semaphore failover handover drain watch scale peers keys
multilock rwlock, or all.
  rtt        raw GET round trip (the floor every recipe builds on)
  write      raw write: one transaction with one KV lock operation per request
  cycle      one holder: acquire + release with a live session (and lease monitoring)
  contend    N contenders on K keys in one process, or spread over P processes
  semaphore  N contenders on a semaphore of limit L
  failover   holder killed (SIGKILL: no renewals, connections dropped), and graceful resign
  handover   elector: leadership passed by resign, and to a preferred candidate
  drain      N contenders each take the lock once and leave: total time
  watch      one writer, M watchers: write ack -> notification
  scale      W waiting contenders: memory per waiter, connections, requests per handoff
  keys       M watches on M different keys, bursts of writes: ack -> notification,
             connections (the client's default pool unless --connections)
  peers      the contend loop written with python-consul and the npm consul client
  multilock  N contenders on the same k keys: a multi_lock, against k locks taken in order
  rwlock     R readers and W writers on one key: a read_write_lock, against a plain lock for
             everyone; the read rate, and one writer's wait among many readers

Options:
  --agent process|embedded|consul|consul-cluster|HOST:PORT
                        dev agent in its own process (default), in this process, a
                        real Consul started here (one dev agent, or three servers on
                        loopback: requests go through a follower), or any Consul
  --consul-bin PATH     the Consul --agent consul* starts (default: $CONSUL_BIN)
  --go PATH|none        Go's api.Lock peer (golock) run beside rtt, cycle, contend, drain
                        and semaphore (default: $GOLOCK, else ../shared/peers/go-api
                        next to the source tree when present)
  --duration S          measured seconds of a timed run (default 3)
  --contenders N[,N..]  contenders (contend/semaphore/peers default 1,4,16,64; drain 64;
                        multilock 1,8); rwlock: readers (default 8 beside the writers,
                        64 beside the one writer whose wait is measured)
  --writers W[,W..]     rwlock: writers beside the readers (default 0,1,8)
  --keys K              keys the contenders spread over (default 1); multilock: the keys
                        each contender takes together (default 1, 4 and 16 in turn)
  --processes P         contend: worker processes (default 1: all in this one);
                        semaphore: clients the contenders spread over, one per process
                        it stands for
  --limit L             semaphore limit (default 4)
  --slots S             semaphore: slots each acquire takes at once (default 1; above 1
                        the Go peer is not run: api.Semaphore has no such acquire)
  --watchers M          watch, keys: watchers (default 16)
  --waiters W           scale: waiting contenders (default 10000)
  --connections C       client pool bound (default: enough for the scenario)
  --hold-us US          time each holder keeps the lock (default 0)
  --repeat R            failover, handover: measurements of each kind (default 3)
  --ttl-ms MS           failover: session TTL (default 1000)
  --lock-delay-ms MS    failover: session lock-delay (default 250)
  --health-ttl-ms MS    failover: TTL of the check the crash-health holder's session is
                        bound to (default 250)
  --no-monitor          cycle: do not watch the lease while holding it
  --fair                locks and semaphores in fair mode (FIFO across processes)
  --local-turn N        without --fair: grants in a row a process may take (0: no turns;
                        default: the library's, lock_options::local_turn)
  --peers LIST          peers next to contend: python,node or none (default python,node)
  --json                one JSON object per line per scenario run (stdout)
  --csv                 CSV table (stdout)
  --quiet               no summary table
  --plot DIR            PNG charts (gnuplot): latency CDF, throughput and handoff vs N
)";

[[noreturn]] void usage(int code, const std::string& why = {}) {
    if (!why.empty())
        std::fprintf(stderr, "conclave-bench: %s\n", why.c_str());
    std::fputs(usage_text, code == 0 ? stdout : stderr);
    std::exit(code);
}

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty())
            out.push_back(part);
    return out;
}

std::size_t positive(const std::string& flag, const std::string& v, bool zero_ok = false) {
    try {
        std::size_t used = 0;
        const long long n = std::stoll(v, &used);
        if (used == v.size() && (n > 0 || (zero_ok && n == 0)))
            return static_cast<std::size_t>(n);
    } catch (const std::exception&) {
    }
    usage(2, flag + ": not a " + (zero_ok ? "non-negative" : "positive") + " integer: " + v);
}

// The member an option that takes a positive count sets; null for any other argument.
std::size_t options::*count_option(std::string_view flag) {
    static constexpr std::pair<std::string_view, std::size_t options::*> counts[] = {
        {"--keys", &options::keys},       {"--processes", &options::processes},
        {"--limit", &options::limit},     {"--watchers", &options::watchers},
        {"--waiters", &options::waiters}, {"--connections", &options::connections},
        {"--repeat", &options::repeat},   {"--slots", &options::slots},
    };
    for (const auto& [name, member] : counts)
        if (name == flag)
            return member;
    return nullptr;
}

} // namespace

const std::vector<std::string>& all_scenarios() {
    static const std::vector<std::string> all{
        "rtt",   "write", "cycle", "contend", "semaphore", "failover",  "handover",
        "drain", "watch", "scale", "peers",   "keys",      "multilock", "rwlock"};
    return all;
}

options parse_options(int argc, char** argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc)
                usage(2, a + " needs a value");
            return argv[++i];
        };
        if (a == "--agent")
            o.agent = value();
        else if (a == "--consul-bin")
            o.consul_bin = value();
        else if (a == "--go")
            o.go_peer = value();
        else if (a == "--duration") {
            const std::string v = value();
            o.duration_s = std::atof(v.c_str());
            if (!(o.duration_s > 0))
                usage(2, "--duration: not a positive number: " + v);
        } else if (a == "--contenders") {
            o.contenders.clear();
            for (const auto& n : split(value()))
                o.contenders.push_back(positive(a, n));
        } else if (a == "--writers") {
            o.writers.clear();
            for (const auto& n : split(value()))
                o.writers.push_back(positive(a, n, true));
            if (o.writers.empty())
                usage(2, "--writers: no count given");
        } else if (const auto count = count_option(a))
            o.*count = positive(a, value());
        else if (a == "--hold-us")
            o.hold_us = static_cast<long>(positive(a, value(), true));
        else if (a == "--ttl-ms")
            o.ttl_ms = static_cast<long>(positive(a, value()));
        else if (a == "--lock-delay-ms")
            o.lock_delay_ms = static_cast<long>(positive(a, value(), true));
        else if (a == "--health-ttl-ms")
            o.health_ttl_ms = static_cast<long>(positive(a, value()));
        else if (a == "--no-monitor")
            o.monitor = false;
        else if (a == "--fair")
            o.fair = true;
        else if (a == "--local-turn")
            o.local_turn = unsigned(positive(a, value(), true));
        else if (a == "--peers") {
            const std::string v = value();
            o.peers = v == "none" ? std::vector<std::string>{} : split(v);
            for (const auto& p : o.peers)
                if (p != "python" && p != "node")
                    usage(2, "--peers: unknown peer " + p);
        } else if (a == "--json")
            o.json = true;
        else if (a == "--csv")
            o.csv = true;
        else if (a == "--quiet")
            o.quiet = true;
        else if (a == "--plot")
            o.plot_dir = value();
        else if (a == "-h" || a == "--help")
            usage(0);
        else if (a.rfind("--", 0) == 0)
            usage(2, "unknown option " + a);
        else if (a == "all")
            o.scenarios.insert(o.scenarios.end(), all_scenarios().begin(), all_scenarios().end());
        else if (std::find(all_scenarios().begin(), all_scenarios().end(), a) !=
                 all_scenarios().end())
            o.scenarios.push_back(a);
        else
            usage(2, "unknown scenario " + a);
    }
    if (o.scenarios.empty())
        usage(2, "no scenario given");
    if (o.consul_bin.empty())
        if (const char* bin = std::getenv("CONSUL_BIN"))
            o.consul_bin = bin;
    return o;
}

} // namespace conclave::bench
