// SPDX-License-Identifier: BSL-1.0
// JSON the way Consul (Go's encoding/json) reads and writes it, as a thin layer over
// Boost.JSON: requests are parsed by Boost.JSON's parser into a tree that keeps number
// literals as text (Go's type errors quote them, and Go parses them itself), with Go's
// syntax error texts; answers are a boost::json::value written as json.MarshalIndent
// writes it (codec/go/json_marshal.hpp: HTML-safe escaping), with a 4-space indent.
#pragma once

#include <boost/json/fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave::dev::detail::gojson {

enum class kind { null, boolean, number, string, array, object };

/// A parsed JSON value. Numbers keep their literal text; strings are decoded (invalid
/// UTF-8 and lone surrogates become U+FFFD, as in Go).
struct value {
    // Declared here and defaulted below, once value is complete: defined implicitly, its
    // default constructor would make std::pair<std::string, value> ask, while that very
    // constructor is being defined, whether value is implicitly default constructible, which
    // clang (14 to 16, with libstdc++ 12) rejects.
    value();

    kind k = kind::null;
    bool b = false;
    std::string text; ///< number literal, or decoded string
    std::vector<value> items;
    std::vector<std::pair<std::string, value>> members;

    bool is_null() const { return k == kind::null; }
};

inline value::value() = default;

struct parse_result {
    std::optional<value> v;
    std::string error; ///< Go's message ("EOF", "unexpected EOF", "invalid character ...")
};

/// json.NewDecoder(body).Decode: the first JSON value of the input; bytes after it are
/// ignored. Empty (or all-space) input gives "EOF".
parse_result decode_first(std::string_view input);

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

/// A dev agent's JSON body, as Consul's HTTP handlers write it: json.MarshalIndent(v, "",
/// "    ") followed by "\n" (codec/go/json_marshal.hpp).
std::string answer_body(const boost::json::value& v);

/// The first of the errors met while decoding a document: encoding/json goes on after a
/// type error and reports the first one.
class first_error {
public:
    void save(std::string e) {
        if (e_.empty())
            e_ = std::move(e);
    }
    const std::string& get() const { return e_; }

private:
    std::string e_;
};

} // namespace conclave::dev::detail::gojson
