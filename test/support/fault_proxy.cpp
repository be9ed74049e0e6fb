// SPDX-License-Identifier: BSL-1.0
#include "support/fault_proxy.hpp"

// The dev agent's own URL helpers, so that paths, queries and endpoint names are read
// exactly as the agent reads them (decoded path, Go's query parsing and path cleaning).
#include "devagent/src/server/http_types.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <boost/system/system_error.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <optional>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

namespace conclave::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using namespace asio::experimental::awaitable_operators;

namespace {

constexpr auto use = asio::as_tuple(asio::use_awaitable);
constexpr std::uint64_t request_body_limit = 8u << 20;
constexpr std::uint64_t response_body_limit = 64u << 20;
constexpr std::uint32_t header_limit = 1u << 20; // Go's http.DefaultMaxHeaderBytes

// The dev agent's route patterns (devagent/src/server/router.cpp); a trailing '/' marks a subtree.
constexpr std::string_view route_patterns[] = {
    "/v1/kv/",
    "/v1/session/create",
    "/v1/session/destroy/",
    "/v1/session/renew/",
    "/v1/session/info/",
    "/v1/session/node/",
    "/v1/session/list",
    "/v1/txn",
    "/v1/status/leader",
    "/v1/status/peers",
    "/v1/agent/self",
    "/v1/catalog/register",
    "/v1/catalog/deregister",
    "/v1/catalog/nodes",
    "/v1/catalog/node/",
    "/v1/health/node/",
    "/v1/_conclave/",
};

// "METHOD /pattern" as the agent's count_endpoint names it. Unclean paths get a redirect
// from Go's ServeMux before any handler runs, so the agent counts them as "other".
std::string endpoint_name(std::string_view method, std::string_view path) {
    std::string_view best;
    if (dev::detail::path_is_clean(path)) {
        for (const std::string_view p : route_patterns) {
            if (p.back() != '/' && path == p) {
                best = p;
                break;
            }
            if (p.back() == '/' && path.starts_with(p) && p.size() > best.size())
                best = p;
        }
    }
    if (best.size() > 1 && best.back() == '/')
        best.remove_suffix(1);
    std::string name(method);
    name += ' ';
    name += best.empty() ? std::string_view("other") : best;
    return name;
}

// A blocking query, as Consul's parseWait sees one: ?index=N with N > 0.
bool is_blocking(std::string_view raw_query) {
    const std::string index = dev::detail::parse_query(raw_query).get("index");
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), n);
    return ec == std::errc{} && end == index.data() + index.size() && n > 0;
}

// The target without its `index` and `wait` parameters (the read no longer blocks).
std::string without_blocking(std::string_view target, std::size_t question) {
    if (question == std::string_view::npos)
        return std::string(target);
    std::string out(target.substr(0, question));
    char sep = '?';
    std::string_view rest = target.substr(question + 1);
    while (!rest.empty()) {
        const auto amp = rest.find('&');
        const std::string_view param = rest.substr(0, amp);
        rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
        if (param.starts_with("index=") || param.starts_with("wait=") || param.empty())
            continue;
        out += sep;
        out += param;
        sep = '&';
    }
    return out;
}

struct injection {
    std::string prefix;
    unsigned remaining = 0;
    unsigned status = 500;
    bool disconnect = false;
};

struct proxy_connection;

// Increments a counter for the lifetime of a scope (so that no exit path forgets to undo it).
struct counted_scope {
    explicit counted_scope(std::size_t& n)
        : n_{n} {
        ++n_;
    }
    ~counted_scope() { --n_; }
    counted_scope(const counted_scope&) = delete;
    counted_scope& operator=(const counted_scope&) = delete;

private:
    std::size_t& n_;
};

} // namespace

// Shared by the proxy object and every coroutine it starts, so that stop() and the
// destructor can leave while coroutines are still unwinding.
struct fault_proxy::state {
    state(asio::any_io_executor e, std::string host, std::uint16_t port)
        : ex{std::move(e)}
        , upstream_host{std::move(host)}
        , upstream_port{port}
        , acceptor{ex}
        , held_event{ex, asio::steady_timer::time_point::max()} {}

