// SPDX-License-Identifier: BSL-1.0
// http_server::adopt, the seam through which fuzz/fuzz_agent_request.cpp hands the dev agent
// its connections (socketpairs): an adopted connection is served as an accepted one, counts
// against its client's limit, and is only closed once the server has stopped.
#include "agent_fixture.hpp"
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/http_server.hpp"
#include "support/catch.hpp"

#include <boost/asio/io_context.hpp>

#include <array>
#include <cerrno>
#include <memory>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>

namespace {

namespace asio = boost::asio;
using conclave::dev::detail::agent_impl;

constexpr std::string_view leader_request = "GET /v1/status/leader HTTP/1.1\r\nHost: a\r\n\r\n";

// Runs what is ready, until nothing is (the io_context is polled, as the fuzzer does).
void settle(asio::io_context& io) {
    do
        io.restart();
    while (io.poll() != 0);
}

// The test's end of a socketpair whose other end the agent adopted.
struct peer {
    int fd = -1;
    peer() = default;
    peer(const peer&) = delete;
    peer& operator=(const peer&) = delete;
    ~peer() {
        if (fd >= 0)
            ::close(fd);
    }

    void send(std::string_view bytes) const {
        REQUIRE(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == ssize_t(bytes.size()));
    }

    // What the agent has written, with the io_context polled until neither side moves;
    // `closed` when the agent closed its end.
    std::string read(asio::io_context& io, bool& closed) const {
        std::string out;
        closed = false;
        std::array<char, 4096> chunk;
        for (;;) {
            settle(io);
            const ssize_t n = ::recv(fd, chunk.data(), chunk.size(), MSG_DONTWAIT);
            if (n > 0) {
                out.append(chunk.data(), std::size_t(n));
                continue;
            }
            closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK);
            return out;
        }
    }
};

struct adopt_fixture {
    asio::io_context io;
    std::shared_ptr<agent_impl> agent;

    explicit adopt_fixture(conclave::dev::agent_config cfg) {
        agent = std::make_shared<agent_impl>(io.get_executor(), std::move(cfg));
        agent->start();
    }
    ~adopt_fixture() {
        agent->stop();
        settle(io);
    }

    void adopt(peer& p, const std::string& from) {
        int ends[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) == 0);
        p.fd = ends[0];
        agent->server->adopt(ends[1], from);
    }
};

} // namespace

TEST_CASE("an adopted connection is served as an accepted one and counts against its client",
          "[agent][limits]") {
    conclave::dev::agent_config cfg = conclave::test::test_agent_config();
    cfg.max_conns_per_client = 2;
    adopt_fixture f(cfg);
    peer first, second, third, other;
    f.adopt(first, "127.0.0.9");
    f.adopt(second, "127.0.0.9");
    f.adopt(third, "127.0.0.9");  // beyond 127.0.0.9's limit
    f.adopt(other, "127.0.0.10"); // another client's

    bool closed = false;
    first.send(leader_request);
    const std::string served = first.read(f.io, closed);
    CHECK(served.starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK_FALSE(closed); // kept alive

    const std::string refused = third.read(f.io, closed);
    CHECK(refused.starts_with("HTTP/1.1 429 Too Many Requests\r\n"));
    CHECK(closed);

    other.send(leader_request);
    CHECK(other.read(f.io, closed).starts_with("HTTP/1.1 200 OK\r\n"));
    CHECK(f.agent->counters.connections_refused == 1);
    CHECK(f.agent->counters.connections_accepted == 3);
}

TEST_CASE("a connection adopted just before the server stops is closed, not served",
          "[agent][limits]") {
    adopt_fixture f(conclave::test::test_agent_config());
    peer p;
    f.adopt(p, "127.0.0.9");
    f.agent->stop(); // before the connection's coroutine has started
    // Closed at once: not left waiting for a request until read_header_timeout.
    bool closed = false;
    CHECK(p.read(f.io, closed).empty());
    CHECK(closed);
    CHECK(f.agent->counters.connections_open == 0);
}
