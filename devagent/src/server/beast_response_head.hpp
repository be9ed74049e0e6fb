// SPDX-License-Identifier: BSL-1.0
// The head of a Beast response as text: the bytes Beast's serializer writes before the
// body. The server writes the head and the body as two buffers of one gathered write;
// walking the serializer's chain of small buffers cost more than the rest of an exchange.
// Used for the answers append_response_head (http_server.hpp) does not handle.
#pragma once

#include <boost/beast/http/message.hpp>

#include <string>

namespace conclave::dev::detail {

/// Appends "HTTP/1.x code reason", each field of `res` as "Name: value" in order, and the
/// blank line. Length headers are the caller's (prepare_payload()); nothing is added.
template <class Body, class Fields>
void append_beast_response_head(std::string& out,
                                const boost::beast::http::response<Body, Fields>& res) {
    out += "HTTP/";
    out += char('0' + res.version() / 10);
    out += '.';
    out += char('0' + res.version() % 10);
    const unsigned code = res.result_int();
    out += ' ';
    out += char('0' + code / 100 % 10);
    out += char('0' + code / 10 % 10);
    out += char('0' + code % 10);
    out += ' ';
    out.append(res.reason());
    out += "\r\n";
    for (const auto& field : res) {
        out.append(field.name_string());
        out += ": ";
        out.append(field.value());
        out += "\r\n";
    }
    out += "\r\n";
}

} // namespace conclave::dev::detail
