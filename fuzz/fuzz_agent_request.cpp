// SPDX-License-Identifier: BSL-1.0
// fuzz_agent_request: the dev agent's HTTP server and routes, driven by clients over
// loopback TCP. The dev agent listens on a port that any local program (or, bound elsewhere
// than loopback, any host) can write to: no request may crash it, hang it or leak.
//
// Input: byte 0 is the size of each write (0: 4 KiB), as a client's stream reaches the
// server in pieces; the rest is what clients write, one connection after the other, split
// at "\n--next-connection--\n" (at most 16 connections: the rest stays in the 16th).
// Each connection is opened to the agent's own http_server (127.0.0.1, port 0) and its
// bytes written a piece at a time. The server is not imitated here: it reads the heads with
// Beast and the rest itself, as in production (bodies by Content-Length or chunked with Go's
// chunk-line and trailer rules, Expect: 100-continue, its memory budget, its refusals 400,
// 413, 431, 501 and 429, keep-alive, its graceful close), then routes the requests.
//
// The io_context is polled, never run: between pieces and between connections, until
// nothing is ready, so the server has read and answered what arrived before the next piece
// comes. A connection stays open until the input ends: a blocking read waiting on one may
// be woken by the requests of the next (the seeds put the separator after their blocking
// reads). Then every client shuts its sending side (FIN) and reads until the server
// closes. Every connection must then end, the server's side included: one that does not
// while nothing is left to run is a hang (abort). A blocking read still waiting then has a
// request pipelined behind it (its probe saw those bytes, not the FIN): it would end on
// its timeout, and is ended as a timeout would end it (no wall-clock wait here). Only then
// does the harness wait, up to 2 s, in case the kernel has not delivered a loopback write
// yet.
//
// One agent (test controls on; max_conns_per_client 8; max_header_bytes, max_body_bytes and
// kv_max_value_size 1 KiB, so that inputs reach them) is kept across inputs, so that keys,
// sessions, locks and tombstones build up; it is replaced every `reset_every` inputs to
// bound its memory. Each input connects from a loopback address of its own (127.x.y.z):
// the per-client limit counts its connections only (a blocking read whose client left
// keeps counting until its wait would have ended). In the path, query and body of a
// request, "{s1}" ... "{s9}" stand for the IDs of the sessions created last (most recent
// first) and "{ix}" for the current Raft index: the fuzzer could not guess either. They are
// filled in in the request the server has read, before it is routed, through the server's
// test seam (server_hooks, devagent/src/http_server.hpp), which also shows the answers.
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <netinet/in.h>
#include <poll.h>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <vector>

namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace conclave::dev;
using namespace conclave::dev::detail;
using error_code = boost::system::error_code;

constexpr std::string_view separator = "\n--next-connection--\n";
// Connections of one input (each is two descriptors while the input runs).
constexpr std::size_t max_connections = 16;
constexpr int reset_every = 500;
// FUZZ_VERBOSE=1: print each request and its answer, and each connection's status lines.
const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_agent_request: %s\n", what);
    std::abort();
}

// One client connection: reads (and drops) whatever the server writes, until it closes.
struct client {
    explicit client(asio::io_context& io)
        : sock(io) {}

    tcp::socket sock;
    std::array<char, 16384> scratch;
    std::string received; // (FUZZ_VERBOSE only)
    bool ended = false;

    void read() {
        sock.async_read_some(asio::buffer(scratch), [this](const error_code& ec, std::size_t n) {
            if (verbose)
                received.append(scratch.data(), n);
            if (ec) {
                ended = true; // EOF, or a reset: the server is done with it
                return;
            }
            read();
        });
    }
};

struct harness {
    asio::io_context io; // polled, never run
    std::shared_ptr<agent_impl> agent;
    std::deque<std::string> sessions; // most recent first
    std::uint32_t inputs = 0;

    ~harness() {
        if (agent) {
            agent->stop();
            settle();
        }
    }

    void reset() {
        if (agent) {
            agent->stop();
            settle();
        }
        agent_config cfg;
        cfg.port = 0;
        cfg.enable_test_controls = true;
        cfg.max_conns_per_client = 8;
        // Limits that inputs of a usual size can exceed (431, 413): defaults of 512 KiB
        // and more would take inputs larger than the fuzzer's, and slow every execution.
        cfg.max_header_bytes = 1024;
        cfg.max_body_bytes = 1024;
        cfg.kv_max_value_size = 1024;
        agent = std::make_shared<agent_impl>(io.get_executor(), cfg);
        agent->rng.seed(1); // session IDs repeat from one agent to the next
        agent->start();
        agent->server->set_hooks(
            {[this](http_request& req) { fill_in(req); },
             [this](const http_request& req, const http_response& resp) { answered(req, resp); }});
        sessions.clear();
    }

    // Runs what is ready, until nothing is. (What a loopback socket sends is normally
    // readable on the other end when send() returns: the kernel delivers it in the call.)
    void settle() {
        do
            io.restart();
        while (io.poll() != 0);
    }

    // "{s1}".."{s9}" and "{ix}" in s; true when any was replaced.
    bool substitute(std::string& s) const {
        bool replaced = false;
        for (std::size_t at = s.find('{'); at != std::string::npos; at = s.find('{', at)) {
            std::string with;
            if (s.compare(at, 4, "{ix}") == 0) {
                with = std::to_string(agent->state.last_index());
            } else if (at + 3 < s.size() && s[at + 1] == 's' && s[at + 2] >= '1' &&
                       s[at + 2] <= '9' && s[at + 3] == '}' && !sessions.empty()) {
                with = sessions[std::size_t(s[at + 2] - '1') % sessions.size()];
            } else {
                ++at;
                continue;
            }
            s.replace(at, 4, with);
            at += with.size();
            replaced = true;
        }
        return replaced;
    }

