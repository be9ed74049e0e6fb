// SPDX-License-Identifier: BSL-1.0
#include "consul/endpoint.hpp"
#include "consul/endpoints/session.hpp"
#include "recipes/session/health_check.hpp"
#include "recipes/session/session_resume.hpp"

namespace conclave::detail {

using clock = std::chrono::steady_clock;

namespace {

using resumed = std::pair<error_code, std::shared_ptr<session_state>>;

resumed refuse(errc e, diagnostics* diag, std::string why) {
    if (diag)
        diag->client_message = std::move(why);
    return {make_error_code(e), nullptr};
}

// The settings of a session as Consul records them, with the library's health check (and
// its TTL, which the check's ID names) apart from the other checks.
session_config settings_of(const session_entry& e, std::string& check_id) {
    using std::chrono::duration_cast;
    using std::chrono::milliseconds;
    session_config cfg;
    cfg.name = e.name;
    cfg.ttl = duration_cast<milliseconds>(e.ttl);
    cfg.lock_delay = duration_cast<milliseconds>(e.lock_delay);
    cfg.behavior = e.behavior;
    cfg.service_checks = e.service_checks;
    for (const auto& c : e.node_checks) {
        if (const auto ttl = health_ttl_of(c); ttl && check_id.empty()) {
            check_id = c;
            cfg.health_ttl = *ttl;
        } else {
            cfg.node_checks.push_back(c);
        }
    }
    return cfg;
}

} // namespace

asio::awaitable<resumed> resume_session(client consul, std::string id,
                                        std::chrono::milliseconds destroy_timeout,
                                        diagnostics* diag) {
    if (id.empty())
        co_return refuse(errc::invalid_argument, diag, "no session ID to resume");
    // The deadline counts from before the renewal: Consul restarted the TTL later than this.
    const auto start = clock::now();
    diagnostics local;
    auto [ec, entry] = co_await call(
        consul, endpoint::session_renew{id, write_options{}.with_diag(diag ? diag : &local)});
    if (ec == errc::session_invalidated)
        co_return refuse(errc::session_invalidated, diag,
                         "Consul no longer knows session " + id +
                             " (it expired, was destroyed, or a check it is bound to failed): "
                             "nothing is held with it any more");
    if (ec)
        co_return resumed{ec, nullptr};
    if (entry.ttl <= std::chrono::nanoseconds::zero())
        co_return refuse(errc::invalid_argument, diag,
                         "session " + id +
                             " has no TTL: only a session that is renewed can be "
                             "resumed");
    std::string check_id;
    auto cfg = settings_of(entry, check_id);
    cfg.destroy_timeout = destroy_timeout;
    auto passed_at = start;
    if (!check_id.empty()) {
        // Proves the check is on this client's agent: passed from anywhere else, it would
        // turn critical and take the session with it.
        passed_at = clock::now();
        diagnostics why;
        const auto failed =
            co_await pass_health_check(consul, check_id, passed_at + cfg.health_ttl, &why);
        // Consul: `CheckID "<id>" does not have associated TTL` for a check it does not have.
        if (failed && why.server_message.find(check_id) != std::string::npos)
            co_return refuse(errc::check_critical, diag,
                             "session " + id + " is bound to health check " + check_id +
                                 ", which this client's agent does not have: resume it through "
                                 "the agent of the node it was created on");
        if (failed) {
            if (diag)
                *diag = std::move(why);
            co_return resumed{failed, nullptr};
        }
    }
    log_line(log_of(consul), log_level::info, "session ", id, " resumed (TTL ",
             std::chrono::nanoseconds(cfg.ttl), ")");
    const auto health_ttl = cfg.health_ttl;
    auto state = std::make_shared<session_state>(consul, std::move(id), std::move(cfg), start);
    state->resumed = true;
    if (!check_id.empty()) {
        state->check_id = std::move(check_id);
        state->policy.bind_check(health_ttl, passed_at);
    }
    co_return resumed{error_code{}, std::move(state)};
}

} // namespace conclave::detail
