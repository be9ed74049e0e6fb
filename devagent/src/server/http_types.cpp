// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/server/http_types.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>
#include <map>

namespace conclave::dev::detail {

namespace {

std::optional<std::string> unescape(std::string_view s, bool query) {
    // Most paths and query values have nothing to decode: one copy, not a byte at a time.
    // (A plain loop: find_first_of calls memchr once per byte.)
    bool plain = true;
    for (const char c : s) {
        if (c == '%' || (c == '+' && query)) {
            plain = false;
            break;
        }
    }
    if (plain)
        return std::string(s);
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size())
                return std::nullopt;
            const int hi = hex_value(static_cast<unsigned char>(s[i + 1]));
            const int lo = hex_value(static_cast<unsigned char>(s[i + 2]));
            if (hi < 0 || lo < 0)
                return std::nullopt;
            out += char(hi << 4 | lo);
            i += 2;
        } else if (c == '+' && query) {
            out += ' ';
        } else {
            out += c;
        }
    }
    return out;
}

bool is_alnum(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string escape(std::string_view s, bool query) {
    static constexpr const char* upper_hex = "0123456789ABCDEF";
    std::string out;
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        bool keep = is_alnum(c) || c == '-' || c == '_' || c == '.' || c == '~';
        if (!keep && !query)
            keep = c == '$' || c == '&' || c == '+' || c == ',' || c == '/' || c == ':' ||
                   c == ';' || c == '=' || c == '@';
        if (keep) {
            out += ch;
        } else if (c == ' ' && query) {
            out += '+';
        } else {
            out += '%';
            out += upper_hex[c >> 4];
            out += upper_hex[c & 0xF];
        }
    }
    return out;
}

} // namespace

bool query_params::has(std::string_view key) const {
    return std::any_of(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == key; });
}

std::string query_params::get(std::string_view key) const {
    for (const auto& [k, v] : pairs)
        if (k == key)
            return v;
    return {};
}

const std::string* query_params::find(std::string_view key) const {
    for (const auto& [k, v] : pairs)
        if (k == key)
            return &v;
    return nullptr;
}

std::string query_params::encode() const {
    std::map<std::string, std::vector<std::string>> sorted;
    for (const auto& [k, v] : pairs)
        sorted[k].push_back(v);
    std::string out;
    for (const auto& [k, values] : sorted) {
        for (const auto& v : values) {
            if (!out.empty())
                out += '&';
            out += query_escape(k);
            out += '=';
            out += query_escape(v);
        }
    }
    return out;
}

query_params parse_query(std::string_view raw) {
    query_params q;
    while (!raw.empty()) {
        std::string_view key = raw;
        const auto sep = key.find_first_of("&;");
        if (sep != std::string_view::npos) {
            raw = key.substr(sep + 1);
            key = key.substr(0, sep);
        } else {
            raw = {};
        }
        if (key.empty())
            continue;
        std::string_view value;
        if (const auto eq = key.find('='); eq != std::string_view::npos) {
            value = key.substr(eq + 1);
            key = key.substr(0, eq);
        }
        auto k = unescape(key, true);
        if (!k)
            continue;
        auto v = unescape(value, true);
        if (!v)
            continue;
        q.pairs.emplace_back(std::move(*k), std::move(*v));
    }
    return q;
}

std::optional<std::string> path_unescape(std::string_view s) {
    return unescape(s, false);
}
std::string query_escape(std::string_view s) {
    return escape(s, true);
}
std::string path_escape(std::string_view s) {
    return escape(s, false);
}

bool path_is_clean(std::string_view p) {
    if (p.empty() || p.front() != '/')
        return false;
    std::size_t i = 1;
    while (i < p.size()) {
        std::size_t end = p.find('/', i);
        if (end == std::string_view::npos)
            end = p.size();
        const std::string_view segment = p.substr(i, end - i);
        if (segment.empty() || segment == "." || segment == "..")
            return false;
        i = end + 1;
    }
    return true;
}

std::string clean_path(std::string_view p) {
    if (p.empty())
        return "/";
    std::string path(p);
    if (path[0] != '/')
        path.insert(path.begin(), '/');
    // path.Clean for a rooted path.
    const std::size_t n = path.size();
    std::string out = "/";
    std::size_t r = 1;
    const std::size_t dotdot = 1;
    while (r < n) {
        if (path[r] == '/') {
            ++r;
        } else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
            ++r;
        } else if (path[r] == '.' && r + 1 < n && path[r + 1] == '.' &&
                   (r + 2 == n || path[r + 2] == '/')) {
            r += 2;
            if (out.size() > dotdot) {
                out.pop_back();
                while (out.size() > dotdot && out.back() != '/')
                    out.pop_back();
                if (out.size() > dotdot && out.back() == '/')
                    out.pop_back();
            }
        } else {
            if (out.size() != 1)
                out += '/';
            for (; r < n && path[r] != '/'; ++r)
                out += path[r];
        }
    }
    if (path.back() == '/' && out != "/")
        out += '/';
    return out;
}

