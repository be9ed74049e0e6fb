#include "codec/word_scan.hpp"
#include "dev/gojson.hpp"
#include "dev/goutil.hpp"

#include <boost/json/value.hpp>

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace conclave::dev::detail::gojson {

namespace {

// ---- a port of encoding/json's scanner state machine -----------------------------------

enum scan_code {
    scan_continue,
    scan_begin_literal,
    scan_begin_object,
    scan_object_key,
    scan_object_value,
    scan_end_object,
    scan_begin_array,
    scan_array_value,
    scan_end_array,
    scan_skip_space,
    scan_end,
    scan_error,
};

enum class st {
    begin_value_or_empty,
    begin_value,
    begin_string_or_empty,
    begin_string,
    end_value,
    end_top,
    in_string,
    in_string_esc,
    esc_u,
    esc_u1,
    esc_u12,
    esc_u123,
    neg,
    one,
    zero,
    dot,
    dot0,
    e,
    esign,
    e0,
    t,
    tr,
    tru,
    f,
    fa,
    fal,
    fals,
    n,
    nu,
    nul,
    error,
};

enum class ps { object_key, object_value, array_value };

constexpr std::size_t max_depth = 10000;

bool is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}
bool is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}
bool is_hex(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

class scanner {
public:
    std::string err;
    bool end_top = false;

    /// Inside a string literal, where every byte but '"', '\\' and control characters
    /// only continues (step() returns scan_continue and keeps the state).
    bool in_string() const { return state_ == st::in_string; }

    int step(unsigned char c) {
        switch (state_) {
        case st::begin_value_or_empty:
            if (is_space(c))
                return scan_skip_space;
            if (c == ']')
                return end_value(c);
            return begin_value(c);
        case st::begin_value:
            return begin_value(c);
        case st::begin_string_or_empty:
            if (is_space(c))
                return scan_skip_space;
            if (c == '}') {
                stack_.back() = ps::object_value;
                return end_value(c);
            }
            return begin_string(c);
        case st::begin_string:
            return begin_string(c);
        case st::end_value:
            return end_value(c);
        case st::end_top:
            return end_top_step(c);
        case st::in_string:
            if (c == '"') {
                state_ = st::end_value;
                return scan_continue;
            }
            if (c == '\\') {
                state_ = st::in_string_esc;
                return scan_continue;
            }
            if (c < 0x20)
                return fail(c, "in string literal");
            return scan_continue;
        case st::in_string_esc:
            switch (c) {
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
            case '\\':
            case '/':
            case '"':
                state_ = st::in_string;
                return scan_continue;
            case 'u':
                state_ = st::esc_u;
                return scan_continue;
            default:
                return fail(c, "in string escape code");
            }
        case st::esc_u:
        case st::esc_u1:
        case st::esc_u12:
        case st::esc_u123:
            if (!is_hex(c))
                return fail(c, "in \\u hexadecimal character escape");
            state_ = state_ == st::esc_u     ? st::esc_u1
                     : state_ == st::esc_u1  ? st::esc_u12
                     : state_ == st::esc_u12 ? st::esc_u123
                                             : st::in_string;
            return scan_continue;
        case st::neg:
            if (c == '0') {
                state_ = st::zero;
                return scan_continue;
            }
            if (c >= '1' && c <= '9') {
                state_ = st::one;
                return scan_continue;
            }
            return fail(c, "in numeric literal");
        case st::one:
            if (is_digit(c))
                return scan_continue;
            return zero(c);
        case st::zero:
            return zero(c);
        case st::dot:
            if (is_digit(c)) {
                state_ = st::dot0;
                return scan_continue;
            }
            return fail(c, "after decimal point in numeric literal");
        case st::dot0:
            if (is_digit(c))
                return scan_continue;
            if (c == 'e' || c == 'E') {
                state_ = st::e;
                return scan_continue;
            }
            return end_value(c);
        case st::e:
            if (c == '+' || c == '-') {
                state_ = st::esign;
                return scan_continue;
            }
            return esign(c);
        case st::esign:
            return esign(c);
        case st::e0:
            if (is_digit(c))
                return scan_continue;
            return end_value(c);
        case st::t:
            return literal(c, 'r', st::tr, "in literal true (expecting 'r')");
        case st::tr:
            return literal(c, 'u', st::tru, "in literal true (expecting 'u')");
        case st::tru:
            return literal(c, 'e', st::end_value, "in literal true (expecting 'e')");
        case st::f:
            return literal(c, 'a', st::fa, "in literal false (expecting 'a')");
        case st::fa:
            return literal(c, 'l', st::fal, "in literal false (expecting 'l')");
        case st::fal:
            return literal(c, 's', st::fals, "in literal false (expecting 's')");
        case st::fals:
            return literal(c, 'e', st::end_value, "in literal false (expecting 'e')");
        case st::n:
            return literal(c, 'u', st::nu, "in literal null (expecting 'u')");
        case st::nu:
            return literal(c, 'l', st::nul, "in literal null (expecting 'l')");
        case st::nul:
            return literal(c, 'l', st::end_value, "in literal null (expecting 'l')");
        case st::error:
            return scan_error;
        }
        return scan_error;
    }

    int eof() {
        if (!err.empty())
            return scan_error;
        if (end_top)
            return scan_end;
        step(' ');
        if (end_top)
            return scan_end;
        if (err.empty())
            err = "unexpected end of JSON input";
        return scan_error;
    }

private:
    st state_ = st::begin_value;
    std::vector<ps> stack_;

    int fail(unsigned char c, std::string_view context) {
        state_ = st::error;
        err = "invalid character " + go_quote_char(c) + " " + std::string(context);
        return scan_error;
    }

    int push(unsigned char c, ps p, int success) {
        stack_.push_back(p);
        if (stack_.size() <= max_depth)
            return success;
        return fail(c, "exceeded max depth");
    }

    void pop() {
        stack_.pop_back();
        if (stack_.empty()) {
            state_ = st::end_top;
            end_top = true;
        } else {
            state_ = st::end_value;
        }
    }

    int begin_value(unsigned char c) {
        if (is_space(c))
            return scan_skip_space;
        switch (c) {
        case '{':
            state_ = st::begin_string_or_empty;
            return push(c, ps::object_key, scan_begin_object);
        case '[':
            state_ = st::begin_value_or_empty;
            return push(c, ps::array_value, scan_begin_array);
        case '"':
            state_ = st::in_string;
            return scan_begin_literal;
        case '-':
            state_ = st::neg;
            return scan_begin_literal;
        case '0':
            state_ = st::zero;
            return scan_begin_literal;
        case 't':
            state_ = st::t;
            return scan_begin_literal;
        case 'f':
            state_ = st::f;
            return scan_begin_literal;
        case 'n':
            state_ = st::n;
            return scan_begin_literal;
        default:
            break;
        }
        if (c >= '1' && c <= '9') {
            state_ = st::one;
            return scan_begin_literal;
        }
        return fail(c, "looking for beginning of value");
    }

    int begin_string(unsigned char c) {
        if (is_space(c))
            return scan_skip_space;
        if (c == '"') {
            state_ = st::in_string;
            return scan_begin_literal;
        }
        return fail(c, "looking for beginning of object key string");
    }

    int end_value(unsigned char c) {
        if (stack_.empty()) {
            state_ = st::end_top;
            end_top = true;
            return end_top_step(c);
        }
        if (is_space(c)) {
            state_ = st::end_value;
            return scan_skip_space;
        }
        switch (stack_.back()) {
        case ps::object_key:
            if (c == ':') {
                stack_.back() = ps::object_value;
                state_ = st::begin_value;
                return scan_object_key;
            }
            return fail(c, "after object key");
        case ps::object_value:
            if (c == ',') {
                stack_.back() = ps::object_key;
                state_ = st::begin_string;
                return scan_object_value;
            }
            if (c == '}') {
                pop();
                return scan_end_object;
            }
            return fail(c, "after object key:value pair");
        case ps::array_value:
            if (c == ',') {
                state_ = st::begin_value;
                return scan_array_value;
            }
            if (c == ']') {
                pop();
                return scan_end_array;
            }
            return fail(c, "after array element");
        }
        return scan_error;
    }

    int end_top_step(unsigned char c) {
        if (!is_space(c))
            fail(c, "after top-level value"); // reported on the next step, as in Go
        return scan_end;
    }

    int zero(unsigned char c) {
        if (c == '.') {
            state_ = st::dot;
            return scan_continue;
        }
        if (c == 'e' || c == 'E') {
            state_ = st::e;
            return scan_continue;
        }
        return end_value(c);
    }

    int esign(unsigned char c) {
        if (is_digit(c)) {
            state_ = st::e0;
            return scan_continue;
        }
        return fail(c, "in exponent of numeric literal");
    }

    int literal(unsigned char c, char want, st next, std::string_view context) {
        if (c == static_cast<unsigned char>(want)) {
            state_ = next;
            return scan_continue;
        }
        return fail(c, context);
    }
};

// ---- building the tree from validated text ----------------------------------------------

unsigned hex4(std::string_view s, std::size_t i) {
    unsigned v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
        const auto c = static_cast<unsigned char>(s[i + k]);
        v <<= 4;
        if (is_digit(c))
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else
            v |= c - 'A' + 10;
    }
    return v;
}

