// SPDX-License-Identifier: BSL-1.0
#include "cli/common/key_path.hpp"

#include <vector>

namespace conclave::cli {

std::string clean_key_path(std::string_view p) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= p.size()) {
        auto end = p.find('/', start);
        if (end == std::string_view::npos)
            end = p.size();
        const auto part = p.substr(start, end - start);
        if (part == "..") {
            if (!parts.empty())
                parts.pop_back();
        } else if (!part.empty() && part != ".") {
            parts.emplace_back(part);
        }
        start = end + 1;
    }
    std::string out;
    for (const auto& part : parts)
        out += (out.empty() ? "" : "/") + part;
    return out;
}

} // namespace conclave::cli