namespace {

bool is_ws(unsigned char c) {
    return c == '\t' || c == '\n' || c == '\x0c' || c == '\r' || c == ' ';
}

bool starts(std::string_view data, std::string_view sig) {
    return data.size() >= sig.size() && data.compare(0, sig.size(), sig) == 0;
}

// A signature with '?' bytes matching anything (the RIFF/FORM container headers).
bool starts_masked(std::string_view data, std::string_view sig) {
    if (data.size() < sig.size())
        return false;
    for (std::size_t i = 0; i < sig.size(); ++i)
        if (sig[i] != '?' && data[i] != sig[i])
            return false;
    return true;
}

} // namespace

std::string sniff_content_type(std::string_view body) {
    const std::string_view data = body.substr(0, std::min<std::size_t>(body.size(), 512));
    std::size_t ws = 0;
    while (ws < data.size() && is_ws(static_cast<unsigned char>(data[ws])))
        ++ws;
    const std::string_view rest = data.substr(ws);
    static constexpr std::string_view html_sigs[] = {"<!DOCTYPE HTML",
                                                     "<HTML",
                                                     "<HEAD",
                                                     "<SCRIPT",
                                                     "<IFRAME",
                                                     "<H1",
                                                     "<DIV",
                                                     "<FONT",
                                                     "<TABLE",
                                                     "<A",
                                                     "<STYLE",
                                                     "<TITLE",
                                                     "<B",
                                                     "<BODY",
                                                     "<BR",
                                                     "<P",
                                                     "<!--"};
    for (const auto sig : html_sigs) {
        if (rest.size() < sig.size() + 1)
            continue;
        bool match = true;
        for (std::size_t i = 0; i < sig.size() && match; ++i) {
            auto db = static_cast<unsigned char>(rest[i]);
            if (sig[i] >= 'A' && sig[i] <= 'Z')
                db &= 0xDF;
            match = db == static_cast<unsigned char>(sig[i]);
        }
        const char tt = rest[sig.size()];
        if (match && (tt == ' ' || tt == '>'))
            return "text/html; charset=utf-8";
    }
    if (starts(rest, "<?xml"))
        return "text/xml; charset=utf-8";
    struct sig {
        std::string_view bytes;
        const char* type;
    };
    using namespace std::string_view_literals;
    static const sig exact[] = {
        {"%PDF-"sv, "application/pdf"},
        {"%!PS-Adobe-"sv, "application/postscript"},
    };
    for (const auto& s : exact)
        if (starts(data, s.bytes))
            return s.type;
    if (data.size() >= 4) {
        if (starts(data, "\xFE\xFF"sv))
            return "text/plain; charset=utf-16be";
        if (starts(data, "\xFF\xFE"sv))
            return "text/plain; charset=utf-16le";
        if (starts(data, "\xEF\xBB\xBF"sv))
            return "text/plain; charset=utf-8";
    }
    static const sig binary[] = {
        {"\x00\x00\x01\x00"sv, "image/x-icon"},
        {"\x00\x00\x02\x00"sv, "image/x-icon"},
        {"BM"sv, "image/bmp"},
        {"GIF87a"sv, "image/gif"},
        {"GIF89a"sv, "image/gif"},
        {"RIFF????WEBPVP"sv, "image/webp"},
        {"\x89PNG\x0D\x0A\x1A\x0A"sv, "image/png"},
        {"\xFF\xD8\xFF"sv, "image/jpeg"},
        {"FORM????AIFF"sv, "audio/aiff"},
        {"ID3"sv, "audio/mpeg"},
        {"OggS\x00"sv, "application/ogg"},
        {"MThd\x00\x00\x00\x06"sv, "audio/midi"},
        {"RIFF????AVI "sv, "video/avi"},
        {"RIFF????WAVE"sv, "audio/wave"},
        {"\x1A\x45\xDF\xA3"sv, "video/webm"},
        {"\x00\x01\x00\x00"sv, "font/ttf"},
        {"OTTO"sv, "font/otf"},
        {"ttcf"sv, "font/collection"},
        {"wOFF"sv, "font/woff"},
        {"wOF2"sv, "font/woff2"},
        {"\x1F\x8B\x08"sv, "application/x-gzip"},
        {"PK\x03\x04"sv, "application/zip"},
        {"Rar!\x1A\x07\x00"sv, "application/x-rar-compressed"},
        {"Rar!\x1A\x07\x01\x00"sv, "application/x-rar-compressed"},
        {"\x00\x61\x73\x6D"sv, "application/wasm"},
    };
    for (const auto& s : binary)
        if (starts_masked(data, s.bytes))
            return s.type;
    for (const char ch : rest) {
        const auto b = static_cast<unsigned char>(ch);
        if (b <= 0x08 || b == 0x0B || (b >= 0x0E && b <= 0x1A) || (b >= 0x1C && b <= 0x1F))
            return "application/octet-stream";
    }
    return "text/plain; charset=utf-8";
}

std::string http_date(std::chrono::system_clock::time_point t) {
    const std::time_t tt = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&tt, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
    return buf;
}

void http_response::set(header_name name, std::string value) {
    for (auto& [k, v] : headers) {
        if (k == name.view()) {
            v = std::move(value);
            return;
        }
    }
    // Room for an answer's usual headers at once rather than growing 1, 2, 4, 8.
    if (headers.capacity() == 0)
        headers.reserve(6);
    headers.emplace_back(name.view(), std::move(value));
}

const std::string* http_response::find(std::string_view name) const {
    for (const auto& [k, v] : headers)
        if (k == name)
            return &v;
    return nullptr;
}

} // namespace conclave::dev::detail
