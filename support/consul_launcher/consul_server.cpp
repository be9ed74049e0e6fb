// SPDX-License-Identifier: BSL-1.0
#include "consul_launcher/consul_server.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/json/parse.hpp>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <unistd.h>

namespace conclave::programs {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

/// One request to 127.0.0.1:port with a time limit (a paused server must not hang the
/// test): the status and body, or nothing when no answer came.
std::optional<std::pair<unsigned, std::string>> http_call(http::verb method, std::uint16_t port,
                                                          const std::string& target,
                                                          std::chrono::milliseconds limit = 2s,
                                                          const std::string& token = {},
                                                          const std::string& body = {}) {
    asio::io_context ioc;
    beast::tcp_stream stream{ioc};
    beast::flat_buffer buffer;
    http::request<http::string_body> req{method, target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!token.empty())
        req.set("X-Consul-Token", token);
    req.body() = body;
    req.prepare_payload();
    http::response<http::string_body> res;
    bool ok = false;
    stream.expires_after(limit);
    stream.async_connect({asio::ip::make_address_v4("127.0.0.1"), port}, [&](beast::error_code ec) {
        if (ec)
            return;
        http::async_write(stream, req, [&](beast::error_code ec, std::size_t) {
            if (ec)
                return;
            http::async_read(stream, buffer, res,
                             [&](beast::error_code ec, std::size_t) { ok = !ec; });
        });
    });
    ioc.run();
    if (!ok)
        return std::nullopt;
    return std::pair<unsigned, std::string>{res.result_int(), res.body()};
}

std::optional<std::pair<unsigned, std::string>> http_get(std::uint16_t port,
                                                         const std::string& target,
                                                         std::chrono::milliseconds limit = 2s,
                                                         const std::string& token = {}) {
    return http_call(http::verb::get, port, target, limit, token);
}

/// True when nobody listens on the port (TCP, and UDP for Serf's gossip ports).
bool port_free(std::uint16_t port, bool udp) {
    asio::io_context ioc;
    boost::system::error_code ec;
    const asio::ip::address loopback = asio::ip::make_address_v4("127.0.0.1");
    asio::ip::tcp::acceptor tcp{ioc};
    tcp.open(asio::ip::tcp::v4(), ec);
    tcp.bind({loopback, port}, ec);
    if (ec)
        return false;
    if (udp) {
        asio::ip::udp::socket u{ioc};
        u.open(asio::ip::udp::v4(), ec);
        u.bind({loopback, port}, ec);
    }
    return !ec;
}

/// A port below the kernel's ephemeral range (32768 and up), so that no outgoing connection
/// takes it between this check and Consul's bind; a collision with another test's pick
/// makes Consul fail to start, and the start is tried again with other ports.
std::uint16_t pick_port(bool udp) {
    static std::mt19937 rng{std::random_device{}()};
    std::uniform_int_distribution<int> dist{10000, 32000};
    for (;;) {
        const auto port = static_cast<std::uint16_t>(dist(rng));
        if (port_free(port, udp))
            return port;
    }
}

std::string tail_of(const std::string& path, std::size_t lines) {
    std::ifstream in(path);
    std::vector<std::string> all;
    for (std::string line; std::getline(in, line);)
        all.push_back(line);
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
        out += all[i] + "\n";
    return out;
}

/// Scratch directories of test processes that died without cleaning up (SIGKILL, a
/// timeout): their pid is in the name.
void remove_stale_dirs() {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/tmp", ec)) {
        const auto name = entry.path().filename().string();
        const std::string head = "conclave-consul-";
        if (name.rfind(head, 0) != 0)
            continue;
        const auto pid = std::atoi(name.c_str() + head.size());
        if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH)
            fs::remove_all(entry.path(), ec);
    }
}

std::string duration_text(std::chrono::milliseconds d) {
    return std::to_string(d.count()) + "ms";
}

} // namespace