    std::optional<injection> take_injection(std::string_view path) {
        for (auto it = injections.begin(); it != injections.end(); ++it) {
            if (!path.starts_with(it->prefix))
                continue;
            injection inj = *it;
            if (--it->remaining == 0)
                injections.erase(it);
            return inj;
        }
        return std::nullopt;
    }

    asio::any_io_executor ex;
    std::string upstream_host;
    std::uint16_t upstream_port;
    tcp::endpoint upstream; ///< resolved by start()
    tcp::acceptor acceptor;
    std::uint16_t port = 0; ///< kept after stop(), as tests name the address afterwards
    bool stopped = false;
    proxy_stats counters; ///< blocking_queries_waiting and connections_open kept live
    std::vector<injection> injections;
    std::optional<std::string> hold_path;
    fault_proxy::path_match hold_match = fault_proxy::path_match::prefix;
    bool hold_blocking_only = false;
    std::string misbehave_prefix;
    fault_proxy::index_fault misbehave = fault_proxy::index_fault::none;
    std::vector<std::shared_ptr<proxy_connection>> held;
    /// Never expires; cancelled to wake async_wait_held() (a response held, or stopped).
    asio::steady_timer held_event;
    std::set<proxy_connection*> connections; ///< open ones, for stop()
};

namespace {

using state = fault_proxy::state;

struct proxy_connection {
    proxy_connection(std::shared_ptr<state> s, tcp::socket c)
        : st{std::move(s)}
        , client{std::move(c)}
        , upstream{st->ex}
        , release{st->ex, asio::steady_timer::time_point::max()} {
        st->connections.insert(this);
        ++st->counters.connections_open;
    }
    ~proxy_connection() {
        st->connections.erase(this);
        --st->counters.connections_open;
    }
    proxy_connection(const proxy_connection&) = delete;
    proxy_connection& operator=(const proxy_connection&) = delete;

    // Both sides together: the server sees its client leave (a blocking query ends), the
    // client sees its server leave.
    void close() {
        error_code ec;
        client.shutdown(tcp::socket::shutdown_both, ec);
        client.close(ec);
        upstream.shutdown(tcp::socket::shutdown_both, ec);
        upstream.close(ec);
        release.cancel();
    }

