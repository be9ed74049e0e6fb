// SPDX-License-Identifier: BSL-1.0
#include "codec/go/base64.hpp"
#include "codec/go/duration.hpp"
#include "consul/client_impl.hpp"
#include "observe/log_line.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/system/system_error.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <boost/url/url.hpp>

#include <algorithm>

namespace conclave {

namespace bhttp = boost::beast::http;

client::client(executor_type ex, client_config cfg)
    : impl_(std::make_shared<detail::client_impl>(std::move(ex), std::move(cfg))) {}

client::executor_type client::get_executor() const noexcept {
    return impl_->executor;
}

const client_config& client::config() const noexcept {
    return impl_->config;
}

client_stats client::stats() const noexcept {
    const auto c = impl_->pool->counters();
    return {impl_->requests,
            c.connects,
            impl_->retries,
            c.open,
            c.idle,
            c.limit,
            impl_->blocking_lane->limit(),
            c.refused_connects,
            impl_->shared_key_reads,
            impl_->shared_folder_queries};
}

void client::close() {
    impl_->pool->close();
}

namespace detail {

namespace {

// The token and host go into request headers as they are: a CR, LF or NUL in them would
// end the header early and let the rest pass as headers of its own.
client_config header_safe(client_config cfg) {
    const auto bad = [](const std::string& v) {
        return v.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos;
    };
    if (bad(cfg.token))
        throw boost::system::system_error(make_error_code(errc::invalid_config),
                                          "the ACL token contains a line break or NUL");
    if (bad(cfg.host))
        throw boost::system::system_error(make_error_code(errc::invalid_config),
                                          "the host contains a line break or NUL");
    return cfg;
}

// "Basic " and user:password in base64, as Go's client sends CONSUL_HTTP_AUTH: split at the
// first ':', a value without one being a user name with an empty password.
std::string basic_authorization(const std::string& http_auth) {
    if (http_auth.empty())
        return {};
    return "Basic " + codec::go::base64_encode(
                          http_auth.find(':') == std::string::npos ? http_auth + ":" : http_auth);
}

} // namespace

client_impl::client_impl(asio::any_io_executor ex, client_config cfg)
    : executor(std::move(ex))
    , config(header_safe(std::move(cfg)))
    , host_header(config.kind == client_config::transport::unix_socket
                      ? std::string("localhost")
                      : config.host + ":" + std::to_string(config.port))
    , authorization(basic_authorization(config.http_auth))
    , pool(std::make_shared<http::pool>(executor, config))
    , blocking_lane(std::make_shared<http::lane>(http::blocking_lane_limit(pool->limit()))) {}

namespace {

// A failure that says the server closed an idle keep-alive connection before reading our
// request: retrying a GET on a fresh connection is then safe.
bool stale_connection_error(const error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
           ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
           ec == bhttp::error::partial_message;
}

// How long Consul may hold a blocking query: its wait (default 5 min, at most 10), plus up to
// wait/16 of jitter Consul adds.
http::clock::duration server_wait(const api_call& call) {
    const auto wait = query_wait(call.wait);
    return wait + wait / 16;
}

// Consul's answer to a connection beyond its per-client limit (limits.http_max_conns_per_client,
// 200 by default), written as soon as it accepts the connection, before reading anything:
// the request on it was never read.
bool refused_for_connection_limit(const api_reply& reply) {
    return reply.status == 429 &&
           reply.body.find("too many concurrent connections") != std::string::npos;
}

void describe_failure(const api_call& call, const error_code& ec, const client_config& cfg) {
    if (!call.diag)
        return;
    call.diag->http_status = 0;
    call.diag->server_message.clear();
    call.diag->client_message = std::string(bhttp::to_string(call.method)) + " " + call.path +
                                " to " + cfg.describe_address() + ": " + ec.message();
    if (ec == bhttp::error::body_limit)
        call.diag->client_message +=
            call.one_entry ? " (over client_config::max_entry_response_body, " +
                                 std::to_string(cfg.max_entry_response_body) + " bytes)"
                           : " (over client_config::max_response_body, " +
                                 std::to_string(cfg.max_response_body) + " bytes)";
}

// Reports one request to the logger and the observer exactly once: by finish(), or from the
// destructor when the request ends by an exception (cancelled while it waited for a
// connection) or its coroutine is destroyed with it.
class request_report {
public:
    request_report(std::shared_ptr<client_impl> client, const api_call& call, log_level level)
        : client_(std::move(client))
        , observer_(client_->config.observer)
        , endpoint_(call.endpoint)
        , method_(bhttp::to_string(call.method))
        , blocking_(call.blocking)
        , level_(level) {
        if (client_->config.log.enabled(level_)) {
            std::string storage;
            target_ = std::string(method_) + " " +
                      std::string(request_target(call, client_->config.datacenter, storage));
        }
        if (observer_)
            observer_->request_started(endpoint_, blocking_);
    }
    request_report(const request_report&) = delete;
    request_report& operator=(const request_report&) = delete;
    ~request_report() {
        if (!done_)
            finish(asio::error::operation_aborted, 0);
    }

