// SPDX-License-Identifier: BSL-1.0
// A daemon that shows what its locks do: it takes a lock in turns with itself (two workers
// of one process contend for it, as two hosts would), logs at info, and serves its metrics
// on /metrics in Prometheus' text format (conclave::metrics, conclave::to_prometheus).
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

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
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
    boost::beast::flat_buffer buffer;
    {
        http::request<http::string_body> req;
        auto [ec, n] =
            co_await http::async_read(socket, buffer, req, asio::as_tuple(asio::use_awaitable));
        if (ec)
            co_return; // closed by the scraper, or a request we cannot read
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
        co_await http::async_write(socket, res, asio::as_tuple(asio::use_awaitable));
    }
}

// Serves until cancelled (then throws operation_aborted, as a race's loser). A failed accept
// (a connection reset before it was accepted, no descriptors left) is skipped, not the end.
asio::awaitable<void> serve_metrics(tcp::acceptor& acceptor, std::shared_ptr<conclave::metrics> m) {
    for (;;) {
        auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
        if (ec == asio::error::operation_aborted)
            throw boost::system::system_error(ec);
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

// What a Prometheus server does: GET /metrics. Errors come back as values (a text saying
// what failed): raced with `||`, a side that threw would leave the server running.
asio::awaitable<std::string> scrape(tcp::endpoint at) {
    constexpr auto as_value = asio::as_tuple(asio::use_awaitable);
    tcp::socket socket{co_await asio::this_coro::executor};
    http::request<http::string_body> req{http::verb::get, "/metrics", 11};
    req.set(http::field::host, "localhost");
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> res;
    auto [cec] = co_await socket.async_connect(at, as_value);
    if (cec)
        co_return "scrape failed: " + cec.message();
    auto [wec, written] = co_await http::async_write(socket, req, as_value);
    if (wec)
        co_return "scrape failed: " + wec.message();
    auto [rec, read] = co_await http::async_read(socket, buffer, res, as_value);
    if (rec)
        co_return "scrape failed: " + rec.message();
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

asio::awaitable<void> two_workers(conclave::client& consul, int rounds) {
    auto config = conclave::session_config{}.with_name("metrics-daemon").with_ttl(10s);
    auto a = co_await conclave::session::async_create(consul, config);
    auto b = co_await conclave::session::async_create(consul, config);
    co_await (examples::work_in_session(a, worker(consul, a, rounds), "worker a's session") &&
              examples::work_in_session(b, worker(consul, b, rounds), "worker b's session"));
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
            // The workers' failure is raced as a value too (see scrape).
            auto workers = examples::failure_of(two_workers(consul, demo ? 5 : 0));
            auto ended = co_await (serve_metrics(acceptor, m) || std::move(workers));
            if (auto failed = std::get<1>(ended))
                std::rethrow_exception(failed);
            if (!demo)
                co_return;
            // The demo's end: five rounds each are done; one scrape, checked.
            auto scraped =
                co_await (serve_metrics(acceptor, m) || scrape(acceptor.local_endpoint()));
            const auto& body = std::get<1>(scraped);
            std::printf("%s", body.c_str());
            for (const char* sample :
                 {"conclave_acquires_total{kind=\"lock\",outcome=\"taken\"}",
                  "conclave_acquire_wait_seconds_count{kind=\"lock\"}",
                  "conclave_http_requests_total{code=\"200\",endpoint=\"txn\"}"})
                if (!counted(body, sample))
                    throw std::runtime_error(std::string("not in /metrics: ") + sample);
        },
        configure);
}