consul_server::consul_server(consul_server_options options)
    : options_(std::move(options))
    , servers_(options_.servers == 0 ? 1 : options_.servers) {
    remove_stale_dirs();
    std::string pattern = "/tmp/conclave-consul-" + std::to_string(::getpid()) + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        servers_[i].log_path = dir_ + "/server-" + std::to_string(i) + ".log";
        if (servers_.size() > 1)
            servers_[i].data_dir = dir_ + "/data-" + std::to_string(i);
    }

    // A port taken by someone else between the check and Consul's bind shows as a server
    // that exits at once: start again on other ports.
    for (int attempt = 0;; ++attempt) {
        choose_ports();
        bool started = true;
        for (std::size_t i = 0; i < servers_.size() && started; ++i)
            started = spawn(i);
        if (started) {
            try {
                wait_ready();
                disturbed_ = false; // (an earlier attempt's servers were killed)
                return;
            } catch (const std::exception& e) {
                if (attempt >= 4) {
                    std::string logs = log_tails();
                    shut_down();
                    throw std::runtime_error(std::string(e.what()) + "\n" + logs);
                }
            }
        }
        for (std::size_t i = 0; i < servers_.size(); ++i)
            kill(i);
        for (auto& s : servers_)
            if (!s.data_dir.empty())
                fs::remove_all(s.data_dir);
    }
}

consul_server::~consul_server() {
    shut_down();
}

void consul_server::shut_down() {
    for (std::size_t i = 0; i < servers_.size(); ++i)
        kill(i);
    if (!dir_.empty()) {
        std::error_code ec;
        fs::remove_all(dir_, ec);
        dir_.clear();
    }
}

std::string consul_server::http_address(std::size_t i) const {
    return "127.0.0.1:" + std::to_string(servers_.at(i).http);
}

std::string consul_server::node_name(std::size_t i) const {
    return "conclave-test-" + std::to_string(i);
}

void consul_server::choose_ports() {
    for (auto& s : servers_) {
        s.http = pick_port(false);
        s.serf_lan = pick_port(true);
        s.serf_wan = pick_port(true);
        s.rpc = pick_port(false);
    }
}

std::vector<std::string> consul_server::arguments(std::size_t i) const {
    const auto& s = servers_[i];
    std::vector<std::string> args{options_.binary, "agent"};
    if (servers_.size() == 1) {
        args.push_back("-dev");
    } else {
        args.insert(args.end(),
                    {"-server", "-bootstrap-expect", std::to_string(servers_.size()), "-data-dir",
                     s.data_dir, "-hcl", "performance { raft_multiplier = 1 }"});
        for (const auto& other : servers_)
            args.insert(args.end(), {"-retry-join", "127.0.0.1:" + std::to_string(other.serf_lan)});
    }
    args.insert(args.end(),
                {"-node",
                 node_name(i),
                 "-bind",
                 "127.0.0.1",
                 "-client",
                 "127.0.0.1",
                 "-http-port",
                 std::to_string(s.http),
                 "-serf-lan-port",
                 std::to_string(s.serf_lan),
                 "-serf-wan-port",
                 std::to_string(s.serf_wan),
                 "-server-port",
                 std::to_string(s.rpc),
                 "-dns-port",
                 "-1",
                 "-grpc-port",
                 "-1",
                 "-hcl",
                 "session_ttl_min = \"" + duration_text(options_.session_ttl_min) + "\""});
    if (!options_.acl_master_token.empty())
        args.insert(
            args.end(),
            {"-hcl", "acl { enabled = true, default_policy = \"deny\", tokens { master = \"" +
                         options_.acl_master_token + "\", agent = \"" + options_.acl_master_token +
                         "\" } }"});
    args.insert(args.end(), options_.extra_args.begin(), options_.extra_args.end());
    return args;
}

