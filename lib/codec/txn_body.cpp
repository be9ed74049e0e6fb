#include "codec/base64.hpp"
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "codec/word_scan.hpp"

#include <charconv>
#include <cstdint>

namespace conclave::codec {

namespace {

// Whether any of the 8 bytes in `w` must be escaped: below 0x20, '"' or '\'.
bool any_needs_escape(std::uint64_t w) {
    return (word::has_less(w, 0x20) | word::has_byte(w, '"') | word::has_byte(w, '\\')) != 0;
}

// A JSON string as Boost.JSON writes it: '"' and '\' escaped, control characters as their
// short escape or \u00xx (lowercase hex), every other byte (UTF-8 included) as it is.
// Keys, session IDs and base64 values rarely need an escape: they are scanned 8 bytes at a
// time (a byte-at-a-time loop cost ~12 instructions a byte, ~4 % of a lock cycle's client
// instructions).
void append_string(std::string& out, std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out += '"';
    std::size_t plain = 0; // start of the run of bytes copied as they are
    std::size_t i = 0;
    while (i < s.size()) {
        if (i + 8 <= s.size()) {
            if (!any_needs_escape(word::load(s.data() + i))) {
                i += 8;
                continue;
            }
        }
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') {
            ++i;
            continue;
        }
        out.append(s.data() + plain, i - plain);
        plain = ++i;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 0xf];
        }
    }
    out.append(s.data() + plain, s.size() - plain);
    out += '"';
}

void append_u64(std::string& out, std::uint64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    out.append(digits, end);
}

} // namespace

std::string txn_body(const std::vector<txn_op>& ops) {
    std::string out;
    std::size_t size = 2;
    for (const auto& op : ops)
        size += 96 + op.key.size() + op.session.size() + 4 * (op.value.size() / 3 + 1);
    out.reserve(size);
    out += '[';
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const txn_op& op = ops[i];
        if (i > 0)
            out += ',';
        out += R"({"KV":{"Verb":)";
        append_string(out, kv_verb_name(op.verb));
        out += R"(,"Key":)";
        append_string(out, op.key);
        if (!op.value.empty()) {
            out += R"(,"Value":)";
            append_string(out, base64_encode(op.value));
        }
        if (op.flags != 0) {
            out += R"(,"Flags":)";
            append_u64(out, op.flags);
        }
        if (op.index != 0) {
            out += R"(,"Index":)";
            append_u64(out, op.index);
        }
        if (!op.session.empty()) {
            out += R"(,"Session":)";
            append_string(out, op.session);
        }
        out += "}}";
    }
    out += ']';
    return out;
}

} // namespace conclave::codec
