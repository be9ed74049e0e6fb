// SPDX-License-Identifier: BSL-1.0
// A rate-limited worker pool: jobs from every process share a semaphore of L slots (Go
// api.Semaphore's layout, so `consul lock -n L` users share it too); at most L run at once
// across all of them.
//
//   rate_limited_pool --dev       12 jobs, 3 slots, on an embedded agent
//   rate_limited_pool [jobs]      against CONSUL_HTTP_ADDR
//
// Ctrl+C: running jobs are cancelled, their permits released, contender keys deleted.
#include "example_main.hpp"

#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <exception>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr std::uint32_t slots = 3;

struct pool_stats {
    int running = 0;
    int most = 0;
};

// One job: its own session (a semaphore slot is held per session), a permit, the work.
asio::awaitable<void> job(conclave::client& consul, int id, pool_stats& stats) {
    auto s = co_await conclave::session::async_create(
        consul, conclave::session_config{}.with_name("pool-job").with_ttl(10s));
    conclave::semaphore sem{consul, "service/example/pool", slots};
    auto work = [&]() -> asio::awaitable<void> {
        auto permit = co_await sem.async_acquire(s);
        stats.most = std::max(stats.most, ++stats.running);
        std::printf("job %2d runs (%d of %u slots busy)\n", id, stats.running, slots);
        asio::steady_timer t{co_await asio::this_coro::executor, 150ms};
        co_await t.async_wait(asio::use_awaitable);
        --stats.running;
        co_await permit.async_release();
    };
    co_await examples::work_in_session(s, work(), "job's session");
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "rate_limited_pool", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            const int jobs = (!dev && argc > 1) ? std::stoi(argv[1]) : 12;
            pool_stats stats;
            // Jobs in groups of four, each group awaited with &&: cancellation (Ctrl+C)
            // reaches every running job.
            for (int first = 0; first < jobs; first += 4) {
                auto a = job(consul, first, stats);
                auto b = job(consul, first + 1, stats);
                auto c = job(consul, first + 2, stats);
                auto d = job(consul, first + 3, stats);
                co_await (std::move(a) && std::move(b) && std::move(c) && std::move(d));
            }
            std::printf("at most %d jobs ran at once (limit %u)\n", stats.most, slots);
            if (stats.most > static_cast<int>(slots))
                throw std::runtime_error("the limit was exceeded");
            conclave::semaphore sem{consul, "service/example/pool", slots};
            co_await sem.async_destroy();
        });
}
