// SPDX-License-Identifier: BSL-1.0
#include "agent_impl.hpp"
#include "beast_response_head.hpp"
#include "http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <array>
#include <charconv>
#include <cstring>
#include <ctime>
#include <map>
#include <unordered_set>

namespace conclave::dev::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t header_limit = (1u << 20) + 4096; // Go's MaxHeaderBytes + slack
constexpr std::int64_t generic_body_limit = 8 << 20;
constexpr auto idle_timeout = 10min;
constexpr auto io_timeout = 60s;

constexpr auto use = asio::as_tuple(asio::use_awaitable);

// Go's answer to a request it cannot parse.
std::string raw_error(std::string_view status, std::string_view detail = {}) {
    std::string body(status);
    if (!detail.empty()) {
        body += ": ";
        body += detail;
    }
    return "HTTP/1.1 " + std::string(status) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n" + body;
}

} // namespace

// A connection is also the stream Beast reads and writes (AsyncReadStream and
// AsyncWriteStream over its socket), with beast::tcp_stream's timeouts kept another way.
// tcp_stream arms, and cancels, a timer around every read and write (two timer operations and
// their handlers per request, ~10% of a request's instructions). Here each operation only
// records its deadline, and one watchdog timer, armed at most io_timeout ahead, checks it
// when it fires: a deadline is still enforced on time, since any deadline set later is at
// least io_timeout away (the shorter drain deadline re-arms the watchdog). On expiry the
// socket is closed, which fails the pending operation as tcp_stream's timeout does.
// Not final: Asio's executor detection derives from the I/O objects it is given.
struct connection : disconnect_probe, std::enable_shared_from_this<connection> {
    using clock = std::chrono::steady_clock;
    using executor_type = tcp::socket::executor_type;

    explicit connection(tcp::socket s)
        : sock(std::move(s))
        , watchdog(sock.get_executor()) {}

    tcp::socket sock;
    asio::steady_timer watchdog;
    clock::time_point deadline = clock::time_point::max();
    clock::time_point watchdog_at = clock::time_point::max(); ///< max: not waiting
    bool finished = false;
    std::function<void()> on_gone;
    clock::time_point counted_until_time{}; ///< (disconnect_probe::counted_until)
    std::uint64_t generation = 0;
    bool armed = false;

    tcp::socket& socket() { return sock; }
    executor_type get_executor() { return sock.get_executor(); }

    template <class MutableBuffers, class Token>
    auto async_read_some(const MutableBuffers& buffers, Token&& token) {
        return sock.async_read_some(buffers, std::forward<Token>(token));
    }
    template <class ConstBuffers, class Token>
    auto async_write_some(const ConstBuffers& buffers, Token&& token) {
        return sock.async_write_some(buffers, std::forward<Token>(token));
    }

    /// The operations that follow must end within d (tcp_stream::expires_after).
    void expires_after(clock::duration d) {
        const auto now = clock::now();
        deadline = now + d;
        if (deadline < watchdog_at)
            wait_until(std::min(deadline, now + io_timeout));
    }
    /// No time limit (tcp_stream::expires_never): a blocking query may wait 10 minutes.
    void expires_never() { deadline = clock::time_point::max(); }
    /// The connection is done: stop the watchdog (its handler holds the connection).
    void finish() {
        finished = true;
        watchdog.cancel();
    }

    void wait_until(clock::time_point at) {
        watchdog_at = at;
        watchdog.expires_at(at); // cancels a pending wait: its handler sees operation_aborted
        watchdog.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            self->watchdog_fired(ec);
        });
    }

    void watchdog_fired(const boost::system::error_code& ec) {
        if (ec || finished)
            return; // re-armed meanwhile, or done
        watchdog_at = clock::time_point::max();
        const auto now = clock::now();
        if (now >= deadline) {
            boost::system::error_code ignored;
            sock.close(ignored);
            return;
        }
        wait_until(std::min(deadline, now + io_timeout));
    }

    void arm(std::function<void()> cb) override {
        on_gone = std::move(cb);
        armed = true;
        const std::uint64_t gen = ++generation;
        auto self = shared_from_this();
        sock.async_wait(tcp::socket::wait_read, [self, gen](const boost::system::error_code& ec) {
            self->probe_ready(ec, gen);
        });
    }

    void counted_until(clock::time_point until) override { counted_until_time = until; }

    void disarm() override {
        if (!armed)
            return;
        armed = false;
        ++generation;
        on_gone = nullptr;
        boost::system::error_code ec;
        sock.cancel(ec);
    }

    void probe_ready(const boost::system::error_code& ec, std::uint64_t gen) {
        if (ec == asio::error::operation_aborted || gen != generation || !armed)
            return;
        bool gone = static_cast<bool>(ec);
        if (!gone) {
            char byte = 0;
            boost::system::error_code rec;
            const std::size_t n =
                sock.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, rec);
            gone = rec || n == 0;
        }
        if (!gone)
            return; // the next request is already here (pipelining): stop watching
        armed = false;
        auto cb = std::move(on_gone);
        on_gone = nullptr;
        if (cb)
            cb();
    }
};

