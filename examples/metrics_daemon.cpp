// SPDX-License-Identifier: BSL-1.0
// A daemon that shows what its locks do: it takes a lock in turns with itself (two workers
// of one process, sharing one session, contend for it as two hosts would), logs at info,
// and serves its metrics on /metrics in Prometheus' text format (conclave::metrics,
// conclave::to_prometheus).
//
//   metrics_daemon --dev       a self-contained run on an embedded agent: a few rounds, then
//                              it reads its own /metrics, prints it and checks it
//   metrics_daemon [PORT]      against CONSUL_HTTP_ADDR, until Ctrl+C; /metrics on
//                              127.0.0.1:PORT (default 9464)
#include "example_main.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/metrics.hpp>
#include <conclave/session.hpp>

#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

// One scrape: answers GET /metrics (and 404 for anything else), then closes the
// connection, so that nothing of it outlives the daemon's stop (a scraper reconnects).
asio::awaitable<void> serve_scraper(tcp::socket socket, std::shared_ptr<conclave::metrics> m) {
    try {
        boost::beast::flat_buffer buffer;
        http::request<http::string_body> req;
        co_await http::async_read(socket, buffer, req, asio::use_awaitable);
        http::response<http::string_body> res;
        res.version(req.version());
        res.keep_alive(false);
        if (req.method() == http::verb::get && req.target() == "/metrics") {
            res.result(http::status::ok);
            res.set(http::field::content_type, "text/plain; version=0.0.4");
            res.body() = conclave::to_prometheus(*m);
        } else {
            res.result(http::status::not_found);
            res.body() = "not found\n";
        }
        res.prepare_payload();
        co_await http::async_write(socket, res, asio::use_awaitable);
    } catch (const boost::system::system_error&) {
        // closed by the scraper, or a request we cannot read: this connection ends
    }
}

// Serves until the acceptor is closed, or until cancelled. A failed accept (a connection
// reset before it was accepted, no descriptors left) is skipped, not the end.
asio::awaitable<void> serve_metrics(tcp::acceptor& acceptor, std::shared_ptr<conclave::metrics> m) {
    for (;;) {
        boost::system::error_code ec;
        auto socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
        if (ec == asio::error::operation_aborted)
            co_return;
        if (ec) {
            std::fprintf(stderr, "metrics_daemon: accept: %s\n", ec.message().c_str());
            asio::steady_timer pause{acceptor.get_executor(), 100ms};
            co_await pause.async_wait(asio::use_awaitable);
            continue;
        }
        asio::co_spawn(acceptor.get_executor(), serve_scraper(std::move(socket), m),
                       asio::detached);
    }
}

// What a Prometheus server does: GET /metrics.
asio::awaitable<std::string> scrape(tcp::endpoint at) {
    tcp::socket socket{co_await asio::this_coro::executor};
    co_await socket.async_connect(at, asio::use_awaitable);
    http::request<http::string_body> req{http::verb::get, "/metrics", 11};
    req.set(http::field::host, "localhost");
    co_await http::async_write(socket, req, asio::use_awaitable);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    co_await http::async_read(socket, buffer, res, asio::use_awaitable);
    co_return res.body();
}

// One worker: takes the lock, works a little while holding it, lets it go, rests.
asio::awaitable<void> worker(conclave::client& consul, conclave::session& s, int rounds) {
    conclave::lock mutex{consul, "examples/metrics/lock"};
    for (int i = 0; rounds == 0 || i < rounds; ++i) {
        co_await conclave::with_lock(mutex, s, [](conclave::lock_lease) -> asio::awaitable<void> {
            asio::steady_timer work{co_await asio::this_coro::executor, 20ms};
            co_await work.async_wait(asio::use_awaitable);
        });
        asio::steady_timer rest{co_await asio::this_coro::executor, 10ms};
        co_await rest.async_wait(asio::use_awaitable);
    }
}

// Two workers of one process, sharing one session: the lock keeps them apart as it would
// two hosts (an acquire waits while the other's lease holds the key).
asio::awaitable<void> two_workers(conclave::client& consul, int rounds) {
    auto both = [&](conclave::session& s) -> asio::awaitable<void> {
        co_await (worker(consul, s, rounds) && worker(consul, s, rounds));
    };
    co_await conclave::with_session(
        consul, conclave::session_config{}.with_name("metrics-daemon").with_ttl(10s), both);
}

// Whether `text` has a sample line starting with `sample` and a value above zero.
bool counted(const std::string& text, const std::string& sample) {
    const auto at = text.find("\n" + sample + " ");
    return at != std::string::npos && std::atof(text.c_str() + at + sample.size() + 2) > 0;
}

} // namespace

int main(int argc, char** argv) {
    auto m = std::make_shared<conclave::metrics>();
    const auto configure = [m](conclave::client_config& cfg) {
        cfg.observer = m;
        cfg.log = conclave::logger::to_stderr(conclave::log_level::info, "metrics_daemon");
    };
    return examples::run_example(
        "metrics_daemon", argc, argv,
        [&](conclave::client& consul, bool demo) -> asio::awaitable<void> {
            const auto ex = co_await asio::this_coro::executor;
            const unsigned short port =
                demo ? 0 : static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 9464);
            tcp::acceptor acceptor{ex, {asio::ip::make_address("127.0.0.1"), port}};
            std::printf("metrics on http://%s/metrics\n",
                        (acceptor.local_endpoint().address().to_string() + ":" +
                         std::to_string(acceptor.local_endpoint().port()))
                            .c_str());
            // The workers, and in the demo one scrape, checked; then the server stops.
            auto work = [&]() -> asio::awaitable<void> {
                co_await two_workers(consul, demo ? 5 : 0);
                if (demo) {
                    const auto body = co_await scrape(acceptor.local_endpoint());
                    std::printf("%s", body.c_str());
                    for (const char* sample :
                         {"conclave_acquires_total{kind=\"lock\",outcome=\"taken\"}",
                          "conclave_acquire_wait_seconds_count{kind=\"lock\"}",
                          "conclave_http_requests_total{code=\"200\",endpoint=\"txn\"}"})
                        if (!counted(body, sample))
                            throw std::runtime_error(std::string("not in /metrics: ") + sample);
                }
                acceptor.close();
            };
            // Side by side: a failure of the work (or Ctrl+C) stops the server too.
            co_await (serve_metrics(acceptor, m) && work());
        },
        configure);
}
