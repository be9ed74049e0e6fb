// SPDX-License-Identifier: BSL-1.0
#include "http/connection.hpp"
#include "http/request.hpp"
#include "http/response_reader.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <openssl/ssl.h>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>

namespace conclave::detail::http {

namespace beast = boost::beast;
using asio::ip::tcp;
using unix_socket = asio::local::stream_protocol::socket;
using tls_stream = beast::ssl_stream<tcp::socket>;

namespace {

constexpr auto deferred_tuple = asio::as_tuple(asio::deferred);

template <class Stream>
constexpr bool is_tls = false;
template <>
constexpr bool is_tls<tls_stream> = true;

// How a stream's operations are awaited: deferred where the stream supports it (no
// coroutine frame per operation); Beast's TLS stream predates deferred.
template <class Stream>
constexpr auto await_token() {
    if constexpr (is_tls<Stream>)
        return asio::as_tuple(asio::use_awaitable);
    else
        return deferred_tuple;
}

// Bounds each exchange (and the connect) of one connection in time.
//
// Why not beast::basic_stream's timeouts: they arm and cancel a timer around every read and
// every write, each through a composed operation, so every request paid for several timer
// operations. Here an exchange arms one timer and cancels it when it ends:
// the cancel is needed, or an idle pooled connection's pending wait would keep the user's
// io_context::run() from returning (for up to a blocking read's timeout).
class watchdog {
public:
    watchdog(asio::any_io_executor ex, std::function<void()> on_expiry)
        : state_(std::make_shared<state>(std::move(ex), std::move(on_expiry))) {}

    watchdog(const watchdog&) = delete;
    watchdog& operator=(const watchdog&) = delete;

    /// What follows must be done by `deadline`.
    void arm(clock::time_point deadline) {
        state& s = *state_;
        s.deadline = deadline;
        s.expired = false;
        if (s.waiting_until > deadline)
            wait(state_, deadline);
    }

    /// Nothing to bound until the next arm().
    void disarm() {
        state& s = *state_;
        s.deadline = clock::time_point::max();
        if (s.waiting_until != clock::time_point::max()) {
            s.waiting_until = clock::time_point::max();
            s.timer.cancel();
        }
    }

    /// True when the deadline passed and the socket was closed for it.
    bool expired() const noexcept { return state_->expired; }

private:
    struct state {
        state(asio::any_io_executor ex, std::function<void()> f)
            : timer(std::move(ex))
            , on_expiry(std::move(f)) {}
        asio::steady_timer timer;
        std::function<void()> on_expiry;
        clock::time_point deadline = clock::time_point::max();
        clock::time_point waiting_until = clock::time_point::max(); ///< max: no live wait
        std::uint64_t generation = 0; ///< of the live wait; older handlers are stale
        bool expired = false;
    };

    // Replaces any live wait (expires_at cancels it) by one until `until`.
    static void wait(const std::shared_ptr<state>& s, clock::time_point until) {
        s->waiting_until = until;
        s->timer.expires_at(until);
        // A weak reference: the connection's destruction ends the watch (the handler then
        // finds nothing to do).
        s->timer.async_wait(
            [weak = std::weak_ptr<state>(s), generation = ++s->generation](const error_code& ec) {
                const auto s = weak.lock();
                if (!s || ec || generation != s->generation)
                    return; // cancelled, or replaced by a later wait
                s->waiting_until = clock::time_point::max();
                if (s->deadline == clock::time_point::max())
                    return;
                if (clock::now() < s->deadline) {
                    wait(s, s->deadline);
                    return;
                }
                s->expired = true;
                s->on_expiry();
            });
    }

    std::shared_ptr<state> state_;
};

template <class Stream>
class stream_connection final : public connection {
public:
    template <class... Args>
    explicit stream_connection(asio::any_io_executor ex, Args&&... args)
        : stream_(ex, std::forward<Args>(args)...)
        , watchdog_(ex, [this] {
            // Closing fails the pending operation at once; the exchange reports a timeout.
            error_code ignored;
            beast::get_lowest_layer(stream_).close(ignored);
        }) {}

    Stream& stream() { return stream_; }

    /// Bounds what follows (connect, handshake, an exchange) by `deadline`.
    void bound_by(clock::time_point deadline) { watchdog_.arm(deadline); }
    void unbound() { watchdog_.disarm(); }
    /// The error to report for `ec`: a timeout when the deadline closed the socket.
    error_code outcome(error_code ec) const {
        if (ec && watchdog_.expired())
            return beast::error::timeout;
        return ec;
    }
    /// The outcome of a connect or handshake: also a timeout when it completed just as the
    /// deadline closed the socket (it succeeded on a socket that is gone).
    error_code setup_outcome(error_code ec) const {
        return watchdog_.expired() ? error_code{beast::error::timeout} : ec;
    }
    bool expired() const noexcept { return watchdog_.expired(); }

    bool closed_by_peer() override {
        char byte;
        const auto fd = beast::get_lowest_layer(stream_).native_handle();
        const auto n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        return n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
    }

