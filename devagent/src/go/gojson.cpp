// SPDX-License-Identifier: BSL-1.0
#include "codec/go/json_marshal.hpp"
#include "codec/go/json_text.hpp"
#include "codec/go/utf8.hpp"
#include "devagent/src/go/gojson.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/value.hpp>

#include <cctype>
#include <functional>

namespace conclave::dev::detail::gojson {

namespace {

namespace json = boost::json;

// Nesting allowed in a request. encoding/json allows 10,000 levels; Boost.JSON's parser
// recurses once per level (about 1 KB of stack each in a sanitized build), and no request of
// Consul's API nests more than a few. Deeper bodies get Go's "exceeded max depth" sooner
// than Consul would send it (docs/dev-agent.md).
constexpr std::size_t max_depth = 1000;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Go replaces each byte of invalid UTF-8 in a decoded string with U+FFFD, where Boost.JSON
// (allow_invalid_utf8) passes it through.
void go_utf8(std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80)
        ++i;
    if (i == s.size())
        return;
    std::string out(s, 0, i);
    while (i < s.size()) {
        const std::size_t w = codec::go::utf8_width(s, i);
        if (w == 0) {
            out += "\xEF\xBF\xBD";
            ++i;
        } else {
            out.append(s, i, w);
            i += w;
        }
    }
    s = std::move(out);
}

// Builds the tree from Boost.JSON's parse events. The input is parsed in one write, so
// number events carry the whole literal.
class tree_builder {
public:
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    value root;

    // Number text is taken from `original` when the parsed text is a patched copy of it.
    tree_builder(std::string_view original, std::string_view parsed)
        : original_(original)
        , parsed_(parsed) {}

    bool on_document_begin(json::error_code&) { return true; }
    bool on_document_end(json::error_code&) { return true; }
    bool on_object_begin(json::error_code&) { return open(kind::object); }
    bool on_object_end(std::size_t, json::error_code&) { return close(); }
    bool on_array_begin(json::error_code&) { return open(kind::array); }
    bool on_array_end(std::size_t, json::error_code&) { return close(); }
    bool on_key_part(std::string_view s, std::size_t, json::error_code&) {
        part_.append(s);
        return true;
    }
    bool on_key(std::string_view s, std::size_t, json::error_code&) {
        part_.append(s);
        go_utf8(part_);
        open_.back()->members.emplace_back(std::move(part_), value{});
        part_.clear();
        return true;
    }
    bool on_string_part(std::string_view s, std::size_t, json::error_code&) {
        part_.append(s);
        return true;
    }
    bool on_string(std::string_view s, std::size_t, json::error_code&) {
        part_.append(s);
        value& v = slot();
        v.k = kind::string;
        go_utf8(part_);
        v.text = std::move(part_);
        part_.clear();
        return true;
    }
    bool on_number_part(std::string_view s, json::error_code&) {
        part_.append(s);
        return true;
    }
    bool on_int64(std::int64_t, std::string_view s, json::error_code&) { return number(s); }
    bool on_uint64(std::uint64_t, std::string_view s, json::error_code&) { return number(s); }
    bool on_double(double, std::string_view s, json::error_code&) { return number(s); }
    bool on_bool(bool b, json::error_code&) {
        value& v = slot();
        v.k = kind::boolean;
        v.b = b;
        return true;
    }
    bool on_null(json::error_code&) {
        slot();
        return true;
    }
    bool on_comment_part(std::string_view, json::error_code&) { return true; }
    bool on_comment(std::string_view, json::error_code&) { return true; }

private:
    // Where the next value goes. Only the last element of a container can be open, so the
    // pointers in open_ stay valid while their parents grow.
    value& slot() {
        if (open_.empty())
            return root;
        value& top = *open_.back();
        if (top.k == kind::array)
            return top.items.emplace_back();
        return top.members.back().second;
    }
    bool open(kind k) {
        value& v = slot();
        v.k = k;
        // Room for a usual request's containers at once (a transaction's operations, a KV
        // operation's fields), rather than moving values on growing 1, 2, 4, 8.
        if (k == kind::object)
            v.members.reserve(6);
        else
            v.items.reserve(4);
        open_.push_back(&v);
        return true;
    }
    bool close() {
        open_.pop_back();
        return true;
    }
    bool number(std::string_view s) {
        value& v = slot();
        v.k = kind::number;
        const std::less_equal<const char*> not_after;
        if (part_.empty() && not_after(parsed_.data(), s.data()) &&
            not_after(s.data() + s.size(), parsed_.data() + parsed_.size()))
            s = original_.substr(std::size_t(s.data() - parsed_.data()), s.size());
        part_.append(s);
        v.text = std::move(part_);
        part_.clear();
        return true;
    }

