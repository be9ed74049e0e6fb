// SPDX-License-Identifier: BSL-1.0
#include "cli/common/escape_value.hpp"

#include <cstdio>

namespace conclave::cli {

std::string escape_value(const std::string& v) {
    std::string out;
    for (const unsigned char c : v) {
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += char(c);
        }
    }
    return out;
}

} // namespace conclave::cli
