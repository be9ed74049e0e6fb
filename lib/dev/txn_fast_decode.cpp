// The fast paths of /v1/txn's body decoding. First compact_scanner (below) reads the
// compact text that clients write byte by byte; then Boost.JSON's SAX parser straight into
// decoded_op, for the shapes that conclave's client (codec/txn_body.cpp) and Go's api.Txn
// send. It accepts a body only when the general path (gojson::decode_first + decode_ops)
// gives the very same operations and no error, so it declines anything unusual:
//   - a backslash anywhere: Go decodes escapes its own way (lone surrogates become U+FFFD);
//     without escapes, and with the valid UTF-8 Boost.JSON insists on, a string's bytes are
//     its value in both;
//   - anything Boost.JSON refuses (syntax, invalid UTF-8, nesting deeper than 32): Go's
//     message comes from the general path;
//   - a top level that is not a non-empty array; an element that is not an object whose
//     keys are "KV" (an object) and at most "Node", "Service", "Check" that are null, each
//     spelled exactly and once (Go matches keys case-insensitively, and treats a null KV and
//     the other families its own ways);
//   - a KV key other than Verb, Key, Value, Flags, Index, Session spelled exactly, a key
//     given twice, a value of another type than Go's field (strings; for Flags and Index an
//     integer literal of digits only, so no sign, fraction or exponent, up to 2^64-1), a
//     Value that is not valid padded base64. A null KV field is taken: Go leaves the field
//     as it is, as decode_kv does (api.KVTxnOp marshals a nil Value as null).
// Bytes after the array's closing bracket are ignored, as json.Decoder ignores them:
// write_some stops there.
#include "dev/goutil.hpp"
#include "dev/txn_fast_decode.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <bit>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace conclave::dev::detail {

namespace {

namespace json = boost::json;
using error_code = json::error_code;

// The KV fields read: one bit each in the set of those seen.
enum class field : std::uint8_t { verb, key, value, session, flags, index, none };

field field_of(std::string_view k) {
    switch (k.size()) {
    case 3:
        return k == "Key" ? field::key : field::none;
    case 4:
        return k == "Verb" ? field::verb : field::none;
    case 5:
        if (k == "Value")
            return field::value;
        if (k == "Flags")
            return field::flags;
        return k == "Index" ? field::index : field::none;
    case 7:
        return k == "Session" ? field::session : field::none;
    default:
        return field::none;
    }
}

// The keys of an element (api.TxnOp).
enum class family : std::uint8_t { kv, node, service, check, none };

family family_of(std::string_view k) {
    if (k == "KV")
        return family::kv;
    if (k == "Node")
        return family::node;
    if (k == "Service")
        return family::service;
    return k == "Check" ? family::check : family::none;
}

template <class E>
unsigned bit(E e) {
    return 1u << unsigned(e);
}

class fast_handler {
public:
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    fast_handler() { ops_.reserve(4); }

    /// After the parse: the top-level array closed with every element accepted.
    bool done() const { return done_; }
    std::vector<decoded_op>& ops() { return ops_; }

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }

    bool on_array_begin(error_code& ec) {
        if (depth_ != 0)
            return decline(ec);
        depth_ = 1;
        return true;
    }

    bool on_array_end(std::size_t n, error_code& ec) {
        // Only the top-level array gets here: nested ones are declined as they begin.
        if (n == 0)
            return decline(ec);
        depth_ = 0;
        done_ = true;
        return true;
    }

    bool on_object_begin(error_code& ec) {
        if (depth_ == 1) { // an element: {"KV":{...}}
            decoded_op& d = ops_.emplace_back();
            d.present = true;
            op_ = &d.op;
            families_ = 0;
            depth_ = 2;
            return true;
        }
        if (depth_ == 2 && expect_ == family::kv) { // the KV object
            expect_ = family::none;
            seen_ = 0;
            depth_ = 3;
            return true;
        }
        return decline(ec);
    }

