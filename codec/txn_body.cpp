// SPDX-License-Identifier: BSL-1.0
#include "codec/cursor.hpp"
#include "codec/go/base64.hpp"
#include "codec/json.hpp"
#include "codec/txn_body.hpp"
#include "codec/word_scan.hpp"

#include <charconv>
#include <cstdint>
#include <cstring>

namespace conclave::codec {

namespace {

// Whether any of the 8 bytes in `w` must be escaped: below 0x20, '"' or '\'.
bool any_needs_escape(std::uint64_t w) {
    return (word::has_less(w, 0x20) | word::has_byte(w, '"') | word::has_byte(w, '\\')) != 0;
}

// The most bytes one op can take besides its strings: the member names and punctuation,
// the longest verb name, two 20-digit numbers, with room to spare.
constexpr std::size_t op_overhead = 200;
// The most bytes one byte of a string can take once escaped (\u00xx).
constexpr std::size_t escape_growth = 6;

// The body's writer (codec::cursor: the buffer is sized beforehand for the worst case),
// with JSON strings and Go's flag constants.
class writer : public cursor {
public:
    using cursor::cursor;

    // A JSON string as Boost.JSON writes it: '"' and '\' escaped, control characters as
    // their short escape or \u00xx (lowercase hex), every other byte (UTF-8 included) as it
    // is. Keys and session IDs rarely need an escape: they are scanned and copied 8 bytes at
    // a time (a byte-at-a-time loop showed up in a lock cycle's profile: every request writes
    // its keys and session ID). The position is kept in a local: a store through a char* may
    // change p_ as far as the compiler knows, and it would reload p_ after each one.
    void string(std::string_view s) {
        char* p = p_;
        *p++ = '"';
        const char* i = s.data();
        const char* const end = i + s.size();
        while (i != end) {
            if (end - i >= 8) {
                const std::uint64_t w = word::load(i);
                if (!any_needs_escape(w)) {
                    std::memcpy(p, &w, 8);
                    p += 8;
                    i += 8;
                    continue;
                }
            } else if (s.size() >= 8) {
                // A tail shorter than a word: the word that ends with the string. Its first
                // bytes were written just before, as they are if the word needs no escape, so
                // writing it over them changes nothing there.
                const std::size_t tail = std::size_t(end - i);
                const std::uint64_t w = word::load(end - 8);
                if (!any_needs_escape(w)) {
                    std::memcpy(p - (8 - tail), &w, 8);
                    p += tail;
                    break;
                }
            }
            const auto c = static_cast<unsigned char>(*i++);
            if (c >= 0x20 && c != '"' && c != '\\')
                *p++ = char(c);
            else
                p = escape(p, c);
        }
        *p++ = '"';
        p_ = p;
    }

    // The flags of Go's locks and semaphores come with every lock and release: their digits
    // are copied rather than computed (a to_chars of 19 or 20 digits on every lock and
    // release).
    void number(std::uint64_t v) {
        if (v == lock_flag_value)
            put("3304740253564472344");
        else if (v == semaphore_flag_value)
            put("16210313421097356768");
        else
            cursor::number(v);
    }

private:
    // The escape of `c`, which needs one, written at `p`: the end of it.
    static char* escape(char* p, unsigned char c) {
        static constexpr char hex[] = "0123456789abcdef";
        *p++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *p++ = char(c);
            break;
        case '\b':
            *p++ = 'b';
            break;
        case '\t':
            *p++ = 't';
            break;
        case '\n':
            *p++ = 'n';
            break;
        case '\f':
            *p++ = 'f';
            break;
        case '\r':
            *p++ = 'r';
            break;
        default:
            std::memcpy(p, "u00", 3);
            p[3] = hex[c >> 4];
            p[4] = hex[c & 0xf];
            p += 5;
        }
        return p;
    }
};

static_assert(lock_flag_value == 3304740253564472344ULL &&
              semaphore_flag_value == 16210313421097356768ULL);

} // namespace

std::string txn_body(const std::vector<txn_op>& ops, std::string_view default_namespace,
                     std::string_view default_partition) {
    const auto or_default = [](const std::string& own, std::string_view fallback) {
        return own.empty() ? fallback : std::string_view(own);
    };
    std::size_t size = 2;
    for (const auto& op : ops)
        size += op_overhead +
                escape_growth * (op.key.size() + op.session.size() +
                                 or_default(op.namespace_name, default_namespace).size() +
                                 or_default(op.partition, default_partition).size()) +
                4 * (op.value.size() / 3 + 1);
    std::string out(size, '\0');
    writer w(out.data());
    w.put('[');
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const txn_op& op = ops[i];
        if (i > 0)
            w.put(',');
        // Verb names and base64 text need no escape: written as they are, in quotes.
        w.put(R"({"KV":{"Verb":")");
        w.put(kv_verb_name(op.verb));
        w.put(R"(","Key":)");
        w.string(op.key);
        if (!op.value.empty()) {
            w.put(R"(,"Value":")");
            w.put(go::base64_encode(op.value));
            w.put('"');
        }
        if (op.flags != 0) {
            w.put(R"(,"Flags":)");
            w.number(op.flags);
        }
        if (op.index != 0) {
            w.put(R"(,"Index":)");
            w.number(op.index);
        }
        if (!op.session.empty()) {
            w.put(R"(,"Session":)");
            w.string(op.session);
        }
        // Only when set, as Go's client writes them: Consul 1.8 refuses any "Partition".
        if (const auto ns = or_default(op.namespace_name, default_namespace); !ns.empty()) {
            w.put(R"(,"Namespace":)");
            w.string(ns);
        }
        if (const auto partition = or_default(op.partition, default_partition);
            !partition.empty()) {
            w.put(R"(,"Partition":)");
            w.string(partition);
        }
        w.put("}}");
    }
    w.put(']');
    out.resize(std::size_t(w.end() - out.data()));
    return out;
}

} // namespace conclave::codec
