// SPDX-License-Identifier: BSL-1.0
// Mutually exclusive job workers: N workers walk one task list; a per-task lock makes sure
// each task runs exactly once, and the "done" mark is written under the fencing check, so a
// worker that lost its lock (paused past its TTL) cannot mark a task another one now owns.
//
//   job_workers --dev          a self-contained run on an embedded agent (4 workers)
//   job_workers [N]            against CONSUL_HTTP_ADDR: tasks are the keys under jobs/tasks/
//
// Ctrl+C: every worker releases its lock and destroys its session before exiting.
#include "example_main.hpp"

#include <conclave/lock.hpp>
#include <conclave/session.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <exception>
#include <map>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

const std::string tasks_prefix = "jobs/tasks/";

std::string task_name(const std::string& key) {
    return key.substr(tasks_prefix.size());
}

// The work itself: stands for anything that must not run twice.
asio::awaitable<void> perform(const std::string& task) {
    asio::steady_timer t{co_await asio::this_coro::executor, 20ms};
    co_await t.async_wait(asio::use_awaitable);
    (void)task;
}

// One worker's pass over the tasks: tries each task's lock without waiting (someone else
// has it: skip), runs the task if nobody did yet, marks it done under the lock's fencing
// check.
asio::awaitable<void> work_through(conclave::client& consul, conclave::session& s, int id,
                                   const std::vector<std::string>& tasks, int& done_here) {
    for (const auto& key : tasks) {
        const auto task = task_name(key);
        conclave::lock mutex{consul, "jobs/locks/" + task};
        auto lease = co_await mutex.async_try_acquire(s, 0ms);
        if (!lease)
            continue; // another worker runs it now
        auto done = co_await consul.async_kv_get("jobs/done/" + task);
        if (!done.entry) {
            co_await perform(task);
            // Written only while our session still holds the task's lock.
            std::vector<conclave::txn_op> ops;
            ops.push_back(conclave::txn_op::set("jobs/done/" + task, std::to_string(id)));
            auto written = co_await lease->async_guarded_txn(std::move(ops));
            if (written.committed) {
                std::printf("worker %d ran %s\n", id, task.c_str());
                ++done_here;
            }
        }
        co_await lease->async_release();
    }
}

// One worker: a session, renewed while the worker works through the tasks.
asio::awaitable<int> worker(conclave::client& consul, int id, std::vector<std::string> tasks) {
    auto s = co_await conclave::session::async_create(
        consul, conclave::session_config{}.with_name("job-worker").with_ttl(10s));
    int done_here = 0;
    // Ctrl+C cancels both; the cancelled session run destroys the session, which releases
    // any lock still held.
    co_await examples::work_in_session(s, work_through(consul, s, id, tasks, done_here),
                                       "job worker's session");
    co_return done_here;
}

asio::awaitable<void> seed(conclave::client& consul, int n) {
    for (int i = 0; i < n; ++i)
        co_await consul.async_kv_put(tasks_prefix + "task-" + std::to_string(i), "payload");
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
            auto listed = co_await consul.async_kv_keys(tasks_prefix);
            // Done by an earlier run (a restart): not to be run again.
            const auto done_before = (co_await consul.async_kv_keys("jobs/done/")).keys.size();
            std::printf("%zu tasks, %d workers\n", listed.keys.size(), workers);

            // The workers run side by side; Ctrl+C (cancelling this coroutine) is passed
            // on to each, and we wait until all have cleaned up.
            std::map<int, int> per_worker;
            std::vector<bool> running(static_cast<std::size_t>(workers), true);
            int finished = 0;
            auto ex = co_await asio::this_coro::executor;
            asio::steady_timer all_done{ex, std::chrono::steady_clock::time_point::max()};
            std::vector<asio::cancellation_signal> stops(static_cast<std::size_t>(workers));
            auto one = [&](int id) -> asio::awaitable<void> {
                per_worker[id] = co_await worker(consul, id, listed.keys);
            };
            for (int id = 0; id < workers; ++id)
                asio::co_spawn(
                    ex, one(id),
                    asio::bind_cancellation_slot(stops[static_cast<std::size_t>(id)].slot(),
                                                 [&, id](std::exception_ptr) {
                                                     running[static_cast<std::size_t>(id)] = false;
                                                     if (++finished == workers)
                                                         all_done.cancel();
                                                 }));
            co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
            if (finished < workers) { // Ctrl+C
                co_await asio::this_coro::reset_cancellation_state();
                for (std::size_t i = 0; i < stops.size(); ++i)
                    if (running[i])
                        stops[i].emit(asio::cancellation_type::terminal);
                while (finished < workers)
                    co_await all_done.async_wait(asio::as_tuple(asio::use_awaitable));
                throw boost::system::system_error(asio::error::operation_aborted);
            }

            int total = 0;
            for (auto [id, n] : per_worker)
                total += n;
            auto marks = co_await consul.async_kv_keys("jobs/done/");
            std::printf("%d tasks run by %d workers, %zu done marks\n", total, workers,
                        marks.keys.size());
            if (total != static_cast<int>(listed.keys.size() - done_before) ||
                marks.keys.size() != listed.keys.size())
                throw std::runtime_error("a task ran twice or not at all");
            if (dev)
                co_await clean(consul);
        });
}
