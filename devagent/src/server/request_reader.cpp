// SPDX-License-Identifier: BSL-1.0
#include "codec/go/quote.hpp"
#include "devagent/src/server/request_reader.hpp"
#include "devagent/src/server/server_names.hpp"

#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/error.hpp>

#include <string>

namespace conclave::dev::detail {

using namespace std::chrono_literals;

namespace {

std::string_view buffered(const beast::flat_buffer& b) {
    return {static_cast<const char*>(b.data().data()), b.size()};
}

// The capacity buffer.prepare(n) leaves (basic_flat_buffer grows to twice its data, at most
// to max_size()).
std::size_t capacity_after(const beast::flat_buffer& b, std::size_t n) {
    if (n <= b.capacity() - b.size())
        return b.capacity();
    return std::min(b.max_size(), std::max(2 * b.size(), b.size() + n));
}

// Reads more into the buffer (chunk lines, the trailer); body_capacity counts against the
// memory budget with it.
asio::awaitable<error_code> fill(connection& stream, beast::flat_buffer& buffer,
                                 memory_lease& lease, std::size_t body_capacity) {
    const std::size_t room = beast::read_size(buffer, 65536);
    if (room == 0 || !lease.fit(capacity_after(buffer, room) + body_capacity))
        co_return http::error::body_limit;
    auto [ec, n] = co_await stream.async_read_some(buffer.prepare(room), use);
    if (!ec)
        buffer.commit(n);
    co_return ec;
}

// Appends n bytes of body to `out`: what the buffer holds, then straight from the socket.
// `out` grows with what arrives, so a client announcing a large body and sending little is
// not given the memory up front.
asio::awaitable<error_code> read_exact(connection& stream, beast::flat_buffer& buffer,
                                       std::string& out, std::size_t n, memory_lease& lease) {
    // The capacity of `out` once `more` bytes are added (std::string at most doubles it).
    const auto grown = [&](std::size_t more) {
        const std::size_t need = out.size() + more;
        return need <= out.capacity() ? out.capacity() : std::max(need, 2 * out.capacity());
    };
    const std::size_t k = std::min(n, buffer.size());
    if (!lease.fit(buffer.capacity() + grown(k)))
        co_return http::error::body_limit;
    out.append(static_cast<const char*>(buffer.data().data()), k);
    buffer.consume(k);
    n -= k;
    while (n > 0) {
        const std::size_t have = out.size();
        const std::size_t step = std::min(n, std::max<std::size_t>(have, 65536));
        if (!lease.fit(buffer.capacity() + grown(step)))
            co_return http::error::body_limit;
        out.resize(have + step);
        lease.fit(buffer.capacity() + out.capacity());
        auto [ec, got] =
            co_await stream.async_read_some(asio::buffer(out.data() + have, step), use);
        out.resize(have + got);
        if (ec)
            co_return ec;
        n -= got;
    }
    co_return error_code{};
}

struct chunk_size {
    std::uint64_t value = 0;
    std::string_view error; ///< Go's, empty when none
};

// A chunk-size line (CRLF included) as Go's chunkedReader reads it (net/http/internal,
// Consul 1.8's): trailing whitespace trimmed, extensions dropped, at most 16 hex digits, an
// empty one read as 0.
chunk_size parse_chunk_size(std::string_view line) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r' ||
                             line.back() == '\n'))
        line.remove_suffix(1);
    if (const auto semi = line.find(';'); semi != std::string_view::npos)
        line = line.substr(0, semi);
    chunk_size out;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        unsigned digit = 0;
        if (c >= '0' && c <= '9')
            digit = unsigned(c - '0');
        else if (c >= 'a' && c <= 'f')
            digit = unsigned(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            digit = unsigned(c - 'A' + 10);
        else
            return {0, "invalid byte in chunk length"};
        if (i == 16)
            return {0, "http chunk length too large"};
        out.value = out.value << 4 | digit;
    }
    return out;
}