struct http_server::impl : std::enable_shared_from_this<http_server::impl> {
    explicit impl(agent_impl& a)
        : agent(a)
        , acceptor(a.ex) {}

    agent_impl& agent;
    tcp::acceptor acceptor;
    std::unordered_set<connection*> connections;
    std::map<asio::ip::address, std::size_t> open_per_client; // (max_conns_per_client)
    std::multimap<std::chrono::steady_clock::time_point, asio::ip::address> counted_until;
    std::uint16_t port = 0;
    bool stopped = false;

    static asio::awaitable<void> accept_loop(std::shared_ptr<impl> self,
                                             std::shared_ptr<agent_impl> owner);
    /// Consul's answer to a connection beyond max_conns_per_client: a 429, then close.
    static asio::awaitable<void> refuse(tcp::socket socket);
    /// A connection of `client` no longer counts against max_conns_per_client.
    void count_out(const asio::ip::address& client) {
        if (--open_per_client[client] == 0)
            open_per_client.erase(client);
    }
    /// Counts out, when it comes, the connections whose count outlives them (see
    /// disconnect_probe::counted_until). Only an accept needs the counts: no timer.
    void count_out_expired() {
        const auto now = std::chrono::steady_clock::now();
        while (!counted_until.empty() && counted_until.begin()->first <= now) {
            count_out(counted_until.begin()->second);
            counted_until.erase(counted_until.begin());
        }
    }
    static asio::awaitable<void> serve(std::shared_ptr<impl> self,
                                       std::shared_ptr<agent_impl> owner,
                                       std::shared_ptr<connection> conn, asio::ip::address client);
};

