// SPDX-License-Identifier: BSL-1.0
#include "harness/report.hpp"

#include <cmath>
#include <set>

namespace conclave::bench {

namespace {

std::string format_number(double v) {
    char buf[64];
    if (!std::isfinite(v))
        return "null";
    if (v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else if (std::fabs(v) >= 100)
        std::snprintf(buf, sizeof buf, "%.1f", v);
    else
        std::snprintf(buf, sizeof buf, "%.3f", v);
    return buf;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\')
            out += '\\';
        if (static_cast<unsigned char>(c) < 0x20)
            continue; // never produced by the harness; dropped rather than escaped
        out += c;
    }
    return out + "\"";
}

std::string plain(const record::value& v) {
    if (const double* d = std::get_if<double>(&v))
        return std::isfinite(*d) ? format_number(*d) : "";
    if (const bool* b = std::get_if<bool>(&v))
        return *b ? "true" : "false";
    return std::get<std::string>(v);
}

std::string json_value(const record::value& v) {
    if (const std::string* s = std::get_if<std::string>(&v))
        return quoted(*s);
    if (const double* d = std::get_if<double>(&v))
        return format_number(*d);
    return plain(v);
}

} // namespace

record& record::set(const std::string& name, value v) {
    for (auto& [k, old] : fields_)
        if (k == name) {
            old = std::move(v);
            return *this;
        }
    fields_.emplace_back(name, std::move(v));
    return *this;
}

void record::erase(const std::string& name) {
    std::erase_if(fields_, [&](const auto& f) { return f.first == name; });
}

std::optional<double> record::number(const std::string& name) const {
    for (const auto& [k, v] : fields_)
        if (k == name)
            if (const double* d = std::get_if<double>(&v))
                return *d;
    return std::nullopt;
}

std::string record::text(const std::string& name) const {
    for (const auto& [k, v] : fields_)
        if (k == name)
            return plain(v);
    return {};
}

std::string to_json_line(const record& r) {
    std::string out = "{";
    for (const auto& [k, v] : r.fields()) {
        if (out.size() > 1)
            out += ',';
        out += quoted(k) + ":" + json_value(v);
    }
    return out + "}";
}

void report::add(record r) {
    if (json_) {
        std::printf("%s\n", to_json_line(r).c_str());
        std::fflush(stdout);
    }
    records_.push_back(std::move(r));
}

void report::print_table(std::FILE* out) const {
    // The columns every scenario shares; the scenario-specific value goes to "extra".
    struct column {
        const char* title;
        const char* field;
        int width;
    };
    static const column cols[] = {
        {"scenario", "scenario", 10},
        {"impl", "impl", 14},
        {"N", "contenders", 6},
        {"ops/s", "ops_per_s", 10},
        {"p50_us", "p50_us", 11},
        {"p99_us", "p99_us", 11},
        {"max_us", "max_us", 11},
        {"req/ho", "requests_per_handoff", 7},
        {"att/ho", "acquire_attempts_per_handoff", 7},
        {"jain", "jain", 6},
        {"cpu_us/op", "cpu_us_per_op", 10},
    };
    // Measurements a reader can use; the scenarios' own checks (target_met, and the ratios
    // to this agent's round trip they are judged by) stay in --json and --csv.
    static const char* const extras[] = {"keys",     "part",        "writers",
                                         "total_ms", "failover_ms", "bytes_per_waiter"};
    for (const auto& c : cols)
        std::fprintf(out, "%-*s", c.width, c.title);
    std::fprintf(out, "extra\n");
    for (const auto& r : records_) {
        for (const auto& c : cols) {
            std::string v = r.text(c.field);
            if (c.field == std::string("impl") && v == "conclave")
                v = "ours";
            std::fprintf(out, "%-*s ", c.width - 1, v.empty() ? "-" : v.c_str());
        }
        std::string extra;
        for (const char* e : extras) {
            const std::string v = r.text(e);
            if (!v.empty())
                extra += std::string(" ") + e + "=" + v;
        }
        const std::string note = r.text("variant");
        if (!note.empty())
            extra = " " + note + extra;
        std::fprintf(out, "%s\n", extra.c_str());
    }
}

void report::print_csv(std::FILE* out) const {
    // Columns: the union of every record's fields, in first-seen order.
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const auto& r : records_)
        for (const auto& [k, v] : r.fields())
            if (seen.insert(k).second)
                names.push_back(k);
    for (std::size_t i = 0; i < names.size(); ++i)
        std::fprintf(out, "%s%s", i ? "," : "", names[i].c_str());
    std::fprintf(out, "\n");
    for (const auto& r : records_) {
        for (std::size_t i = 0; i < names.size(); ++i) {
            std::string v = r.text(names[i]);
            if (v.find_first_of(",\"") != std::string::npos)
                v = quoted(v);
            std::fprintf(out, "%s%s", i ? "," : "", v.c_str());
        }
        std::fprintf(out, "\n");
    }
}

void set_percentiles(record& r, const summary& s) {
    r.set("p50_us", s.p50_us);
    r.set("p90_us", s.p90_us);
    r.set("p99_us", s.p99_us);
    r.set("p999_us", s.p999_us);
    r.set("max_us", s.max_us);
}

} // namespace conclave::bench