    asio::awaitable<error_code> exchange(const request& req, response& res, clock::duration timeout,
                                         std::size_t body_limit, bool finish_once_sent) override {
        if (!finish_once_sent)
            co_return co_await exchange_with(req, res, timeout, body_limit, await_token<Stream>());
        // Neither the operations (an unconnected slot; use_awaitable, as a slot cannot be
        // bound to deferred in Asio 1.26) nor the awaits (no throw on cancellation) see the
        // caller's cancellation; restored on every way out.
        const bool throw_if_cancelled = co_await asio::this_coro::throw_if_cancelled();
        co_await asio::this_coro::throw_if_cancelled(false);
        error_code ec;
        std::exception_ptr failure;
        try {
            ec = co_await exchange_with(
                req, res, timeout, body_limit,
                asio::bind_cancellation_slot(asio::cancellation_slot(),
                                             asio::as_tuple(asio::use_awaitable)));
        } catch (...) {
            failure = std::current_exception();
        }
        co_await asio::this_coro::throw_if_cancelled(throw_if_cancelled);
        if (failure)
            std::rethrow_exception(failure);
        co_return ec;
    }

private:
    template <class Token>
    asio::awaitable<error_code> exchange_with(const request& req, response& res,
                                              clock::duration timeout, std::size_t body_limit,
                                              Token token) {
        // Invalid until proven otherwise: a cancelled exchange leaves it unusable.
        reusable_ = false;
        bound_by(clock::now() + timeout);
        head_.clear();
        append_request_head(head_, req);
        std::array<asio::const_buffer, 2> message{asio::buffer(head_), asio::buffer(req.body)};
        if (!write_now(message)) {
            auto [wec, wn] = co_await asio::async_write(stream_, message, token);
            if (wec)
                co_return outcome(wec);
        }
        response_parser parser{res, body_limit};
        if (auto rec = co_await read_response(parser, token))
            co_return outcome(rec);
        unbound();
        // A response read in full just as the deadline closed the socket is still a
        // success, on a connection that is gone.
        reusable_ = parser.keep_alive() && !parser.need_eof() && !watchdog_.expired();
        answered_ = true;
        co_return error_code{};
    }

    // Sends what the socket takes at once, without waiting: true when that was all of
    // `message`, else `message` is left holding the rest for async_write (which then also
    // reports any error). A request fits a socket's send buffer, so it is nearly always
    // sent here: async_write would send it just the same, but post its completion, and
    // the coroutine would resume only after one more turn of the event loop (and a poll of
    // the reactor). TLS writes go through the SSL engine: always async_write.
    bool write_now(std::array<asio::const_buffer, 2>& message) {
        if constexpr (is_tls<Stream>) {
            return false;
        } else {
            if (!stream_.non_blocking()) {
                error_code ec;
                stream_.non_blocking(true, ec); // async operations work the same either way
                if (ec)
                    return false;
            }
            error_code ec;
            std::size_t sent = stream_.send(message, 0, ec);
            if (ec)
                return false; // would block, or an error that async_write reports
            for (auto& b : message) {
                const std::size_t n = std::min(sent, b.size());
                b += n;
                sent -= n;
            }
            return message[0].size() == 0 && message[1].size() == 0;
        }
    }

    // Only the reads are done here: what to read and when, and what the bytes mean, are the
    // reader's (shared with the fuzzer and the unit tests, which have no socket).
    template <class Token>
    asio::awaitable<error_code> read_response(response_parser& parser, Token token) {
        for (;;) {
            const auto step = reader_.next(parser);
            if (step.done)
                co_return step.ec;
            auto [ec, n] = co_await stream_.async_read_some(step.space, token);
            reader_.commit(n);
            if (ec)
                co_return reader_.read_error(parser, ec);
        }
    }

    Stream stream_;
    watchdog watchdog_;
    response_reader reader_; // kept across exchanges: it may hold the next response's start
    std::string head_;       // the request head being written (see append_request_head)
};

} // namespace

namespace {

// A TLS setting that could not be used: the error names the setting and its file.
[[noreturn]] void tls_file_error(const error_code& ec, const char* setting,
                                 const std::string& path) {
    throw boost::system::system_error(ec, std::string("TLS ") + setting + " '" + path + "'");
}

} // namespace

std::shared_ptr<asio::ssl::context> make_tls_context(const tls_config& tls) {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
    ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1);
    error_code ec;
    if (!tls.ca_file.empty()) {
        if (ctx->load_verify_file(tls.ca_file, ec); ec)
            tls_file_error(ec, "ca_file", tls.ca_file);
    }
    if (!tls.ca_path.empty()) {
        // OpenSSL only looks into the directory during verification: a missing one would
        // surface as every server failing verification, far from its cause.
        struct ::stat st {};
        if (::stat(tls.ca_path.c_str(), &st) != 0)
            tls_file_error(error_code{errno, boost::system::system_category()}, "ca_path",
                           tls.ca_path);
        if (!S_ISDIR(st.st_mode))
            tls_file_error(make_error_code(boost::system::errc::not_a_directory), "ca_path",
                           tls.ca_path);
        if (ctx->add_verify_path(tls.ca_path, ec); ec)
            tls_file_error(ec, "ca_path", tls.ca_path);
    }
    if (tls.ca_file.empty() && tls.ca_path.empty())
        ctx->set_default_verify_paths();
    // One without the other would silently send no client certificate.
    if (tls.cert_file.empty() != tls.key_file.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_config),
                                          "TLS cert_file and key_file must be set together");
    if (!tls.cert_file.empty()) {
        if (ctx->use_certificate_chain_file(tls.cert_file, ec); ec)
            tls_file_error(ec, "cert_file", tls.cert_file);
        if (ctx->use_private_key_file(tls.key_file, asio::ssl::context::pem, ec); ec)
            tls_file_error(ec, "key_file", tls.key_file);
    }
    ctx->set_verify_mode(tls.verify ? asio::ssl::verify_peer : asio::ssl::verify_none);
    return ctx;
}

