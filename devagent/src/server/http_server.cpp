// SPDX-License-Identifier: BSL-1.0
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/go/goutil.hpp"
#include "devagent/src/server/beast_response_head.hpp"
#include "devagent/src/server/http_server.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <map>
#include <unistd.h>
#include <unordered_set>

namespace conclave::dev::detail {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

// The limits and timeouts a client can meet are in agent_config (docs/dev-agent.md,
// "Limits"); these are the fixed ones.

// Go's net/http limits on a chunked body (net/http/internal/chunked.go, transfer.go): a
// chunk-size line, CRLF included, shorter than maxLineLength, and a trailer that fits the
// connection's 4 KiB bufio.Reader.
constexpr std::size_t max_chunk_line = 4096;
constexpr std::size_t max_trailer = 4096;
// The read buffer a connection starts with (a usual request fits), and what a connection may
// buffer of a request, head and body, without drawing on request_memory_limit.
constexpr std::size_t initial_buffer = 16 * 1024;
constexpr std::size_t free_request_bytes = 64 * 1024;
// The longest the watchdog sleeps (see connection).
constexpr auto watchdog_period = 60s;
// After an answer that closes the connection: how long, and how much, the client's further
// bytes are read and dropped before the close (so the answer is not lost to a TCP reset).
constexpr auto drain_time = 2s;
constexpr std::int64_t drain_bytes = 1 << 20;

constexpr auto use = asio::as_tuple(asio::use_awaitable);

// An answer Go's server writes itself, before any handler: no Date, no Content-Length,
// then it closes the connection.
std::string raw_answer(std::string_view status, std::string_view body) {
    std::string out = "HTTP/1.1 ";
    out += status;
    out += "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n";
    out += body;
    return out;
}

// Go's answer to a request it cannot parse ("400 Bad Request[: detail]" as the body too).
std::string raw_error(std::string_view status, std::string_view detail = {}) {
    std::string body(status);
    if (!detail.empty()) {
        body += ": ";
        body += detail;
    }
    return raw_answer(status, body);
}

// Go's answer to a Transfer-Encoding other than one field "chunked" (HTTP/1.1).
std::string unsupported_transfer_encoding() {
    return raw_answer("501 Not Implemented", "Unsupported transfer encoding");
}

} // namespace

// A connection is also the stream Beast reads and writes (AsyncReadStream and
// AsyncWriteStream over its socket), with beast::tcp_stream's timeouts kept another way.
// tcp_stream arms, and cancels, a timer around every read and write (two timer operations and
// their handlers per request, a visible share of a request's cost). Here each operation only
// records its deadline, and one watchdog timer, armed at most watchdog_period ahead, checks
// it when it fires: a deadline earlier than the watchdog's re-arms it, so every deadline is
// enforced on time. On expiry the socket is closed, which fails the pending operation as
// tcp_stream's timeout does.
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
    bool timed_out = false; ///< the watchdog closed it (a client too slow or idle too long)
    bool draining = false;  ///< (close_gracefully(): the end of its drain is no timeout)
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

    /// The operations that follow must end by `at` (tcp_stream::expires_at).
    void expires_at(clock::time_point at) {
        deadline = at;
        if (deadline < watchdog_at)
            wait_until(std::min(deadline, clock::now() + watchdog_period));
    }
    /// The operations that follow must end within d (tcp_stream::expires_after).
    void expires_after(clock::duration d) { expires_at(clock::now() + d); }
    /// The operations that follow must end within d of `from`: one of agent_config's
    /// timeouts, where 0 (or less) means none, as in Go's http.Server (so does one too far
    /// ahead for the clock).
    void expires_within(clock::time_point from, std::chrono::milliseconds d) {
        if (d <= d.zero() || d >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                      clock::time_point::max() - from))
            expires_never();
        else
            expires_at(from + d);
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
            timed_out = !draining;
            boost::system::error_code ignored;
            sock.close(ignored);
            return;
        }
        wait_until(std::min(deadline, now + watchdog_period));
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
    server_hooks hooks; ///< (the fuzzer's; unset otherwise)
    /// What connections hold of the requests they read beyond free_request_bytes each
    /// (agent_config::request_memory_limit; see memory_lease).
    std::size_t request_memory = 0;

    static asio::awaitable<void> accept_loop(std::shared_ptr<impl> self,
                                             std::shared_ptr<agent_impl> owner);
    /// Serves an accepted connection of `client`, or refuses it (max_conns_per_client; not
    /// applied when the client's address is unknown).
    static void admit(const std::shared_ptr<impl>& self, const std::shared_ptr<agent_impl>& owner,
                      tcp::socket socket, const asio::ip::address& client, bool client_known);
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

