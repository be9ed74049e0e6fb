// The start line and fields of an HTTP/1.x message as text, the bytes Beast's serializer
// writes before the body.
//
// Why: Beast's serializer presents the head as a chain of small buffer sequences, and
// walking those cost more than the rest of an exchange (~7% of the client's instructions
// per request). One string, kept by the connection for its next message, and the body are
// two buffers for one gathered write.
#pragma once

#include <boost/beast/http/message.hpp>

#include <string>

namespace conclave::detail::http {

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
