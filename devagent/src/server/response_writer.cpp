// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/server/field_value.hpp"
#include "devagent/src/server/http_server.hpp"
#include "devagent/src/server/response_writer.hpp"
#include "devagent/src/server/server_names.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/status.hpp>

#include <array>
#include <charconv>
#include <cstring>
#include <ctime>

namespace conclave::dev::detail {

using namespace std::chrono_literals;

namespace {

// An answer Go's server writes itself, before any handler: no Date, no Content-Length,
// then it closes the connection.
std::string raw_answer(std::string_view status, std::string_view body) {
    std::string out = "HTTP/1.1 ";
    out += status;
    out += "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n";
    out += body;
    return out;
}

char ascii_lower(char c) {
    return c >= 'A' && c <= 'Z' ? char(c + ('a' - 'A')) : c;
}

// Whether a and b are equal ignoring ASCII case, as beast::iequals (inline here, with the
// length compared first: most names differ in length).
bool same_name(std::string_view a, std::string_view b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i] && ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

// No name set twice (ignoring case), and none of the names the server sets itself: then
// Beast's fields are the route's headers in order, then Date, Content-Length, Connection.
bool names_distinct(const http_response& r) {
    const auto& h = r.headers;
    for (std::size_t i = 0; i < h.size(); ++i) {
        const std::string_view name = h[i].first;
        switch (name.size()) {
        case 4:
        case 10:
        case 14:
            if (same_name(name, "Date") || same_name(name, "Connection") ||
                same_name(name, "Content-Length"))
                return false;
            break;
        default:
            break;
        }
        for (std::size_t j = 0; j < i; ++j)
            if (h[j].first.size() == name.size() && same_name(name, h[j].first))
                return false;
    }
    return true;
}

char* put(char* w, std::string_view s) {
    std::memcpy(w, s.data(), s.size());
    return w + s.size();
}

} // namespace

std::string raw_error(std::string_view status, std::string_view detail) {
    std::string body(status);
    if (!detail.empty()) {
        body += ": ";
        body += detail;
    }
    return raw_answer(status, body);
}

std::string unsupported_transfer_encoding() {
    return raw_answer("501 Not Implemented", "Unsupported transfer encoding");
}

asio::awaitable<void> close_gracefully(connection& stream, std::int64_t max_drain) {
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.draining = true;
    stream.expires_after(drain_time);
    std::array<char, 16384> scratch;
    std::int64_t total = 0;
    while (total <= max_drain) {
        auto [rec, n] = co_await stream.async_read_some(asio::buffer(scratch), use);
        if (rec)
            break;
        total += std::int64_t(n);
    }
    stream.socket().close(ec);
}

asio::awaitable<bool> write_raw(connection& stream, std::string_view bytes,
                                std::chrono::milliseconds timeout) {
    stream.expires_within(connection::clock::now(), timeout);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(bytes), use);
    (void)n;
    co_return !ec;
}

const std::string& current_http_date() {
    // Per thread: agents may run on several threads (tests, embedded use).
    thread_local std::time_t formatted_at = -1;
    thread_local std::string text;
    const auto now = std::chrono::system_clock::now();
    const std::time_t second = std::chrono::system_clock::to_time_t(now);
    if (second != formatted_at) {
        text = http_date(now);
        formatted_at = second;
    }
    return text;
}

http::response<http::string_body> to_beast(http_response&& r, bool head, bool keep_alive) {
    http::response<http::string_body> res;
    res.version(11);
    res.result(r.status);
    for (const auto& [name, value] : r.headers)
        res.set(name, value);
    res.set(http::field::date, current_http_date());
    res.body() = std::move(r.body);
    res.prepare_payload();
    if (head)
        res.body().clear();
    res.keep_alive(keep_alive);
    return res;
}