std::string_view trim_value(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t'))
        v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t'))
        v.remove_suffix(1);
    return v;
}

// Beast's request parser keeping none of the header fields. Beast's field list throws
// std::length_error for a name or value over 65,535 bytes (Go takes any that fits
// MaxHeaderBytes) and costs an allocation per field, so a head of many small fields would
// cost several times its size; the server needs only what is noted here (the parser itself
// keeps Content-Length, chunked and the Connection tokens). The body is left to read_body()
// (skip), which reads it as Go does.
class request_parser : public http::request_parser<http::empty_body> {
public:
    explicit request_parser(std::size_t header_limit) {
        this->header_limit(
            static_cast<std::uint32_t>(std::min<std::size_t>(header_limit, UINT32_MAX)));
        skip(true);
    }

    unsigned hosts = 0;              ///< Host fields
    unsigned transfer_encodings = 0; ///< Transfer-Encoding fields
    bool te_chunked = false;         ///< the last Transfer-Encoding is "chunked" (trimmed)
    bool expect_continue = false;    ///< Expect: 100-continue

    /// Go 1.14's fixTransferEncoding (Consul 1.8): one Transfer-Encoding field, its value
    /// "chunked" (any case, trimmed), or none; anything else is answered 501 ("gzip,
    /// chunked", two fields, even "chunked" twice).
    bool transfer_encoding_supported() const {
        return transfer_encodings == 0 || (transfer_encodings == 1 && te_chunked);
    }

private:
    void on_field_impl(http::field name, beast::string_view, beast::string_view value,
                       error_code&) override {
        switch (name) {
        case http::field::host:
            ++hosts;
            break;
        case http::field::transfer_encoding:
            ++transfer_encodings;
            te_chunked =
                beast::iequals(trim_value(std::string_view(value.data(), value.size())), "chunked");
            break;
        case http::field::expect:
            expect_continue = beast::iequals(
                trim_value(std::string_view(value.data(), value.size())), "100-continue");
            break;
        default:
            break;
        }
    }
};

// What one connection holds of its request beyond free_request_bytes (read buffer, body,
// and the parsed request until it is answered, a blocking query's wait included), drawn
// from the agent's request_memory_limit: a flood of large requests is refused rather than
// given memory without bound.
class memory_lease {
public:
    memory_lease(std::size_t& pool, std::size_t limit)
        : pool_(pool)
        , limit_(limit) {}
    ~memory_lease() { pool_ -= held_; }
    memory_lease(const memory_lease&) = delete;
    memory_lease& operator=(const memory_lease&) = delete;

    /// The connection is to hold `bytes` of buffers (read buffer, body being read) besides
    /// the request it keeps (keep()): false (holding what it held) when the budget cannot
    /// give that much.
    bool fit(std::size_t bytes) { return take(bytes + kept_); }
    /// The connection keeps a parsed request of `request` bytes (0: none) until it is
    /// answered (a blocking query's whole wait), besides `buffers` bytes of buffers: false
    /// (holding what it held) when the budget cannot give that much. Never false for less.
    bool keep(std::size_t request, std::size_t buffers) {
        if (!take(request + buffers))
            return false;
        kept_ = request;
        return true;
    }

private:
    bool take(std::size_t bytes) {
        const std::size_t want = bytes > free_request_bytes ? bytes - free_request_bytes : 0;
        if (want > held_ && limit_ != 0 && pool_ - held_ + want > limit_)
            return false;
        pool_ = pool_ - held_ + want;
        held_ = want;
        return true;
    }