namespace {

// Shuts the sending side, reads (and drops) what the client still sends for a moment so
// the answer is not lost to a TCP reset, then closes.
asio::awaitable<void> close_gracefully(connection& stream, std::int64_t max_drain) {
    boost::system::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream.expires_after(2s);
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

asio::awaitable<bool> write_raw(connection& stream, const std::string& bytes) {
    stream.expires_after(io_timeout);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(bytes), use);
    (void)n;
    co_return !ec;
}

// Feeds the parser what the buffer holds of the body: an error, or none with the body done
// or waiting for more bytes.
error_code parse_buffered_body(http::request_parser<http::string_body>& parser,
                               beast::flat_buffer& buffer) {
    parser.eager(true); // on through the body (after the head, put() stops by default)
    while (!parser.is_done() && buffer.size() != 0) {
        error_code ec;
        const std::size_t used = parser.put(buffer.data(), ec);
        buffer.consume(used);
        if (ec == http::error::need_more)
            return {};
        if (ec)
            return ec;
        if (used == 0)
            return {};
    }
    return {};
}

// Go's net/http parses the request target into URL.Path (decoded) and RawQuery.
bool make_request(const http::request_parser<http::string_body>& parser, http_request& req) {
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
    if (parser.chunked())
        req.content_length = -1;
    else if (const auto len = parser.content_length())
        req.content_length = static_cast<std::int64_t>(*len);
    else
        req.content_length = 0;
    return true;
}

// Requests whose body Consul refuses by its Content-Length without reading it.
std::int64_t early_limit(const agent_impl& a, const http_request& req) {
    const auto kv = static_cast<std::int64_t>(a.cfg.kv_max_value_size);
    if (req.method == "PUT" && req.path.starts_with("/v1/kv/"))
        return kv;
    if (req.method == "PUT" && req.path == "/v1/txn")
        return std::max<std::int64_t>(524288, kv);
    return generic_body_limit;
}

// The Date header, formatted once per second rather than per response.
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

// Takes the body over: responses can be large (a KV tree), and `r` is not used afterwards.
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

std::string_view trim_value(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return v;
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

asio::awaitable<void> http_server::impl::accept_loop(std::shared_ptr<impl> self,
                                                     std::shared_ptr<agent_impl> owner) {
    for (;;) {
        auto [ec, socket] = co_await self->acceptor.async_accept(use);
        if (self->stopped || !self->acceptor.is_open())
            co_return;
        if (ec) {
            if (ec == asio::error::operation_aborted)
                co_return;
            // Out of descriptors and the like: back off a little, keep serving.
            asio::steady_timer pause(owner->ex, 50ms);
            co_await pause.async_wait(use);
            continue;
        }
        boost::system::error_code nodelay_ec;
        socket.set_option(tcp::no_delay(true), nodelay_ec);
        boost::system::error_code peer_ec;
        const auto client = socket.remote_endpoint(peer_ec).address();
        const std::size_t limit = owner->cfg.max_conns_per_client;
        self->count_out_expired();
        if (!peer_ec && limit > 0 && self->open_per_client[client] >= limit) {
            asio::co_spawn(owner->ex, refuse(std::move(socket)), [](std::exception_ptr) {});
            continue;
        }
        ++self->open_per_client[client]; // (serve() counts it out)
        auto conn = std::make_shared<connection>(std::move(socket));
        ++owner->counters.connections_accepted;
        const auto ex = owner->ex;
        asio::co_spawn(ex, serve(self, owner, std::move(conn), client), [](std::exception_ptr) {
            // A failing connection only ends itself.
        });
    }
}

asio::awaitable<void> http_server::impl::refuse(tcp::socket socket) {
    // Consul's bytes (go-connlimit's HTTP answer), written before reading anything.
    static constexpr std::string_view too_many =
        "HTTP/1.1 429 Too Many Requests\r\n"
        "Content-Type: text/plain\r\n"
        "Content-Length: 81\r\n"
        "Connection: close\r\n"
        "\r\n"
        "Your IP is issuing too many concurrent connections, please rate limit your calls\n";
    co_await asio::async_write(socket, asio::buffer(too_many), use);
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
}

asio::awaitable<void> http_server::impl::serve(std::shared_ptr<impl> self,
                                               std::shared_ptr<agent_impl> owner,
                                               std::shared_ptr<connection> conn,
                                               asio::ip::address client) {
    self->connections.insert(conn.get());
    ++owner->counters.connections_open;
    struct unregister {
        std::shared_ptr<impl> s;
        agent_impl& a;
        connection* c;
        asio::ip::address client;
        ~unregister() {
            s->connections.erase(c);
            --a.counters.connections_open;
            if (c->counted_until_time > connection::clock::now())
                s->counted_until.emplace(c->counted_until_time, client);
            else
                s->count_out(client);
        }
    } guard{self, *owner, conn.get(), client};

    connection& stream = *conn;
    beast::flat_buffer buffer;
    // Beast reads at most the buffer's free capacity (512 bytes at first), and the parser
    // drains it as it goes, so it never grows: room for a whole usual request saves reads.
    buffer.reserve(16 * 1024);
    std::string out_head; // a response's head, reused for the next one
    try {
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.header_limit(header_limit);
            parser.body_limit(std::uint64_t(generic_body_limit));
            stream.expires_after(idle_timeout);
            auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, use);
            (void)n;
            if (ec) {
                if (ec == http::error::end_of_stream || ec == asio::error::eof ||
                    ec == beast::error::timeout || ec == asio::error::operation_aborted ||
                    ec == asio::error::connection_reset || ec == http::error::partial_message ||
                    self->stopped)
                    break;
                if (ec == http::error::header_limit) {
                    if (co_await write_raw(stream,
                                           raw_error("431 Request Header Fields Too Large")))
                        co_await close_gracefully(stream, 1 << 20);
                    break;
                }
                if (co_await write_raw(stream, raw_error("400 Bad Request")))
                    co_await close_gracefully(stream, 1 << 20);
                break;
            }
            const auto& header = parser.get();
            http_request req;
            if (!make_request(parser, req)) {
                if (co_await write_raw(stream, raw_error("400 Bad Request")))
                    co_await close_gracefully(stream, 1 << 20);
                break;
            }
            // basic_fields::find(field) looks the name up as a string (~260 instructions);
            // the fields know their field already.
            const auto has_host = [&] {
                for (const auto& f : header)
                    if (f.name() == http::field::host)
                        return true;
                return false;
            };
            if (header.version() >= 11 && !has_host()) {
                if (co_await write_raw(
                        stream, raw_error("400 Bad Request", "missing required Host header")))
                    co_await close_gracefully(stream, 1 << 20);
                break;
            }
            const bool head = req.method == "HEAD";
            const bool keep_alive_requested = header.keep_alive();

            // Consul refuses some bodies by their Content-Length before reading them; the
            // connection is then closed after the answer (Go does not keep it alive with a
            // large unread body).
            const std::int64_t limit = early_limit(*owner, req);
            if (req.content_length > limit) {
                req.body_unread = true;
                http_response resp = co_await dispatch(owner, req, conn.get());
                if (resp.drop)
                    break;
                resp.close = true;
                auto res = to_beast(std::move(resp), head, false);
                stream.expires_after(io_timeout);
                auto [wec, wn] = co_await http::async_write(stream, res, use);
                (void)wn;
                if (!wec)
                    co_await close_gracefully(
                        stream, std::min<std::int64_t>(req.content_length + (64 << 10), 16 << 20));
                break;
            }

            if (!parser.is_done()) {
                const auto expect = header[http::field::expect];
                if (beast::iequals(expect, "100-continue")) {
                    if (!co_await write_raw(stream, "HTTP/1.1 100 Continue\r\n\r\n"))
                        break;
                }
                parser.body_limit(std::uint64_t(limit));
                // The body usually came with the head, in the same read: parsed from the
                // buffer here. http::async_read would do the same, but as a composed
                // operation completing through the event loop (~3,000 instructions and a
                // turn of the loop per PUT); it is left for a body still on its way.
                error_code bec = parse_buffered_body(parser, buffer);
                if (!bec && !parser.is_done()) {
                    stream.expires_after(io_timeout);
                    auto [rec, bn] = co_await http::async_read(stream, buffer, parser, use);
                    (void)bn;
                    bec = rec;
                }
                if (bec == http::error::body_limit) {
                    http::response<http::string_body> res{http::status::payload_too_large, 11};
                    res.set(http::field::content_type, "text/plain; charset=utf-8");
                    res.set(http::field::date, http_date(std::chrono::system_clock::now()));
                    res.body() = "http: request body too large";
                    res.prepare_payload();
                    res.keep_alive(false);
                    stream.expires_after(io_timeout);
                    auto [wec, wn] = co_await http::async_write(stream, res, use);
                    (void)wn;
                    if (!wec)
                        co_await close_gracefully(stream, 1 << 20);
                    break;
                }
                if (bec) {
                    if (bec != http::error::end_of_stream && bec != http::error::partial_message &&
                        bec != asio::error::eof && bec != beast::error::timeout &&
                        bec != asio::error::operation_aborted && !self->stopped) {
                        if (co_await write_raw(stream, raw_error("400 Bad Request")))
                            co_await close_gracefully(stream, 1 << 20);
                    }
                    break;
                }
            }
            req.body = std::move(parser.get().body());

            stream.expires_never();
            // dispatch() unrolled: most requests are answered without a coroutine frame.
            http_response resp;
            if (auto now = dispatch_now(*owner, req))
                resp = std::move(*now);
            else
                resp = co_await dispatch_wait(owner, std::move(req), conn.get());
            if (self->stopped || resp.drop)
                break;
            const bool keep_alive = keep_alive_requested && !resp.close;
            const bool http10_keep_alive = keep_alive && header.version() < 11;
            // The head as one string and the body: two buffers for one gathered write.
            out_head.clear();
            if (!append_response_head(out_head, resp, keep_alive, http10_keep_alive,
                                      current_http_date())) {
                auto res = to_beast(std::move(resp), head, keep_alive);
                if (http10_keep_alive)
                    res.set(http::field::connection, "keep-alive");
                append_beast_response_head(out_head, res);
                resp.body = std::move(res.body());
            }
            if (head)
                resp.body.clear(); // Content-Length stays the body's
            stream.expires_after(io_timeout);
            const std::array<asio::const_buffer, 2> message{asio::buffer(out_head),
                                                            asio::buffer(resp.body)};
            auto [wec, wn] = co_await asio::async_write(stream, message, use);
            (void)wn;
            if (wec)
                break;
            if (!keep_alive) {
                co_await close_gracefully(stream, 1 << 20);
                break;
            }
        }
    } catch (const std::exception&) {
        // Never let one connection's trouble escape.
    }
    boost::system::error_code ec;
    stream.socket().close(ec);
    stream.finish();
}

http_server::http_server(agent_impl& agent)
    : p_(std::make_shared<impl>(agent)) {}

http_server::~http_server() {
    stop();
}

void http_server::start(const std::string& address, std::uint16_t port) {
    const tcp::endpoint ep(asio::ip::make_address(address), port);
    p_->acceptor.open(ep.protocol());
    p_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    p_->acceptor.bind(ep);
    p_->acceptor.listen(asio::socket_base::max_listen_connections);
    p_->port = p_->acceptor.local_endpoint().port();
    auto owner = p_->agent.shared_from_this();
    const auto ex = p_->agent.ex;
    asio::co_spawn(ex, impl::accept_loop(p_, std::move(owner)), [](std::exception_ptr) {});
}

void http_server::stop() {
    if (p_->stopped)
        return;
    p_->stopped = true;
    boost::system::error_code ec;
    p_->acceptor.close(ec);
    for (connection* c : p_->connections) {
        c->socket().shutdown(tcp::socket::shutdown_both, ec);
        c->socket().close(ec);
    }
}

std::uint16_t http_server::port() const {
    return p_->port;
}

} // namespace conclave::dev::detail