    void finish(const error_code& ec, unsigned status) noexcept try {
        done_ = true;
        const auto took = http::clock::now() - start_;
        if (observer_)
            observer_->request_finished(
                request_event{endpoint_, method_, blocking_, status, ec, took});
        if (ec)
            log_line(client_->config.log, level_, target_, " failed after ", took, ": ", ec);
        else
            log_line(client_->config.log, level_, target_, " -> ", status, " in ", took);
    } catch (...) { // (what an observer or sink throws is dropped: see observe/report.hpp)
    }

private:
    std::shared_ptr<client_impl> client_; // its logger outlives the report
    std::shared_ptr<observer> observer_;  // so does the observer
    std::string_view endpoint_, method_;  // (static strings)
    bool blocking_;
    log_level level_;
    std::string target_; // method and target, built only for a log line
    http::clock::time_point start_ = http::clock::now();
    bool done_ = false;
};

} // namespace

api_call client_impl::new_call() const {
    api_call call;
    call.namespace_name = config.namespace_name;
    call.partition = config.partition;
    return call;
}

asio::awaitable<std::pair<error_code, api_reply>> client_impl::send(api_call& call) {
    // Blocking queries are many and long: their lines are one level further down.
    const log_level level = call.blocking ? log_level::trace : log_level::debug;
    if (!config.observer && !config.log.enabled(level))
        co_return co_await send_unreported(call);
    request_report report{shared_from_this(), call, level};
    auto outcome = co_await send_unreported(call);
    report.finish(outcome.first, outcome.first ? 0u : outcome.second.status);
    co_return outcome;
}

asio::awaitable<std::pair<error_code, api_reply>> client_impl::send_unreported(api_call& call) {
    using result = std::pair<error_code, api_reply>;
    auto self = shared_from_this(); // outlive the client handle while in flight

    std::string target_storage;
    http::request req;
    req.method = call.method;
    req.target = request_target(call, config.datacenter, target_storage);
    req.host = host_header; // both views outlive the call: `self` holds them
    req.token = config.token;
    req.authorization = authorization;
    call.token_sent = !config.token.empty();
    req.content_type = call.content_type;
    req.body = std::move(call.body);

    http::clock::duration timeout = config.request_timeout;
    if (call.blocking)
        timeout += server_wait(call);
    auto deadline = http::clock::now() + timeout;
    if (call.deadline && *call.deadline < deadline)
        deadline = *call.deadline;

    http::lane::ticket lane_place; // a blocking query's place, held until it returns
    for (int attempt = 0;; ++attempt) {
        error_code ec;
        if (call.blocking && !lane_place) {
            // After a refusal lowered the limits: a full lane may try one connection more.
            if (blocking_lane->in_use() >= blocking_lane->limit())
                pool->try_higher_limit();
            if (const auto want = http::blocking_lane_limit(pool->limit());
                want > blocking_lane->limit())
                blocking_lane->set_limit(want);
            auto [lane_ec, place] = co_await blocking_lane->enter(deadline);
            if (lane_ec) {
                describe_failure(call, lane_ec, config);
                co_return result{lane_ec, {}};
            }
            lane_place = std::move(place);
        }
        http::lease conn = pool->take_idle();
        if (!conn) {
            auto [acquire_ec, acquired] = co_await pool->acquire(deadline);
            ec = acquire_ec;
            conn = std::move(acquired);
        }
        if (ec) {
            describe_failure(call, ec, config);
            co_return result{ec, {}};
        }
        ++requests;
        api_reply reply;
        const auto remaining = deadline - http::clock::now();
        // A write, once sent, is finished before a cancellation is reported: Consul would
        // apply it even with its connection closed, and possibly after whatever the caller
        // sends next on another connection (the undo of this very write, for instance).
        const bool write = call.method != bhttp::verb::get && call.finish_once_sent;
        const bool fresh = !conn.reused(); // (a refusal can only come on a fresh one)
        // A blocking query abandoned by its caller (cancelled: an error or an exception
        // ends the exchange): Consul 1.8 does not notice a closed connection while the
        // query waits, and counts it against its per-client limit until the wait is over.
        // So does the pool, or its next connection could be refused.
        if (call.blocking)
            conn.hold_slot_until(http::clock::now() + server_wait(call));
        const std::size_t body_limit =
            call.one_entry ? std::min(config.max_entry_response_body, config.max_response_body)
                           : config.max_response_body;
        ec = co_await conn->exchange(req, reply, remaining, body_limit, write);
        if (call.blocking && ec != asio::error::operation_aborted)
            conn.hold_slot_until({}); // answered, or ended by the server or the deadline
        if (write && (co_await asio::this_coro::cancellation_state).cancelled() !=
                         asio::cancellation_type::none) {
            if (!ec)
                conn.give_back();
            describe_failure(call, asio::error::operation_aborted, config);
            co_return result{asio::error::operation_aborted, {}};
        }
        if (!ec && fresh && refused_for_connection_limit(reply)) {
            // The address holds all the connections Consul accepts from it: keep to those
            // (blocking queries to fewer of them, so that short requests keep some), and
            // send the request again on one of them. Not a retry loop: every refusal
            // lowers the limit, and with no connection left to use the request fails.
            const std::size_t accepted = pool->connection_refused();
            log_line(config.log, log_level::warning,
                     "Consul refused a connection: its limits.http_max_conns_per_client is "
                     "reached for this address; keeping to ",
                     accepted, " connections");
            conn = {};       // (after: its slot is the one over the new limit)
            lane_place = {}; // a blocking query queues again, under the new limit
            blocking_lane->set_limit(http::blocking_lane_limit(pool->limit()));
            if (accepted > 0)
                continue;
            const auto refused = status_error(call, reply);
            if (call.diag)
                call.diag->client_message +=
                    " (Consul accepts no more connections from this address: its "
                    "limits.http_max_conns_per_client is taken by other clients)";
            co_return result{refused, {}};
        }
        if (!ec) {
            conn.give_back();
            co_return result{error_code{}, std::move(reply)};
        }
        // Not a blocking query: its caller's loop re-reads without blocking first (the
        // server may have restarted with a lower index, which would hold a retry for the
        // whole wait).
        const bool retry = attempt == 0 && !fresh && call.method == bhttp::verb::get &&
                           !call.blocking && stale_connection_error(ec);
        conn = {}; // discard the broken connection, freeing its slot
        if (retry) {
            ++retries;
            continue;
        }
        if (ec == boost::beast::error::timeout)
            ec = make_error_code(errc::timeout);
        describe_failure(call, ec, config);
        co_return result{ec, {}};
    }
}

std::chrono::milliseconds query_wait(std::chrono::milliseconds wait) {
    constexpr std::chrono::milliseconds default_wait{300000};
    constexpr std::chrono::milliseconds max_wait{600000};
    return wait.count() <= 0 ? default_wait : std::min(wait, max_wait);
}

void apply_query(api_call& call, const query_options& q) {
    if (q.index > 0) {
        call.param("index", std::to_string(q.index));
        if (q.wait.count() > 0)
            call.param("wait", codec::go::format_wait(q.wait));
        call.blocking = true;
        call.wait = q.wait;
    }
    if (q.mode == consistency::consistent)
        call.flag("consistent");
    else if (q.mode == consistency::stale)
        call.flag("stale");
    apply_options(call, q);
}

error_code status_error(const api_call& call, const api_reply& reply) {
    const auto ec = make_error_code(errc_from_http_status(reply.status));
    if (call.diag) {
        call.diag->http_status = reply.status;
        call.diag->server_message = reply.body;
        call.diag->client_message =
            std::string(bhttp::to_string(call.method)) + " " + call.path + ": " +
            (reply.status == 403 ? missing_permission(call, reply.body, call.token_sent)
                                 : "Unexpected response code: " + std::to_string(reply.status));
    }
    return ec;
}

error_code parse_error(const api_call& call, std::string_view what) {
    if (call.diag) {
        call.diag->http_status = 0;
        call.diag->server_message.clear();
        call.diag->client_message =
            std::string(bhttp::to_string(call.method)) + " " + call.path + ": " + std::string(what);
    }
    return make_error_code(errc::bad_response);
}

std::optional<std::string> kv_path(std::string_view key, bool strip_leading_slash) {
    if (strip_leading_slash && !key.empty() && key.front() == '/')
        key.remove_prefix(1);
    if ((!key.empty() && key.front() == '/') || key.find("//") != std::string_view::npos)
        return std::nullopt;
    return "/v1/kv/" + boost::urls::encode(key, boost::urls::unreserved_chars + '/');
}

std::string encode_segment(std::string_view s) {
    return boost::urls::encode(s, boost::urls::unreserved_chars);
}

error_code require_id(std::string_view id, std::string_view what, diagnostics* diag) {
    if (!id.empty())
        return {};
    if (diag)
        diag->client_message = "missing " + std::string(what) + " ID";
    return make_error_code(errc::invalid_argument);
}

std::string_view request_target(const api_call& call, const std::string& default_dc,
                                std::string& storage) {
    const std::string& dc = call.datacenter.empty() ? default_dc : call.datacenter;
    // The paths are percent-encoded already (kv_path, encode_segment): without a query
    // there is nothing for Boost.URL to do, nor a copy to make, and most calls (txn, GET
    // of a key) have none.
    if (call.params.empty() && dc.empty() && call.namespace_name.empty() && call.partition.empty())
        return call.path;
    boost::urls::url u;
    u.set_encoded_path(call.path);
    auto params = u.params();
    for (const auto& [name, value] : call.params) {
        if (value)
            params.append({name, *value});
        else
            params.append({name, boost::urls::no_value});
    }
    if (!dc.empty())
        params.append({"dc", dc});
    if (!call.namespace_name.empty())
        params.append({"ns", call.namespace_name});
    if (!call.partition.empty())
        params.append({"partition", call.partition});
    storage = std::string(u.encoded_target());
    return storage;
}

} // namespace detail
} // namespace conclave