bool consul_server::spawn(std::size_t i) {
    auto& s = servers_[i];
    spawn_options o;
    o.argv = arguments(i);
    o.stdout_file = s.log_path;
    o.stderr_file = s.log_path;
    o.die_with_parent = true; // nothing outlives the thread that started it
    s.process = std::make_unique<child_process>(std::move(o));
    // Consul binds its ports within milliseconds of starting; one that cannot exits.
    for (int k = 0; k < 50; ++k) {
        if (s.process->exited()) {
            s.process.reset();
            return false;
        }
        if (http_get(s.http, "/v1/status/leader", 200ms))
            return true;
        std::this_thread::sleep_for(10ms);
    }
    return true; // slow to bind; wait_ready decides
}

void consul_server::kill(std::size_t i) {
    servers_.at(i).process.reset(); // SIGKILL and reap
    disturbed_ = true;
}

void consul_server::respawn(std::size_t i) {
    // The same ports: they may still be in TIME_WAIT or briefly held; try for a while.
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (spawn(i))
            return;
        std::this_thread::sleep_for(250ms);
    }
    throw std::runtime_error("consul server " + std::to_string(i) + " did not restart\n" +
                             log_tails());
}

void consul_server::restart(std::size_t i) {
    kill(i);
    respawn(i);
    wait_ready();
}

void consul_server::reset() {
    for (std::size_t i = 0; i < servers_.size(); ++i)
        kill(i);
    for (auto& s : servers_)
        if (!s.data_dir.empty())
            fs::remove_all(s.data_dir);
    for (std::size_t i = 0; i < servers_.size(); ++i)
        respawn(i);
    wait_ready();
    disturbed_ = false; // a new cluster, formed from empty state
}

std::optional<std::size_t> consul_server::leader() const {
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        if (!running(i))
            continue;
        auto r = http_get(servers_[i].http, "/v1/status/leader");
        if (!r || r->first != 200)
            continue;
        for (std::size_t j = 0; j < servers_.size(); ++j)
            if (r->second == "\"127.0.0.1:" + std::to_string(servers_[j].rpc) + "\"")
                return j;
    }
    return std::nullopt;
}

void consul_server::wait_ready(std::chrono::milliseconds limit) const {
    const auto end = std::chrono::steady_clock::now() + limit;
    auto ready = [this](std::size_t i) {
        const auto& s = servers_[i];
        auto leader = http_get(s.http, "/v1/status/leader");
        if (!leader || leader->first != 200 || leader->second.size() <= 2)
            return false;
        auto checks =
            http_get(s.http, "/v1/health/node/" + node_name(i), 2s, options_.acl_master_token);
        if (!checks || checks->first != 200)
            return false;
        boost::system::error_code ec;
        auto v = boost::json::parse(checks->second, ec);
        if (ec || !v.is_array())
            return false;
        for (const auto& c : v.as_array()) {
            const auto* o = c.if_object();
            if (o && o->contains("CheckID") && o->at("CheckID") == "serfHealth" &&
                o->contains("Status") && o->at("Status") == "passing")
                return true;
        }
        return false;
    };
    // No event tells when another process is ready: poll it.
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        while (running(i) && !ready(i)) {
            if (std::chrono::steady_clock::now() >= end)
                throw std::runtime_error("consul server " + std::to_string(i) +
                                         " not ready in time");
            if (servers_[i].process->exited())
                throw std::runtime_error("consul server " + std::to_string(i) + " exited");
            std::this_thread::sleep_for(20ms);
        }
    }
}

std::optional<std::pair<unsigned, std::string>>
consul_server::request(std::string_view method, const std::string& target, std::size_t i,
                       const std::string& body) const {
    return http_call(http::string_to_verb(method), servers_.at(i).http, target, 2s,
                     options_.acl_master_token, body);
}

std::string consul_server::log_tails() const {
    std::ostringstream out;
    for (std::size_t i = 0; i < servers_.size(); ++i)
        out << "--- consul server " << i << " (" << servers_[i].log_path << "), last lines:\n"
            << tail_of(servers_[i].log_path, 30);
    return out.str();
}

} // namespace conclave::programs
