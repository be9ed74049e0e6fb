// JSON the way Consul (Go's encoding/json) reads and writes it: a parser that reports Go's
// syntax errors verbatim and keeps number literals as text, helpers that produce Go's
// UnmarshalTypeError texts, and a writer that matches json.MarshalIndent (HTML-safe
// escaping, 4-space indent) as a dev agent sends it.
#pragma once

#include <boost/json/fwd.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave::dev::detail::gojson {

enum class kind { null, boolean, number, string, array, object };

/// A parsed JSON value. Numbers keep their literal text; strings are decoded (invalid
/// UTF-8 and lone surrogates become U+FFFD, as in Go).
struct value {
    kind k = kind::null;
    bool b = false;
    std::string text; ///< number literal, or decoded string
    std::vector<value> items;
    std::vector<std::pair<std::string, value>> members;

    bool is_null() const { return k == kind::null; }
};

struct parse_result {
    std::optional<value> v;
    std::string error; ///< Go's message ("EOF", "unexpected EOF", "invalid character ...")
};

/// json.NewDecoder(body).Decode: the first JSON value of the input; bytes after it are
/// ignored. Empty (or all-space) input gives "EOF".
parse_result decode_first(std::string_view input);

/// json.Unmarshal: the whole input must be one value.
parse_result unmarshal(std::string_view input);

/// What encoding/json calls the JSON value in an UnmarshalTypeError: "string", "number",
/// "bool", "object", "array".
std::string_view describe(const value& v);

/// "json: cannot unmarshal <what> into Go struct field <Struct>.<path> of type <type>", or
/// "... into Go value of type <type>" when struct_name and field_path are both empty.
std::string type_error(std::string_view what, std::string_view struct_name,
                       std::string_view field_path, std::string_view go_type);

/// Finds a member the way encoding/json matches struct fields: exact name first, then
/// ASCII case-insensitively. With duplicate keys Go applies every occurrence in order, so
/// the last matching one wins; this returns that one.
const value* find_field(const value& object, std::string_view name);

/// Whether Go writes s as it is between quotes: no byte that json.Marshal escapes (control
/// characters, '"', '\\', and HTML's '<', '>', '&') and no byte above 0x7f (whose UTF-8 it
/// checks, and U+2028/U+2029 it escapes).
bool is_plain(std::string_view s);

/// Go's json.MarshalIndent(v, "", "    ") followed by "\n" (a dev agent's JSON bodies).
std::string marshal_indent(const boost::json::value& v);

/// Go's compact json.Marshal (used for test-control bodies and tests).
std::string marshal(const boost::json::value& v);

/// Writes what marshal_indent writes for the equivalent boost::json::value, straight from
/// typed values: the hot endpoints (KV reads, transactions, sessions) answer without
/// building a DOM first, which cost ~40 heap allocations per answer. The caller keeps the
/// structure well-formed: key() before each member value, begin/end paired.
class indent_writer {
public:
    explicit indent_writer(std::string& out)
        : out_(out) {}

    void begin_object();
    void end_object();
    void begin_array();
    void end_array();
    /// A member's key (Go's string escaping applies to keys too).
    void key(std::string_view k);
    void string(std::string_view s);
    /// A []byte value: Go marshals it as a base64 string (never needs escaping).
    void base64(std::string_view bytes);
    void number(std::uint64_t n);
    void number(std::int64_t n);
    void boolean(bool b);
    void null();
    /// The "\n" json.Encoder (and marshal_indent) ends a document with.
    void finish();

    /// A member of an object written at once by object(): no nested containers.
    struct member {
        enum class type : unsigned char { number, string, base64, null };
        std::string_view key; ///< a field name: printable ASCII without '"<>&\\'
        type t = type::null;
        std::string_view text; ///< string: the text; base64: the bytes
        std::uint64_t n = 0;   ///< number
    };
    /// begin_object(), key() and the value of each member, end_object(): the same bytes,
    /// sized first and written with one resize when nothing needs escaping (a KV entry is
    /// ~20 calls otherwise).
    void object(std::span<const member> members);

private:
    void before_value();
    void open(char c);
    void close(char c);

    std::string& out_;
    int depth_ = 0;
    /// Bit d: the container open at depth d has an element already (a ',' and a line
    /// break go before the next one; the closing bracket goes on its own line).
    std::uint64_t non_empty_ = 0;
    bool after_key_ = false;
};

} // namespace conclave::dev::detail::gojson
