// SPDX-License-Identifier: BSL-1.0
// fuzz_agent_request: the dev agent's HTTP server and routes, driven by clients. The dev
// agent listens on a port that any local program (or, bound elsewhere than loopback, any
// host) can write to: no request may crash it, hang it or leak.
//
// Input: byte 0 is the size of the pieces a client's stream reaches the server in (0:
// 4 KiB), byte 1 where they start (in units of 16 bytes); the rest is what clients write,
// one connection after the other, split at "\n--next-connection--\n" (at most 16
// connections: the rest stays in the 16th). Each connection's bytes are written whole up to
// where the pieces start, then in at most 16 pieces, then the rest at once: the fuzzer
// places the breaks where they matter (a chunk line, a header), and a connection costs at
// most 18 writes, not one per byte.
//
// Each connection is a socketpair whose one end the agent's own http_server serves as if
// accepted from the input's client address (http_server::adopt): everything from there on
// is production code. The server is not imitated here: it reads the heads with Beast and
// the rest itself (bodies by Content-Length or chunked with Go's chunk-line and trailer
// rules, Expect: 100-continue, its memory budget, its refusals 400, 413, 431, 501 and 429,
// keep-alive, its graceful close), then routes the requests. Only the accept itself, and
// the kernel's TCP, are left out: over loopback TCP, Nagle's algorithm merged a client's
// small writes while an earlier one was unacknowledged, so many of the pieces the input
// asked for reached the server merged; a socketpair delivers each write when it is made.
//
// The io_context is polled, not run: after each piece, it and the clients (kept out of
// it, read and written by the harness without waiting) take turns until neither has
// anything left to do, so the server has read and answered what arrived before the next
// piece comes. What a socket's buffer cannot take (the server is not reading: a body behind
// a blocking read, say) waits in the client and is written as the server reads. A
// connection stays open until the input ends: a blocking read waiting on one may be woken
// by the requests of the next (the seeds put the separator after their blocking reads).
// Then every client shuts its sending side (FIN) and reads until the server closes. Every
// connection must then end, the server's side included: one that does not while nothing is
// left to run is a hang (abort). A blocking read still waiting then has a request pipelined
// behind it (its probe saw those bytes, not the FIN): it would end on its timeout, and is
// ended as a timeout would end it (no wall-clock wait here). A timer the server armed is
// waited for, up to 2 s.
//
// One agent (test controls on; max_conns_per_client 8; max_header_bytes, max_body_bytes and
// kv_max_value_size 1 KiB, so that inputs reach them) is kept across inputs, so that keys,
// sessions, locks and tombstones build up; it is replaced every `reset_every` inputs to
// bound its memory. Each input's connections come from a loopback address of its own
// (127.x.y.z): the per-client limit counts its connections only (a blocking read whose
// client left keeps counting until its wait would have ended). In the path, query and body
// of a request, "{s1}" ... "{s9}" stand for the IDs of the sessions created last (most
// recent first) and "{ix}" for the current Raft index: the fuzzer could not guess either.
// They are filled in in the request the server has read, before it is routed, through the
// server's test seam (server_hooks, devagent/src/server/http_server.hpp), which also shows the
// answers.
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/http_server.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address_v4.hpp>
#include <boost/json/parse.hpp>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace {

namespace asio = boost::asio;
using namespace conclave::dev;
using namespace conclave::dev::detail;
using error_code = boost::system::error_code;

constexpr std::string_view separator = "\n--next-connection--\n";
// Connections of one input (each is two descriptors while the input runs).
constexpr std::size_t max_connections = 16;
constexpr int reset_every = 500;
// Pieces a connection's bytes are written in, beyond the first write and before the last.
constexpr std::size_t max_pieces = 16;
// FUZZ_VERBOSE=1: print each request and its answer, and each connection's status lines.
const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_agent_request: %s\n", what);
    std::abort();
}

// One client connection: its end of a socketpair, kept out of the io_context (the harness
// reads and writes it between polls, without the reactor's wake-ups).
struct client {
    explicit client(int descriptor)
        : fd(descriptor) {}
    ~client() { ::close(fd); }
    client(const client&) = delete;
    client& operator=(const client&) = delete;

    int fd;
    std::string received; // (FUZZ_VERBOSE only)
    bool ended = false;   // the server closed its side: EOF, or a reset
    // What the socket's buffer could not take yet (the server is not reading: a request
    // body behind a blocking read, say), written as the server reads it; then the FIN.
    std::string backlog;
    bool fin_wanted = false;
    bool fin_sent = false;
    bool closed_by_server = false; // a write failed: a client stops writing

