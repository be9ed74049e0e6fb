// SPDX-License-Identifier: BSL-1.0
#include "cli/common/flags.hpp"
#include "cli/common/signal_name.hpp"
#include "codec/duration.hpp"

#include <limits>
#include <optional>

namespace conclave::cli {

namespace {

// The digits of Go's strconv.ParseInt/ParseUint with base 0: 0x / 0o / 0b prefixes, a
// leading 0 for octal, underscores between digits after a prefix. Returns the error text
// flag.Parse puts after "invalid value ... for flag -x: ", or nothing.
std::optional<std::string> parse_go_digits(std::string_view s, std::uint64_t& out) {
    unsigned base = 10;
    bool prefixed = false;
    if (s.size() > 1 && s[0] == '0') {
        const char b = char(s[1] | 0x20);
        if (b == 'x' || b == 'o' || b == 'b') {
            base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
            s.remove_prefix(2);
            prefixed = true;
        } else {
            base = 8;
            s.remove_prefix(1);
        }
    }
    if (s.empty() && (prefixed || base == 10))
        return "parse error";
    std::uint64_t value = 0;
    bool overflow = false;
    char previous = '0';
    for (const char c : s) {
        if (c == '_') {
            if (!prefixed || previous == '_')
                return "parse error";
            previous = c;
            continue;
        }
        unsigned digit = 0;
        if (c >= '0' && c <= '9')
            digit = unsigned(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
            digit = unsigned((c | 0x20) - 'a' + 10);
        else
            return "parse error";
        if (digit >= base)
            return "parse error";
        if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / base)
            overflow = true;
        else
            value = value * base + digit;
        previous = c;
    }
    if (previous == '_')
        return "parse error";
    if (overflow)
        return "value out of range";
    out = value;
    return std::nullopt;
}

std::optional<std::string> parse_go_int(std::string_view s, std::int64_t& out) {
    bool negative = false;
    if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
        negative = s[0] == '-';
        s.remove_prefix(1);
    }
    std::uint64_t value = 0;
    if (auto err = parse_go_digits(s, value))
        return err;
    const std::uint64_t limit = negative ? std::uint64_t{1} << 63 : (std::uint64_t{1} << 63) - 1;
    if (value > limit)
        return "value out of range";
    out = negative ? std::int64_t(~value + 1) : std::int64_t(value);
    return std::nullopt;
}

} // namespace

bool parse_go_bool(std::string_view v, bool& out) {
    if (v == "1" || v == "t" || v == "T" || v == "true" || v == "TRUE" || v == "True") {
        out = true;
        return true;
    }
    if (v == "0" || v == "f" || v == "F" || v == "false" || v == "FALSE" || v == "False") {
        out = false;
        return true;
    }
    return false;
}

void flag_set::add_bool(std::string name, bool* target) {
    flags_.push_back({std::move(name), kind::boolean, target});
}
void flag_set::add_string(std::string name, std::string* target) {
    flags_.push_back({std::move(name), kind::string, target});
}
void flag_set::add_int(std::string name, std::int64_t* target) {
    flags_.push_back({std::move(name), kind::integer, target});
}
void flag_set::add_uint(std::string name, std::uint64_t* target) {
    flags_.push_back({std::move(name), kind::unsigned_integer, target});
}
void flag_set::add_duration(std::string name, std::chrono::nanoseconds* target) {
    flags_.push_back({std::move(name), kind::duration, target});
}
void flag_set::add_signal(std::string name, int* target) {
    flags_.push_back({std::move(name), kind::signal, target});
}

const flag_set::flag* flag_set::find(std::string_view name) const {
    for (const auto& f : flags_)
        if (f.name == name)
            return &f;
    return nullptr;
}

// Returns Go's error text, or an empty string when the value was stored.
std::string flag_set::assign(const flag& f, std::string_view value) {
    const std::string quoted = "\"" + std::string(value) + "\"";
    switch (f.type) {
    case kind::boolean:
        if (!parse_go_bool(value, *static_cast<bool*>(f.target)))
            return "invalid boolean value " + quoted + " for -" + f.name + ": parse error";
        return {};
    case kind::string:
        *static_cast<std::string*>(f.target) = std::string(value);
        return {};
    case kind::integer:
        if (auto err = parse_go_int(value, *static_cast<std::int64_t*>(f.target)))
            return "invalid value " + quoted + " for flag -" + f.name + ": " + *err;
        return {};
    case kind::unsigned_integer:
        if (auto err = parse_go_digits(value, *static_cast<std::uint64_t*>(f.target)))
            return "invalid value " + quoted + " for flag -" + f.name + ": " + *err;
        return {};
    case kind::duration: {
        const auto d = codec::parse_go_duration(value);
        if (!d.value)
            return "invalid value " + quoted + " for flag -" + f.name + ": parse error";
        *static_cast<std::chrono::nanoseconds*>(f.target) = *d.value;
        return {};
    }
    case kind::signal: {
        const auto sig = parse_signal(value);
        if (!sig)
            return "invalid value " + quoted + " for flag -" + f.name +
                   ": unknown signal (give a name such as USR1, or a number)";
        *static_cast<int*>(f.target) = *sig;
        return {};
    }
    }
    return {};
}

flag_set::result flag_set::parse(args a) {
    result r;
    set_.clear();
    std::size_t i = 0;
    for (; i < a.size(); ++i) {
        std::string_view arg = a[i];
        if (arg.size() < 2 || arg[0] != '-')
            break; // first non-flag argument ("-" alone included)
        if (arg == "--") {
            ++i;
            break;
        }
        std::string_view name = arg.substr(1);
        if (name[0] == '-')
            name.remove_prefix(1);
        if (name.empty() || name[0] == '-' || name[0] == '=') {
            r.status = outcome::error;
            r.error = "bad flag syntax: " + std::string(arg);
            return r;
        }
        std::optional<std::string_view> value;
        if (const auto eq = name.find('='); eq != std::string_view::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        const flag* f = find(name);
        if (!f) {
            if (name == "help" || name == "h") {
                r.status = outcome::help;
                return r;
            }
            r.status = outcome::error;
            r.error = "flag provided but not defined: -" + std::string(name);
            return r;
        }
        if (f->type == kind::boolean && !value) {
            value = "true";
        } else if (!value) {
            if (i + 1 >= a.size()) {
                r.status = outcome::error;
                r.error = "flag needs an argument: -" + std::string(name);
                return r;
            }
            value = a[++i];
        }
        if (auto err = assign(*f, *value); !err.empty()) {
            r.status = outcome::error;
            r.error = std::move(err);
            return r;
        }
        set_.insert(f->name);
    }
    r.rest.assign(a.begin() + std::ptrdiff_t(i), a.end());
    return r;
}

} // namespace conclave::cli