// textproto.Reader.ReadMIMEHeader's complaint about a trailer (its lines, each with its
// CRLF, without the final empty line), or "".
std::string trailer_error(std::string_view lines) {
    bool first = true;
    while (!lines.empty()) {
        const std::size_t eol = lines.find("\r\n");
        const std::string_view line = lines.substr(0, eol);
        lines.remove_prefix(eol + 2);
        const bool continued = !line.empty() && (line.front() == ' ' || line.front() == '\t');
        if (first && continued)
            return "malformed MIME header initial line: " + std::string(line);
        first = false;
        if (!continued && line.find(':') == std::string_view::npos)
            return "malformed MIME header: missing colon: " + codec::go::quote(line);
    }
    return {};
}

} // namespace

std::size_t request_bytes(const http_request& r) {
    std::size_t n = r.method.capacity() + r.path.capacity() + r.raw_query.capacity() +
                    r.body.capacity() + r.body_error.capacity() +
                    r.query.pairs.capacity() * sizeof(r.query.pairs.front());
    for (const auto& [key, value] : r.query.pairs)
        n += key.capacity() + value.capacity();
    return n;
}

void trim_buffer(beast::flat_buffer& b) {
    if (b.capacity() > 4 * initial_buffer && b.size() <= initial_buffer) {
        b.shrink_to_fit();
        b.reserve(initial_buffer);
    }
}

bool is_transport_error(const error_code& ec) {
    return ec.category() != http::make_error_code(http::error::need_more).category();
}

asio::awaitable<error_code> read_head(connection& stream, beast::flat_buffer& buffer,
                                      request_parser& parser, const agent_config& cfg,
                                      memory_lease& lease, bool idle,
                                      connection::clock::time_point& started) {
    // Go's http.Server: a ReadHeaderTimeout or IdleTimeout of 0 is ReadTimeout's.
    const auto or_read_timeout = [&](std::chrono::milliseconds d) {
        return d > d.zero() ? d : cfg.read_timeout;
    };
    const auto begin = [&] {
        started = connection::clock::now();
        stream.expires_within(started, or_read_timeout(cfg.read_header_timeout));
    };
    if (idle && buffer.size() == 0)
        stream.expires_within(connection::clock::now(), or_read_timeout(cfg.idle_timeout));
    else
        begin();
    for (;;) {
        if (buffer.size() != 0) {
            error_code ec;
            const std::size_t used = parser.put(buffer.data(), ec);
            buffer.consume(used);
            if (!ec && parser.is_header_done())
                co_return error_code{};
            if (ec && ec != http::error::need_more)
                co_return ec;
            if (!ec && used != 0)
                continue;
        }
        const std::size_t room = beast::read_size(buffer, 65536);
        if (room == 0 || !lease.fit(capacity_after(buffer, room)))
            co_return http::error::header_limit;
        auto [ec, n] = co_await stream.async_read_some(buffer.prepare(room), use);
        if (ec)
            co_return ec;
        buffer.commit(n);
        if (idle) {
            idle = false;
            begin();
        }
    }
}