    bool on_object_end(std::size_t, error_code& ec) {
        if (depth_ == 3) {
            depth_ = 2;
            return true;
        }
        // depth 2: the element, which must have had its KV.
        if ((families_ & bit(family::kv)) == 0)
            return decline(ec);
        depth_ = 1;
        return true;
    }

    // Keys and strings arrive whole, or in pieces (then gathered).
    bool on_key_part(std::string_view s, std::size_t, error_code&) {
        buf_.append(s);
        return true;
    }

    bool on_key(std::string_view s, std::size_t, error_code& ec) {
        if (!buf_.empty()) {
            buf_.append(s);
            s = buf_;
        }
        const bool ok = key(s);
        buf_.clear();
        return ok || decline(ec);
    }

    bool on_string_part(std::string_view s, std::size_t, error_code&) {
        buf_.append(s);
        return true;
    }

    bool on_string(std::string_view s, std::size_t, error_code& ec) {
        if (!buf_.empty()) {
            buf_.append(s);
            s = buf_;
        }
        const bool ok = string(s);
        buf_.clear();
        return ok || decline(ec);
    }

    // A number's text comes whole with its value unless the input ended inside it, which
    // a complete array's numbers never do: a piece is declined.
    bool on_number_part(std::string_view, error_code& ec) { return decline(ec); }
    bool on_int64(std::int64_t i, std::string_view text, error_code& ec) {
        return (i >= 0 && number(std::uint64_t(i), text)) || decline(ec);
    }
    bool on_uint64(std::uint64_t u, std::string_view text, error_code& ec) {
        return number(u, text) || decline(ec);
    }
    bool on_double(double, std::string_view, error_code& ec) { return decline(ec); }
    bool on_bool(bool, error_code& ec) { return decline(ec); }
    // A null KV field leaves the field as it is; a null Node, Service or Check is nothing.
    bool on_null(error_code& ec) {
        if (in_kv())
            return true;
        if (depth_ != 2 || expect_ == family::none || expect_ == family::kv)
            return decline(ec);
        expect_ = family::none;
        return true;
    }
    bool on_comment_part(std::string_view, error_code& ec) { return decline(ec); }
    bool on_comment(std::string_view, error_code& ec) { return decline(ec); }

private:
    static bool decline(error_code& ec) {
        ec = json::error::syntax;
        return false;
    }

    bool key(std::string_view k) {
        if (depth_ == 2) { // a key of the element
            const family f = family_of(k);
            if (f == family::none || (families_ & bit(f)) != 0)
                return false;
            families_ |= bit(f);
            expect_ = f;
            return true;
        }
        field_ = field_of(k);
        if (field_ == field::none || (seen_ & bit(field_)) != 0)
            return false;
        seen_ |= bit(field_);
        return true;
    }

    // A value in the KV object. The element's members are taken only as the KV object or
    // as the nulls on_null takes.
    bool in_kv() const { return depth_ == 3; }

    bool string(std::string_view s) {
        if (!in_kv())
            return false;
        switch (field_) {
        case field::verb:
            op_->verb.assign(s);
            return true;
        case field::key:
            op_->entry.key.assign(s);
            return true;
        case field::session:
            op_->entry.session.assign(s);
            return true;
        case field::value: {
            auto decoded = go_base64_decode(s);
            if (!decoded.value)
                return false;
            op_->entry.value = std::move(*decoded.value);
            return true;
        }
        default:
            return false;
        }
    }

    bool number(std::uint64_t u, std::string_view text) {
        if (!in_kv() || (field_ != field::flags && field_ != field::index))
            return false;
        // Digits only: "-0" arrives as the integer 0, but strconv.ParseUint refuses it
        // (fractions and exponents arrive as doubles).
        for (const char c : text)
            if (c < '0' || c > '9')
                return false;
        if (field_ == field::flags)
            op_->entry.flags = u;
        else
            op_->entry.modify_index = u;
        return true;
    }