    std::shared_ptr<state> st;
    tcp::socket client;
    tcp::socket upstream;
    beast::flat_buffer client_buffer, upstream_buffer;
    /// Never expires; cancelled by release_held() (released set) or close().
    asio::steady_timer release;
    bool released = false;
};

// Completes when the peer closes (or the socket fails). Bytes that arrive meanwhile (a
// pipelined request) are kept in `buffer` for the next parse. Run against the other side's
// operation, so that a close on either side is seen while the proxy waits on the other.
asio::awaitable<void> until_closed(tcp::socket& socket, beast::flat_buffer& buffer) {
    for (;;) {
        auto [ec, n] = co_await socket.async_read_some(buffer.prepare(64 * 1024), use);
        buffer.commit(n);
        if (ec)
            co_return;
    }
}

asio::awaitable<error_code> read_request(proxy_connection& c,
                                         http::request_parser<http::string_body>& parser) {
    auto [ec, n] = co_await http::async_read(c.client, c.client_buffer, parser, use);
    co_return ec;
}

asio::awaitable<error_code> read_response(proxy_connection& c,
                                          http::response_parser<http::string_body>& parser) {
    auto [ec, n] = co_await http::async_read(c.upstream, c.upstream_buffer, parser, use);
    co_return ec;
}

asio::awaitable<void> until_released(proxy_connection& c) {
    co_await c.release.async_wait(use);
}

// Answers an injected error the way Consul answers a failed RPC: plain text.
asio::awaitable<error_code> write_error(proxy_connection& c, unsigned status, bool keep_alive) {
    http::response<http::string_body> res;
    res.version(11);
    res.result(status);
    res.set(http::field::content_type, "text/plain; charset=utf-8");
    res.set(http::field::date, dev::detail::http_date(std::chrono::system_clock::now()));
    res.body() = status == 500 ? "No cluster leader" : "injected error";
    res.prepare_payload();
    res.keep_alive(keep_alive);
    auto [ec, n] = co_await http::async_write(c.client, res, use);
    co_return ec;
}

// One client connection and its upstream connection, request by request.
asio::awaitable<void> serve(std::shared_ptr<proxy_connection> self) {
    proxy_connection& c = *self;
    state& st = *c.st;
    if (st.stopped) // stop() ran before this coroutine did: async_connect would reopen
        co_return;
    if (auto [ec] = co_await c.upstream.async_connect(st.upstream, use); ec) {
        c.close();
        co_return;
    }
    error_code ignored;
    c.client.set_option(tcp::no_delay(true), ignored);
    c.upstream.set_option(tcp::no_delay(true), ignored);

    for (;;) {
        http::request_parser<http::string_body> request_parser;
        request_parser.header_limit(header_limit);
        request_parser.body_limit(request_body_limit);
        // Idle: the upstream may close the keep-alive connection; the client must see it.
        const auto got_request = co_await (read_request(c, request_parser) ||
                                           until_closed(c.upstream, c.upstream_buffer));
        if (got_request.index() == 1 && c.upstream_buffer.size() > 0) {
            // What the server said unasked before closing (Consul's 429 to a connection
            // beyond its per-client limit) reaches the client, as without the proxy.
            co_await asio::async_write(c.client, c.upstream_buffer.data(), use);
            break;
        }
        if (got_request.index() != 0 || std::get<0>(got_request))
            break;
        auto& req = request_parser.get();
        const std::string_view target = req.target();
        const auto question = target.find('?');
        const std::string_view raw_query =
            question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
        const std::string path =
            dev::detail::path_unescape(target.substr(0, question)).value_or(std::string(target));
        const std::string method(req.method_string());
        const bool blocking_read = is_blocking(raw_query); // (before the target may change)

        ++st.counters.requests;
        if (const auto inj = st.take_injection(path)) {
            ++st.counters.by_endpoint[method + " (injected)"];
            if (inj->disconnect)
                break;
            if (co_await write_error(c, inj->status, req.keep_alive()) || !req.keep_alive())
                break;
            continue;
        }
        ++st.counters.by_endpoint[endpoint_name(method, path)];
        // A misbehaving server: the blocking read is answered at once (index and wait
        // dropped), with the index it asked for or 0.
        std::optional<std::string> asked_index;
        if (st.misbehave != fault_proxy::index_fault::none &&
            path.starts_with(st.misbehave_prefix) && blocking_read) {
            asked_index = dev::detail::parse_query(raw_query).get("index");
            req.target(without_blocking(target, question));
            ++st.counters.by_endpoint[method + " (answered at once)"];
        }

        if (auto [ec, n] = co_await http::async_write(c.upstream, req, use); ec)
            break;
        http::response_parser<http::string_body> response_parser;
        response_parser.header_limit(header_limit);
        response_parser.body_limit(response_body_limit);
        if (req.method() == http::verb::head)
            response_parser.skip(true);
        {
            // No timeout: a blocking query may take minutes. The client leaving ends it.
            std::optional<counted_scope> blocking;
            if (blocking_read && !asked_index)
                blocking.emplace(st.counters.blocking_queries_waiting);
            const auto got_response = co_await (read_response(c, response_parser) ||
                                                until_closed(c.client, c.client_buffer));
            if (got_response.index() != 0 || std::get<0>(got_response))
                break;
        }

        const bool hold =
            st.hold_path &&
            (st.hold_match == fault_proxy::path_match::exact ? path == *st.hold_path
                                                             : path.starts_with(*st.hold_path)) &&
            (blocking_read || !st.hold_blocking_only);
        if (hold) {
            c.released = false;
            st.held.push_back(self);
            st.held_event.cancel();
            co_await (until_released(c) || until_closed(c.client, c.client_buffer));
            // Still listed when the client left (or the proxy stopped) first.
            std::erase(st.held, self);
            if (!c.released)
                break;
        }

        auto& res = response_parser.get();
        if (asked_index)
            res.set("X-Consul-Index",
                    st.misbehave == fault_proxy::index_fault::zero ? "0" : *asked_index);
        if (auto [ec, n] = co_await http::async_write(c.client, res, use); ec)
            break;
        // A response delimited by the end of the stream, or either side asking to close.
        if (response_parser.need_eof() || !res.keep_alive() || !req.keep_alive())
            break;
    }
    c.close();
}

asio::awaitable<void> accept_loop(std::shared_ptr<state> st) {
    for (;;) {
        auto [ec, socket] = co_await st->acceptor.async_accept(use);
        if (st->stopped)
            co_return;
        if (ec == asio::error::connection_aborted) // the client gave up before the accept
            continue;
        if (ec)
            co_return;
        ++st->counters.connections_accepted;
        auto c = std::make_shared<proxy_connection>(st, std::move(socket));
        asio::co_spawn(st->ex, serve(std::move(c)), asio::detached);
    }
}

asio::awaitable<void> wait_held(std::shared_ptr<state> st) {
    while (st->held.empty()) {
        if (st->stopped)
            throw boost::system::system_error(asio::error::operation_aborted);
        co_await st->held_event.async_wait(use);
    }
}

} // namespace

