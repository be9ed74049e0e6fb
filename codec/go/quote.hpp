// SPDX-License-Identifier: BSL-1.0
// strconv.Quote, the quoting of Go's error texts (and of fmt's %q and %#v), which Consul's
// answers carry.
#pragma once

#include <string>
#include <string_view>

namespace conclave::codec::go {

/// strconv.Quote: a double-quoted Go string literal; invalid UTF-8 bytes as \xNN.
std::string quote(std::string_view s);

/// An approximation of unicode.IsPrint good enough for error texts: ASCII graphic
/// characters and most of the rest of Unicode, minus controls, separators and format
/// characters.
bool is_print(char32_t r);

} // namespace conclave::codec::go
