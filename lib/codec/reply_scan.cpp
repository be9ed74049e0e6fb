// The scanner reads the body once, front to back, expecting the shapes below. On anything
// else it declines, and the SAX parser of reply_parser.cpp decides about the body.
//   - Tokens: JSON whitespace anywhere between them (Go's indentation is skipped 8 and 4
//     spaces at a time, and in a KVPair compared at once with that before its first
//     member); null, true, false; unsigned integers that fit 64 bits, without a leading
//     zero, sign, fraction or exponent; strings of printable ASCII, with only the escapes
//     \" \\ \/ \b \f \n \r \t (no \u, no byte >= 0x80: the SAX parser decodes those and
//     validates UTF-8). Object keys and base64 Values take no escape at all.
//   - A KVPair: LockIndex, Key, Flags, Value, Session, CreateIndex, ModifyIndex, in any
//     order, each one a value of its type or null (then empty or 0, like the SAX parser);
//     Value is decoded with the same base64_decode, and declined if that fails (the SAX
//     parser then refuses the body).
//   - A txn answer: "Results", null or [{"KV": KVPair}, ...]; "Errors", null or
//     [{"OpIndex": n, "What": "..."}, ...]; a read-only txn's Index and LastContact
//     (numbers), KnownLeader and NotModified (booleans), ConsistencyLevel (string).
//   - No other key, and no key twice in one object (the SAX parser keeps the last one).
//   - Nothing but whitespace after the document.
#include "codec/base64.hpp"
#include "codec/reply_scan.hpp"
#include "codec/word_scan.hpp"

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>

namespace conclave::codec {

namespace {

// Bytes that stand for themselves in a string the scanner takes: printable ASCII but the
// quote and the backslash.
constexpr std::array<bool, 256> plain_bytes = [] {
    std::array<bool, 256> t{};
    for (int c = 0x20; c < 0x80; ++c)
        t[c] = c != '"' && c != '\\';
    return t;
}();

// Whether one of the 8 bytes of `w` is not plain: a quote, a backslash, a control
// character or a byte >= 0x80. (The tricks are exact about "one of", not about which.)
constexpr bool special(std::uint64_t w) {
    return (word::has_byte(w, '"') | word::has_byte(w, '\\') | word::has_less(w, 0x20) |
            word::has_high(w)) != 0;
}
static_assert(!special(0x2020202020202020) && !special(0x7f7e7d5d5b3a2c21));
static_assert(special(0x4141414141414122) && special(0x415c414141414141) &&
              special(0x1f41414141414141) && special(0x4141418041414141));

// The 4 bytes at `p`, as one word (word::load reads 8).
std::uint32_t load4(const char* p) {
    std::uint32_t w;
    std::memcpy(&w, p, 4);
    return w;
}

// The character a two-character escape stands for; 0 for \u and invalid escapes.
char unescaped(char c) {
    switch (c) {
    case '"':
    case '\\':
    case '/':
        return c;
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    default:
        return 0;
    }
}

// The KVPair fields, as bits of the set of those seen in an object.
enum field : unsigned { key, session, value, flags, lock_index, create_index, modify_index };

// The members of a txn answer.
enum txn_member : unsigned {
    results,
    errors,
    index,
    last_contact,
    known_leader,
    not_modified,
    consistency_level
};

int txn_member_of(std::string_view k) {
    static constexpr std::string_view names[] = {"Results",         "Errors",      "Index",
                                                 "LastContact",     "KnownLeader", "NotModified",
                                                 "ConsistencyLevel"};
    for (unsigned i = 0; i < std::size(names); ++i)
        if (k == names[i])
            return int(i);
    return -1;
}

class scanner {
public:
    explicit scanner(std::string_view body)
        : p_(body.data())
        , end_(body.data() + body.size()) {}

    // Only whitespace left.
    bool at_end() {
        skip_space();
        return p_ == end_;
    }

    // A JSON array of `element`s appended to `out`.
    template <class T>
    bool list(std::vector<T>& out, bool (scanner::*element)(T&)) {
        if (!eat('['))
            return false;
        if (eat(']'))
            return true;
        // Room for a few elements at once: a txn answer has one or two, and growing the
        // vector one by one would allocate twice and move the first entry for two.
        if (out.capacity() - out.size() < 4)
            out.reserve(out.size() + 4);
        do {
            if (!(this->*element)(out.emplace_back()))
                return false;
        } while (eat(','));
        return eat(']');
    }