    std::vector<decoded_op> ops_;
    txn_op_in* op_ = nullptr;      // the operation being filled
    int depth_ = 0;                // 0 top level, 1 array, 2 element, 3 KV object
    unsigned families_ = 0;        // the element's keys seen
    family expect_ = family::none; // the member whose value is next: KV object, others null
    bool done_ = false;
    field field_ = field::none;
    unsigned seen_ = 0;
    std::string buf_;
};

// The value of eight digits (their ASCII minus '0' in each byte, the first digit in the
// lowest byte, as a little-endian load puts it): pairs, then quads, then all eight.
std::uint64_t eight_digits(std::uint64_t w) {
    static_assert(std::endian::native == std::endian::little);
    w = (w * 10 + (w >> 8)) & 0x00FF00FF00FF00FF;
    w = (w * 100 + (w >> 16)) & 0x0000FFFF0000FFFF;
    return (w * 10000 + (w >> 32)) & 0xFFFFFFFF;
}

// The compact text itself, byte by byte: what conclave's client and Go's api.Txn write,
// with no whitespace, keys in the order `"KV"` then Go's null families, and strings of
// printable ASCII only. Boost.JSON's parser costs as much as the whole store's transaction
// for such a body; this reads it in a few hundred instructions. Anything else is declined
// (to the SAX parser, and from there to the general path), so it takes a subset of what
// fast_handler takes, and reads it the same way.
class compact_scanner {
public:
    explicit compact_scanner(std::string_view body)
        : p_(body.data())
        , end_(body.data() + body.size()) {}

    std::optional<std::vector<txn_op_in>> run() {
        std::vector<txn_op_in> ops;
        ops.reserve(4);
        if (!ch('['))
            return std::nullopt;
        for (;;) {
            if (!lit(R"({"KV":{)"))
                return std::nullopt;
            txn_op_in& op = ops.emplace_back();
            if (!ch('}') && !kv_fields(op))
                return std::nullopt;
            if (!null_families())
                return std::nullopt;
            if (ch(','))
                continue;
            // What follows the array is never read, as json.Decoder never reads it.
            if (ch(']'))
                return ops;
            return std::nullopt;
        }
    }

private:
    bool ch(char c) {
        if (p_ == end_ || *p_ != c)
            return false;
        ++p_;
        return true;
    }

    // A literal of constant length: the comparison compiles to a few loads.
    template <std::size_t N>
    bool lit(const char (&s)[N]) {
        if (std::size_t(end_ - p_) < N - 1 || std::memcmp(p_, s, N - 1) != 0)
            return false;
        p_ += N - 1;
        return true;
    }

