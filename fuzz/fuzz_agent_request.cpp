// SPDX-License-Identifier: BSL-1.0
// fuzz_agent_request: the dev agent's handling of what clients send it, with no socket.
// The dev agent listens on a port that any local program (or, bound elsewhere than
// loopback, any host) can write to: no request may crash it, hang it or leak.
//
// Input: byte 0 is the size of each read (0: 4 KiB), as a socket delivers the stream in
// pieces; the rest is what a client writes on one connection: one or more requests, read as
// http_server.cpp's serve() reads them (a Beast request_parser<string_body> with its header
// and body limits, then the body the same way), turned into an http_request as its
// make_request() does (both in an unnamed namespace there, so repeated here), and
// answered by dispatch_now(), or dispatch_wait() for blocking reads, which run on an
// io_context that is polled, never run. A blocking read that waits leaves its connection
// waiting, and the rest of the input is read as another client's connection: its writes
// may wake the read. Reads still waiting when the input ends are ended as when their
// client goes away (the disconnect probe); each must then answer. Answers' heads are
// written by append_response_head().
//
// One agent (with the test controls on) is kept across inputs, so that keys, sessions,
// locks and tombstones build up; it is replaced every `reset_every` inputs to bound its
// memory. In the path, query and body of a request, "{s1}" ... "{s9}" stand for the IDs of
// the sessions created last (most recent first) and "{ix}" for the current Raft index:
// the fuzzer could not guess either (the seeds use them, after the golden transcripts).
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/http_server.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/read_size.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/json/parse.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace conclave::dev;
using namespace conclave::dev::detail;
using error_code = boost::system::error_code;
using request_parser = http::request_parser<http::string_body>;

// http_server.cpp's limits.
constexpr std::uint32_t header_limit = (1u << 20) + 4096;
constexpr std::int64_t generic_body_limit = 8 << 20;
// Requests on one connection (one input) beyond this add nothing but time.
constexpr int max_requests = 8;
constexpr int reset_every = 500;
// FUZZ_VERBOSE=1: print each request and its answer's status (to look at seeds).
const bool verbose = std::getenv("FUZZ_VERBOSE") != nullptr;

[[noreturn]] void fail(const char* what) {
    std::fprintf(stderr, "fuzz_agent_request: %s\n", what);
    std::abort();
}

// The connection's bytes, handed out `step` at a time (a socket's reads).
struct byte_stream {
    const std::uint8_t* data;
    std::size_t size;
    std::size_t step;

    void read(beast::flat_buffer& buffer) {
        const std::size_t n = std::min<std::size_t>(size, step == 0 ? 4096 : step);
        auto space = buffer.prepare(n);
        std::memcpy(space.data(), data, n);
        buffer.commit(n);
        data += n;
        size -= n;
    }
};

// Feeds `parser` from the buffer, reading more, until `done` (Beast's read_some loop, the
// end of the stream as the socket's EOF).
template <class Done>
error_code read_until(request_parser& parser, beast::flat_buffer& buffer, byte_stream& in,
                      Done done) {
    for (;;) {
        if (buffer.size() != 0) {
            error_code ec;
            std::size_t used = 0;
            try {
                used = parser.put(buffer.data(), ec);
            } catch (const std::length_error&) {
                // TODO(fuzz): known, being fixed in http_server.cpp: Beast's field container
                // throws for a header name or value over 65535 bytes. Remove this catch once
                // the server answers those itself.
                return http::error::header_limit;
            }
            buffer.consume(used);
            if (ec && ec != http::error::need_more)
                return ec;
            if (done())
                return {};
            if (!ec && used != 0)
                continue;
        }
        if (in.size == 0) {
            if (!parser.got_some())
                return http::error::end_of_stream;
            error_code ec;
            parser.put_eof(ec);
            return ec ? ec : error_code(http::error::partial_message);
        }
        in.read(buffer);
    }
}

// http_server.cpp's make_request().
bool make_request(const request_parser& parser, http_request& req) {
    const auto& h = parser.get();
    req.method = std::string(h.method_string());
    std::string_view target(h.target().data(), h.target().size());
    if (target.starts_with("http://") || target.starts_with("https://")) {
        target.remove_prefix(target.find("//") + 2);
        const auto slash = target.find_first_of("/?");
        target = slash == std::string_view::npos ? std::string_view{} : target.substr(slash);
        if (target.empty() || target.front() == '?')
            return false;
    } else if (target.empty() || target.front() != '/') {
        return false;
    }
    const auto q = target.find('?');
    req.raw_query = q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1));
    auto path = path_unescape(target.substr(0, q));
    if (!path)
        return false;
    req.path = std::move(*path);
    req.query = parse_query(req.raw_query);
    if (parser.chunked())
        req.content_length = -1;
    else if (const auto len = parser.content_length())
        req.content_length = static_cast<std::int64_t>(*len);
    else
        req.content_length = 0;
    return true;
}

// http_server.cpp's early_limit().
std::int64_t early_limit(const agent_impl& a, const http_request& req) {
    const auto kv = static_cast<std::int64_t>(a.cfg.kv_max_value_size);
    if (req.method == "PUT" && req.path.starts_with("/v1/kv/"))
        return kv;
    if (req.method == "PUT" && req.path == "/v1/txn")
        return std::max<std::int64_t>(524288, kv);
    return generic_body_limit;
}

// Stands for the connection of a blocking query: "goes away" when the harness says so.
struct probe final : disconnect_probe {
    std::function<void()> on_gone;
    void arm(std::function<void()> cb) override { on_gone = std::move(cb); }
    void disarm() override { on_gone = nullptr; }
    void counted_until(std::chrono::steady_clock::time_point) override {}
};