    // A KVPair into the fresh `e`.
    bool entry(kv_entry& e) {
        if (!eat('{'))
            return false;
        const char* const first_space = p_;
        if (eat('}'))
            return true;
        // The whitespace before the first member (Go's newline and indentation, or nothing):
        // what comes after the comma of each member that follows, in Go's output.
        const std::string_view space(first_space, std::size_t(p_ - first_space));
        if (!eat('"'))
            return false;
        unsigned seen = 0;
        std::string_view encoded;
        for (;;) {
            const int f = field_key();
            if (f < 0 || (seen & (1u << f)))
                return false;
            seen |= 1u << f;
            if (!null_value()) { // null: absent, e keeps its default
                bool ok = false;
                bool escaped = false;
                switch (f) {
                case field::key:
                    ok = text(e.key);
                    break;
                case field::session:
                    ok = text(e.session);
                    break;
                case field::value:
                    ok = string(encoded, escaped) && !escaped;
                    break;
                case field::flags:
                    ok = lock_flags(e.flags) || number(e.flags);
                    break;
                case field::lock_index:
                    ok = number(e.lock_index);
                    break;
                case field::create_index:
                    ok = number(e.create_index);
                    break;
                default:
                    ok = number(e.modify_index);
                    break;
                }
                if (!ok)
                    return false;
            }
            if (next_key(space))
                continue;
            if (!eat(','))
                break;
            if (!eat('"'))
                return false;
        }
        if (!eat('}'))
            return false;
        if (encoded.empty())
            return true;
        auto decoded = base64_decode(encoded);
        if (!decoded)
            return false;
        e.value = std::move(*decoded);
        return true;
    }

    // A txn answer: results and errors appended to `out`.
    bool txn(txn_result& out) {
        if (!eat('{'))
            return false;
        if (eat('}'))
            return true;
        unsigned seen = 0;
        do {
            std::string_view k;
            if (!key(k))
                return false;
            const int m = txn_member_of(k);
            if (m < 0 || (seen & (1u << m)))
                return false;
            seen |= 1u << m;
            std::uint64_t ignored = 0;
            std::string_view raw;
            bool escaped = false;
            bool ok = false;
            switch (m) {
            case txn_member::results:
                ok = eat_word("null") || list(out.results, &scanner::result);
                break;
            case txn_member::errors:
                ok = eat_word("null") || list(out.errors, &scanner::error);
                break;
            case txn_member::index:
            case txn_member::last_contact:
                ok = number(ignored);
                break;
            case txn_member::known_leader:
            case txn_member::not_modified:
                ok = eat_word("true") || eat_word("false");
                break;
            default:
                ok = string(raw, escaped);
                break;
            }
            if (!ok)
                return false;
        } while (eat(','));
        return eat('}');
    }

private:
    // {"KV": KVPair}. The key is matched with its closing quote, as key() and a comparison
    // with "KV" would take it, without the byte loop of key() and a call to memcmp.
    bool result(kv_entry& e) {
        return eat('{') && eat('"') && take("KV\"") && colon() && entry(e) && eat('}');
    }

    // {"OpIndex": n, "What": "..."}, either member missing or both.
    bool error(txn_error& e) {
        if (!eat('{'))
            return false;
        if (eat('}'))
            return true;
        bool op_index_seen = false;
        bool what_seen = false;
        do {
            std::string_view k;
            if (!key(k))
                return false;
            std::uint64_t n = 0;
            if (k == "OpIndex" && !op_index_seen && number(n)) {
                op_index_seen = true;
                e.op_index = n;
            } else if (k == "What" && !what_seen && text(e.what)) {
                what_seen = true;
            } else {
                return false;
            }
        } while (eat(','));
        return eat('}');
    }

