// The fast path of /v1/txn's body decoding: Boost.JSON's SAX parser straight into
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

#include <cstdint>
#include <cstring>

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

} // namespace

std::optional<std::vector<decoded_op>> txn_fast_decode(std::string_view body) {
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