    // A string of printable ASCII (and DEL): its bytes are its value for Go and Boost.JSON
    // alike. Escapes, control characters and every byte above 0x7f are declined.
    bool str(std::string_view& out) {
        if (!ch('"'))
            return false;
        const char* const start = p_;
#if defined(__SSE2__)
        // 16 bytes at a time (a session ID is 36): as signed bytes, control characters and
        // bytes above 0x7f are all below 0x20.
        while (end_ - p_ >= 16) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
            const auto quote = unsigned(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"'))));
            const auto bad = unsigned(_mm_movemask_epi8(_mm_or_si128(
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))));
            if ((quote | bad) != 0) {
                const unsigned first = unsigned(__builtin_ctz(quote | bad));
                if (((bad >> first) & 1) != 0)
                    return false;
                p_ += first;
                out = std::string_view(start, std::size_t(p_ - start));
                ++p_;
                return true;
            }
            p_ += 16;
        }
#endif
        for (; p_ != end_; ++p_) {
            const auto c = static_cast<unsigned char>(*p_);
            if (c == '"') {
                out = std::string_view(start, std::size_t(p_ - start));
                ++p_;
                return true;
            }
            if (c < 0x20 || c == '\\' || c > 0x7f)
                return false;
        }
        return false;
    }

    // An unsigned integer literal up to 2^64-1. A leading zero followed by more digits, a
    // fraction or an exponent is left where it stands: the caller then finds neither ','
    // nor '}' and declines.
    bool number(std::uint64_t& out) {
        if (p_ == end_ || *p_ < '0' || *p_ > '9')
            return false;
        if (*p_ == '0') {
            ++p_;
            out = 0;
            return true;
        }
        // Eight digits at a time, twice at most (a lock's Flags has 19 digits): 16 digits
        // cannot overflow; the rest one at a time, checked.
        std::uint64_t v = 0;
        for (int i = 0; i < 2 && end_ - p_ >= 8; ++i) {
            std::uint64_t w;
            std::memcpy(&w, p_, 8);
            w -= 0x3030303030303030;
            // Every byte was a digit: none borrowed (its top bit set) and none is 10 or more.
            if (((w | (w + 0x7676767676767676)) & 0x8080808080808080) != 0)
                break;
            v = v * 100000000 + eight_digits(w);
            p_ += 8;
        }
        for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_)
            if (__builtin_mul_overflow(v, 10u, &v) ||
                __builtin_add_overflow(v, unsigned(*p_ - '0'), &v))
                return false;
        out = v;
        return true;
    }

    // The members of the KV object after its '{' (at least one), through its '}'. Each
    // field spelled exactly and given once; a null leaves its field as it is (as Go does).
    bool kv_fields(txn_op_in& op) {
        unsigned seen = 0;
        for (;;) {
            std::string_view k;
            if (!str(k) || !ch(':'))
                return false;
            const field f = field_of(k);
            if (f == field::none || (seen & bit(f)) != 0)
                return false;
            seen |= bit(f);
            if (p_ != end_ && *p_ == 'n') {
                if (!lit("null"))
                    return false;
            } else if (f == field::flags || f == field::index) {
                if (!number(f == field::flags ? op.entry.flags : op.entry.modify_index))
                    return false;
            } else {
                std::string_view v;
                if (!str(v))
                    return false;
                switch (f) {
                case field::verb:
                    op.verb.assign(v);
                    break;
                case field::key:
                    op.entry.key.assign(v);
                    break;
                case field::session:
                    op.entry.session.assign(v);
                    break;
                default: { // value
                    auto decoded = go_base64_decode(v);
                    if (!decoded.value)
                        return false;
                    op.entry.value = std::move(*decoded.value);
                }
                }
            }
            if (ch(','))
                continue;
            return ch('}');
        }
    }

    // After the KV object: `,"Node":null` and the like, each family once, then the
    // element's '}'.
    bool null_families() {
        unsigned seen = bit(family::kv);
        while (ch(',')) {
            std::string_view k;
            if (!str(k) || !ch(':') || !lit("null"))
                return false;
            const family f = family_of(k);
            if (f == family::none || (seen & bit(f)) != 0)
                return false;
            seen |= bit(f);
        }
        return ch('}');
    }

    const char* p_;
    const char* const end_;
};

} // namespace

std::optional<std::vector<txn_op_in>> txn_compact_ops(std::string_view body) {
    return compact_scanner(body).run();
}

std::optional<std::vector<decoded_op>> txn_compact_decode(std::string_view body) {
    auto ops = txn_compact_ops(body);
    if (!ops)
        return std::nullopt;
    std::vector<decoded_op> decoded(ops->size());
    for (std::size_t i = 0; i < ops->size(); ++i) {
        decoded[i].present = true;
        decoded[i].op = std::move((*ops)[i]);
    }
    return decoded;
}

std::optional<std::vector<decoded_op>> txn_fast_decode(std::string_view body) {
    if (auto ops = txn_compact_decode(body))
        return ops;
    if (body.empty() || std::memchr(body.data(), '\\', body.size()) != nullptr)
        return std::nullopt;
    json::basic_parser<fast_handler> p(json::parse_options{});
    error_code ec;
    p.write_some(false, body.data(), body.size(), ec);
    if (ec || !p.handler().done())
        return std::nullopt;
    return std::move(p.handler().ops());
}

} // namespace conclave::dev::detail
