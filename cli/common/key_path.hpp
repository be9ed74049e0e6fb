// SPDX-License-Identifier: BSL-1.0
// Key paths given on the command line, cleaned as the Consul CLI cleans them.
#pragma once

#include <string>
#include <string_view>

namespace conclave::cli {

/// Go's path.Clean on a relative path, minus the "." it returns for an empty one: what
/// `consul lock` does with its prefix (it trims a leading '/' and joins with path.Join).
/// No leading, trailing or doubled '/', no "." or "..". Empty when nothing is left.
std::string clean_key_path(std::string_view p);

} // namespace conclave::cli
