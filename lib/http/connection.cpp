#include "http/connection.hpp"
#include "http/message_head.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <boost/system/system_error.hpp>

#include <array>
#include <cerrno>
#include <openssl/ssl.h>
#include <string>
#include <sys/stat.h>

namespace conclave::detail::http {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using asio::ip::tcp;
using unix_stream = beast::basic_stream<asio::local::stream_protocol>;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Room for the whole of a usual Consul response (headers and a few KV entries).
constexpr std::size_t initial_read_capacity = 16 * 1024;

template <class Stream>
class stream_connection final : public connection {
public:
    template <class... Args>
    explicit stream_connection(Args&&... args)
        : stream_(std::forward<Args>(args)...) {
        // Beast reads at most the buffer's free capacity (512 bytes at first) and the parser
        // drains it as it goes, so a small buffer never grows: a 1 KiB response took three
        // reads and three reactor round trips. With room for a typical response it is one.
        buffer_.reserve(initial_read_capacity);
    }

    Stream& stream() { return stream_; }

    asio::awaitable<error_code> exchange(const request& req, response& res, clock::duration timeout,
                                         std::size_t body_limit) override {
        // Invalid until proven otherwise: a cancelled exchange leaves it unusable.
        reusable_ = false;
        auto& lowest = beast::get_lowest_layer(stream_);
        lowest.expires_after(timeout);
        head_.clear();
        append_request_head(head_, req);
        const std::array<asio::const_buffer, 2> message{asio::buffer(head_),
                                                        asio::buffer(req.body)};
        auto [wec, wn] = co_await asio::async_write(stream_, message, tuple_awaitable);
        if (wec)
            co_return wec;
        response_parser parser{res, body_limit};
        auto [rec, rn] = co_await bhttp::async_read(stream_, buffer_, parser, tuple_awaitable);
        if (rec == asio::ssl::error::stream_truncated) {
            // TLS peer closed the TCP connection without close_notify: to HTTP that is the
            // end of the stream (a stale keep-alive connection, or a truncated response).
            // Never a success: a message delimited by EOF is not accepted this way.
            rec = parser.got_some() ? bhttp::error::partial_message : bhttp::error::end_of_stream;
        }
        if (rec)
            co_return rec;
        lowest.expires_never();
        reusable_ = parser.keep_alive() && !parser.need_eof();
        co_return error_code{};
    }

private:
    Stream stream_;
    beast::flat_buffer buffer_; // must outlive reads on a keep-alive connection
    std::string head_;          // the request head being written (see append_request_head)
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

// Connects a TCP socket to host:port (IP literals skip the resolver).
asio::awaitable<error_code> connect_tcp(beast::tcp_stream& s, const client_config& cfg,
                                        clock::duration timeout) {
    s.expires_after(timeout);
    error_code ec;
    auto ip = asio::ip::make_address(cfg.host, ec);
    if (!ec) {
        auto [cec] = co_await s.async_connect(tcp::endpoint{ip, cfg.port}, tuple_awaitable);
        s.expires_never();
        if (!cec)
            s.socket().set_option(tcp::no_delay(true), ec);
        co_return cec;
    }
    tcp::resolver resolver{s.get_executor()};
    auto [rec, results] =
        co_await resolver.async_resolve(cfg.host, std::to_string(cfg.port), tuple_awaitable);
    if (rec)
        co_return rec;
    auto [cec, ep] = co_await s.async_connect(results, tuple_awaitable);
    s.expires_never();
    if (!cec)
        s.socket().set_option(tcp::no_delay(true), ec);
    co_return cec;
}

} // namespace

asio::awaitable<std::pair<error_code, std::unique_ptr<connection>>>
open_connection(asio::any_io_executor ex, const client_config& cfg,
                std::shared_ptr<asio::ssl::context> tls, clock::duration timeout) {
    using result = std::pair<error_code, std::unique_ptr<connection>>;
    if (cfg.kind == client_config::transport::unix_socket) {
        auto c = std::make_unique<stream_connection<unix_stream>>(ex);
        c->stream().expires_after(timeout);
        auto [ec] = co_await c->stream().async_connect(
            asio::local::stream_protocol::endpoint{cfg.unix_path}, tuple_awaitable);
        c->stream().expires_never();
        if (ec)
            co_return result{ec, nullptr};
        co_return result{error_code{}, std::move(c)};
    }
    if (!cfg.tls.enabled) {
        auto c = std::make_unique<stream_connection<beast::tcp_stream>>(ex);
        if (auto ec = co_await connect_tcp(c->stream(), cfg, timeout))
            co_return result{ec, nullptr};
        co_return result{error_code{}, std::move(c)};
    }
    auto c = std::make_unique<stream_connection<tls_stream>>(ex, *tls);
    const auto deadline = clock::now() + timeout;
    if (auto ec = co_await connect_tcp(beast::get_lowest_layer(c->stream()), cfg, timeout))
        co_return result{ec, nullptr};
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
    beast::get_lowest_layer(c->stream()).expires_at(deadline);
    auto [hec] =
        co_await c->stream().async_handshake(asio::ssl::stream_base::client, tuple_awaitable);
    beast::get_lowest_layer(c->stream()).expires_never();
    if (hec)
        co_return result{hec, nullptr};
    co_return result{error_code{}, std::move(c)};
}

} // namespace conclave::detail::http