    std::string_view original_;
    std::string_view parsed_;
    std::vector<value*> open_;
    std::string part_;
};

// Where `at` is in a text Boost.JSON accepted up to it: a pass that only follows strings
// and brackets is enough.
struct position {
    bool non_space = false;
    bool in_string = false;
    std::size_t escape = std::string_view::npos; // the backslash of the string's last escape
    std::vector<char> open;                      // '{' or '['
    char last = 0;         // the last byte outside strings, or '"' for a closed string
    bool last_key = false; // that string was an object key
    std::size_t bad_hex = std::string_view::npos; // a \u escape's first byte that is not hex

    position(std::string_view in, std::size_t at) {
        for (std::size_t i = 0; i < at; ++i) {
            const char c = in[i];
            if (in_string) {
                if (c == '\\') {
                    escape = i++;
                    // Boost.JSON may report a bad \u digit ('"', '\\') further on.
                    for (std::size_t k = 2; i < at && in[i] == 'u' && k < 6; ++k) {
                        if (escape + k >= in.size() ||
                            !std::isxdigit(static_cast<unsigned char>(in[escape + k]))) {
                            bad_hex = escape + k;
                            return;
                        }
                    }
                } else if (c == '"') {
                    in_string = false;
                    last_key = !open.empty() && open.back() == '{' && (last == '{' || last == ',');
                    last = '"';
                }
                continue;
            }
            if (is_space(c))
                continue;
            non_space = true;
            if (c == '"') {
                in_string = true;
                escape = std::string_view::npos;
                continue;
            }
            if (c == '{' || c == '[')
                open.push_back(c);
            else if (c == '}' || c == ']')
                open.pop_back();
            last = c;
        }
    }
};

bool is_letter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Go's text for the syntax error Boost.JSON found at `at`: which of encoding/json's scanner
// states would have refused the byte there.
std::string syntax_error(std::string_view in, std::size_t at, bool too_deep) {
    const std::size_t p_at = at;
    position p(in, at);
    if (at >= in.size())
        return p.non_space ? "unexpected EOF" : "EOF";
    const auto invalid = [&](std::size_t pos, std::string_view context) {
        return "invalid character " +
               codec::go::json_quote_char(static_cast<unsigned char>(in[pos])) + " " +
               std::string(context);
    };
    if (too_deep)
        return invalid(at, "exceeded max depth");
    if (p.bad_hex != std::string_view::npos)
        return p.bad_hex == in.size() ? "unexpected EOF"
                                      : invalid(p.bad_hex, "in \\u hexadecimal character escape");
    if (p.in_string) {
        const std::size_t e = p.escape;
        if (e != std::string_view::npos && in[e + 1] == 'u' && at <= e + 5) {
            // Boost.JSON may stop anywhere in the four digits; Go at the first that is not one.
            std::size_t bad = e + 2;
            while (bad < in.size() && bad < e + 6 &&
                   std::isxdigit(static_cast<unsigned char>(in[bad])))
                ++bad;
            return bad == in.size() ? "unexpected EOF"
                                    : invalid(bad, "in \\u hexadecimal character escape");
        }
        if (e != std::string_view::npos && at == e + 1)
            return invalid(at, "in string escape code");
        return invalid(at, "in string literal");
    }
    // Boost.JSON may stop at the start of a word or inside it; Go at the first wrong byte.
    while (at > 0 && is_letter(in[at - 1]) && !(in[at - 1] == 'e' || in[at - 1] == 'E'))
        --at;
    if (at > 0 && (in[at - 1] == 'e' || in[at - 1] == 'E') && is_letter(in[at])) {
        std::size_t w = at - 1;
        while (w > 0 && is_letter(in[w - 1]))
            --w;
        if (w == 0 || !(in[w - 1] >= '0' && in[w - 1] <= '9'))
            at = w; // a word that has an 'e' ("true", "false"), not an exponent
    }
    if (at != p_at)
        p = position(in, at);
    // Inside a number, by its last byte (after a digit the number has ended).
    const char prev = at > 0 ? in[at - 1] : 0;
    const bool after_e = at > 1 && (in[at - 2] == 'e' || in[at - 2] == 'E');
    if (prev == '.')
        return invalid(at, "after decimal point in numeric literal");
    if (prev == '-' && !after_e)
        return invalid(at, "in numeric literal");
    if (prev == '-' || prev == '+' ||
        ((prev == 'e' || prev == 'E') && at > 1 && in[at - 2] >= '0' && in[at - 2] <= '9'))
        return invalid(at, "in exponent of numeric literal");
    const bool in_array = !p.open.empty() && p.open.back() == '[';
    const bool value_starts =
        p.open.empty() || (in_array ? p.last == '[' || p.last == ',' : p.last == ':');
    for (const std::string_view word : {"true", "false", "null"}) {
        if (!value_starts || in[at] != word[0])
            continue;
        std::size_t k = 1;
        while (k < word.size() && at + k < in.size() && in[at + k] == word[k])
            ++k;
        if (at + k == in.size())
            return "unexpected EOF";
        if (k < word.size())
            return invalid(at + k,
                           "in literal " + std::string(word) + " (expecting '" + word[k] + "')");
        // The whole word: the byte after it is refused, as after any value.
        at += k;
        p = position(in, at);
        break;
    }
    if (p.open.empty())
        return invalid(at, "looking for beginning of value");
    if (p.open.back() == '[')
        return invalid(at, p.last == '[' || p.last == ',' ? "looking for beginning of value"
                                                          : "after array element");
    if (p.last == '{' || p.last == ',')
        return invalid(at, "looking for beginning of object key string");
    if (p.last == ':')
        return invalid(at, "looking for beginning of value");
    return invalid(at, p.last == '"' && p.last_key ? "after object key"
                                                   : "after object key:value pair");
}

// Go decodes a lone UTF-16 surrogate escape as U+FFFD, where Boost.JSON refuses it: the
// escape is replaced by \ufffd in `text`, six bytes for six. False when there is none.
bool replace_lone_surrogates(std::string& text) {
    const auto escape_at = [&](std::size_t i) -> int {
        if (i + 6 > text.size() || text[i] != '\\' || text[i + 1] != 'u')
            return -1;
        int v = 0;
        for (std::size_t k = 2; k < 6; ++k) {
            const auto c = static_cast<unsigned char>(text[i + k]);
            if (!std::isxdigit(c))
                return -1;
            v = v * 16 + (c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        return v;
    };
    bool replaced = false;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (!in_string) {
            in_string = text[i] == '"';
            continue;
        }
        if (text[i] == '"') {
            in_string = false;
        } else if (text[i] == '\\') {
            const int v = escape_at(i);
            const int next = escape_at(i + 6);
            if (v >= 0xD800 && v <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF) {
                i += 11; // a pair
            } else if (v >= 0xD800 && v <= 0xDFFF) {
                text.replace(i, 6, "\\ufffd");
                replaced = true;
                i += 5;
            } else {
                ++i;
            }
        }
    }
    return replaced;
}

// Boost.JSON refuses an exponent past the range it computes with, which Go reads as any
// number literal: the exponent's digits around `at` become zeros in `text`. False when
// there was nothing to change.
bool zero_exponent(std::string& text, std::size_t at) {
    while (at > 0 && text[at - 1] >= '0' && text[at - 1] <= '9')
        --at;
    bool changed = false;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
        changed = changed || text[at] != '0';
        text[at] = '0';
    }
    return changed;
}

} // namespace