// Decodes the string literal starting at s[i] == '"'; returns the index after the closing quote.
std::size_t read_string(std::string_view s, std::size_t i, std::string& out) {
    ++i;
    while (s[i] != '"') {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c == '\\') {
            const char e = s[i + 1];
            switch (e) {
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                char32_t r = hex4(s, i + 2);
                i += 6;
                if (r >= 0xD800 && r <= 0xDFFF) {
                    if (r < 0xDC00 && i + 6 <= s.size() && s[i] == '\\' && s[i + 1] == 'u') {
                        const char32_t r2 = hex4(s, i + 2);
                        if (r2 >= 0xDC00 && r2 <= 0xDFFF) {
                            append_utf8(out, 0x10000 + ((r - 0xD800) << 10) + (r2 - 0xDC00));
                            i += 6;
                            continue;
                        }
                    }
                    r = 0xFFFD;
                }
                append_utf8(out, r);
                continue;
            }
            default:
                out += e;
                break;
            }
            i += 2;
            continue;
        }
        if (c < 0x80) {
            // The whole run of ASCII up to the next quote or escape at once.
            std::size_t end = i + 1;
            while (static_cast<unsigned char>(s[end]) < 0x80 && s[end] != '"' && s[end] != '\\')
                ++end;
            out.append(s.data() + i, end - i);
            i = end;
            continue;
        }
        // Copy one valid UTF-8 sequence, or emit U+FFFD for an invalid byte.
        std::size_t width = 0;
        if (c >= 0xC2 && c <= 0xDF)
            width = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            width = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            width = 4;
        bool ok = width != 0 && i + width <= s.size();
        for (std::size_t k = 1; ok && k < width; ++k)
            ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
        if (ok && width == 3) {
            const char32_t r = (c & 0x0F) << 12 | (static_cast<unsigned char>(s[i + 1]) & 0x3F)
                                                      << 6;
            ok = r >= 0x800 && !(r >= 0xD800 && r <= 0xDFFF);
        }
        if (ok && width == 4) {
            const char32_t r = (c & 0x07) << 18 | (static_cast<unsigned char>(s[i + 1]) & 0x3F)
                                                      << 12;
            ok = r >= 0x10000 && r <= 0x10FFFF;
        }
        if (ok) {
            out.append(s.substr(i, width));
            i += width;
        } else {
            append_utf8(out, 0xFFFD);
            ++i;
        }
    }
    return i + 1;
}

