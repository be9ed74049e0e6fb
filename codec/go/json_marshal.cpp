// SPDX-License-Identifier: BSL-1.0
#include "codec/go/json_marshal.hpp"
#include "codec/go/json_text.hpp"

#include <boost/json/value.hpp>

#include <charconv>
#include <cmath>

namespace conclave::codec::go {

namespace json = boost::json;

namespace {

template <class Int>
void write_integer(std::string& out, Int n) {
    char buf[24];
    out.append(buf, std::size_t(std::to_chars(buf, buf + sizeof buf, n).ptr - buf));
}

// Go's float64 format: %f-like between 1e-6 and 1e21, else exponent form with at least two
// exponent digits dropped to what is needed (e-07 -> e-7).
void write_double(std::string& out, double d) {
    if (!std::isfinite(d)) {
        out += "null";
        return;
    }
    char buf[64];
    const double a = std::fabs(d);
    const bool sci = a != 0 && (a < 1e-6 || a >= 1e21);
    auto res = std::to_chars(buf, buf + sizeof buf, d,
                             sci ? std::chars_format::scientific : std::chars_format::fixed);
    std::string s(buf, res.ptr);
    if (sci) {
        const auto e = s.find('e');
        if (e != std::string::npos && s.size() > e + 3 && s[e + 2] == '0')
            s.erase(e + 2, 1);
    }
    out += s;
}

// A line break and the indent of `depth`; with the dev agent's 4 spaces, in one append (an
// answer has one per member).
void newline(std::string& out, std::string_view indent, int depth) {
    if (indent.empty())
        return;
    static const std::string breaks = "\n" + std::string(64, ' ');
    const std::size_t n = 1 + std::size_t(depth) * indent.size();
    if (indent == "    " && n <= breaks.size()) {
        out.append(breaks.data(), n);
        return;
    }
    out += '\n';
    for (int i = 0; i < depth; ++i)
        out += indent;
}

// An array's or an object's members between `open` and `close`, as encoding/json writes
// both: nothing between them when empty, else comma-separated, each on a line of its own at
// depth + 1 when indented, the closing one back at `depth`.
template <class Members, class WriteMember>
void write_members(std::string& out, const Members& members, char open, char close, int depth,
                   std::string_view indent, WriteMember write_member) {
    out += open;
    if (!members.empty()) {
        bool first = true;
        for (const auto& m : members) {
            if (!first)
                out += ',';
            first = false;
            newline(out, indent, depth + 1);
            write_member(m);
        }
        newline(out, indent, depth);
    }
    out += close;
}

void write_value(std::string& out, const json::value& v, int depth, std::string_view indent) {
    switch (v.kind()) {
    case json::kind::null:
        out += "null";
        break;
    case json::kind::bool_:
        out += v.get_bool() ? "true" : "false";
        break;
    case json::kind::int64:
        write_integer(out, v.get_int64());
        break;
    case json::kind::uint64:
        write_integer(out, v.get_uint64());
        break;
    case json::kind::double_:
        write_double(out, v.get_double());
        break;
    case json::kind::string:
        append_json_string(out, v.get_string());
        break;
    case json::kind::array:
        write_members(out, v.get_array(), '[', ']', depth, indent,
                      [&](const json::value& item) { write_value(out, item, depth + 1, indent); });
        break;
    case json::kind::object:
        write_members(out, v.get_object(), '{', '}', depth, indent,
                      [&](const json::key_value_pair& kv) {
                          append_json_string(out, kv.key());
                          out += indent.empty() ? ":" : ": ";
                          write_value(out, kv.value(), depth + 1, indent);
                      });
        break;
    }
}

} // namespace

void append_marshal(std::string& out, const json::value& v, std::string_view indent) {
    write_value(out, v, 0, indent);
}

std::string marshal(const json::value& v) {
    std::string out;
    write_value(out, v, 0, {});
    return out;
}

std::string marshal_indent(const json::value& v, std::string_view indent) {
    std::string out;
    write_value(out, v, 0, indent);
    return out;
}

} // namespace conclave::codec::go
