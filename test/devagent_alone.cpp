// SPDX-License-Identifier: BSL-1.0
// The dev agent on its own: this program links conclave::devagent and not the client
// library, starts an agent on a free port, writes a key and reads it back over plain HTTP.
// It fails to link if the dev agent ever comes to need the client's code.
#include <conclave/dev/agent.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

#include <cstdio>
#include <exception>
#include <string>

namespace asio = boost::asio;
namespace http = boost::beast::http;

namespace {

asio::awaitable<http::response<http::string_body>> exchange(boost::beast::tcp_stream& stream,
                                                            http::verb verb, const char* target,
                                                            std::string body = {}) {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.body() = std::move(body);
    req.prepare_payload();
    co_await http::async_write(stream, req, asio::use_awaitable);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(stream, buffer, res, asio::use_awaitable);
    co_return res;
}

asio::awaitable<bool> put_and_get(std::uint16_t port) {
    boost::beast::tcp_stream stream{co_await asio::this_coro::executor};
    co_await stream.async_connect(
        asio::ip::tcp::endpoint{asio::ip::make_address("127.0.0.1"), port}, asio::use_awaitable);
    const auto put = co_await exchange(stream, http::verb::put, "/v1/kv/alone", "here");
    const auto get = co_await exchange(stream, http::verb::get, "/v1/kv/alone?raw");
    std::printf("PUT: %u %s, GET ?raw: %u %s\n", put.result_int(), put.body().c_str(),
                get.result_int(), get.body().c_str());
    co_return put.body() == "true\n" && get.body() == "here"; // Go's encoder ends in "\n"
}

} // namespace

int main() {
    asio::io_context ioc;
    conclave::dev::agent agent{ioc.get_executor(), {.port = 0}};
    agent.start();
    int status = 2;
    asio::co_spawn(ioc, put_and_get(agent.port()), [&](std::exception_ptr e, bool ok) {
        status = !e && ok ? 0 : 1;
        agent.stop();
    });
    ioc.run();
    return status;
}