value build(std::string_view s) {
    value root;
    struct frame {
        value* v;
        bool want_key;
    };
    std::vector<frame> frames;
    value* slot = &root; // where the next value goes
    std::size_t i = 0;
    const auto place = [&]() -> value* {
        if (frames.empty())
            return slot;
        frame& top = frames.back();
        if (top.v->k == kind::array) {
            top.v->items.emplace_back();
            return &top.v->items.back();
        }
        return &top.v->members.back().second;
    };
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (is_space(c) || c == ',' || c == ':') {
            if (c == ',' && !frames.empty() && frames.back().v->k == kind::object)
                frames.back().want_key = true;
            ++i;
            continue;
        }
        if (c == '}' || c == ']') {
            frames.pop_back();
            ++i;
            if (frames.empty())
                break;
            continue;
        }
        if (!frames.empty() && frames.back().want_key) {
            std::string key;
            i = read_string(s, i, key);
            frames.back().v->members.emplace_back(std::move(key), value{});
            frames.back().want_key = false;
            continue;
        }
        value* v = place();
        if (c == '{' || c == '[') {
            v->k = c == '{' ? kind::object : kind::array;
            // Room for a usual request's containers (a transaction's operations, a KV
            // operation's fields) at once, rather than growing 1, 2, 4, 8 moving values.
            if (c == '{')
                v->members.reserve(6);
            else
                v->items.reserve(4);
            frames.push_back({v, c == '{'});
            ++i;
            continue;
        }
        if (c == '"') {
            v->k = kind::string;
            i = read_string(s, i, v->text);
        } else if (c == 't' || c == 'f') {
            v->k = kind::boolean;
            v->b = c == 't';
            i += c == 't' ? 4 : 5;
        } else if (c == 'n') {
            v->k = kind::null;
            i += 4;
        } else {
            std::size_t j = i;
            while (j < s.size() && (is_digit(static_cast<unsigned char>(s[j])) || s[j] == '-' ||
                                    s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E'))
                ++j;
            v->k = kind::number;
            v->text = std::string(s.substr(i, j - i));
            i = j;
        }
        if (frames.empty())
            break;
    }
    return root;
}

} // namespace