namespace {

// Connects a TCP socket to host:port (IP literals skip the resolver). The caller bounds
// the connect in time; `expired` says when that bound has passed.
template <class Expired>
asio::awaitable<error_code> connect_tcp(tcp::socket& s, const client_config& cfg, Expired expired) {
    error_code ec;
    auto ip = asio::ip::make_address(cfg.host, ec);
    if (!ec) {
        auto [cec] = co_await s.async_connect(tcp::endpoint{ip, cfg.port}, deferred_tuple);
        if (!cec)
            s.set_option(tcp::no_delay(true), ec);
        co_return cec;
    }
    tcp::resolver resolver{s.get_executor()};
    auto [rec, results] =
        co_await resolver.async_resolve(cfg.host, std::to_string(cfg.port), deferred_tuple);
    if (rec)
        co_return rec;
    // Closing the socket does not end a resolve: a deadline that passed meanwhile must not
    // let the connect (which reopens the socket) run unbounded.
    if (expired())
        co_return beast::error::timeout;
    auto [cec, ep] = co_await asio::async_connect(s, results, deferred_tuple);
    if (!cec)
        s.set_option(tcp::no_delay(true), ec);
    co_return cec;
}

} // namespace

asio::awaitable<std::pair<error_code, std::unique_ptr<connection>>>
open_connection(asio::any_io_executor ex, const client_config& cfg,
                std::shared_ptr<asio::ssl::context> tls, clock::duration timeout) {
    using result = std::pair<error_code, std::unique_ptr<connection>>;
    const auto deadline = clock::now() + timeout;
    if (cfg.kind == client_config::transport::unix_socket) {
        auto c = std::make_unique<stream_connection<unix_socket>>(ex);
        c->bound_by(deadline);
        auto [ec] = co_await c->stream().async_connect(
            asio::local::stream_protocol::endpoint{cfg.unix_path}, deferred_tuple);
        c->unbound();
        if (const auto out = c->setup_outcome(ec))
            co_return result{out, nullptr};
        co_return result{error_code{}, std::move(c)};
    }
    if (!cfg.tls.enabled) {
        auto c = std::make_unique<stream_connection<tcp::socket>>(ex);
        c->bound_by(deadline);
        // Named: a capturing lambda temporary in a co_await expression miscompiles (g++ 12).
        const auto expired = [&c] { return c->expired(); };
        const auto ec = co_await connect_tcp(c->stream(), cfg, expired);
        c->unbound();
        if (const auto out = c->setup_outcome(ec))
            co_return result{out, nullptr};
        co_return result{error_code{}, std::move(c)};
    }
    auto c = std::make_unique<stream_connection<tls_stream>>(ex, *tls);
    c->bound_by(deadline); // the connect and the handshake together
    const auto expired = [&c] { return c->expired(); };
    if (auto ec = co_await connect_tcp(beast::get_lowest_layer(c->stream()), cfg, expired))
        co_return result{c->setup_outcome(ec), nullptr};
    const std::string& name = cfg.tls.server_name.empty() ? cfg.host : cfg.tls.server_name;
    error_code not_ip;
    asio::ip::make_address(name, not_ip);
    // SNI carries host names only: RFC 6066 section 3 forbids IP literals there.
    if (not_ip && !SSL_set_tlsext_host_name(c->stream().native_handle(), name.c_str()))
        co_return result{
            error_code{static_cast<int>(::ERR_get_error()), asio::error::get_ssl_category()},
            nullptr};
    if (cfg.tls.verify)
        c->stream().set_verify_callback(asio::ssl::host_name_verification(name));
    auto [hec] = co_await c->stream().async_handshake(asio::ssl::stream_base::client,
                                                      asio::as_tuple(asio::use_awaitable));
    c->unbound();
    if (const auto out = c->setup_outcome(hec))
        co_return result{out, nullptr};
    co_return result{error_code{}, std::move(c)};
}

} // namespace conclave::detail::http