fault_proxy::fault_proxy(asio::any_io_executor ex, std::string upstream_host,
                         std::uint16_t upstream_port)
    : state_{std::make_shared<state>(std::move(ex), std::move(upstream_host), upstream_port)} {}

fault_proxy::~fault_proxy() {
    stop();
}

void fault_proxy::start() {
    // Resolved once, here: tests name loopback hosts, and a numeric endpoint keeps the
    // connection coroutine free of a resolver that stop() could not cancel. IPv4 first, as
    // Consul listens on 127.0.0.1 by default.
    tcp::resolver resolver{state_->ex};
    const auto results =
        resolver.resolve(state_->upstream_host, std::to_string(state_->upstream_port));
    const auto v4 = std::find_if(results.begin(), results.end(),
                                 [](const auto& r) { return r.endpoint().address().is_v4(); });
    state_->upstream = (v4 != results.end() ? *v4 : *results.begin()).endpoint();

    const tcp::endpoint listen{asio::ip::make_address("127.0.0.1"), 0};
    state_->acceptor.open(listen.protocol());
    state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
    state_->acceptor.bind(listen);
    state_->acceptor.listen();
    state_->port = state_->acceptor.local_endpoint().port();
    asio::co_spawn(state_->ex, accept_loop(state_), asio::detached);
}

void fault_proxy::stop() {
    state& st = *state_;
    st.stopped = true;
    error_code ec;
    st.acceptor.close(ec);
    for (proxy_connection* c : st.connections) // they leave the set when their coroutine ends
        c->close();
    st.held.clear(); // their coroutines see released == false and end
    st.held_event.cancel();
}

void fault_proxy::drop_connections() {
    for (proxy_connection* c : state_->connections) // they leave the set when their coroutine ends
        c->close();
}

std::uint16_t fault_proxy::port() const {
    return state_->port;
}

std::string fault_proxy::http_address() const {
    return "127.0.0.1:" + std::to_string(port());
}

proxy_stats fault_proxy::stats() const {
    return state_->counters;
}

void fault_proxy::reset_stats() {
    // As dev::agent::reset_stats: the live gauges stay.
    state_->counters.requests = 0;
    state_->counters.connections_accepted = 0;
    state_->counters.by_endpoint.clear();
}

void fault_proxy::inject_errors(const std::string& path_prefix, unsigned count, unsigned status) {
    if (count > 0)
        state_->injections.push_back({path_prefix, count, status, false});
}

void fault_proxy::inject_disconnects(const std::string& path_prefix, unsigned count) {
    if (count > 0)
        state_->injections.push_back({path_prefix, count, 500, true});
}

void fault_proxy::misbehave_blocking(const std::string& path_prefix, index_fault f) {
    state_->misbehave_prefix = path_prefix;
    state_->misbehave = f;
}

void fault_proxy::hold_responses(const std::string& path, path_match m, bool blocking_only) {
    state_->hold_path = path;
    state_->hold_match = m;
    state_->hold_blocking_only = blocking_only;
}

void fault_proxy::release_held() {
    state_->hold_path.reset();
    for (const auto& c : std::exchange(state_->held, {})) {
        c->released = true;
        c->release.cancel();
    }
}

std::size_t fault_proxy::held() const {
    return state_->held.size();
}

asio::awaitable<void> fault_proxy::async_wait_held() {
    // Not a coroutine itself: the awaitable starts later, and must not reach the state
    // through a proxy that may be gone by then.
    return wait_held(state_);
}

} // namespace conclave::test
