// SPDX-License-Identifier: BSL-1.0
// A header field's value without the spaces and tabs around it, as Beast stores one and Go
// reads one: the request fields the server looks at, and the answers' fields it writes.
#pragma once

#include <string_view>

namespace conclave::dev::detail {

inline std::string_view trim_value(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return v;
}

} // namespace conclave::dev::detail
