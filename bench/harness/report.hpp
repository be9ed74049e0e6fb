// SPDX-License-Identifier: BSL-1.0
// Results of scenario runs: one record per run, printed as JSON lines (as they come), a
// summary table, or CSV.
#pragma once

#include "harness/stats.hpp"

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace conclave::bench {

/// One scenario run: ordered named values, plus its latency samples for the plots.
class record {
public:
    using value = std::variant<double, std::string, bool>;

    record& set(const std::string& name, value v);
    void erase(const std::string& name);
    std::optional<double> number(const std::string& name) const;
    std::string text(const std::string& name) const;
    const std::vector<std::pair<std::string, value>>& fields() const { return fields_; }

    /// Sorted latencies in µs (CDF plots); not printed.
    std::vector<double> latencies_us;

private:
    std::vector<std::pair<std::string, value>> fields_;
};

class report {
public:
    explicit report(bool json)
        : json_(json) {}

    /// Keeps the record; prints it at once as a JSON line when --json.
    void add(record r);
    const std::vector<record>& records() const { return records_; }

    void print_table(std::FILE* out) const;
    void print_csv(std::FILE* out) const;

private:
    bool json_;
    std::vector<record> records_;
};

/// Sets p50_us, p90_us, p99_us, p999_us and max_us from `s`.
void set_percentiles(record& r, const summary& s);

/// One JSON object on one line.
std::string to_json_line(const record& r);

} // namespace conclave::bench
