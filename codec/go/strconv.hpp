// SPDX-License-Identifier: BSL-1.0
// Go's strconv.ParseUint, ParseInt and ParseBool, with the texts of their errors: the dev
// agent answers with them, and the CLI's flags (Go's flag package) parse with them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace conclave::codec::go {

/// strconv.ErrSyntax, strconv.ErrRange.
enum class num_error { none, syntax, range };

struct parsed_uint {
    std::optional<std::uint64_t> value;
    num_error failure = num_error::none;
    std::string error; ///< NumError's text, e.g. `strconv.ParseUint: parsing "x": invalid syntax`
};

struct parsed_int {
    std::optional<std::int64_t> value;
    num_error failure = num_error::none;
    std::string error; ///< e.g. `strconv.ParseInt: parsing "-x": invalid syntax`
};

/// strconv.ParseUint(s, base, bits), base 2 to 36, or 0: the base from the prefix (0x, 0o,
/// 0b, a leading 0 for octal), underscores allowed as Go's integer literals allow them.
parsed_uint parse_uint(std::string_view s, int base = 10, int bits = 64);

/// strconv.ParseInt(s, base, bits): an optional sign, then as parse_uint.
parsed_int parse_int(std::string_view s, int base = 10, int bits = 64);

/// strconv.ParseBool: 1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False.
std::optional<bool> parse_bool(std::string_view s);

} // namespace conclave::codec::go