    std::size_t& pool_;
    std::size_t limit_;
    std::size_t held_ = 0;
    std::size_t kept_ = 0;
};

// What a parsed request holds (its strings' capacities): its target about three times
// (path, raw query, parsed query), and its body.
std::size_t request_bytes(const http_request& r) {
    std::size_t n = r.method.capacity() + r.path.capacity() + r.raw_query.capacity() +
                    r.body.capacity() + r.body_error.capacity() +
                    r.query.pairs.capacity() * sizeof(r.query.pairs.front());
    for (const auto& [key, value] : r.query.pairs)
        n += key.capacity() + value.capacity();
    return n;
}

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

// Gives a buffer that a large request grew back its usual size.
void trim_buffer(beast::flat_buffer& b) {
    if (b.capacity() > 4 * initial_buffer && b.size() <= initial_buffer) {
        b.shrink_to_fit();
        b.reserve(initial_buffer);
    }
}

// Whether a read failed on the connection (it ended, failed or timed out) rather than on
// what the client sent.
bool is_transport_error(const error_code& ec) {
    return ec.category() != http::make_error_code(http::error::need_more).category();
}

// Reads a request head into the parser, as Go's server: a kept-alive connection (idle)
// first waits up to idle_timeout for a byte; from the request's first byte (a new
// connection's: from its accept) the head has read_header_timeout. `started` is when the
// request began. An error of Beast's http category is the client's (header_limit: too
// large); any other, the connection's.
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
            return "malformed MIME header: missing colon: " + go_quote(line);
    }
    return {};
}

enum class body_read {
    done,
    failed, ///< req.body_error says why: answered by the route, then the connection closes
    gone,   ///< the connection failed or timed out: closed without an answer
};

// Reads a request body into req.body as Go's net/http reads one for Consul's handler: by
// its Content-Length, or chunked with Go's line and trailer limits and error texts; at most
// `limit` bytes (over it: body_too_large).
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

// Go's net/http parses the request target into URL.Path (decoded) and RawQuery.
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
        admit(self, owner, std::move(socket), client, !peer_ec);
    }
}

void http_server::impl::admit(const std::shared_ptr<impl>& self,
                              const std::shared_ptr<agent_impl>& owner, tcp::socket socket,
                              const asio::ip::address& client, bool client_known) {
    try {
        const std::size_t limit = owner->cfg.max_conns_per_client;
        self->count_out_expired();
        if (client_known && limit > 0 && self->open_per_client[client] >= limit) {
            ++owner->counters.connections_refused;
            asio::co_spawn(owner->ex, refuse(std::move(socket)), [](std::exception_ptr) {});
            return;
        }
        // Counted before serve() starts (it may run at once, and counts it out), and
        // counted out again should the spawn fail.
        ++self->open_per_client[client];
        struct uncount {
            impl& s;
            const asio::ip::address& client;
            bool spawned = false;
            ~uncount() {
                if (!spawned)
                    s.count_out(client);
            }
        } count_guard{*self, client};
        auto conn = std::make_shared<connection>(std::move(socket));
        const auto ex = owner->ex;
        asio::co_spawn(ex, serve(self, owner, std::move(conn), client), [](std::exception_ptr) {
            // A failing connection only ends itself.
        });
        count_guard.spawned = true;
        ++owner->counters.connections_accepted;
    } catch (const std::exception&) {
        // (Out of memory, say: this connection is dropped, the agent keeps accepting.)
        ++owner->counters.internal_errors;
    }
}