parse_result decode_first(std::string_view input) {
    scanner sc;
    std::size_t end = input.size();
    bool done = false;
    bool non_space = false;
    for (std::size_t i = 0; i < input.size(); ++i) {
        if (sc.in_string()) {
            // Skip a string's plain run without a step() per byte (most of a request
            // body is keys, verbs and values).
            while (i < input.size() && static_cast<unsigned char>(input[i]) >= 0x20 &&
                   input[i] != '"' && input[i] != '\\')
                ++i;
            if (i == input.size())
                break;
        }
        const auto c = static_cast<unsigned char>(input[i]);
        if (!is_space(c))
            non_space = true;
        const int code = sc.step(c);
        if (code == scan_end) {
            end = i;
            done = true;
            break;
        }
        if (code == scan_end_object || code == scan_end_array) {
            if (sc.end_top) {
                end = i + 1;
                done = true;
                break;
            }
        }
        if (code == scan_error)
            return {std::nullopt, sc.err};
    }
    if (!done) {
        if (sc.step(' ') == scan_end) {
            end = input.size();
        } else {
            return {std::nullopt, non_space ? "unexpected EOF" : "EOF"};
        }
    }
    return {build(input.substr(0, end)), {}};
}

parse_result unmarshal(std::string_view input) {
    scanner sc;
    for (const char ch : input)
        if (sc.step(static_cast<unsigned char>(ch)) == scan_error)
            return {std::nullopt, sc.err};
    if (sc.eof() == scan_error)
        return {std::nullopt, sc.err};
    return {build(input), {}};
}

std::string_view describe(const value& v) {
    switch (v.k) {
    case kind::string:
        return "string";
    case kind::number:
        return "number";
    case kind::boolean:
        return "bool";
    case kind::object:
        return "object";
    case kind::array:
        return "array";
    case kind::null:
        break;
    }
    return "null";
}