    // The loops below work on a local copy of p_: the compiler cannot tell that the body's
    // bytes are not p_ itself, and would store p_ back at every byte.
    void skip_space() {
        const char* p = p_;
        // All four whitespace characters are <= ' ': one test when there is none.
        for (; p != end_ && static_cast<unsigned char>(*p) <= ' '; ++p) {
            if (*p == '\n') {
                // Go's indentation: a newline, then 4 spaces a level, taken 8 and 4 at a time.
                while (end_ - p > 8 && word::load(p + 1) == 0x2020202020202020)
                    p += 8;
                if (end_ - p > 4 && load4(p + 1) == 0x20202020)
                    p += 4;
            } else if (*p != ' ' && *p != '\t' && *p != '\r') {
                break;
            }
        }
        p_ = p;
    }

    // The next token is the character `c`: consumes it.
    bool eat(char c) {
        skip_space();
        if (p_ == end_ || *p_ != c)
            return false;
        ++p_;
        return true;
    }

    // The next bytes are `text` (no whitespace first): consumes them.
    template <std::size_t N>
    bool take(const char (&text)[N]) {
        if (std::size_t(end_ - p_) < N - 1 || std::memcmp(p_, text, N - 1) != 0)
            return false;
        p_ += N - 1;
        return true;
    }

    // The next token starts with `word` (null, true, false): consumes it. What follows is
    // not a token the caller takes, so "nullx" is declined there.
    template <std::size_t N>
    bool eat_word(const char (&word)[N]) {
        skip_space();
        return take(word);
    }

    // A string: `raw` is the text between the quotes, still escaped when `escaped` is set.
    bool string(std::string_view& raw, bool& escaped) {
        if (!eat('"'))
            return false;
        const char* const begin = p_;
        const char* p = begin;
        escaped = false;
        for (;;) {
            while (end_ - p >= 8 && !special(word::load(p)))
                p += 8;
            while (p != end_ && plain_bytes[static_cast<unsigned char>(*p)])
                ++p;
            if (p == end_)
                return false;
            if (*p == '"')
                break;
            if (*p != '\\' || end_ - p < 2 || unescaped(p[1]) == 0)
                return false;
            escaped = true;
            p += 2;
        }
        raw = std::string_view(begin, std::size_t(p - begin));
        p_ = p + 1;
        return true;
    }

    // A string value into `out`, unescaped.
    bool text(std::string& out) {
        std::string_view raw;
        bool escaped = false;
        if (!string(raw, escaped))
            return false;
        if (!escaped) {
            out.assign(raw);
            return true;
        }
        out.clear();
        for (std::size_t i = 0; i < raw.size(); ++i)
            out += raw[i] == '\\' ? unescaped(raw[++i]) : raw[i];
        return true;
    }

    // The rest of a KVPair key, after its opening quote, and its colon: the field it names,
    // or -1. The names have different first letters, and are matched with their closing
    // quote: a longer key, or one with an escape, does not match.
    int field_key() {
        if (p_ == end_)
            return -1;
        bool known = false;
        int f = -1;
        switch (*p_) {
        case 'K':
            known = take("Key\"");
            f = field::key;
            break;
        case 'S':
            known = take("Session\"");
            f = field::session;
            break;
        case 'V':
            known = take("Value\"");
            f = field::value;
            break;
        case 'F':
            known = take("Flags\"");
            f = field::flags;
            break;
        case 'L':
            known = take("LockIndex\"");
            f = field::lock_index;
            break;
        case 'C':
            known = take("CreateIndex\"");
            f = field::create_index;
            break;
        case 'M':
            known = take("ModifyIndex\"");
            f = field::modify_index;
            break;
        }
        return known && colon() ? f : -1;
    }

    // A colon, and Go's one space after it: the colon right after the key, then at most one
    // space, are taken without the loop of skip_space (the value's reader skips any more).
    bool colon() {
        if (p_ == end_ || *p_ != ':')
            return eat(':');
        ++p_;
        if (p_ != end_ && *p_ == ' ')
            ++p_;
        return true;
    }

    // The comma after a member, the whitespace `space` and the opening quote of the next
    // key: consumes them, as eat(',') and eat('"') would, when they are exactly these bytes.
    // `space` is whitespace, so eat() skips no more and no less of it than this. Go writes
    // the same newline and indentation before each member of an object (nothing in compact
    // form), so only the first is found by skip_space, byte by byte.
    bool next_key(std::string_view space) {
        const std::size_t n = space.size();
        if (std::size_t(end_ - p_) < n + 2 || p_[0] != ',' || p_[n + 1] != '"' ||
            !same(p_ + 1, space.data(), n))
            return false;
        p_ += n + 2;
        return true;
    }