    // server_hooks::on_request.
    void fill_in(http_request& req) const {
        substitute(req.path);
        if (substitute(req.raw_query))
            req.query = parse_query(req.raw_query);
        // A body read whole keeps its Content-Length true (unread or cut short: as it was).
        if (substitute(req.body) && req.content_length >= 0 && !req.body_unread &&
            req.body_error.empty())
            req.content_length = std::int64_t(req.body.size());
    }

    // server_hooks::on_answer: remembers the sessions created.
    void answered(const http_request& req, const http_response& resp) {
        if (verbose)
            std::fprintf(stderr, "%s %s?%s -> %u%s %.200s\n", req.method.c_str(), req.path.c_str(),
                         req.raw_query.c_str(), resp.status, resp.drop ? " (dropped)" : "",
                         resp.body.c_str());
        if (req.path != "/v1/session/create" || resp.status != 200)
            return;
        error_code ec;
        const auto v = boost::json::parse(resp.body, ec);
        if (ec || !v.is_object())
            return;
        if (const auto* id = v.get_object().if_contains("ID"); id && id->is_string()) {
            sessions.emplace_front(id->get_string());
            if (sessions.size() > 9)
                sessions.pop_back();
        }
    }

    void connect(client& c, const asio::ip::address_v4& from) {
        c.sock.open(tcp::v4());
        // The source port is picked at connect(), per destination, not reserved at bind()
        // for the address: thousands of connections a second must not run out of ports.
        const int one = 1;
        ::setsockopt(c.sock.native_handle(), IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        c.sock.bind(tcp::endpoint(from, 0));
        // On loopback the kernel completes the handshake: the server accepts when polled.
        error_code ec;
        c.sock.connect(tcp::endpoint(asio::ip::address_v4::loopback(), agent->port()), ec);
        if (ec == asio::error::interrupted) {
            // libFuzzer's SIGALRM (-timeout) interrupted the wait; the handshake goes on in
            // the kernel: wait until the socket is writable, then read its outcome.
            pollfd ready{c.sock.native_handle(), POLLOUT, 0};
            while (::poll(&ready, 1, 10000) < 0 && errno == EINTR) {
            }
            int error = 0;
            socklen_t size = sizeof error;
            ::getsockopt(c.sock.native_handle(), SOL_SOCKET, SO_ERROR, &error, &size);
            ec = error_code(error, boost::system::system_category());
        }
        if (ec)
            fail("cannot connect to the agent");
        c.read();
    }

    // Every client sends its FIN; every connection must then end (see the top).
    void finish(std::vector<std::unique_ptr<client>>& clients) {
        for (auto& c : clients) {
            error_code ec;
            c->sock.shutdown(tcp::socket::shutdown_send, ec);
        }
        const auto done = [&] {
            for (const auto& c : clients)
                if (!c->ended)
                    return false;
            return agent->counters.connections_open == 0;
        };
        for (int round = 0;; ++round) {
            settle();
            if (done())
                break;
            if (round == 10000)
                fail("connections keep going after their clients' FIN");
            if (agent->hub.size() != 0) {
                // Blocking reads with a request pipelined behind them: their timeout.
                agent->hub.wake_all(true);
                continue;
            }
            io.restart();
            if (io.run_one_for(std::chrono::seconds(2)) == 0)
                fail("a connection did not end after its client's FIN (a hang)");
        }
        for (std::size_t i = 0; i < clients.size(); ++i) {
            client& c = *clients[i];
            if (verbose) {
                std::fprintf(stderr, "(connection %zu:", i + 1);
                for (std::size_t at = c.received.find("HTTP/1.1 "); at != std::string::npos;
                     at = c.received.find("HTTP/1.1 ", at + 1))
                    if (at == 0 || c.received[at - 1] == '\n')
                        std::fprintf(stderr, " %.3s", c.received.c_str() + at + 9);
                std::fprintf(stderr, ", closed)\n");
            }
            // Closed at once, without TIME_WAIT: it has read the server's FIN.
            error_code ec;
            c.sock.set_option(asio::socket_base::linger(true, 0), ec);
            c.sock.close(ec);
        }
    }

    void run(const std::uint8_t* data, std::size_t size) {
        const std::size_t step = data[0] == 0 ? 4096 : data[0];
        std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
        // 127.0.0.2 onwards (127/8 is all loopback), never 127.255.255.255.
        const asio::ip::address_v4 from(0x7F000000u | (2 + inputs % 0xFFFFF0u));
        std::vector<std::unique_ptr<client>> clients;
        for (;;) {
            std::string_view bytes = rest;
            const std::size_t cut = clients.size() + 1 < max_connections ? rest.find(separator)
                                                                         : std::string_view::npos;
            if (cut != std::string_view::npos) {
                bytes = rest.substr(0, cut);
                rest.remove_prefix(cut + separator.size());
            }
            client& c = *clients.emplace_back(std::make_unique<client>(io));
            connect(c, from);
            settle();
            while (!bytes.empty()) {
                const std::string_view piece = bytes.substr(0, step);
                bytes.remove_prefix(piece.size());
                error_code ec;
                asio::write(c.sock, asio::buffer(piece.data(), piece.size()), ec);
                settle();
                if (ec)
                    break; // the server closed it: a client stops writing
            }
            if (cut == std::string_view::npos)
                break;
        }
        finish(clients);
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static harness h;
    if (h.inputs++ % reset_every == 0)
        h.reset();
    if (size < 1)
        return 0;
    h.run(data, size);
    return 0;
}
