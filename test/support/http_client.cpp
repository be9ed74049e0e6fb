// SPDX-License-Identifier: BSL-1.0
#include "support/http_client.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/parse.hpp>

#include <cctype>

namespace conclave::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http_ns = beast::http;
using tcp = asio::ip::tcp;

namespace {
constexpr auto use = asio::as_tuple(asio::use_awaitable);
}

std::string http_reply::header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
}

std::uint64_t http_reply::index() const {
    const std::string v = header("x-consul-index");
    return v.empty() ? 0 : std::stoull(v);
}

boost::json::value http_reply::json() const {
    return boost::json::parse(body);
}

struct http_conn::impl {
    impl(asio::any_io_executor ex, std::uint16_t p)
        : stream(ex)
        , port(p) {}
    beast::tcp_stream stream;
    beast::flat_buffer buffer;
    std::uint16_t port;
};

http_conn::http_conn(asio::any_io_executor ex, std::uint16_t port)
    : p_(std::make_unique<impl>(ex, port)) {}

http_conn::~http_conn() = default;

asio::awaitable<boost::system::error_code> http_conn::connect() {
    p_->stream.expires_after(std::chrono::seconds(10));
    const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), p_->port);
    auto [ec] = co_await p_->stream.async_connect(ep, use);
    co_return ec;
}

asio::awaitable<http_reply> http_conn::request(std::string method, std::string target,
                                               std::optional<std::string> body,
                                               std::map<std::string, std::string> headers) {
    http_reply reply;
    const auto start = std::chrono::steady_clock::now();
    http_ns::request<http_ns::string_body> req;
    req.version(11);
    req.method_string(method);
    req.target(target);
    req.set(http_ns::field::host, "127.0.0.1:" + std::to_string(p_->port));
    for (const auto& [k, v] : headers)
        req.set(k, v);
    if (body) {
        req.set(http_ns::field::content_type, "application/octet-stream");
        req.body() = *body;
    }
    req.prepare_payload();
    req.keep_alive(true);
    p_->stream.expires_after(std::chrono::minutes(15));
    auto [wec, wn] = co_await http_ns::async_write(p_->stream, req, use);
    (void)wn;
    if (wec) {
        reply.ec = wec;
        co_return reply;
    }
    http_ns::response_parser<http_ns::string_body> parser;
    parser.body_limit(64 << 20);
    if (method == "HEAD")
        parser.skip(true);
    auto [rec, rn] = co_await http_ns::async_read(p_->stream, p_->buffer, parser, use);
    (void)rn;
    reply.elapsed = std::chrono::steady_clock::now() - start;
    if (rec) {
        reply.ec = rec;
        co_return reply;
    }
    const auto& res = parser.get();
    reply.status = res.result_int();
    for (const auto& field : res) {
        std::string name(field.name_string());
        for (char& c : name)
            c = char(std::tolower(static_cast<unsigned char>(c)));
        reply.headers[name] = std::string(field.value());
    }
    reply.body = res.body();
    co_return reply;
}

asio::awaitable<boost::system::error_code> http_conn::send_raw(std::string bytes) {
    p_->stream.expires_after(std::chrono::seconds(10));
    auto [ec, n] = co_await asio::async_write(p_->stream, asio::buffer(bytes), use);
    (void)n;
    co_return ec;
}

asio::awaitable<std::string> http_conn::read_until_close(std::chrono::milliseconds limit) {
    std::string out(static_cast<const char*>(p_->buffer.data().data()), p_->buffer.size());
    p_->buffer.consume(p_->buffer.size());
    p_->stream.expires_after(limit);
    char chunk[4096];
    for (;;) {
        auto [ec, n] = co_await p_->stream.async_read_some(asio::buffer(chunk), use);
        out.append(chunk, n);
        if (ec)
            break;
    }
    co_return out;
}

void http_conn::close() {
    boost::system::error_code ec;
    p_->stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    p_->stream.socket().close(ec);
}

asio::awaitable<http_reply> http(std::uint16_t port, std::string method, std::string target,
                                 std::optional<std::string> body) {
    const auto ex = co_await asio::this_coro::executor;
    http_conn conn(ex, port);
    if (auto ec = co_await conn.connect()) {
        http_reply r;
        r.ec = ec;
        co_return r;
    }
    co_return co_await conn.request(std::move(method), std::move(target), std::move(body));
}

asio::awaitable<void> sleep_for(std::chrono::milliseconds d) {
    const auto ex = co_await asio::this_coro::executor;
    asio::steady_timer t(ex, d);
    co_await t.async_wait(asio::use_awaitable);
}

} // namespace conclave::test