asio::awaitable<body_read> read_body(connection& stream, beast::flat_buffer& buffer,
                                     http_request& req, bool chunked, std::int64_t limit,
                                     memory_lease& lease) {
    const auto fail = [&](std::string_view why) {
        req.body_error = std::string(why);
        return body_read::failed;
    };
    // A read that failed: the client ended its side (what Go reports), the budget said no,
    // or the connection is gone.
    const auto lost = [&](const error_code& ec, std::string_view at_eof) {
        if (ec == asio::error::eof)
            return fail(at_eof);
        if (ec == http::error::body_limit)
            return fail(body_too_large);
        return body_read::gone;
    };
    if (!chunked) {
        const error_code ec =
            co_await read_exact(stream, buffer, req.body, std::size_t(req.content_length), lease);
        if (ec)
            co_return lost(ec, "unexpected EOF");
        co_return body_read::done;
    }
    for (;;) {
        // chunk-size [; extensions] CRLF
        const std::string_view data = buffered(buffer);
        const std::size_t eol = data.substr(0, max_chunk_line).find('\n');
        if (eol == std::string_view::npos) {
            if (data.size() >= max_chunk_line)
                co_return fail("header line too long");
            const error_code ec = co_await fill(stream, buffer, lease, req.body.capacity());
            if (ec)
                co_return lost(ec, "unexpected EOF");
            continue;
        }
        if (eol + 1 >= max_chunk_line)
            co_return fail("header line too long");
        const chunk_size size = parse_chunk_size(data.substr(0, eol + 1));
        if (!size.error.empty())
            co_return fail(size.error);
        buffer.consume(eol + 1);
        if (size.value == 0)
            break;
        if (size.value > std::uint64_t(limit) - req.body.size())
            co_return fail(body_too_large);
        const error_code ec =
            co_await read_exact(stream, buffer, req.body, std::size_t(size.value), lease);
        if (ec)
            co_return lost(ec, "unexpected EOF");
        while (buffer.size() < 2) {
            const error_code fec = co_await fill(stream, buffer, lease, req.body.capacity());
            if (fec)
                co_return lost(fec, "unexpected EOF");
        }
        if (!buffered(buffer).starts_with("\r\n"))
            co_return fail("malformed chunked encoding");
        buffer.consume(2);
    }
    // The trailer: a CRLF alone, or header lines and an empty one, all in what Go peeks at.
    while (buffer.size() < 2) {
        const error_code ec = co_await fill(stream, buffer, lease, req.body.capacity());
        if (ec)
            co_return lost(ec, "http: unexpected EOF reading trailer");
    }
    if (buffered(buffer).starts_with("\r\n")) {
        buffer.consume(2);
        co_return body_read::done;
    }
    constexpr std::string_view too_long = "http: suspiciously long trailer after chunked body";
    for (;;) {
        const std::string_view data = buffered(buffer);
        const std::size_t end = data.substr(0, max_trailer).find("\r\n\r\n");
        if (end != std::string_view::npos) {
            const std::string error = trailer_error(data.substr(0, end + 2));
            if (!error.empty())
                co_return fail(error);
            buffer.consume(end + 4);
            co_return body_read::done;
        }
        if (data.size() >= max_trailer)
            co_return fail(too_long);
        const error_code ec = co_await fill(stream, buffer, lease, req.body.capacity());
        if (ec)
            co_return lost(ec, too_long); // (Go peeks until its buffer is full or the end)
    }
}

bool make_request(const request_parser& parser, http_request& req) {
    const auto& h = parser.get();
    req.method = std::string(h.method_string());
    // Views into the parser's copy: only the decoded path and the raw query are kept.
    std::string_view target(h.target().data(), h.target().size());
    if (target.starts_with("http://") || target.starts_with("https://")) {
        target.remove_prefix(target.find("//") + 2);
        const auto slash = target.find_first_of("/?");
        target = slash == std::string_view::npos ? std::string_view{} : target.substr(slash);
        if (target.empty() || target.front() == '?')
            return false;
    } else if (target.empty() || target.front() != '/') {
        return false;
    }
    const auto q = target.find('?');
    req.raw_query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
    auto path = path_unescape(target.substr(0, q));
    if (!path)
        return false;
    req.path = std::move(*path);
    req.query = parse_query(req.raw_query);
    req.namespace_header = parser.namespace_header;
    if (parser.chunked()) {
        req.content_length = -1;
    } else if (const auto len = parser.content_length()) {
        // Go's strconv.ParseInt(cl, 10, 64): one that does not fit int64 is a bad request.
        if (*len > std::uint64_t(INT64_MAX))
            return false;
        req.content_length = static_cast<std::int64_t>(*len);
    } else {
        req.content_length = 0;
    }
    return true;
}

} // namespace conclave::dev::detail
