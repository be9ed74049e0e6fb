// SPDX-License-Identifier: BSL-1.0
#include "http/response_parser.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>

#include <charconv>

namespace conclave::detail::http {

namespace {

std::uint64_t parse_u64(std::string_view s) {
    std::uint64_t v = 0;
    std::from_chars(s.data(), s.data() + s.size(), v);
    return v;
}

} // namespace

response_parser::response_parser(response& res, std::size_t body_limit)
    : res_(res) {
    this->body_limit(body_limit);
    res_ = response{};
}

void response_parser::on_response_impl(int code, string_view, int, error_code&) {
    res_.status = static_cast<unsigned>(code);
}

void response_parser::on_field_impl(field name, string_view name_string, string_view value,
                                    error_code&) {
    // Beast knows none of Consul's headers by name, so the fields it does know (the
    // framing ones, which the base class reads itself) are skipped without a compare. Of
    // the rest, length and the letter after "X-Consul-" leave one candidate to compare:
    // iequals compares byte by byte, and a Consul answer has a dozen headers.
    if (name != field::unknown)
        return;
    using boost::beast::iequals;
    if (name_string.size() == 14) {
        if (iequals(name_string, "X-Consul-Index"))
            res_.meta.index = parse_u64(value);
    } else if (name_string.size() == 20) {
        const char letter = name_string[9];
        if ((letter == 'K' || letter == 'k') && iequals(name_string, "X-Consul-KnownLeader"))
            res_.meta.known_leader = value == "true";
        else if ((letter == 'L' || letter == 'l') && iequals(name_string, "X-Consul-LastContact"))
            res_.meta.last_contact = std::chrono::milliseconds{parse_u64(value)};
    }
}

void response_parser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                        error_code& ec) {
    // The base class has checked the length against the body limit already; a limit set
    // beyond what a string can hold must still fail this response, not throw.
    if (!content_length)
        return;
    if (*content_length > res_.body.max_size()) {
        ec = boost::beast::http::error::buffer_overflow;
        return;
    }
    res_.body.reserve(static_cast<std::size_t>(*content_length));
}

std::size_t response_parser::on_body_impl(string_view body, error_code&) {
    res_.body.append(body.data(), body.size());
    return body.size();
}

std::size_t response_parser::on_chunk_body_impl(std::uint64_t, string_view body, error_code&) {
    res_.body.append(body.data(), body.size());
    return body.size();
}

} // namespace conclave::detail::http
