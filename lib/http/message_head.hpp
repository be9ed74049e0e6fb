// The start line and fields of an HTTP/1.x message as text, the bytes Beast's serializer
// writes before the body: the client's requests from their parts, the dev agent's responses
// from Beast messages.
//
// Why: Beast's serializer presents the head as a chain of small buffer sequences, and
// walking those cost more than the rest of an exchange (~7% of the client's instructions
// per request). One string, kept by the connection for its next message, and the body are
// two buffers for one gathered write.
#pragma once

#include <boost/beast/http/message.hpp>
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
    const char* content_type = nullptr; ///< none when null
    std::string body;
};

/// Appends the head of `req` to `out`: the request line, Host, User-Agent, X-Consul-Token and
/// Content-Type when set, Content-Length as Beast's prepare_payload() would say it, and the
/// blank line. No Connection header: keep-alive is HTTP/1.1's default.
inline void append_request_head(std::string& out, const request& req) {
    using boost::beast::http::verb;
    out.append(boost::beast::http::to_string(req.method));
    out += ' ';
    out.append(req.target);
    out.append(" HTTP/1.1\r\nHost: ");
    out.append(req.host);
    out.append("\r\nUser-Agent: ");
    out.append(req.user_agent);
    out.append("\r\n");
    if (!req.token.empty()) {
        out.append("X-Consul-Token: ");
        out.append(req.token);
        out.append("\r\n");
    }
    if (req.content_type) {
        out.append("Content-Type: ");
        out.append(req.content_type);
        out.append("\r\n");
    }
    // RFC 9110 section 8.6: a PUT or POST without a body still says so, or a server may wait
    // for one; a GET or DELETE without one says nothing.
    if (!req.body.empty() || req.method == verb::put || req.method == verb::post ||
        req.method == verb::options) {
        char digits[20];
        const auto end = std::to_chars(digits, digits + sizeof digits, req.body.size()).ptr;
        out.append("Content-Length: ");
        out.append(digits, end);
        out.append("\r\n");
    }
    out.append("\r\n");
}

/// Appends the head of `msg` to `out`: "METHOD target HTTP/1.1" or "HTTP/1.1 code reason",
/// each field as "Name: value" in order, and the blank line. Length headers are the
/// caller's (prepare_payload()); nothing is added.
template <bool IsRequest, class Body, class Fields>
void append_head(std::string& out,
                 const boost::beast::http::message<IsRequest, Body, Fields>& msg) {
    const auto version = [&] {
        out += "HTTP/";
        out += char('0' + msg.version() / 10);
        out += '.';
        out += char('0' + msg.version() % 10);
    };
    if constexpr (IsRequest) {
        out.append(msg.method_string());
        out += ' ';
        out.append(msg.target());
        out += ' ';
        version();
    } else {
        version();
        const unsigned code = msg.result_int();
        out += ' ';
        out += char('0' + code / 100 % 10);
        out += char('0' + code / 10 % 10);
        out += char('0' + code % 10);
        out += ' ';
        out.append(msg.reason());
    }
    out += "\r\n";
    for (const auto& field : msg) {
        out.append(field.name_string());
        out += ": ";
        out.append(field.value());
        out += "\r\n";
    }
    out += "\r\n";
}

} // namespace conclave::detail::http
