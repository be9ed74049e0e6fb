// SPDX-License-Identifier: BSL-1.0
// An HTTP response parser that keeps only what the client reads: the status, the body and
// Consul's meta headers.
//
// Why: Beast's response_parser stores every header in a basic_fields container, one
// allocation and an ordered insert per header (a Consul answer carries about ten), for the
// three the client looks at. Beast's basic_parser still does the HTTP parsing (framing,
// chunked bodies, keep-alive, the body limit); only the container is skipped.
#pragma once

#include <conclave/consul/request.hpp>
#include <conclave/error.hpp>

#include <boost/beast/http/basic_parser.hpp>

#include <cstddef>
#include <string>

namespace conclave::detail::http {

/// What the client keeps of a response.
struct response {
    unsigned status = 0;
    std::string body;
    query_meta meta; ///< X-Consul-Index, X-Consul-KnownLeader, X-Consul-LastContact
};

/// Parses one response into a `response`, which must outlive the parser. A body over
/// `body_limit` bytes fails with bhttp::error::body_limit.
class response_parser final : public boost::beast::http::basic_parser<false> {
public:
    response_parser(response& res, std::size_t body_limit);

private:
    using string_view = boost::beast::string_view;
    using field = boost::beast::http::field;
    using verb = boost::beast::http::verb;

    void on_request_impl(verb, string_view, string_view, int, error_code&) override {}
    void on_response_impl(int code, string_view reason, int version, error_code& ec) override;
    void on_field_impl(field name, string_view name_string, string_view value,
                       error_code& ec) override;
    void on_header_impl(error_code&) override {}
    void on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                           error_code& ec) override;
    std::size_t on_body_impl(string_view body, error_code& ec) override;
    void on_chunk_header_impl(std::uint64_t, string_view, error_code&) override {}
    std::size_t on_chunk_body_impl(std::uint64_t remain, string_view body, error_code& ec) override;
    void on_finish_impl(error_code&) override {}

    response& res_;
};

} // namespace conclave::detail::http