    // Whether the `n` bytes at `a` and `b` are the same: 8 at a time, first the first and
    // last 8 (overlapping when n < 16), then those between (a call to memcmp cost more than
    // the comparison, for Go's indentation).
    static bool same(const char* a, const char* b, std::size_t n) {
        if (n < 8) {
            for (std::size_t i = 0; i < n; ++i)
                if (a[i] != b[i])
                    return false;
            return true;
        }
        if (word::load(a) != word::load(b) || word::load(a + n - 8) != word::load(b + n - 8))
            return false;
        for (std::size_t i = 8; i + 8 < n; i += 8)
            if (word::load(a + i) != word::load(b + i))
                return false;
        return true;
    }

    // A null value: consumes it. colon() leaves Go's output at the value, and a value that
    // starts with 'n' there can only be null (no typed reader takes an 'n'): one byte tells,
    // without the calls of eat_word() and skip_space().
    bool null_value() {
        if (p_ != end_ && static_cast<unsigned char>(*p_) > ' ')
            return *p_ == 'n' && take("null");
        return eat_word("null");
    }

    // Go's api.Lock flags, the value of Flags in every lock key: its 19 digits compared at
    // once rather than read one by one. As number() does, takes the digits only when no
    // digit follows (one more would make number() decline: it overflows).
    bool lock_flags(std::uint64_t& out) {
        static constexpr char digits[] = "3304740253564472344";
        constexpr std::size_t n = sizeof digits - 1;
        if (std::size_t(end_ - p_) < n || std::memcmp(p_, digits, n) != 0 ||
            (std::size_t(end_ - p_) > n && unsigned(p_[n] - '0') < 10))
            return false;
        static_assert(lock_flag_value == 3304740253564472344ULL);
        p_ += n;
        out = lock_flag_value;
        return true;
    }

    // An object key and its colon. `k` is the text up to the next quote, whatever it is:
    // callers compare it with names of plain ASCII letters, so a key that matches one has no
    // escape or other byte to check, and one that does not match is declined.
    bool key(std::string_view& k) {
        if (!eat('"'))
            return false;
        const char* p = p_;
        while (p != end_ && *p != '"')
            ++p;
        if (p == end_)
            return false;
        k = std::string_view(p_, std::size_t(p - p_));
        p_ = p + 1;
        return eat(':');
    }

    // An unsigned integer. Where the digits end, so does the number: the caller declines at
    // a 21st digit, at the "1" of "01", at a fraction's "." or an exponent's "e".
    bool number(std::uint64_t& out) {
        skip_space();
        const char* p = p_;
        const auto digit = [this](const char* at) {
            return at != end_ && unsigned(*at - '0') < 10;
        };
        if (!digit(p))
            return false;
        std::uint64_t n = 0;
        if (*p == '0') {
            ++p;
        } else {
            // Up to 19 digits cannot overflow; a 20th can.
            const char* const last = end_ - p > 19 ? p + 19 : end_;
            for (; p != last && unsigned(*p - '0') < 10; ++p)
                n = n * 10 + unsigned(*p - '0');
            if (digit(p)) {
                const unsigned d = unsigned(*p++ - '0');
                if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
                    return false;
                n = n * 10 + d;
            }
        }
        p_ = p;
        out = n;
        return true;
    }

    const char* p_;
    const char* const end_;
};

} // namespace

bool scan_kv_entries(std::string_view body, std::vector<kv_entry>& out) {
    const std::size_t size = out.size();
    scanner s(body);
    if (s.list(out, &scanner::entry) && s.at_end())
        return true;
    out.erase(out.begin() + std::ptrdiff_t(size), out.end());
    return false;
}

bool scan_txn_reply(std::string_view body, txn_result& out) {
    const std::size_t results_size = out.results.size();
    const std::size_t errors_size = out.errors.size();
    scanner s(body);
    if (s.txn(out) && s.at_end())
        return true;
    out.results.erase(out.results.begin() + std::ptrdiff_t(results_size), out.results.end());
    out.errors.erase(out.errors.begin() + std::ptrdiff_t(errors_size), out.errors.end());
    return false;
}

} // namespace conclave::codec