asio::awaitable<void> http_server::impl::refuse(tcp::socket socket) {
    // Consul's bytes (go-connlimit's HTTP answer), written before reading anything. They fit
    // any socket buffer: the write does not wait for the client.
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

// One connection: requests read, answered and kept alive as Go's server does, with the
// limits of agent_config. A request that breaks an HTTP rule or limit is answered (Go's
// own answer, or the route's to a body it could not read) and its connection closed; a
// client too slow or idle too long is closed without an answer (as Go does on its
// timeouts). No exception leaves: the last catch counts it and closes the connection.
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
            if (c->timed_out)
                ++a.counters.connections_timed_out;
            if (c->counted_until_time > connection::clock::now())
                s->counted_until.emplace(c->counted_until_time, client);
            else
                s->count_out(client);
        }
    } guard{self, *owner, conn.get(), client};

    connection& stream = *conn;
    if (self->stopped) {
        // Stopped between the spawn and this start: stop() did not see this connection.
        boost::system::error_code ec;
        stream.socket().close(ec);
        co_return;
    }
    const agent_config& cfg = owner->cfg;
    agent_stats& counters = owner->counters;
    // The head is refused (header_limit) before it fills the buffer; chunk lines and the
    // trailer are shorter still. Beast reads at most the buffer's free capacity (512 bytes
    // at first), and the parser drains it as it goes: room for a whole usual request saves
    // reads.
    // (A max_header_bytes too large to add to: the largest buffer there is.)
    const std::size_t buffer_max = std::max(cfg.max_header_bytes, 4 * max_chunk_line);
    beast::flat_buffer buffer(buffer_max < SIZE_MAX ? buffer_max + 1 : SIZE_MAX);
    buffer.reserve(initial_buffer);
    memory_lease lease(self->request_memory, cfg.request_memory_limit);
    std::string out_head; // a response's head, reused for the next one
    std::string refusal;  // Go's own answer to a request it does not serve
    bool idle = false;    // a kept-alive connection between requests
    try {
        for (;;) {
            http_request req;
            unsigned version = 11;
            bool keep_alive_requested = false;
            {
                // The parser only lives while the request is read: a blocking query keeps
                // nothing of its head but the request.
                request_parser parser(cfg.max_header_bytes);
                connection::clock::time_point started;
                const error_code ec =
                    co_await read_head(stream, buffer, parser, cfg, lease, idle, started);
                if (ec) {
                    // (Beast refuses a second Transfer-Encoding field itself.)
                    if (!self->stopped && !is_transport_error(ec))
                        refusal = ec == http::error::header_limit
                                      ? raw_error("431 Request Header Fields Too Large")
                                  : ec == http::error::bad_transfer_encoding &&
                                          parser.transfer_encodings != 0
                                      ? unsupported_transfer_encoding()
                                      : raw_error("400 Bad Request");
                    break;
                }
                version = parser.get().version();
                if (!make_request(parser, req)) {
                    refusal = raw_error("400 Bad Request");
                    break;
                }
                if (version >= 11 && parser.hosts == 0) {
                    refusal = raw_error("400 Bad Request", "missing required Host header");
                    break;
                }
                if (parser.hosts > 1) {
                    refusal = raw_error("400 Bad Request");
                    break;
                }
                if (!parser.transfer_encoding_supported()) {
                    refusal = unsupported_transfer_encoding();
                    break;
                }
                // The request (and the parser's copy of its target) counts against the
                // budget until it is answered: a blocking query keeps it while it waits.
                if (!lease.keep(request_bytes(req) + parser.get().target().size(),
                                buffer.capacity())) {
                    refusal = raw_error("431 Request Header Fields Too Large");
                    break;
                }
                keep_alive_requested = parser.keep_alive();

                const std::int64_t limit = body_limit(cfg, req);
                if (req.content_length > limit) {
                    req.body_unread = true;
                    req.body_error = std::string(body_too_large);
                } else if (req.content_length != 0) {
                    if (parser.expect_continue) {
                        const bool sent = co_await write_raw(
                            stream, "HTTP/1.1 100 Continue\r\n\r\n", cfg.write_timeout);
                        if (!sent)
                            break;
                    }
                    stream.expires_within(started, cfg.read_timeout);
                    const body_read got =
                        co_await read_body(stream, buffer, req, parser.chunked(), limit, lease);
                    if (got == body_read::gone)
                        break;
                }
            }
            // The body goes to the handler; the buffer keeps only what follows (pipelined).
            trim_buffer(buffer);
            if (self->hooks.on_request)
                self->hooks.on_request(req);
            lease.keep(request_bytes(req), buffer.capacity()); // (less than it held)
            const bool head = req.method == "HEAD";
            const bool body_unread = req.body_unread;
            const bool body_failed = !req.body_error.empty();
            const std::int64_t content_length = req.content_length;
            if (body_failed)
                ++counters.requests_rejected;

            stream.expires_never(); // a blocking query may wait 10 minutes
            // dispatch() unrolled: most requests are answered without a coroutine frame.
            http_response resp;
            if (auto now = dispatch_now(*owner, req)) {
                resp = std::move(*now);
            } else {
                // A blocking query (a GET, which ignores its body) may wait 10 minutes: it
                // keeps its path and query, counted, and gives its body back.
                std::string().swap(req.body);
                lease.keep(request_bytes(req), buffer.capacity());
                // (The fuzzer's on_answer sees the request after the wait: a copy waits. Not
                // as one conditional expression: with g++ 12 that co_await argument crashed,
                // free(): invalid pointer.)
                if (self->hooks.on_answer)
                    resp = co_await dispatch_wait(owner, http_request(req), conn.get());
                else
                    resp = co_await dispatch_wait(owner, std::move(req), conn.get());
            }
            if (self->hooks.on_answer)
                self->hooks.on_answer(req, resp);
            {
                const http_request answered = std::move(req); // (freed here)
            }
            lease.keep(0, buffer.capacity());
            if (self->stopped || resp.drop)
                break;
            // Go does not keep a connection whose body was refused, unread or unreadable.
            const bool keep_alive =
                keep_alive_requested && !resp.close && !body_unread && !body_failed;
            const bool http10_keep_alive = keep_alive && version < 11;
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
            stream.expires_within(connection::clock::now(), cfg.write_timeout);
            const std::array<asio::const_buffer, 2> message{asio::buffer(out_head),
                                                            asio::buffer(resp.body)};
            auto [wec, wn] = co_await asio::async_write(stream, message, use);
            (void)wn;
            if (wec)
                break;
            if (!keep_alive) {
                // (A Content-Length may be up to INT64_MAX: capped before adding.)
                co_await close_gracefully(
                    stream, body_unread
                                ? std::min<std::int64_t>(content_length, 16 << 20) + (64 << 10)
                                : drain_bytes);
                break;
            }
            idle = true;
        }
        // What the connection read is no longer needed: others may have its share of the
        // budget while it says goodbye.
        buffer.consume(buffer.size());
        buffer.shrink_to_fit();
        lease.keep(0, 0);
        if (!refusal.empty()) {
            ++counters.requests_rejected;
            const bool sent = co_await write_raw(stream, refusal, cfg.write_timeout);
            if (sent)
                co_await close_gracefully(stream, drain_bytes);
        }
    } catch (const std::exception&) {
        // Never let one connection's trouble escape.
        ++counters.internal_errors;
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

void http_server::set_hooks(server_hooks hooks) {
    p_->hooks = std::move(hooks);
}

void http_server::adopt(int descriptor, const std::string& client_address) {
    tcp::socket socket(p_->agent.ex);
    boost::system::error_code ec;
    socket.assign(tcp::v4(), descriptor, ec);
    if (ec) {
        ::close(descriptor);
        return;
    }
    if (p_->stopped)
        return; // (closed with the socket)
    const auto owner = p_->agent.shared_from_this();
    impl::admit(p_, owner, std::move(socket), asio::ip::make_address(client_address), true);
}

} // namespace conclave::dev::detail
