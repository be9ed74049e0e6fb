// SPDX-License-Identifier: BSL-1.0
#include "cli/common/flags.hpp"
#include "cli/common/signal_name.hpp"
#include "codec/go/duration.hpp"
#include "codec/go/strconv.hpp"

#include <optional>

namespace conclave::cli {

namespace {

// The error flag.Parse puts after "invalid value ... for flag -x: " (its numError).
std::string num_error_text(codec::go::num_error e) {
    return e == codec::go::num_error::range ? "value out of range" : "parse error";
}

} // namespace

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
    const auto invalid = [&](std::string_view why) {
        return "invalid value " + quoted + " for flag -" + f.name + ": " + std::string(why);
    };
    // Stores a parsed number, or says why there is none.
    const auto store = [&](const auto& n, auto* target) {
        if (!n.value)
            return invalid(num_error_text(n.failure));
        *target = *n.value;
        return std::string();
    };
    switch (f.type) {
    case kind::boolean: {
        const auto b = codec::go::parse_bool(value);
        if (!b)
            return "invalid boolean value " + quoted + " for -" + f.name + ": parse error";
        *static_cast<bool*>(f.target) = *b;
        return {};
    }
    case kind::string:
        *static_cast<std::string*>(f.target) = std::string(value);
        return {};
    case kind::integer:
        return store(codec::go::parse_int(value, 0), static_cast<std::int64_t*>(f.target));
    case kind::unsigned_integer:
        return store(codec::go::parse_uint(value, 0), static_cast<std::uint64_t*>(f.target));
    case kind::duration: {
        const auto d = codec::go::parse_duration(value);
        if (!d.value)
            return invalid("parse error");
        *static_cast<std::chrono::nanoseconds*>(f.target) = *d.value;
        return {};
    }
    case kind::signal: {
        const auto sig = parse_signal(value);
        if (!sig)
            return invalid("unknown signal (give a name such as USR1, or a number)");
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