namespace {

parse_result parse(std::string_view input) {
    json::parse_options opt;
    opt.max_depth = max_depth;
    opt.allow_invalid_utf8 = true;
    // What Boost.JSON refuses and Go reads is rewritten in a copy, in place, so that offsets
    // and number texts still refer to the input.
    std::string patched;
    std::string_view text = input;
    bool surrogates_done = false;
    for (;;) {
        json::basic_parser<tree_builder> p(opt, input, text);
        json::error_code ec;
        const std::size_t n = p.write_some(false, text.data(), text.size(), ec);
        if (!ec)
            return {std::move(p.handler().root), {}};
        if (text.data() != patched.data())
            patched.assign(text);
        if (ec == json::error::exponent_overflow && zero_exponent(patched, n)) {
            text = patched;
            continue;
        }
        if (!surrogates_done && ec != json::error::incomplete && ec != json::error::too_deep) {
            surrogates_done = true;
            if (replace_lone_surrogates(patched)) {
                text = patched;
                continue;
            }
        }
        return {std::nullopt, syntax_error(input, ec == json::error::incomplete ? input.size() : n,
                                           ec == json::error::too_deep)};
    }
}

} // namespace

parse_result decode_first(std::string_view input) {
    return parse(input);
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
        if (key == name || boost::beast::iequals(key, name))
            found = &v;
    return found;
}

std::string answer_body(const json::value& v) {
    std::string out;
    out.reserve(1024); // a usual answer (a few KV entries) without regrowing
    codec::go::append_marshal(out, v, "    ");
    out += '\n';
    return out;
}

} // namespace conclave::dev::detail::gojson
