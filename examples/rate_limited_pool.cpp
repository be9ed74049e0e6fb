// SPDX-License-Identifier: BSL-1.0
// A rate-limited worker pool: jobs from every process share a semaphore of 3 slots (Go
// api.Semaphore's layout, so `consul lock -n 3` users share it too); at most 3 run at once
// across all of them. A job that gets no slot within 10 s is skipped (to be queued again).
//
//   rate_limited_pool --dev       8 jobs on an embedded agent
//   rate_limited_pool [jobs]      against CONSUL_HTTP_ADDR
//
// Ctrl+C: running jobs are cancelled, their permits released (contender keys deleted), and
// their sessions destroyed.
#include "example_main.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/semaphore.hpp>
#include <conclave/session.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

const std::string pool_prefix = "service/example/pool";
constexpr std::uint32_t slots = 3;

struct pool_stats {
    int running = 0;
    int most = 0; // the most jobs seen running at once
    int skipped = 0;
};

// One job: its own session (a semaphore slot is held per session), at most 10 s of waiting
// for a slot, then the work.
asio::awaitable<void> job(conclave::client& consul, int id, pool_stats& stats) {
    conclave::semaphore sem{consul, pool_prefix, slots};
    auto work = [&](conclave::permit) -> asio::awaitable<void> {
        stats.most = std::max(stats.most, ++stats.running);
        std::printf("job %2d runs (%d of %u slots busy)\n", id, stats.running, slots);
        co_await examples::pause(150ms); // the work; cancelled if the permit is lost
        --stats.running;
    };
    auto in_session = [&](conclave::session& s) -> asio::awaitable<bool> {
        co_return co_await conclave::try_with_permit(sem, s, 10s, work);
    };
    const bool ran = co_await conclave::with_session(
        consul, conclave::session_config{}.with_name("pool-job").with_ttl(10s), in_session);
    if (!ran) {
        std::printf("job %2d: no slot within 10 s, skipped\n", id);
        ++stats.skipped;
    }
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "rate_limited_pool", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            const int jobs = (!dev && argc > 1) ? std::stoi(argv[1]) : 8;
            pool_stats stats;
            // Every job at once, until all are done. The first failure cancels the others,
            // and so does Ctrl+C (cancelling this coroutine).
            co_await examples::run_all(jobs, [&](int id) { return job(consul, id, stats); });
            std::printf("%d jobs, at most %d ran at once (limit %u), %d skipped\n", jobs,
                        stats.most, slots, stats.skipped);
            if (stats.most > static_cast<int>(slots))
                throw std::runtime_error("the limit was exceeded");
            if (dev && stats.skipped > 0)
                throw std::runtime_error("a job got no slot");
            conclave::semaphore sem{consul, pool_prefix, slots};
            co_await sem.async_destroy();
        });
}
