// SPDX-License-Identifier: BSL-1.0
// The head of the client's HTTP/1.1 requests as text: the request line and fields, the
// bytes Beast's serializer would write before the body.
//
// Why: Beast's serializer presents the head as a chain of small buffer sequences, and
// walking those showed in the client's profile on every request. One string, kept by the
// connection for its next message, and the body are
// two buffers for one gathered write.
#pragma once

#include "codec/cursor.hpp"

#include <boost/beast/http/verb.hpp>

#include <charconv>
#include <string>
#include <string_view>

namespace conclave::detail::http {

/// A request as the client sends it. Not a Beast message: its fields container costs an
/// allocation per header, for headers the client only ever writes out as text. The views
/// must outlive the exchange.
struct request {
    boost::beast::http::verb method = boost::beast::http::verb::get;
    std::string_view target;
    std::string_view host;
    std::string_view user_agent = "conclave/0.1";
    std::string_view token;             ///< X-Consul-Token (empty: none)
    std::string_view authorization;     ///< the Authorization field's value (empty: none)
    const char* content_type = nullptr; ///< none when null
    std::string body;
};

/// Appends the head of `req` to `out`: the request line, Host, User-Agent, X-Consul-Token,
/// Authorization and Content-Type when set, Content-Length as Beast's prepare_payload() would say
/// it, and the blank line. No Connection header: keep-alive is HTTP/1.1's default.
///
/// The size is added up first and the parts copied into place (codec::cursor), instead of a
/// std::string::append per piece: a call, a capacity check, and a strlen for each literal,
/// for every piece of every request.
inline void append_request_head(std::string& out, const request& req) {
    using boost::beast::http::verb;
    const std::string_view method = boost::beast::http::to_string(req.method);
    const std::string_view content_type = req.content_type ? req.content_type : "";
    // RFC 9110 section 8.6: a PUT or POST without a body still says so, or a server may wait
    // for one; a GET or DELETE without one says nothing.
    const bool length = !req.body.empty() || req.method == verb::put || req.method == verb::post ||
                        req.method == verb::options;
    char digits[20];
    const std::size_t digit_count =
        length ? std::size_t(std::to_chars(digits, digits + sizeof digits, req.body.size()).ptr -
                             digits)
               : 0;

    static constexpr std::string_view version = " HTTP/1.1\r\nHost: ";
    static constexpr std::string_view agent = "\r\nUser-Agent: ";
    static constexpr std::string_view token = "X-Consul-Token: ";
    static constexpr std::string_view authorization = "Authorization: ";
    static constexpr std::string_view type = "Content-Type: ";
    static constexpr std::string_view content_length = "Content-Length: ";
    std::size_t size = method.size() + 1 + req.target.size() + version.size() + req.host.size() +
                       agent.size() + req.user_agent.size() + 2 + 2;
    if (!req.token.empty())
        size += token.size() + req.token.size() + 2;
    if (!req.authorization.empty())
        size += authorization.size() + req.authorization.size() + 2;
    if (req.content_type)
        size += type.size() + content_type.size() + 2;
    if (length)
        size += content_length.size() + digit_count + 2;

    const std::size_t old_size = out.size();
    out.resize(old_size + size);
    codec::cursor c(out.data() + old_size);
    c.put(method);
    c.put(' ');
    c.put(req.target);
    c.put(version);
    c.put(req.host);
    c.put(agent);
    c.put(req.user_agent);
    c.put("\r\n");
    if (!req.token.empty()) {
        c.put(token);
        c.put(req.token);
        c.put("\r\n");
    }
    if (!req.authorization.empty()) {
        c.put(authorization);
        c.put(req.authorization);
        c.put("\r\n");
    }
    if (req.content_type) {
        c.put(type);
        c.put(content_type);
        c.put("\r\n");
    }
    if (length) {
        c.put(content_length);
        c.put(std::string_view(digits, digit_count));
        c.put("\r\n");
    }
    c.put("\r\n");
}

} // namespace conclave::detail::http
