// SPDX-License-Identifier: BSL-1.0
// Setup of the CLI tests: a dev agent on a thread of its own (or a real Consul, see
// support/consul_server.hpp), the `conclave` executable run as separate processes, a
// scratch directory, and a check after every test that nothing was left on the server (no
// session, no key).
#pragma once

#include "process/child_process.hpp"
#include "support/catch.hpp"
#include "support/consul_server.hpp"

#include <conclave/client.hpp>
#include <conclave/dev/agent.hpp>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <thread>
#include <utility>
#include <vector>

namespace conclave::test::cli {

using namespace std::chrono_literals;

/// The server the commands talk to: the dev agent, served by its own thread so that it
/// answers while the test blocks, or a real Consul process.
class agent_thread {
public:
    agent_thread();
    ~agent_thread();
    agent_thread(const agent_thread&) = delete;
    agent_thread& operator=(const agent_thread&) = delete;

    std::string address() const { return address_; }
    /// Invalidates a session: as a TTL expiry would on the dev agent (on its thread), by
    /// destroying it on a real Consul (the same invalidation, keys released or deleted by
    /// the session's behaviour, lock-delay applied).
    bool expire_session(const std::string& id);
    /// Forgets everything: the dev agent's reset (on its thread); a real Consul is killed
    /// and started again on its ports with no data.
    void reset_state();

private:
    std::shared_ptr<consul_server> consul_; ///< start_test_consul's: perhaps shared
    boost::asio::io_context ioc_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::unique_ptr<dev::agent> agent_;
    std::string address_;
    std::thread thread_;
};

/// One run of the conclave executable, stdout and stderr captured in files.
class process {
public:
    /// `args` follow the executable's name; `env` ("NAME=value") is added to the test's.
    /// Its stdin reads `stdin_path` when given, /dev/null otherwise.
    explicit process(std::vector<std::string> args, std::vector<std::string> env = {},
                     const std::string& stdin_path = {});
    ~process(); // SIGKILL and reap if still running: a failed test leaves nothing behind
    process(const process&) = delete;
    process& operator=(const process&) = delete;

    pid_t pid() const { return child_->pid(); }
    void signal(int sig) const { child_->signal(sig); }
    /// Waits for the exit (pidfd + poll, no sleeps). The exit status, 128 + the signal
    /// for a process killed by one, or nothing when `limit` passed.
    std::optional<int> wait_for(std::chrono::milliseconds limit);
    /// wait_for that fails the test on timeout.
    int wait(std::chrono::milliseconds limit = 60s);
    std::string out() const;
    std::string err() const;

private:
    std::string out_path_, err_path_;
    std::unique_ptr<programs::child_process> child_;
};

std::string read_file(const std::string& path);
std::vector<std::string> read_lines(const std::string& path);
/// Polls `done` every 20 ms until it holds or `limit` passes (for files written by other
/// processes: there is no event to await).
bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds limit);
/// Alive and not a zombie.
bool process_alive(pid_t pid);

/// A fresh agent, a scratch directory, a client for inspection, and the leftover check.
struct cli_fixture {
    cli_fixture();
    ~cli_fixture();

    agent_thread agent;
    std::string dir; ///< scratch directory, removed afterwards
    boost::asio::io_context ioc;
    client consul{ioc.get_executor(), make_config()};

    /// Runs `conclave <args...>` against the agent (CONSUL_HTTP_ADDR names it; a
    /// -http-addr flag overrides it), with SHELL=/bin/sh and `env` ("NAME=value").
    std::unique_ptr<process> run(std::vector<std::string> args,
                                 std::vector<std::string> env = {}) const;
    /// As run(), with stdin reading the file at `stdin_path`.
    std::unique_ptr<process> run_with_stdin(std::vector<std::string> args,
                                            const std::string& stdin_path) const;
    /// Path inside the scratch directory.
    std::string path(const std::string& name) const { return dir + "/" + name; }

    std::vector<session_entry> sessions();
    std::vector<kv_entry> keys();
    /// GET /v1/session/info/<id>: empty when the session does not exist.
    std::optional<session_entry> session_info(const std::string& id);

private:
    client_config make_config() const;
};

/// Runs `conclave <command> <args...>` to its end: the exit status and stdout (stderr
/// checked to be empty on success).
std::pair<int, std::string> output_of(const cli_fixture& f, const std::string& command,
                                      std::vector<std::string> args);

/// A command line the command must refuse: exit status 1, `message` first on stderr, then
/// the help text (when `usage`), nothing on stdout.
struct bad_arguments {
    std::vector<std::string> args;
    std::string message;
    bool usage; ///< followed by the help text
};
/// Runs each case and checks it as above; `usage_head` starts the command's help text.
void check_refused(const cli_fixture& f, const std::vector<bad_arguments>& cases,
                   const std::string& usage_head);

/// The session of a CONCLAVE_LOCK_TOKEN ("<modify>:<lock>:<session>:<key>").
std::string token_session(const std::string& token);
std::uint64_t token_modify_index(const std::string& token);

} // namespace conclave::test::cli
