// SPDX-License-Identifier: BSL-1.0
#include "cli/cli_fixture.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"
#include "support/run.hpp"
#include "support/test_child.hpp"

#include <boost/asio/post.hpp>

#include <atomic>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace conclave::test::cli {

namespace asio = boost::asio;

namespace {

dev::agent_config agent_config() {
    dev::agent_config cfg;
    cfg.port = 0;
    cfg.session_ttl_min = std::chrono::milliseconds{1000};
    cfg.enable_test_controls = true;
    return cfg;
}

std::string make_scratch_dir() {
    std::string pattern = "/tmp/conclave-cli-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    return pattern;
}

} // namespace

agent_thread::agent_thread()
    : work_(ioc_.get_executor()) {
    if (auto options = consul_server_from_env()) {
        options->session_ttl_min = agent_config().session_ttl_min;
        consul_ = start_test_consul(std::move(*options));
        address_ = consul_->http_address();
        return;
    }
    agent_ = std::make_unique<dev::agent>(ioc_.get_executor(), agent_config());
    agent_->start();
    address_ = agent_->http_address();
    thread_ = std::thread([this] { ioc_.run(); });
}

agent_thread::~agent_thread() {
    if (!agent_)
        return;
    asio::post(ioc_, [this] {
        agent_->stop();
        work_.reset();
    });
    thread_.join();
}

bool agent_thread::expire_session(const std::string& id) {
    if (consul_) {
        auto r = consul_->request("PUT", "/v1/session/destroy/" + id);
        return r && r->first == 200 && r->second.rfind("true", 0) == 0; // "true\n"
    }
    std::promise<bool> done;
    asio::post(ioc_, [&] { done.set_value(agent_->force_expire_session(id)); });
    return done.get_future().get();
}

void agent_thread::reset_state() {
    if (consul_) {
        consul_->reset();
        return;
    }
    std::promise<void> done;
    asio::post(ioc_, [&] {
        agent_->reset_state();
        done.set_value();
    });
    done.get_future().get();
}

process::process(std::vector<std::string> args, std::vector<std::string> env,
                 const std::string& stdin_path) {
    static std::atomic<unsigned> counter{0};
    const std::string base = "/tmp/conclave-cli-test-out-" + std::to_string(::getpid()) + "-" +
                             std::to_string(counter++);
    out_path_ = base + ".out";
    err_path_ = base + ".err";
    args.insert(args.begin(), CONCLAVE_EXE);
    auto options = test_child(std::move(args), std::move(env), out_path_, err_path_);
    int in = -1;
    if (!stdin_path.empty()) {
        in = ::open(stdin_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (in < 0)
            throw std::runtime_error("cannot open " + stdin_path);
        options.stdin_fd = in;
    }
    try {
        child_ = std::make_unique<programs::child_process>(options);
    } catch (...) {
        if (in >= 0)
            ::close(in);
        throw;
    }
    if (in >= 0)
        ::close(in); // the child has its own
}

process::~process() {
    child_.reset(); // SIGKILL and reap if still running, before its output goes
    ::unlink(out_path_.c_str());
    ::unlink(err_path_.c_str());
}

std::optional<int> process::wait_for(std::chrono::milliseconds limit) {
    if (!programs::wait_exit_for(*child_, limit))
        return std::nullopt;
    return programs::shell_status(child_->reap());
}

int process::wait(std::chrono::milliseconds limit) {
    auto s = wait_for(limit);
    if (!s)
        FAIL("conclave did not exit in time; stderr so far:\n" << err());
    return *s;
}

std::string process::out() const {
    return read_file(out_path_);
}
std::string process::err() const {
    return read_file(err_path_);
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> read_lines(const std::string& path) {
    std::vector<std::string> lines;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);)
        if (!line.empty())
            lines.push_back(line);
    return lines;
}

bool poll_until(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= end)
            return false;
        std::this_thread::sleep_for(20ms);
    }
    return true;
}

bool process_alive(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text))
        return false;
    const auto close = text.rfind(')');
    return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

