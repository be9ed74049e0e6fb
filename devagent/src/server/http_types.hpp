// SPDX-License-Identifier: BSL-1.0
// Beast-free request and response values passed between the HTTP server and the route
// handlers, plus the URL and header helpers that reproduce Go's net/http and net/url
// behaviour Consul shows on the wire.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave::dev::detail {

/// url.Values as Go parses them: pairs in order; lookups take the first value.
class query_params {
public:
    std::vector<std::pair<std::string, std::string>> pairs;

    bool has(std::string_view key) const;
    /// First value of key, "" when absent (url.Values.Get).
    std::string get(std::string_view key) const;
    /// First value of key, nullptr when absent.
    const std::string* find(std::string_view key) const;
    /// url.Values.Encode(): keys sorted, values in order, query-escaped.
    std::string encode() const;
};

/// url.ParseQuery: '&' and ';' separate pairs; pairs with bad escapes are dropped.
query_params parse_query(std::string_view raw);

/// url.PathUnescape-style decoding of a request path; empty optional on a bad escape.
std::optional<std::string> path_unescape(std::string_view s);
/// url.QueryEscape / the path escaping of url.URL.EscapedPath.
std::string query_escape(std::string_view s);
std::string path_escape(std::string_view s);
/// net/http's cleanPath (path.Clean, keeping a trailing slash).
std::string clean_path(std::string_view p);
/// clean_path(p) == p, without building it: rooted, and no empty, "." or ".." segment (a
/// trailing slash is kept). Most request paths are; they skip clean_path's copies.
bool path_is_clean(std::string_view p);
/// net/http.DetectContentType for the first 512 bytes.
std::string sniff_content_type(std::string_view body);
/// An IMF-fixdate, as Go's Date header.
std::string http_date(std::chrono::system_clock::time_point t);

struct http_request {
    std::string method;
    std::string path;      ///< decoded (the target before '?', %-escapes undone)
    std::string raw_query; ///< after '?'
    query_params query;
    /// The first X-Consul-Namespace header (the one Go's Header.Get reads) has a value.
    bool namespace_header = false;
    std::string body;
    /// Content-Length as Go's Request.ContentLength: -1 when unknown (chunked).
    std::int64_t content_length = 0;
    /// The body was not read (an early answer is wanted, see server/connection_loop.cpp).
    bool body_unread = false;
    /// Why the body could not be read whole, in Go's words (what Consul's handler gets
    /// from req.Body: "unexpected EOF", "invalid byte in chunk length", ... and
    /// body_too_large); empty when it was. Each route answers it as Consul does, and the
    /// connection is closed afterwards.
    std::string body_error;
};

/// Go's http.MaxBytesReader error: a body over the agent's limit for it.
inline constexpr std::string_view body_too_large = "http: request body too large";

/// A header name: a string literal only, kept as a view, so that setting a header does not
/// allocate its name (X-Consul-Knownleader and the like are past std::string's inline size).
class header_name {
public:
    template <std::size_t N>
    consteval header_name(const char (&name)[N]) // NOLINT: implicit from a literal on purpose
        : name_(name, N - 1) {}
    std::string_view view() const { return name_; }

private:
    std::string_view name_;
};

struct http_response {
    unsigned status = 200;
    std::vector<std::pair<std::string_view, std::string>> headers;
    std::string body;
    bool close = false; ///< send "Connection: close" and close afterwards
    bool drop = false;  ///< close the connection without answering (injected disconnect)

    void set(header_name name, std::string value);
    const std::string* find(std::string_view name) const;
};

} // namespace conclave::dev::detail