    // Writes what it can without waiting; true when any byte moved.
    bool send_some(std::string_view& bytes) {
        bool moved = false;
        while (!bytes.empty()) {
            const ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                    closed_by_server = true;
                break;
            }
            bytes.remove_prefix(std::size_t(n));
            moved = true;
        }
        return moved;
    }

    // A client's write(): what the buffer cannot take now waits, with all that follows.
    void write(std::string_view piece) {
        if (closed_by_server)
            return;
        if (backlog.empty())
            send_some(piece);
        if (!closed_by_server)
            backlog.append(piece);
    }

    // Reads what the server wrote, writes what waits, sends the FIN when due; true when
    // anything moved.
    bool pump() {
        bool moved = false;
        std::array<char, 16384> scratch;
        while (!ended) {
            const ssize_t n = ::recv(fd, scratch.data(), scratch.size(), MSG_DONTWAIT);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            moved = true;
            if (n <= 0) {
                ended = true;
                break;
            }
            if (verbose)
                received.append(scratch.data(), std::size_t(n));
        }
        if (!backlog.empty() && !closed_by_server) {
            std::string_view rest = backlog;
            moved |= send_some(rest);
            backlog.erase(0, backlog.size() - rest.size());
        }
        if (closed_by_server)
            backlog.clear();
        if (fin_wanted && !fin_sent && backlog.empty()) {
            ::shutdown(fd, SHUT_WR);
            fin_sent = true;
            moved = true;
        }
        return moved;
    }
};

struct harness {
    asio::io_context io; // polled; run only to wait for a timer (finish)
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

    // Runs what is ready, until nothing is. (What a client writes on a socketpair is
    // readable on the other end when send() returns.)
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

    // A socketpair: one end the client's, the other served as if accepted from `from`.
    std::unique_ptr<client> connect(const std::string& from) {
        int ends[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
            fail("cannot make a socketpair");
        auto c = std::make_unique<client>(ends[0]);
        agent->server->adopt(ends[1], from);
        return c;
    }

    // Until neither the server nor a client has anything left to do.
    void exchange(std::vector<std::unique_ptr<client>>& clients) {
        for (bool moved = true; moved;) {
            settle();
            moved = false;
            for (auto& c : clients)
                moved |= c->pump();
        }
    }

    // Every client sends its FIN; every connection must then end (see the top).
    void finish(std::vector<std::unique_ptr<client>>& clients) {
        for (auto& c : clients)
            c->fin_wanted = true;
        const auto done = [&] {
            for (const auto& c : clients)
                if (!c->ended || !c->fin_sent)
                    return false;
            return agent->counters.connections_open == 0;
        };
        for (int round = 0;; ++round) {
            exchange(clients);
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
        }
    }

    void run(const std::uint8_t* data, std::size_t size) {
        const std::size_t step = data[0] == 0 ? 4096 : data[0];
        const std::size_t pieces_from = std::size_t(data[1]) * 16;
        std::string_view rest(reinterpret_cast<const char*>(data + 2), size - 2);
        // 127.0.0.2 onwards (127/8 is all loopback), never 127.255.255.255.
        const std::string from =
            asio::ip::address_v4(0x7F000000u | (2 + inputs % 0xFFFFF0u)).to_string();
        std::vector<std::unique_ptr<client>> clients;
        for (;;) {
            std::string_view bytes = rest;
            const std::size_t cut = clients.size() + 1 < max_connections ? rest.find(separator)
                                                                         : std::string_view::npos;
            if (cut != std::string_view::npos) {
                bytes = rest.substr(0, cut);
                rest.remove_prefix(cut + separator.size());
            }
            client& c = *clients.emplace_back(connect(from));
            exchange(clients);
            // Whole up to pieces_from, then max_pieces pieces of `step` bytes, then the rest.
            for (std::size_t n = 0; !bytes.empty() && !c.closed_by_server; ++n) {
                const std::size_t length = n == 0            ? pieces_from
                                           : n <= max_pieces ? step
                                                             : bytes.size();
                const std::string_view piece = bytes.substr(0, length);
                bytes.remove_prefix(piece.size());
                if (!piece.empty()) {
                    c.write(piece);
                    exchange(clients);
                }
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
    if (size < 2)
        return 0;
    h.run(data, size);
    return 0;
}