struct harness {
    asio::io_context io; // polled, never run
    std::shared_ptr<agent_impl> agent;
    std::deque<std::string> sessions; // most recent first
    int inputs = 0;

    void reset() {
        if (agent) {
            agent->stop();
            io.restart();
            io.poll();
        }
        agent_config cfg;
        cfg.port = 0;
        cfg.enable_test_controls = true;
        agent = std::make_shared<agent_impl>(io.get_executor(), cfg);
        agent->rng.seed(1); // session IDs repeat from one agent to the next
        sessions.clear();
    }

    std::string substitute(std::string s) const {
        for (std::size_t at = s.find('{'); at != std::string::npos; at = s.find('{', at)) {
            std::string with;
            std::size_t len = 0;
            if (s.compare(at, 4, "{ix}") == 0) {
                with = std::to_string(agent->state.last_index());
                len = 4;
            } else if (at + 3 < s.size() && s[at + 1] == 's' && s[at + 2] >= '1' &&
                       s[at + 2] <= '9' && s[at + 3] == '}' && !sessions.empty()) {
                with = sessions[std::size_t(s[at + 2] - '1') % sessions.size()];
                len = 4;
            } else {
                ++at;
                continue;
            }
            s.replace(at, len, with);
            at += with.size();
        }
        return s;
    }

    // A blocking read that waits: its request, its answer when it comes, and its probe.
    struct waiting {
        http_request req;
        probe p;
        std::optional<http_response> out;
    };
    std::vector<std::unique_ptr<waiting>> waits;

    void poll() {
        io.restart();
        io.poll();
    }

    // The answer, or nothing when the request is a blocking read left waiting.
    std::optional<http_response> answer(const http_request& req) {
        if (auto now = dispatch_now(*agent, req))
            return now;
        auto& w = *waits.emplace_back(std::make_unique<waiting>());
        w.req = req;
        asio::co_spawn(agent->ex, dispatch_wait(agent, w.req, &w.p),
                       [&w](std::exception_ptr e, http_response r) {
                           if (e)
                               std::rethrow_exception(e); // a finding: let it escape
                           w.out = std::move(r);
                       });
        poll();
        if (!w.out)
            return std::nullopt;
        auto out = std::move(w.out);
        waits.pop_back();
        return out;
    }

    // The input is over: the clients of the reads still waiting go away.
    void end_waits() {
        poll(); // (those woken by the last request)
        for (auto& w : waits) {
            if (w->out)
                continue;
            if (!w->p.on_gone)
                fail("a blocking query waits without watching its client");
            auto gone = std::move(w->p.on_gone);
            gone();
            poll();
        }
        for (auto& w : waits) {
            if (!w->out)
                fail("a blocking query did not end when its client went away");
            if (verbose)
                std::fprintf(stderr, "(waited) %s %s?%s -> %u\n", w->req.method.c_str(),
                             w->req.path.c_str(), w->req.raw_query.c_str(), w->out->status);
        }
        waits.clear();
    }

    void remember_session(const http_request& req, const http_response& resp) {
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

    // One connection: http_server.cpp's serve() loop. False when the connection ends.
    bool serve_one(beast::flat_buffer& buffer, byte_stream& in) {
        request_parser parser;
        parser.header_limit(header_limit);
        parser.body_limit(std::uint64_t(generic_body_limit));
        if (read_until(parser, buffer, in, [&] { return parser.is_header_done(); }))
            return false; // closed, or answered 400/431 and closed
        const auto& header = parser.get();
        http_request req;
        if (!make_request(parser, req))
            return false; // 400
        if (header.version() >= 11 && header.find(http::field::host) == header.end())
            return false; // 400 missing required Host header
        const bool head = req.method == "HEAD";
        const bool keep_alive_requested = header.keep_alive();
        req.path = substitute(std::move(req.path));
        req.raw_query = substitute(std::move(req.raw_query));
        req.query = parse_query(req.raw_query);

        const std::int64_t limit = early_limit(*agent, req);
        if (req.content_length > limit) {
            req.body_unread = true;
            if (const auto resp = answer(req)) {
                std::string out_head;
                append_response_head(out_head, *resp, false, false,
                                     "Thu, 01 Jan 2026 00:00:00 GMT");
            }
            return false; // answered, then closed
        }
        if (!parser.is_done()) {
            parser.body_limit(std::uint64_t(limit));
            parser.eager(true);
            if (read_until(parser, buffer, in, [&] { return parser.is_done(); }))
                return false; // 413, 400, or the client went away
        }
        req.body = substitute(std::move(parser.get().body()));
        if (req.content_length >= 0)
            req.content_length = std::int64_t(req.body.size());

        auto answered = answer(req);
        if (!answered)
            return true; // it waits: what follows comes from another client
        http_response& resp = *answered;
        if (verbose)
            std::fprintf(stderr, "%s %s?%s -> %u %.200s\n", req.method.c_str(), req.path.c_str(),
                         req.raw_query.c_str(), resp.status, resp.body.c_str());
        remember_session(req, resp);
        if (resp.drop)
            return false;
        const bool keep_alive = keep_alive_requested && !resp.close;
        std::string out_head;
        append_response_head(out_head, resp, keep_alive, keep_alive && header.version() < 11,
                             "Thu, 01 Jan 2026 00:00:00 GMT");
        if (head)
            resp.body.clear();
        return keep_alive;
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static harness h;
    if (h.inputs++ % reset_every == 0)
        h.reset();
    if (size < 1)
        return 0;
    byte_stream in{data + 1, size - 1, data[0]};
    beast::flat_buffer buffer;
    for (int i = 0; i < max_requests && h.serve_one(buffer, in); ++i) {
    }
    h.end_waits();
    return 0;
}