cli_fixture::cli_fixture()
    : dir(make_scratch_dir()) {}

cli_fixture::~cli_fixture() {
    // Nothing may be left on the agent, whatever the test did.
    std::size_t left_sessions = ~std::size_t{0}, left_keys = ~std::size_t{0};
    std::string names;
    try {
        for (const auto& s : sessions())
            names += " session:" + s.name;
        left_sessions = sessions().size();
        for (const auto& k : keys())
            names += " key:" + k.key;
        left_keys = keys().size();
    } catch (...) {
    }
    INFO("left on the agent:" << names);
    CHECK(left_sessions == 0);
    CHECK(left_keys == 0);
    std::string cmd = "rm -rf '" + dir + "'";
    if (std::system(cmd.c_str()) != 0)
        WARN("could not remove " << dir);
}

client_config cli_fixture::make_config() const {
    client_config cfg;
    if (auto err = apply_http_addr(cfg, agent.address()); !err.empty())
        throw std::runtime_error(err);
    return cfg;
}

std::unique_ptr<process> cli_fixture::run(std::vector<std::string> args,
                                          std::vector<std::string> env) const {
    env.push_back("CONSUL_HTTP_ADDR=" + agent.address());
    env.push_back("SHELL=/bin/sh");
    return std::make_unique<process>(std::move(args), std::move(env));
}

std::unique_ptr<process> cli_fixture::run_with_stdin(std::vector<std::string> args,
                                                     const std::string& stdin_path) const {
    return std::make_unique<process>(
        std::move(args),
        std::vector<std::string>{"CONSUL_HTTP_ADDR=" + agent.address(), "SHELL=/bin/sh"},
        stdin_path);
}

std::vector<session_entry> cli_fixture::sessions() {
    auto list = [this]() -> asio::awaitable<std::vector<session_entry>> {
        auto r = co_await consul.async_session_list();
        co_return std::move(r.sessions);
    };
    return conclave::test::run(ioc, list(), 10s);
}

std::vector<kv_entry> cli_fixture::keys() {
    auto list = [this]() -> asio::awaitable<std::vector<kv_entry>> {
        auto r = co_await consul.async_kv_list("");
        co_return std::move(r.entries);
    };
    return conclave::test::run(ioc, list(), 10s);
}

std::optional<session_entry> cli_fixture::session_info(const std::string& id) {
    auto info = [this, id]() -> asio::awaitable<std::optional<session_entry>> {
        auto r = co_await consul.async_session_info(id);
        co_return std::move(r.session);
    };
    return conclave::test::run(ioc, info(), 10s);
}

std::string token_session(const std::string& token) {
    const auto a = token.find(':');
    const auto b = token.find(':', a + 1);
    const auto c = token.find(':', b + 1);
    if (a == std::string::npos || b == std::string::npos || c == std::string::npos)
        return {};
    return token.substr(b + 1, c - b - 1);
}

std::uint64_t token_modify_index(const std::string& token) {
    return std::stoull(token.substr(0, token.find(':')));
}

std::pair<int, std::string> output_of(const cli_fixture& f, const std::string& command,
                                      std::vector<std::string> args) {
    args.insert(args.begin(), command);
    auto p = f.run(args);
    const int code = p->wait();
    if (code == 0) {
        CHECK(p->err().empty());
    }
    return {code, p->out()};
}

void check_refused(const cli_fixture& f, const std::vector<bad_arguments>& cases,
                   const std::string& usage_head) {
    using namespace std::chrono_literals;
    for (const auto& c : cases) {
        auto p = f.run(c.args);
        const int code = p->wait(30s);
        const auto err = p->err();
        INFO("args: " << c.args.size() << " " << (c.args.size() > 1 ? c.args[1] : "")
                      << "\nstderr: " << err);
        CHECK(code == 1);
        CHECK(err.rfind(c.message, 0) == 0); // the message comes first
        CHECK((err.find(usage_head) != std::string::npos) == c.usage);
        CHECK(p->out().empty());
    }
}

} // namespace conclave::test::cli
