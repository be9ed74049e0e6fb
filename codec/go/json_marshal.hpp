// SPDX-License-Identifier: BSL-1.0
// A boost::json::value written as Go's json.Marshal and json.MarshalIndent write it: Go's
// string escaping (json_text.hpp), Go's float format, members in the object's order.
#pragma once

#include <boost/json/fwd.hpp>

#include <string>
#include <string_view>

namespace conclave::codec::go {

/// Appends json.MarshalIndent(v, "", indent); an empty `indent` is json.Marshal (compact).
void append_marshal(std::string& out, const boost::json::value& v, std::string_view indent = {});

/// json.Marshal(v).
std::string marshal(const boost::json::value& v);

/// json.MarshalIndent(v, "", indent), without a final newline.
std::string marshal_indent(const boost::json::value& v, std::string_view indent);

} // namespace conclave::codec::go