std::string type_error(std::string_view what, std::string_view struct_name,
                       std::string_view field_path, std::string_view go_type) {
    std::string out = "json: cannot unmarshal ";
    out += what;
    if (!struct_name.empty() || !field_path.empty()) {
        out += " into Go struct field ";
        out += struct_name;
        out += '.';
        out += field_path;
    } else {
        out += " into Go value";
    }
    out += " of type ";
    out += go_type;
    return out;
}

const value* find_field(const value& object, std::string_view name) {
    const value* found = nullptr;
    for (const auto& [key, v] : object.members)
        if (key == name || ascii_iequals(key, name))
            found = &v;
    return found;
}

// ---- writer -------------------------------------------------------------------------------

namespace {

// The ASCII bytes Go's encoder writes as they are (with its HTML-safe escaping of <, >, &),
// as a table: every byte of every string in an answer goes through this test.
constexpr std::array<bool, 256> plain_table = [] {
    std::array<bool, 256> t{};
    for (unsigned b = 0x20; b < 0x80; ++b)
        t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&';
    return t;
}();

bool plain_ascii(unsigned char b) {
    return plain_table[b];
}

// Whether any of the 8 bytes in `w` is not plain: below 0x20, 0x80 and above, '"', '&',
// '<', '>' or '\\'. A byte test without branches: "has a zero byte" is exact for the word
// as a whole (not for which byte), and so is "has a byte below n" for n <= 128. '"' (0x22)
// and '&' (0x26) differ only in bit 2, '<' (0x3c) and '>' (0x3e) only in bit 1: one test
// each pair.
bool any_not_plain(std::uint64_t w) {
    using namespace codec::word;
    return (has_high(w) | has_less(w, 0x20) | has_byte(w | ones * 0x04, 0x26) |
            has_byte(w | ones * 0x02, 0x3e) | has_byte(w, '\\')) != 0;
}

// How many bytes at the start of s are plain: 8 at a time (keys, session IDs and base64
// text rarely need an escape), then one at a time.
std::size_t plain_prefix(std::string_view s) {
    std::size_t i = 0;
#if defined(__SSE2__)
    // 16 bytes at a time: as signed bytes, those below 0x20 and those 0x80 and above are
    // all less than 0x20.
    if (s.size() >= 16) {
        const auto not_plain = [&](std::size_t at) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + at));
            const auto eq = [&](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
            const __m128i bad = _mm_or_si128(
                _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), eq('"')),
                _mm_or_si128(_mm_or_si128(eq('\\'), eq('<')), _mm_or_si128(eq('>'), eq('&'))));
            return unsigned(_mm_movemask_epi8(bad));
        };
        for (; i + 16 <= s.size(); i += 16)
            if (const unsigned m = not_plain(i); m != 0)
                return i + unsigned(__builtin_ctz(m));
        if (not_plain(s.size() - 16) == 0)
            return s.size();
        // The first byte that is not plain is in the tail: found one at a time below.
    }
#endif
    if (s.size() >= 8) {
        for (; i + 8 <= s.size(); i += 8)
            if (any_not_plain(codec::word::load(s.data() + i)))
                break;
        // The last (overlapping) 8 bytes at once rather than byte by byte.
        if (i + 8 > s.size() && !any_not_plain(codec::word::load(s.data() + s.size() - 8)))
            return s.size();
    }
    while (i < s.size() && plain_ascii(static_cast<unsigned char>(s[i])))
        ++i;
    return i;
}

