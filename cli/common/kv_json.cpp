// SPDX-License-Identifier: BSL-1.0
#include "cli/common/kv_json.hpp"
#include "codec/base64.hpp"

#include <cstdint>
#include <cstdio>
#include <utility>

namespace conclave::cli {

namespace {

using field = std::pair<const char*, std::string>; // name, JSON text

// Length of the valid UTF-8 sequence at text[i], 0 when invalid (Go's utf8.DecodeRune).
std::size_t utf8_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char c = byte(i);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > text.size())
        return 0;
    for (std::size_t k = 1; k < n; ++k) {
        if ((byte(i + k) & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (byte(i + k) & 0x3f);
    }
    // Overlong forms, surrogates and code points above U+10FFFF are invalid.
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

std::string u_escape(unsigned code) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", code);
    return buf;
}

// Go's MarshalIndent layout: each member on its own line, `prefix` + unit per depth.
std::string object(const std::vector<field>& fields, const std::string& unit, int depth) {
    if (unit.empty()) {
        std::string out = "{";
        for (const auto& [name, value] : fields)
            out += (out.size() > 1 ? "," : "") + json_string(name) + ":" + value;
        return out + "}";
    }
    std::string pad;
    for (int i = 0; i < depth; ++i)
        pad += unit;
    std::string out = "{\n";
    for (std::size_t i = 0; i < fields.size(); ++i)
        out += pad + unit + json_string(fields[i].first) + ": " + fields[i].second +
               (i + 1 < fields.size() ? ",\n" : "\n");
    return out + pad + "}";
}

std::string array(const std::vector<std::string>& items, const std::string& unit) {
    if (items.empty())
        return "[]";
    if (unit.empty()) {
        std::string out = "[";
        for (std::size_t i = 0; i < items.size(); ++i)
            out += (i > 0 ? "," : "") + items[i];
        return out + "]";
    }
    std::string out = "[\n";
    for (std::size_t i = 0; i < items.size(); ++i)
        out += unit + items[i] + (i + 1 < items.size() ? ",\n" : "\n");
    return out + "]";
}

std::string kv_pair(const kv_entry& e, const std::string& unit, int depth) {
    return object({{"Key", json_string(e.key)},
                   {"CreateIndex", std::to_string(e.create_index)},
                   {"ModifyIndex", std::to_string(e.modify_index)},
                   {"LockIndex", std::to_string(e.lock_index)},
                   {"Flags", std::to_string(e.flags)},
                   // Consul stores an empty value as nil, which Go writes as null.
                   {"Value", e.value.empty() ? "null" : json_string(codec::base64_encode(e.value))},
                   {"Session", json_string(e.session)}},
                  unit, depth);
}

} // namespace

std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        const std::size_t n = utf8_length(text, i);
        if (n == 0) {
            out += "\\ufffd";
            ++i;
            continue;
        }
        if (n == 3 && c == 0xe2 && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
            (static_cast<unsigned char>(text[i + 2]) & 0xfe) == 0xa8) {
            out += u_escape(0x2028u + (static_cast<unsigned char>(text[i + 2]) & 1u));
            i += 3;
            continue;
        }
        if (n > 1) {
            out.append(text.substr(i, n));
            i += n;
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        case '<':
        case '>':
        case '&':
            out += u_escape(c);
            break;
        default:
            if (c < 0x20)
                out += u_escape(c);
            else
                out += static_cast<char>(c);
        }
        ++i;
    }
    return out + "\"";
}

std::string watch_json(const std::vector<kv_entry>& entries, bool single, bool indented) {
    const std::string unit = indented ? "    " : "";
    std::string doc;
    if (single) {
        doc = entries.empty() ? "null" : kv_pair(entries.front(), unit, 0);
    } else if (entries.empty()) {
        doc = "null"; // Consul's API reports no pairs as nil
    } else {
        std::vector<std::string> items;
        for (const auto& e : entries)
            items.push_back(kv_pair(e, unit, indented ? 1 : 0));
        doc = array(items, unit);
    }
    return indented ? doc : doc + "\n";
}

std::string export_json(const std::vector<kv_entry>& entries) {
    std::vector<std::string> items;
    for (const auto& e : entries)
        items.push_back(object({{"key", json_string(e.key)},
                                {"flags", std::to_string(e.flags)},
                                {"value", json_string(codec::base64_encode(e.value))}},
                               "\t", 1));
    return array(items, "\t");
}

} // namespace conclave::cli
