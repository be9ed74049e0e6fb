// SPDX-License-Identifier: BSL-1.0
// A connection's request loop (http_server::impl::serve): read, route, answer, keep alive.
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/beast_response_head.hpp"
#include "devagent/src/server/http_server.hpp"
#include "devagent/src/server/request_reader.hpp"
#include "devagent/src/server/response_writer.hpp"
#include "devagent/src/server/server_impl.hpp"
#include "devagent/src/server/server_names.hpp"

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace conclave::dev::detail {

using namespace std::chrono_literals;

// One connection: requests read, answered and kept alive as Go's server does, with the
// limits of agent_config. A request that breaks an HTTP rule or limit is answered (Go's
// own answer, or the route's to a body it could not read) and its connection closed; a
// client too slow or idle too long is closed without an answer (as Go does on its
// timeouts). No exception leaves: the last catch counts it and closes the connection.
asio::awaitable<void> http_server::impl::serve(std::shared_ptr<impl> self,
                                               std::shared_ptr<agent_impl> owner,
                                               std::shared_ptr<connection> conn,
                                               asio::ip::address client) {
    self->connections.insert(conn.get());
    ++owner->counters.connections_open;
    struct unregister {
        std::shared_ptr<impl> s;
        agent_impl& a;
        connection* c;
        asio::ip::address client;
        ~unregister() {
            s->connections.erase(c);
            --a.counters.connections_open;
            if (c->timed_out)
                ++a.counters.connections_timed_out;
            if (c->counted_until_time > connection::clock::now())
                s->counted_until.emplace(c->counted_until_time, client);
            else
                s->count_out(client);
        }
    } guard{self, *owner, conn.get(), client};

    connection& stream = *conn;
    if (self->stopped) {
        // Stopped between the spawn and this start: stop() did not see this connection.
        boost::system::error_code ec;
        stream.socket().close(ec);
        co_return;
    }
    const agent_config& cfg = owner->cfg;
    agent_stats& counters = owner->counters;
    // The head is refused (header_limit) before it fills the buffer; chunk lines and the
    // trailer are shorter still. Beast reads at most the buffer's free capacity (512 bytes
    // at first), and the parser drains it as it goes: room for a whole usual request saves
    // reads.
    // (A max_header_bytes too large to add to: the largest buffer there is.)
    const std::size_t buffer_max = std::max(cfg.max_header_bytes, 4 * max_chunk_line);
    beast::flat_buffer buffer(buffer_max < SIZE_MAX ? buffer_max + 1 : SIZE_MAX);
    buffer.reserve(initial_buffer);
    memory_lease lease(self->request_memory, cfg.request_memory_limit);
    std::string out_head; // a response's head, reused for the next one
    std::string refusal;  // Go's own answer to a request it does not serve
    bool idle = false;    // a kept-alive connection between requests
    try {
        for (;;) {
            http_request req;
            unsigned version = 11;
            bool keep_alive_requested = false;
            {
                // The parser only lives while the request is read: a blocking query keeps
                // nothing of its head but the request.
                request_parser parser(cfg.max_header_bytes);
                connection::clock::time_point started;
                const error_code ec =
                    co_await read_head(stream, buffer, parser, cfg, lease, idle, started);
                if (ec) {
                    // (Beast refuses a second Transfer-Encoding field itself.)
                    if (!self->stopped && !is_transport_error(ec))
                        refusal = ec == http::error::header_limit
                                      ? raw_error("431 Request Header Fields Too Large")
                                  : ec == http::error::bad_transfer_encoding &&
                                          parser.transfer_encodings != 0
                                      ? unsupported_transfer_encoding()
                                      : raw_error("400 Bad Request");
                    break;
                }
                version = parser.get().version();
                if (!make_request(parser, req)) {
                    refusal = raw_error("400 Bad Request");
                    break;
                }
                if (version >= 11 && parser.hosts == 0) {
                    refusal = raw_error("400 Bad Request", "missing required Host header");
                    break;
                }
                if (parser.hosts > 1) {
                    refusal = raw_error("400 Bad Request");
                    break;
                }
                if (!parser.transfer_encoding_supported()) {
                    refusal = unsupported_transfer_encoding();
                    break;
                }
                // The request (and the parser's copy of its target) counts against the
                // budget until it is answered: a blocking query keeps it while it waits.
                if (!lease.keep(request_bytes(req) + parser.get().target().size(),
                                buffer.capacity())) {
                    refusal = raw_error("431 Request Header Fields Too Large");
                    break;
                }
                keep_alive_requested = parser.keep_alive();

                const std::int64_t limit = body_limit(cfg, req);
                if (req.content_length > limit) {
                    req.body_unread = true;
                    req.body_error = std::string(body_too_large);
                } else if (req.content_length != 0) {
                    if (parser.expect_continue) {
                        const bool sent = co_await write_raw(
                            stream, "HTTP/1.1 100 Continue\r\n\r\n", cfg.write_timeout);
                        if (!sent)
                            break;
                    }
                    stream.expires_within(started, cfg.read_timeout);
                    const body_read got =
                        co_await read_body(stream, buffer, req, parser.chunked(), limit, lease);
                    if (got == body_read::gone)
                        break;
                }
            }
            // The body goes to the handler; the buffer keeps only what follows (pipelined).
            trim_buffer(buffer);
            if (self->hooks.on_request)
                self->hooks.on_request(req);
            lease.keep(request_bytes(req), buffer.capacity()); // (less than it held)
            const bool head = req.method == "HEAD";
            const bool body_unread = req.body_unread;
            const bool body_failed = !req.body_error.empty();
            const std::int64_t content_length = req.content_length;
            if (body_failed)
                ++counters.requests_rejected;

            stream.expires_never(); // a blocking query may wait 10 minutes
            // dispatch() unrolled: most requests are answered without a coroutine frame.
            http_response resp;
            if (auto now = dispatch_now(*owner, req)) {
                resp = std::move(*now);
            } else {
                // A blocking query (a GET, which ignores its body) may wait 10 minutes: it
                // keeps its path and query, counted, and gives its body back.
                std::string().swap(req.body);
                lease.keep(request_bytes(req), buffer.capacity());
                // (The fuzzer's on_answer sees the request after the wait: a copy waits. Not
                // as one conditional expression: with g++ 12 that co_await argument crashed,
                // free(): invalid pointer.)
                if (self->hooks.on_answer)
                    resp = co_await dispatch_wait(owner, http_request(req), conn.get());
                else
                    resp = co_await dispatch_wait(owner, std::move(req), conn.get());
            }
            if (self->hooks.on_answer)
                self->hooks.on_answer(req, resp);
            {
                const http_request answered = std::move(req); // (freed here)
            }
            lease.keep(0, buffer.capacity());
            if (self->stopped || resp.drop)
                break;
            // Go does not keep a connection whose body was refused, unread or unreadable.
            const bool keep_alive =
                keep_alive_requested && !resp.close && !body_unread && !body_failed;
            const bool http10_keep_alive = keep_alive && version < 11;
            // The head as one string and the body: two buffers for one gathered write.
            out_head.clear();
            if (!append_response_head(out_head, resp, keep_alive, http10_keep_alive,
                                      current_http_date())) {
                auto res = to_beast(std::move(resp), head, keep_alive);
                if (http10_keep_alive)
                    res.set(http::field::connection, "keep-alive");
                append_beast_response_head(out_head, res);
                resp.body = std::move(res.body());
            }
            if (head)
                resp.body.clear(); // Content-Length stays the body's
            stream.expires_within(connection::clock::now(), cfg.write_timeout);
            const std::array<asio::const_buffer, 2> message{asio::buffer(out_head),
                                                            asio::buffer(resp.body)};
            auto [wec, wn] = co_await asio::async_write(stream, message, use);
            (void)wn;
            if (wec)
                break;
            if (!keep_alive) {
                // (A Content-Length may be up to INT64_MAX: capped before adding.)
                co_await close_gracefully(
                    stream, body_unread
                                ? std::min<std::int64_t>(content_length, 16 << 20) + (64 << 10)
                                : drain_bytes);
                break;
            }
            idle = true;
        }
        // What the connection read is no longer needed: others may have its share of the
        // budget while it says goodbye.
        buffer.consume(buffer.size());
        buffer.shrink_to_fit();
        lease.keep(0, 0);
        if (!refusal.empty()) {
            ++counters.requests_rejected;
            const bool sent = co_await write_raw(stream, refusal, cfg.write_timeout);
            if (sent)
                co_await close_gracefully(stream, drain_bytes);
        }
    } catch (const std::exception&) {
        // Never let one connection's trouble escape.
        ++counters.internal_errors;
    }
    boost::system::error_code ec;
    stream.socket().close(ec);
    stream.finish();
}

} // namespace conclave::dev::detail