void write_string(std::string& out, std::string_view s) {
    static constexpr const char* hex = "0123456789abcdef";
    // The usual string needs no escape at all: one append with its quotes.
    const std::size_t plain = plain_prefix(s);
    if (plain == s.size()) {
        const std::size_t at = out.size();
        out.resize(at + s.size() + 2);
        char* w = out.data() + at;
        *w = '"';
        if (!s.empty())
            std::memcpy(w + 1, s.data(), s.size());
        w[s.size() + 1] = '"';
        return;
    }
    out += '"';
    out.append(s.data(), plain);
    for (std::size_t i = plain; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            if (plain_ascii(b)) {
                // Copy the whole run of bytes that need no escape at once.
                const std::size_t end = i + plain_prefix(s.substr(i));
                out.append(s.data() + i, end - i);
                i = end;
                continue;
            } else if (b == '"' || b == '\\') {
                out += '\\';
                out += char(b);
            } else if (b == '\n') {
                out += "\\n";
            } else if (b == '\r') {
                out += "\\r";
            } else if (b == '\t') {
                out += "\\t";
            } else {
                out += "\\u00";
                out += hex[b >> 4];
                out += hex[b & 0xF];
            }
            ++i;
            continue;
        }
        // Validate one UTF-8 sequence.
        std::size_t width = 0;
        char32_t r = 0;
        if (b >= 0xC2 && b <= 0xDF) {
            width = 2;
            r = b & 0x1F;
        } else if (b >= 0xE0 && b <= 0xEF) {
            width = 3;
            r = b & 0x0F;
        } else if (b >= 0xF0 && b <= 0xF4) {
            width = 4;
            r = b & 0x07;
        }
        bool ok = width != 0 && i + width <= s.size();
        for (std::size_t k = 1; ok && k < width; ++k) {
            const auto cb = static_cast<unsigned char>(s[i + k]);
            ok = (cb & 0xC0) == 0x80;
            r = (r << 6) | (cb & 0x3F);
        }
        if (ok && width == 3)
            ok = r >= 0x800 && !(r >= 0xD800 && r <= 0xDFFF);
        if (ok && width == 4)
            ok = r >= 0x10000 && r <= 0x10FFFF;
        if (!ok) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        if (r == 0x2028 || r == 0x2029) {
            out += r == 0x2028 ? "\\u2028" : "\\u2029";
        } else {
            out.append(s.substr(i, width));
        }
        i += width;
    }
    out += '"';
}

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
        // Go writes e-07 as e-7.
        const auto e = s.find('e');
        if (e != std::string::npos && e + 3 < s.size() + 1 && s[e + 2] == '0' && s.size() > e + 3)
            s.erase(e + 2, 1);
    }
    out += s;
}

void write_value(std::string& out, const boost::json::value& v, int depth, bool indent) {
    const auto newline = [&](int d) {
        if (!indent)
            return;
        out += '\n';
        out.append(std::size_t(d) * 4, ' ');
    };
    switch (v.kind()) {
    case boost::json::kind::null:
        out += "null";
        break;
    case boost::json::kind::bool_:
        out += v.get_bool() ? "true" : "false";
        break;
    case boost::json::kind::int64:
        out += std::to_string(v.get_int64());
        break;
    case boost::json::kind::uint64:
        out += std::to_string(v.get_uint64());
        break;
    case boost::json::kind::double_:
        write_double(out, v.get_double());
        break;
    case boost::json::kind::string:
        write_string(out, std::string_view(v.get_string().data(), v.get_string().size()));
        break;
    case boost::json::kind::array: {
        const auto& a = v.get_array();
        if (a.empty()) {
            out += "[]";
            break;
        }
        out += '[';
        bool first = true;
        for (const auto& item : a) {
            if (!first)
                out += ',';
            first = false;
            newline(depth + 1);
            write_value(out, item, depth + 1, indent);
        }
        newline(depth);
        out += ']';
        break;
    }
    case boost::json::kind::object: {
        const auto& o = v.get_object();
        if (o.empty()) {
            out += "{}";
            break;
        }
        out += '{';
        bool first = true;
        for (const auto& kv : o) {
            if (!first)
                out += ',';
            first = false;
            newline(depth + 1);
            write_string(out, std::string_view(kv.key().data(), kv.key().size()));
            out += indent ? ": " : ":";
            write_value(out, kv.value(), depth + 1, indent);
        }
        newline(depth);
        out += '}';
        break;
    }
    }
}

} // namespace

