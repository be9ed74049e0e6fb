// SPDX-License-Identifier: BSL-1.0
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent_check.hpp"
#include "recipes/session/health_check.hpp"

#include <charconv>
#include <random>

namespace conclave::detail {

using clock = std::chrono::steady_clock;

namespace {
constexpr std::string_view check_prefix = "conclave-session-";
}

std::string new_health_check_id(std::chrono::milliseconds ttl) {
    static constexpr const char* hex = "0123456789abcdef";
    std::random_device rd;
    std::uint64_t bits = (std::uint64_t{rd()} << 32) ^ rd();
    std::string id(check_prefix);
    id += std::to_string(ttl.count()) + "ms-";
    for (int i = 0; i < 16; ++i, bits >>= 4)
        id += hex[bits & 0xF];
    return id;
}

std::optional<std::chrono::milliseconds> health_ttl_of(std::string_view check_id) {
    if (!check_id.starts_with(check_prefix))
        return std::nullopt;
    check_id.remove_prefix(check_prefix.size());
    std::int64_t ms = 0;
    const auto [end, ec] = std::from_chars(check_id.data(), check_id.data() + check_id.size(), ms);
    const auto rest = check_id.substr(static_cast<std::size_t>(end - check_id.data()));
    if (ec != std::errc{} || ms <= 0 || !rest.starts_with("ms-"))
        return std::nullopt;
    return std::chrono::milliseconds(ms);
}

asio::awaitable<error_code> register_health_check(client consul, const session_config& cfg,
                                                  const std::string& id, diagnostics* diag) {
    auto opts = agent_check_options{}
                    .with_id(id)
                    .with_name("conclave session " + cfg.name)
                    .with_ttl(cfg.health_ttl)
                    .with_status(check_status::passing)
                    .with_notes("kept passing by the conclave session that is bound to it")
                    .with_diag(diag);
    auto [ec, ok] = co_await call(consul, endpoint::agent_check_register{std::move(opts)});
    (void)ok;
    co_return ec;
}

asio::awaitable<error_code> pass_health_check(client consul, const std::string& id,
                                              clock::time_point deadline, diagnostics* diag) {
    auto [ec, ok] =
        co_await call(consul,
                      endpoint::agent_check_update{
                          id, check_status::passing, {}, write_options{}.with_diag(diag)},
                      deadline);
    (void)ok;
    co_return ec;
}

asio::awaitable<void> deregister_health_check(client consul, std::string id,
                                              std::chrono::milliseconds timeout) {
    diagnostics diag;
    auto [ec, ok] =
        co_await call(consul, endpoint::agent_check_deregister{
                                  id, write_options{}.with_timeout(timeout).with_diag(&diag)});
    (void)ok;
    if (ec)
        log_line(log_of(consul), log_level::warning, "health check ", id,
                 " not deregistered: ", ec.message(), " ", diag.server_message);
}

asio::awaitable<void> keep_check_passing(std::shared_ptr<session_state> s) {
    for (;;) {
        const auto now = clock::now();
        if (s->check(now))
            co_return;
        const auto next = s->policy.next_pass(now);
        if (now < next) {
            co_await s->changed.wait(next);
            continue;
        }
        // A pass later than the local deadline is useless: the session counts as lost then.
        const auto ec = co_await pass_health_check(s->consul, s->check_id, s->policy.deadline());
        if (s->lost)
            co_return;
        if (!ec) {
            s->policy.on_check_passed(now);
            if (!s->policy.in_jeopardy(clock::now()) && std::exchange(s->in_jeopardy, false))
                report_health(s->consul, hold_kind::session, s->id, hold_health::held, {});
        } else {
            s->policy.on_check_failure();
            if (!std::exchange(s->in_jeopardy, true))
                report_health(s->consul, hold_kind::session, s->id, hold_health::jeopardy, ec);
        }
        s->changed.notify_all(); // the deadline moved, or the session is in jeopardy
    }
}

} // namespace conclave::detail
