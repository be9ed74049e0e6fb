// SPDX-License-Identifier: BSL-1.0
// A value printed on one line (`watch`, `group members`).
#pragma once

#include <string>

namespace conclave::cli {

/// '\' as \\, a newline as \n, other control bytes as \xHH; the rest as is.
std::string escape_value(const std::string& v);

} // namespace conclave::cli