bool is_plain(std::string_view s) {
    return plain_prefix(s) == s.size();
}

std::string marshal_indent(const boost::json::value& v) {
    std::string out;
    out.reserve(1024); // a usual answer (a few KV entries) without regrowing
    write_value(out, v, 0, true);
    out += '\n';
    return out;
}

std::string marshal(const boost::json::value& v) {
    std::string out;
    write_value(out, v, 0, false);
    return out;
}

// ---- indent_writer ------------------------------------------------------------------------

void indent_writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (depth_ == 0)
        return;
    // An array element.
    const std::uint64_t bit = std::uint64_t(1) << depth_;
    if (non_empty_ & bit)
        out_ += ',';
    non_empty_ |= bit;
    out_ += '\n';
    out_.append(std::size_t(depth_) * 4, ' ');
}

void indent_writer::open(char c) {
    before_value();
    out_ += c;
    ++depth_;
    // 64 levels: far deeper than any answer the agent writes.
    assert(depth_ < 64);
    non_empty_ &= ~(std::uint64_t(1) << depth_);
}

void indent_writer::close(char c) {
    const std::uint64_t bit = std::uint64_t(1) << depth_;
    const bool had_items = (non_empty_ & bit) != 0;
    non_empty_ &= ~bit;
    --depth_;
    if (had_items) {
        out_ += '\n';
        out_.append(std::size_t(depth_) * 4, ' ');
    }
    out_ += c;
}

void indent_writer::begin_object() {
    open('{');
}

void indent_writer::end_object() {
    close('}');
}

void indent_writer::begin_array() {
    open('[');
}

void indent_writer::end_array() {
    close(']');
}

void indent_writer::key(std::string_view k) {
    const std::uint64_t bit = std::uint64_t(1) << depth_;
    const bool comma = (non_empty_ & bit) != 0;
    non_empty_ |= bit;
    after_key_ = true;
    const std::size_t indent = std::size_t(depth_) * 4;
    if (plain_prefix(k) == k.size()) {
        // A field name: ",\n", the indent, the quoted name and ": " in one go (answers
        // are mostly keys).
        const std::size_t at = out_.size();
        out_.resize(at + (comma ? 1 : 0) + 1 + indent + k.size() + 4);
        char* w = out_.data() + at;
        if (comma)
            *w++ = ',';
        *w++ = '\n';
        std::memset(w, ' ', indent);
        w += indent;
        *w++ = '"';
        if (!k.empty())
            std::memcpy(w, k.data(), k.size());
        w += k.size();
        std::memcpy(w, "\": ", 3);
        return;
    }
    if (comma)
        out_ += ',';
    out_ += '\n';
    out_.append(indent, ' ');
    write_string(out_, k);
    out_ += ": ";
}

void indent_writer::string(std::string_view s) {
    before_value();
    write_string(out_, s);
}

namespace {

std::size_t base64_size(std::size_t n) {
    return 4 * ((n + 2) / 3);
}

// Writes base64_size(bytes.size()) characters at w; returns the end.
char* put_base64(char* w, std::string_view bytes) {
    static constexpr const char* alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t n = bytes.size();
    for (; n >= 3; n -= 3, p += 3) {
        const unsigned v = unsigned(p[0]) << 16 | unsigned(p[1]) << 8 | p[2];
        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = alphabet[(v >> 6) & 63];
        *w++ = alphabet[v & 63];
    }
    if (n > 0) {
        const unsigned v = unsigned(p[0]) << 16 | (n == 2 ? unsigned(p[1]) << 8 : 0u);
        *w++ = alphabet[v >> 18];
        *w++ = alphabet[(v >> 12) & 63];
        *w++ = n == 2 ? alphabet[(v >> 6) & 63] : '=';
        *w++ = '=';
    }
    return w;
}

char* put(char* w, std::string_view s) {
    if (!s.empty())
        std::memcpy(w, s.data(), s.size());
    return w + s.size();
}

} // namespace

