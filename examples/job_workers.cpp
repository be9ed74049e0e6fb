// SPDX-License-Identifier: BSL-1.0
// Mutually exclusive job workers: N workers walk one task list; a per-task lock makes sure
// each task runs exactly once. A task whose lock another worker holds is skipped, and tried
// again after the pass (its holder may yet fail); a task whose lock is lost is cancelled,
// and the lock is released however the task ends. The "done" mark is written under the
// fencing check, so a worker that lost its lock (paused past its TTL) cannot mark a task
// another one now owns.
//
//   job_workers --dev          a self-contained run on an embedded agent: 4 workers, 12
//                              tasks; one worker crashes mid-task and another does its task
//   job_workers [N]            against CONSUL_HTTP_ADDR: tasks are the keys under jobs/tasks/
//
// A worker whose lock or session is lost stops with that error, and the others are stopped
// as by Ctrl+C: run it again, tasks done are not run twice. Ctrl+C: every worker releases
// its lock and destroys its session before exiting.
#include "example_main.hpp"

#include <conclave/hold_scope.hpp>
#include <conclave/lock.hpp>
#include <conclave/session.hpp>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <cstdio>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace asio = boost::asio;
using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;

namespace {

// Who did what: each task's done marks written in this run, and each worker's count.
struct tally {
    std::map<std::string, int> runs;
    std::vector<int> by_worker;
};

// One worker, with a session of its own: runs the tasks nobody else holds and nobody has
// done yet, until none is left that another worker held.
asio::awaitable<void> worker(conclave::client& consul, int id, std::vector<std::string> tasks,
                             tally& done) {
    auto walk = [&](conclave::session& s) -> asio::awaitable<void> {
        while (!tasks.empty()) {
            std::vector<std::string> held_elsewhere;
            for (const auto& task : tasks) {
                conclave::lock mutex{
                    consul, "jobs/locks/" + task,
                    conclave::lock_options{}.with_value("worker " + std::to_string(id))};
                auto run = [&](conclave::lock_lease lease) -> asio::awaitable<void> {
                    auto mark = co_await consul.async_kv_get("jobs/done/" + task);
                    if (mark.entry)
                        co_return;
                    co_await examples::pause(200ms); // the work; cancelled if the lock is lost
                    std::vector<conclave::txn_op> ops;
                    ops.push_back(conclave::txn_op::set("jobs/done/" + task, std::to_string(id)));
                    co_await lease.async_guarded_txn(std::move(ops)); // refused once lost
                    std::printf("worker %d ran %s\n", id, task.c_str());
                    ++done.runs[task];
                    ++done.by_worker[id];
                };
                if (!co_await conclave::try_with_lock(mutex, s, 0ms, run))
                    held_elsewhere.push_back(task);
            }
            tasks = std::move(held_elsewhere);
            if (!tasks.empty())
                co_await examples::pause(100ms);
        }
    };
    // No lock-delay: the done mark is fenced, so the task of a worker that failed may be
    // taken over at once (Consul's default, 15 s, would keep it from everyone that long).
    co_await conclave::with_session(
        consul,
        conclave::session_config{}.with_name("job-worker").with_ttl(10s).with_lock_delay(0ms),
        walk);
}

// --dev: once the workers are busy, one of them crashes: its session is destroyed, as Consul
// does when the node it runs on fails. Its task is cancelled and, the lock released with the
// session, done by another worker.
asio::awaitable<void> crash_one(conclave::client& consul) {
    co_await examples::pause(300ms);
    for (;;) {
        auto locks = co_await consul.async_kv_list("jobs/locks/");
        for (const auto& e : locks.entries)
            if (!e.session.empty()) {
                std::printf("%s crashes during %s: Consul drops its session\n", e.value.c_str(),
                            e.key.substr(std::string_view{"jobs/locks/"}.size()).c_str());
                co_await consul.async_session_destroy(e.session);
                co_return;
            }
        co_await examples::pause(10ms);
    }
}

asio::awaitable<void> seed(conclave::client& consul, int n) {
    for (int i = 1; i <= n; ++i)
        co_await consul.async_kv_put(
            (i < 10 ? "jobs/tasks/task-0" : "jobs/tasks/task-") + std::to_string(i), "payload");
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
                co_await seed(consul, 12);
            auto listed = co_await consul.async_kv_keys("jobs/tasks/");
            std::vector<std::string> tasks;
            for (const auto& key : listed.keys)
                tasks.push_back(key.substr(std::string_view{"jobs/tasks/"}.size()));
            // Done by an earlier run (a restart): not to be run again.
            const auto done_before = (co_await consul.async_kv_keys("jobs/done/")).keys.size();
            std::printf("%zu tasks, %d workers\n", tasks.size(), workers);

            // The workers side by side, until all are done. In --dev, the worker that
            // crashes is gone (its lock lost with its session), and the others go on.
            tally done;
            done.by_worker.resize(workers);
            auto start = [&](int id) -> asio::awaitable<void> {
                try {
                    co_await worker(consul, id, tasks, done);
                } catch (const conclave::error& e) {
                    if (!dev || (e.code() != conclave::errc::lock_lost &&
                                 e.code() != conclave::errc::session_invalidated))
                        throw;
                    std::printf("worker %d is gone (%s)\n", id, e.code().message().c_str());
                }
            };
            if (dev)
                co_await (examples::run_all(workers, start) && crash_one(consul));
            else
                co_await examples::run_all(workers, start);

            // Each task not done before is marked once and was done once.
            const auto marks = (co_await consul.async_kv_keys("jobs/done/")).keys.size();
            const int total = std::accumulate(done.by_worker.begin(), done.by_worker.end(), 0);
            std::string who;
            for (int id = 0; id < workers; ++id)
                who += (id ? ", worker " : "worker ") + std::to_string(id) + ": " +
                       std::to_string(done.by_worker[id]);
            std::printf("tally: %zu tasks, %d done (%s), %zu done marks\n", tasks.size(), total,
                        who.c_str(), marks);
            for (const auto& [task, n] : done.runs)
                if (n > 1)
                    throw std::runtime_error(task + " was done " + std::to_string(n) + " times");
            if (total != static_cast<int>(tasks.size() - done_before) || marks != tasks.size())
                throw std::runtime_error("a task was done twice or not at all");
            std::printf("every task done exactly once\n");
            if (dev)
                co_await clean(consul);
        });
}