bool append_response_head(std::string& out, const http_response& r, bool keep_alive,
                          bool http10_keep_alive, std::string_view date) {
    constexpr std::size_t max_fast = 16;
    if (r.headers.size() <= max_fast && names_distinct(r)) {
        // Sizes first, then one resize and plain copies (~20 appends otherwise).
        const std::string_view reason = http::obsolete_reason(static_cast<http::status>(r.status));
        std::array<char, 24> length;
        const std::size_t length_size =
            std::size_t(std::to_chars(length.data(), length.data() + length.size(),
                                      std::uint64_t(r.body.size()))
                            .ptr -
                        length.data());
        const std::string_view connection = http10_keep_alive ? "Connection: keep-alive\r\n"
                                            : !keep_alive     ? "Connection: close\r\n"
                                                              : "";
        // The trimmed values as (offset, size) in the value: no string_view to construct.
        std::size_t value_at[max_fast];
        std::size_t value_size[max_fast];
        std::size_t size = 9 + 3 + 1 + reason.size() + 2;
        for (std::size_t i = 0; i < r.headers.size(); ++i) {
            const std::string& value = r.headers[i].second;
            const std::string_view trimmed = trim_value(value);
            value_at[i] = std::size_t(trimmed.data() - value.data());
            value_size[i] = trimmed.size();
            size += r.headers[i].first.size() + 2 + trimmed.size() + 2;
        }
        size += 6 + date.size() + 2 + 16 + length_size + 2 + connection.size() + 2;
        const std::size_t at = out.size();
        out.resize(at + size);
        char* w = out.data() + at;
        w = put(w, "HTTP/1.1 ");
        *w++ = char('0' + r.status / 100 % 10);
        *w++ = char('0' + r.status / 10 % 10);
        *w++ = char('0' + r.status % 10);
        *w++ = ' ';
        w = put(w, reason);
        w = put(w, "\r\n");
        for (std::size_t i = 0; i < r.headers.size(); ++i) {
            w = put(w, r.headers[i].first);
            *w++ = ':';
            *w++ = ' ';
            w = put(w, std::string_view(r.headers[i].second).substr(value_at[i], value_size[i]));
            *w++ = '\r';
            *w++ = '\n';
        }
        w = put(w, "Date: ");
        w = put(w, date);
        w = put(w, "\r\nContent-Length: ");
        w = put(w, std::string_view(length.data(), length_size));
        w = put(w, "\r\n");
        w = put(w, connection);
        put(w, "\r\n");
        return true;
    }
    // Beast's basic_fields::set(): drop the fields of that name (ignoring case), append the
    // new one at the end, value trimmed of spaces and tabs.
    struct field {
        std::string_view name;
        std::string_view value;
    };
    std::array<field, 24> fields;
    std::size_t count = 0;
    if (r.headers.size() + 4 > fields.size())
        return false;
    const auto set = [&](std::string_view name, std::string_view value) {
        std::size_t kept = 0;
        for (std::size_t i = 0; i < count; ++i)
            if (!beast::iequals(fields[i].name, name))
                fields[kept++] = fields[i];
        count = kept;
        fields[count++] = field{name, trim_value(value)};
    };
    for (const auto& [name, value] : r.headers)
        set(name, value);
    set("Date", date);
    // prepare_payload() with a known body size.
    std::array<char, 24> length;
    const auto length_end =
        std::to_chars(length.data(), length.data() + length.size(), std::uint64_t(r.body.size()))
            .ptr;
    set("Content-Length", std::string_view(length.data(), std::size_t(length_end - length.data())));
    // keep_alive() on an HTTP/1.1 message: "close" added when not kept alive (the routes
    // never set Connection themselves).
    if (!keep_alive)
        set("Connection", "close");
    if (http10_keep_alive)
        set("Connection", "keep-alive");

    out += "HTTP/1.1 ";
    out += char('0' + r.status / 100 % 10);
    out += char('0' + r.status / 10 % 10);
    out += char('0' + r.status % 10);
    out += ' ';
    out.append(http::obsolete_reason(static_cast<http::status>(r.status)));
    out += "\r\n";
    for (std::size_t i = 0; i < count; ++i) {
        out.append(fields[i].name);
        out += ": ";
        out.append(fields[i].value);
        out += "\r\n";
    }
    out += "\r\n";
    return true;
}

} // namespace conclave::dev::detail
