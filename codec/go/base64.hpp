// SPDX-License-Identifier: BSL-1.0
// Standard, padded base64, as Go's encoding/base64.StdEncoding reads and writes it: the
// encoding of KV values in Consul's JSON. One decoder for both sides: the client reads
// Consul's replies with it, and the dev agent reads requests with it and reports Go's error.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace conclave::codec::go {

std::string base64_encode(std::string_view bytes);

/// StdEncoding.DecodeString: the standard alphabet with '=' padding; '\r' and '\n' anywhere
/// are skipped, as Go skips them. Empty optional when `text` is not valid; `error_offset`,
/// when given, then receives the offset Go's CorruptInputError names ("illegal base64 data
/// at input byte N").
std::optional<std::string> base64_decode(std::string_view text,
                                         std::size_t* error_offset = nullptr);

/// CorruptInputError's text: "illegal base64 data at input byte N".
std::string base64_error(std::size_t offset);

} // namespace conclave::codec::go
