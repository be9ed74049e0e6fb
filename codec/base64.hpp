// SPDX-License-Identifier: BSL-1.0
// Standard, padded base64 (KV values in JSON), backed by OpenSSL.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace conclave::codec {

std::string base64_encode(std::string_view bytes);

/// Empty optional when `text` is not valid padded standard base64.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace conclave::codec
