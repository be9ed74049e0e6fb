// SPDX-License-Identifier: BSL-1.0
// --plot DIR: data files and a gnuplot script, then gnuplot draws the PNGs:
//   cdf_<scenario>.png   latency CDF per (implementation, N)
//   throughput.png       ops/s vs N per (scenario, implementation)
//   handoff.png          contend handoff p50/p99 vs N, conclave and the peers side by side
#include "harness/plot.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

namespace conclave::bench {

namespace fs = std::filesystem;

namespace {

std::string series_name(const record& r) {
    return r.text("impl") + " N=" + r.text("contenders") +
           (r.text("variant").empty() ? "" : " " + r.text("variant")) +
           (r.text("scenario") == "multilock" ? " k=" + r.text("keys") : "") +
           (r.text("scenario") == "rwlock" ? " " + r.text("part") + " W=" + r.text("writers") : "");
}

std::string file_safe(std::string s) {
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    return s;
}

// At most ~400 points of the CDF: plots stay small, the tail keeps its resolution.
void write_cdf(const fs::path& file, const std::vector<double>& sorted) {
    std::ofstream out(file);
    const std::size_t n = sorted.size();
    const std::size_t step = std::max<std::size_t>(1, n / 300);
    for (std::size_t i = 0; i < n; ++i)
        if (i % step == 0 || i + 100 >= n)
            out << sorted[i] << ' ' << double(i + 1) / double(n) << '\n';
}

} // namespace

bool write_plots(const std::string& dir, const std::vector<record>& records) {
    const fs::path root(dir);
    std::error_code ec;
    fs::create_directories(root / "data", ec);
    if (ec) {
        std::fprintf(stderr, "conclave-bench: --plot: cannot create %s: %s\n", dir.c_str(),
                     ec.message().c_str());
        return false;
    }
    std::ofstream gp(root / "plots.gp");
    gp << "set terminal png size 1000,640\nset grid\nset key outside right\n";

    // Latency CDFs, one chart per scenario.
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> cdfs;
    for (const auto& r : records) {
        if (r.latencies_us.empty() || !r.text("error").empty())
            continue;
        const std::string scenario = r.text("scenario");
        const std::string name = series_name(r);
        const fs::path file = root / "data" / ("cdf_" + file_safe(scenario + "_" + name) + ".dat");
        write_cdf(file, r.latencies_us);
        cdfs[scenario].emplace_back(name, file.string());
    }
    for (const auto& [scenario, series] : cdfs) {
        gp << "set output '" << (root / ("cdf_" + scenario + ".png")).string() << "'\n"
           << "set title '" << scenario << ": latency CDF'\nset logscale x\n"
           << "set xlabel 'latency (us)'\nset ylabel 'fraction'\nset yrange [0:1]\nplot ";
        for (std::size_t i = 0; i < series.size(); ++i)
            gp << (i ? ", " : "") << "'" << series[i].second << "' using 1:2 with lines title '"
               << series[i].first << "'";
        gp << "\nunset logscale x\nset yrange [*:*]\n";
    }

    // Against N: throughput of every contended scenario, handoff latency of contend.
    std::map<std::string, std::map<double, const record*>> by_series;
    for (const auto& r : records) {
        const std::string s = r.text("scenario");
        if ((s != "contend" && s != "semaphore") || !r.number("ops_per_s"))
            continue;
        by_series[s + " " + r.text("impl") +
                  (r.number("processes").value_or(1) > 1 ? " P=" + r.text("processes") : "")]
                 [r.number("contenders").value_or(0)] = &r;
    }
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& [name, points] : by_series) {
        const fs::path file = root / "data" / ("vsn_" + file_safe(name) + ".dat");
        std::ofstream out(file);
        for (const auto& [n, r] : points)
            out << n << ' ' << r->number("ops_per_s").value_or(0) << ' '
                << r->number("p50_us").value_or(0) << ' ' << r->number("p99_us").value_or(0)
                << '\n';
        files.emplace_back(name, file.string());
    }
    if (!files.empty()) {
        gp << "set output '" << (root / "throughput.png").string() << "'\n"
           << "set title 'throughput vs contenders'\nset logscale x 2\n"
           << "set xlabel 'contenders N'\nset ylabel 'grants per second'\nplot ";
        for (std::size_t i = 0; i < files.size(); ++i)
            gp << (i ? ", " : "") << "'" << files[i].second
               << "' using 1:2 with linespoints title '" << files[i].first << "'";
        gp << "\nset output '" << (root / "handoff.png").string() << "'\n"
           << "set title 'contend: handoff latency vs N (release ack -> next acquire ack)'\n"
           << "set logscale y\nset ylabel 'microseconds'\nplot ";
        bool first = true;
        for (const auto& [name, file] : files) {
            if (name.rfind("contend", 0) != 0)
                continue;
            gp << (first ? "" : ", ") << "'" << file << "' using 1:4 with linespoints title '"
               << name << " p99', '" << file << "' using 1:3 with linespoints dt 2 title '" << name
               << " p50'";
            first = false;
        }
        if (first)
            gp << "1/0 notitle";
        gp << "\nunset logscale\n";
    }
    gp.close();
    const std::string cmd = "gnuplot '" + (root / "plots.gp").string() + "'";
    if (std::system(cmd.c_str()) != 0) {
        std::fprintf(stderr,
                     "conclave-bench: --plot: gnuplot failed (scripts/setup.sh installs "
                     "gnuplot-nox); data and script are in %s\n",
                     dir.c_str());
        return false;
    }
    return true;
}

} // namespace conclave::bench
