// SPDX-License-Identifier: BSL-1.0
// conclave-bench: the benchmark harness (docs/benchmarks.md).
//
//   conclave-bench SCENARIO... [--agent process|embedded|HOST:PORT] [--json] [--csv] ...
//
// Each scenario appends records to one report: JSON lines as they come (--json), then a
// summary table (and CSV, plots) at the end. By default the dev agent runs in its own
// process so the server does not share the client's event loop or CPU accounting.
#include "harness/harness.hpp"
#include "harness/plot.hpp"
#include "harness/scenarios.hpp"

#include <boost/asio/io_context.hpp>

#include <csignal>
#include <cstdio>
#include <map>

using namespace conclave::bench;

int main(int argc, char** argv) {
    if (argc > 1 && argv[1][0] == '_')
        return worker_main(argc, argv);
    const options opt = parse_options(argc, argv);
    set_local_turn(opt.local_turn);
    std::signal(SIGPIPE, SIG_IGN);

    boost::asio::io_context ioc;
    std::unique_ptr<bench_target> target;
    try {
        target = std::make_unique<bench_target>(ioc, opt.agent, opt.consul_bin);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "conclave-bench: %s\n", e.what());
        return 2;
    }
    report out(opt.json);
    harness h(opt, ioc, *target, out);

    using scenario_fn = void (*)(harness&);
    const std::map<std::string, scenario_fn> table{{"rtt", scenario_rtt},
                                                   {"write", scenario_write},
                                                   {"cycle", scenario_cycle},
                                                   {"contend", scenario_contend},
                                                   {"semaphore", scenario_semaphore},
                                                   {"failover", scenario_failover},
                                                   {"handover", scenario_handover},
                                                   {"drain", scenario_drain},
                                                   {"watch", scenario_watch},
                                                   {"scale", scenario_scale},
                                                   {"keys", scenario_keys},
                                                   {"peers", scenario_peers},
                                                   {"multilock", scenario_multilock},
                                                   {"rwlock", scenario_rwlock}};
    int status = 0;
    for (const auto& name : opt.scenarios) {
        try {
            table.at(name)(h);
        } catch (const std::exception& e) {
            // Report and go on: one broken scenario should not hide the others' numbers.
            std::fprintf(stderr, "conclave-bench: %s failed: %s\n", name.c_str(), e.what());
            record r = h.base_record(name, "conclave", 0);
            r.set("error", std::string(e.what()));
            out.add(std::move(r));
            status = 1;
        }
        // The scenario's session renewals, as the library's observer saw them.
        auto& renewals = target->renewals();
        if (!renewals.durations.empty() || renewals.failures > 0) {
            record r = h.base_record(name, "conclave", 0);
            r.set("variant", std::string("renewals"));
            r.set("renewals", double(renewals.durations.size()));
            r.set("renew_failures", double(renewals.failures));
            if (!renewals.durations.empty())
                set_percentiles(r, summarize(renewals.durations));
            out.add(std::move(r));
            renewals.clear();
        }
    }
    if (!opt.quiet && !opt.json && !opt.csv) {
        std::printf("\nconclave-bench on %s agent (%s)\n", target->kind().c_str(),
                    target->address().c_str());
        out.print_table(stdout);
    } else if (!opt.quiet && (opt.json || opt.csv)) {
        std::fprintf(stderr, "\n");
        out.print_table(stderr);
    }
    if (opt.csv)
        out.print_csv(stdout);
    if (!opt.plot_dir.empty() && !write_plots(opt.plot_dir, out.records()))
        status = 1;
    return status;
}
