// SPDX-License-Identifier: BSL-1.0
// Mutually exclusive job workers: N workers walk one task list; a per-task lock makes sure
// each task runs exactly once. A task whose lock another worker holds is skipped, a task
// whose lock is lost is cancelled, and the lock is released however the task ends. The
// "done" mark is written under the fencing check, so a worker that lost its lock (paused
// past its TTL) cannot mark a task another one now owns.
//
//   job_workers --dev          a self-contained run on an embedded agent (4 workers)
//   job_workers [N]            against CONSUL_HTTP_ADDR: tasks are the keys under jobs/tasks/
//
// A worker whose lock or session is lost stops with that error, and the others are stopped
// as by Ctrl+C: run it again, tasks done are not run twice. Ctrl+C: every worker releases
// its lock and destroys its session before exiting.
#include "example_main.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/session.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;

namespace {

// The work itself: stands for anything that must not run twice.
asio::awaitable<void> perform(const std::string& task) {
    asio::steady_timer t{co_await asio::this_coro::executor, 20ms};
    co_await t.async_wait(asio::use_awaitable);
    (void)task;
}

// One worker, with a session of its own: runs the tasks nobody else holds and nobody has
// done yet. Returns how many it ran.
asio::awaitable<int> worker(conclave::client& consul, int id,
                            const std::vector<std::string>& tasks) {
    int ran = 0;
    auto walk = [&](conclave::session& s) -> asio::awaitable<void> {
        for (const auto& task : tasks) {
            conclave::lock mutex{consul, "jobs/locks/" + task};
            auto run = [&](conclave::lock_lease lease) -> asio::awaitable<void> {
                auto done = co_await consul.async_kv_get("jobs/done/" + task);
                if (done.entry)
                    co_return;
                co_await perform(task); // cancelled if the lock is lost
                std::vector<conclave::txn_op> mark;
                mark.push_back(conclave::txn_op::set("jobs/done/" + task, std::to_string(id)));
                co_await lease.async_guarded_txn(std::move(mark)); // refused once lost
                std::printf("worker %d ran %s\n", id, task.c_str());
                ++ran;
            };
            co_await conclave::try_with_lock(mutex, s, 0ms, run); // held elsewhere: skipped
        }
    };
    co_await conclave::with_session(
        consul, conclave::session_config{}.with_name("job-worker").with_ttl(10s), walk);
    co_return ran;
}

asio::awaitable<void> seed(conclave::client& consul, int n) {
    for (int i = 0; i < n; ++i)
        co_await consul.async_kv_put("jobs/tasks/task-" + std::to_string(i), "payload");
}

asio::awaitable<void> clean(conclave::client& consul) {
    for (const char* p : {"jobs/tasks/", "jobs/locks/", "jobs/done/"})
        co_await consul.async_kv_delete(p, conclave::kv_delete_options{}.with_recurse());
}

} // namespace

int main(int argc, char** argv) {
    return examples::run_example(
        "job_workers", argc, argv,
        [argc, argv](conclave::client& consul, bool dev) -> asio::awaitable<void> {
            const int workers = (!dev && argc > 1) ? std::stoi(argv[1]) : 4;
            if (dev)
                co_await seed(consul, 20);
            auto listed = co_await consul.async_kv_keys("jobs/tasks/");
            std::vector<std::string> tasks;
            for (const auto& key : listed.keys)
                tasks.push_back(key.substr(std::string_view{"jobs/tasks/"}.size()));
            // Done by an earlier run (a restart): not to be run again.
            const auto done_before = (co_await consul.async_kv_keys("jobs/done/")).keys.size();
            std::printf("%zu tasks, %d workers\n", tasks.size(), workers);

            // The workers side by side, until all are done. The first failure cancels the
            // others, and so does Ctrl+C (cancelling this coroutine); each releases its lock
            // and destroys its session before the group completes.
            auto ex = co_await asio::this_coro::executor;
            auto start = [&](int id) {
                return asio::co_spawn(ex, worker(consul, id, tasks), asio::deferred);
            };
            std::vector<decltype(start(0))> group;
            for (int id = 0; id < workers; ++id)
                group.push_back(start(id));
            auto [order, failures, ran] =
                co_await asio::experimental::make_parallel_group(std::move(group))
                    .async_wait(asio::experimental::wait_for_one_error(), asio::use_awaitable);
            for (auto i : order)
                if (failures[i])
                    std::rethrow_exception(failures[i]);

            const int total = std::accumulate(ran.begin(), ran.end(), 0);
            auto marks = co_await consul.async_kv_keys("jobs/done/");
            std::printf("%d tasks run by %d workers, %zu done marks\n", total, workers,
                        marks.keys.size());
            if (total != static_cast<int>(tasks.size() - done_before) ||
                marks.keys.size() != tasks.size())
                throw std::runtime_error("a task ran twice or not at all");
            if (dev)
                co_await clean(consul);
        });
}