void indent_writer::base64(std::string_view bytes) {
    before_value();
    const std::size_t start = out_.size();
    out_.resize(start + base64_size(bytes.size()) + 2);
    char* w = out_.data() + start;
    *w++ = '"';
    w = put_base64(w, bytes);
    *w = '"';
}

void indent_writer::object(std::span<const member> members) {
    using type = member::type;
    constexpr std::size_t max_members = 12;
    bool fast = members.size() <= max_members;
    for (std::size_t i = 0; fast && i < members.size(); ++i) {
        const member& m = members[i];
        assert(plain_prefix(m.key) == m.key.size());
        fast = m.t != type::string || plain_prefix(m.text) == m.text.size();
    }
    if (!fast) {
        begin_object();
        for (const member& m : members) {
            key(m.key);
            switch (m.t) {
            case type::number:
                number(m.n);
                break;
            case type::string:
                string(m.text);
                break;
            case type::base64:
                base64(m.text);
                break;
            case type::null:
                null();
                break;
            }
        }
        end_object();
        return;
    }
    before_value();
    if (members.empty()) {
        out_ += "{}";
        return;
    }
    // What begin_object(), key() and end_object() write: members one level deeper than the
    // object, the closing brace on a line of its own at the object's level.
    const std::size_t indent = std::size_t(depth_) * 4;
    const std::size_t inner = indent + 4;
    std::array<std::array<char, 24>, max_members> digits;
    std::array<std::uint8_t, max_members> digit_count;
    std::size_t size = 1 + indent + 2; // '{', then "\n", the indent and '}'
    for (std::size_t i = 0; i < members.size(); ++i) {
        const member& m = members[i];
        size += (i > 0 ? 1 : 0) + 1 + inner + m.key.size() + 4;
        switch (m.t) {
        case type::number: {
            const auto end =
                std::to_chars(digits[i].data(), digits[i].data() + digits[i].size(), m.n).ptr;
            digit_count[i] = std::uint8_t(end - digits[i].data());
            size += digit_count[i];
            break;
        }
        case type::string:
            size += m.text.size() + 2;
            break;
        case type::base64:
            size += base64_size(m.text.size()) + 2;
            break;
        case type::null:
            size += 4;
            break;
        }
    }
    const std::size_t at = out_.size();
    out_.resize(at + size);
    char* w = out_.data() + at;
    *w++ = '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
        const member& m = members[i];
        if (i > 0)
            *w++ = ',';
        *w++ = '\n';
        std::memset(w, ' ', inner);
        w += inner;
        *w++ = '"';
        w = put(w, m.key);
        std::memcpy(w, "\": ", 3);
        w += 3;
        switch (m.t) {
        case type::number:
            w = put(w, std::string_view(digits[i].data(), digit_count[i]));
            break;
        case type::string:
            *w++ = '"';
            w = put(w, m.text);
            *w++ = '"';
            break;
        case type::base64:
            *w++ = '"';
            w = put_base64(w, m.text);
            *w++ = '"';
            break;
        case type::null:
            std::memcpy(w, "null", 4);
            w += 4;
            break;
        }
    }
    *w++ = '\n';
    std::memset(w, ' ', indent);
    w += indent;
    *w = '}';
}

void indent_writer::number(std::uint64_t n) {
    before_value();
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, n);
    // (pointer, length): the iterator-pair append goes through the general replace.
    out_.append(buf, std::size_t(res.ptr - buf));
}

void indent_writer::number(std::int64_t n) {
    before_value();
    char buf[24];
    const auto res = std::to_chars(buf, buf + sizeof buf, n);
    // (pointer, length): the iterator-pair append goes through the general replace.
    out_.append(buf, std::size_t(res.ptr - buf));
}

void indent_writer::boolean(bool b) {
    before_value();
    out_ += b ? "true" : "false";
}

void indent_writer::null() {
    before_value();
    out_ += "null";
}

void indent_writer::finish() {
    out_ += '\n';
}

} // namespace conclave::dev::detail::gojson
