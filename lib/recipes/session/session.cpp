// SPDX-License-Identifier: BSL-1.0
#include "consul/endpoint.hpp"
#include "consul/endpoints/session.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/health_wait.hpp"
#include "recipes/session/health_check.hpp"
#include "recipes/session/session_resume.hpp"
#include "recipes/session/session_state.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <utility>
#include <variant>

namespace conclave {

using clock = std::chrono::steady_clock;
using detail::session_state;
using namespace asio::experimental::awaitable_operators;

namespace {

// Destroys a session on Consul within `timeout`. Consul answers true for unknown IDs too,
// so this is safe to repeat.
asio::awaitable<error_code> destroy_on_server(client consul, std::string id,
                                              std::chrono::milliseconds timeout) {
    auto [ec, ok] = co_await detail::call(
        consul, detail::endpoint::session_destroy{id, write_options{}.with_timeout(timeout)});
    (void)ok;
    co_return ec;
}

// Deregisters the session's health check, once (never for a session handed over: its
// successor passes the check).
asio::awaitable<void> forget_check(std::shared_ptr<session_state> s) {
    if (s->check_id.empty() || s->handed_over || std::exchange(s->check_deregistered, true))
        co_return;
    co_await detail::deregister_health_check(s->consul, s->check_id, s->cfg.destroy_timeout);
}

asio::awaitable<void> pause(std::chrono::milliseconds d) {
    asio::steady_timer t{co_await asio::this_coro::executor, d};
    co_await t.async_wait(asio::use_awaitable);
}

// Creates the session, bound to its checks. The agent tells the servers about a check it
// was just given a moment later: until then Consul answers that our own check is missing,
// and the create is tried again (passing the check meanwhile, so that it cannot expire).
asio::awaitable<std::pair<error_code, std::string>>
create_bound(client consul, session_options o, const session_config& cfg,
             const std::string& check_id, clock::time_point& passed_at, diagnostics* diag) {
    diagnostics local;
    o.diag = &local;
    const auto until = clock::now() + consul.config().request_timeout;
    auto backoff = std::chrono::milliseconds(10);
    for (;;) {
        auto [ec, id] = co_await detail::call(consul, detail::endpoint::session_create{o});
        // (Our own check cannot be critical yet: only missing.)
        const bool retry = ec == errc::check_critical && !check_id.empty() &&
                           detail::endpoint::refused_check(local.server_message) == check_id &&
                           clock::now() < until;
        if (!retry) {
            if (diag)
                *diag = std::move(local);
            co_return std::pair{ec, std::move(id)};
        }
        co_await pause(backoff);
        backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
        const auto now = clock::now();
        if (now - passed_at < cfg.health_ttl / 3)
            continue;
        const auto failed =
            co_await detail::pass_health_check(consul, check_id, passed_at + cfg.health_ttl);
        if (!failed)
            passed_at = now;
    }
}

asio::awaitable<std::pair<error_code, session>>
create(client consul, session_config cfg, session (*make)(std::shared_ptr<session_state>),
       diagnostics* diag) {
    using result = std::pair<error_code, session>;
    if (cfg.ttl <= std::chrono::milliseconds::zero() ||
        cfg.health_ttl < std::chrono::milliseconds::zero()) {
        if (diag)
            diag->client_message = "a session's TTL must be positive, its health TTL not negative";
        co_return result{make_error_code(errc::invalid_argument), session{}};
    }
    if (!cfg.resume_id.empty()) {
        diagnostics why;
        auto [ec, resumed] =
            co_await detail::resume_session(consul, cfg.resume_id, cfg.destroy_timeout, &why);
        if (!ec)
            co_return result{ec, make(std::move(resumed))};
        if (ec != errc::session_invalidated) {
            if (diag)
                *diag = std::move(why);
            co_return result{ec, session{}};
        }
        detail::log_line(detail::log_of(consul), log_level::info, "session ", cfg.resume_id,
                         " not resumed (Consul no longer knows it): creating a new one");
    }
    session_options o;
    o.name = cfg.name;
    o.ttl = cfg.ttl;
    o.lock_delay = cfg.lock_delay;
    o.behavior = cfg.behavior;
    o.node_checks = cfg.node_checks; // empty: explicitly none
    o.service_checks = cfg.service_checks;
    // The deadline counts from before the request: Consul started the TTL later than this.
    const auto start = clock::now();
    std::string check_id;
    auto passed_at = start;
    std::pair<error_code, std::string> created;
    try {
        if (cfg.health_ttl.count() > 0) {
            check_id = detail::new_health_check_id(cfg.health_ttl);
            created.first = co_await detail::register_health_check(consul, cfg, check_id, diag);
            o.node_checks->push_back(check_id); // a check of the agent's node
        }
        if (!created.first)
            created = co_await create_bound(consul, o, cfg, check_id, passed_at, diag);
    } catch (const boost::system::system_error& e) {
        created.first = e.code(); // cancelled
    }
    auto& [ec, id] = created;
    if (ec) {
        // In the background, and also after a failed registration (its request may have
        // reached the agent): a failed or cancelled create leaves no check behind.
        if (!check_id.empty())
            asio::co_spawn(consul.get_executor(),
                           detail::deregister_health_check(consul, check_id, cfg.destroy_timeout),
                           asio::detached);
        co_return result{ec, session{}};
    }
    detail::log_line(detail::log_of(consul), log_level::info, "session ", id, " created (TTL ",
                     std::chrono::nanoseconds(cfg.ttl), ")");
    const auto health_ttl = cfg.health_ttl;
    auto state = std::make_shared<session_state>(consul, std::move(id), std::move(cfg), start);
    if (!check_id.empty()) {
        state->check_id = std::move(check_id);
        state->policy.bind_check(health_ttl, passed_at);
    }
    co_return result{error_code{}, make(std::move(state))};
}

// Destroys the session of a cancelled run, unless something else already did. First waits,
// up to destroy_timeout, for the session's open grants to be released: the cancellation
// that stopped the run usually stops their holders too (`s.async_run || el.async_run`),
// which release once their tasks return. A release that reached Consul after the destroy
// would find the key already freed by it, with the session's lock-delay armed: nobody,
// the next leader included, could take the key for that long.
asio::awaitable<void> close_on_server(std::shared_ptr<session_state> s) {
    const auto until = clock::now() + s->cfg.destroy_timeout;
    while (s->open_grants > 0 && !s->destroyed && !s->gone_on_server && clock::now() < until)
        co_await s->changed.wait(until);
    if (s->destroyed || s->gone_on_server)
        co_return;
    const auto ec = co_await destroy_on_server(s->consul, s->id, s->cfg.destroy_timeout);
    if (!ec)
        s->destroyed = true;
    co_await forget_check(s);
}

// While a renewal is out: reports jeopardy when the session reaches it by the clock (no
// renewal succeeded with 3/8 of the TTL left), not only once the renewal fails. Never
// completes: the renewal's end cancels it.
asio::awaitable<void> report_when_late(std::shared_ptr<session_state> s) {
    asio::steady_timer timer{co_await asio::this_coro::executor, s->policy.jeopardy_at()};
    co_await timer.async_wait(asio::use_awaitable);
    if (!s->lost && !std::exchange(s->in_jeopardy, true))
        detail::report_health(s->consul, hold_kind::session, s->id, hold_health::jeopardy,
                              make_error_code(errc::timeout));
    timer.expires_at(clock::time_point::max());
    co_await timer.async_wait(asio::use_awaitable);
}

// Renews the session until it is lost; throws operation_aborted when cancelled or abandoned.
asio::awaitable<error_code> renew_loop(std::shared_ptr<session_state> s) {
    for (;;) {
        if (s->abandoned)
            throw boost::system::system_error(asio::error::operation_aborted);
        const auto now = clock::now();
        if (s->check(now))
            co_return s->ended_quietly() ? error_code{} : s->lost;
        if (now < s->policy.next_renew()) {
            co_await s->changed.wait(s->policy.next_renew());
            continue;
        }
        const auto budget = s->policy.request_budget(now, s->consul.config().request_timeout);
        auto renewal = detail::call(
            s->consul, detail::endpoint::session_renew{s->id, write_options{}}, now + budget);
        auto raced = co_await (std::move(renewal) || report_when_late(s));
        auto [ec, entry] = std::get<0>(std::move(raced));
        // Stopped during the renewal: neither a failed renewal nor jeopardy.
        const auto cs = co_await asio::this_coro::cancellation_state;
        if (cs.cancelled() != asio::cancellation_type::none)
            throw boost::system::system_error(asio::error::operation_aborted);
        detail::report_renewal(s->consul, s->id, ec, clock::now() - now);
        if (s->lost)
            continue;
        if (!ec) {
            s->policy.on_success(now, std::chrono::duration_cast<clock::duration>(entry.ttl));
            if (!s->policy.in_jeopardy(clock::now()) && std::exchange(s->in_jeopardy, false))
                detail::report_health(s->consul, hold_kind::session, s->id, hold_health::held, {});
            s->changed.notify_all(); // the deadline moved
        } else if (ec == errc::session_invalidated) {
            s->gone_on_server = true;
            s->mark_lost(ec, s->destroying); // (our own destroy may have answered first)
        } else {
            // Anything else (network, 5xx, timeout, even 403) may heal before the
            // deadline: keep trying until then.
            s->policy.on_transient_failure(clock::now());
            if (!std::exchange(s->in_jeopardy, true))
                detail::report_health(s->consul, hold_kind::session, s->id, hold_health::jeopardy,
                                      ec);
            s->changed.notify_all(); // in jeopardy (see hold_health)
        }
    }
}

// The renewals and the check's passes, each ending with an error code rather than an
// exception: `||` waits for the first *success*, and one loop's exception (a cancellation,
// an abandoned session) must end both.
asio::awaitable<error_code> renewals_as_value(std::shared_ptr<session_state> s) {
    try {
        co_return co_await renew_loop(s);
    } catch (const boost::system::system_error& e) {
        co_return e.code();
    }
}

asio::awaitable<error_code> passes_as_value(std::shared_ptr<session_state> s) {
    try {
        co_await detail::keep_check_passing(s);
        co_return s->ended_quietly() ? error_code{} : s->lost;
    } catch (const boost::system::system_error& e) {
        co_return e.code();
    }
}

asio::awaitable<error_code> run(std::shared_ptr<session_state> s) {
    if (s->running)
        co_return make_error_code(errc::invalid_argument); // one renew loop per session
    s->running = true;
    struct not_running {
        session_state& s;
        ~not_running() { s.running = false; }
    } guard{*s};

    bool cancelled = false;
    error_code ended;
    try {
        if (s->check_id.empty()) {
            ended = co_await renew_loop(s);
        } else {
            // The check is passed beside the renewals, on its own (shorter) schedule.
            auto first = co_await (renewals_as_value(s) || passes_as_value(s));
            ended = std::visit([](error_code ec) { return ec; }, first);
            if (ended == asio::error::operation_aborted)
                throw boost::system::system_error(ended);
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    // Cancelled: the session is closed in the background (bounded), and the run completes
    // at once. Its caller may then destroy the cancellation signal it used, as soon as the
    // completion arrives: nothing of the run may be left waiting on it (a destroy whose
    // answer came after the caller's own requests used to be).
    if (cancelled && !s->ended_quietly() && !s->gone_on_server) {
        s->mark_lost(make_error_code(errc::session_invalidated), true);
        asio::co_spawn(s->consul.get_executor(), close_on_server(s), asio::detached);
    } else if (!s->check_id.empty()) {
        // Lost or destroyed: the check has nothing left to keep alive. Deregistered in the
        // background: the run's end reports the loss, which must not wait for a request.
        asio::co_spawn(s->consul.get_executor(), forget_check(s), asio::detached);
    }
    co_return cancelled ? error_code(asio::error::operation_aborted) : ended;
}

asio::awaitable<error_code> wait_lost(std::shared_ptr<session_state> s) {
    for (;;) {
        if (s->check(clock::now()))
            co_return s->lost;
        co_await s->changed.wait(s->policy.deadline());
    }
}

asio::awaitable<error_code> destroy(std::shared_ptr<session_state> s) {
    if (s->handed_over)
        co_return error_code{}; // the successor's now
    if (s->destroyed || s->gone_on_server) {
        s->mark_lost(make_error_code(errc::session_invalidated), true);
        co_await forget_check(s);
        co_return error_code{};
    }
    s->destroying = true;
    auto ec = co_await destroy_on_server(s->consul, s->id, s->cfg.destroy_timeout);
    if (ec)
        co_return ec; // not confirmed: the caller may retry
    s->destroyed = true;
    detail::log_line(detail::log_of(s->consul), log_level::info, "session ", s->id, " destroyed");
    s->mark_lost(make_error_code(errc::session_invalidated), true);
    co_await forget_check(s);
    co_return error_code{};
}

} // namespace

namespace detail {

session_state::~session_state() {
    if (handed_over)
        return; // the successor's now
    if (!check_id.empty() && !check_deregistered)
        asio::co_spawn(consul.get_executor(),
                       deregister_health_check(consul, check_id, cfg.destroy_timeout),
                       asio::detached);
    if (destroyed || gone_on_server || id.empty())
        return;
    // Nobody holds the session any more and it was never closed: destroy it in the
    // background (best effort; its TTL ends it anyway if this cannot run).
    asio::co_spawn(consul.get_executor(), destroy_on_server(consul, id, cfg.destroy_timeout),
                   asio::detached);
}

} // namespace detail

session::session(std::shared_ptr<detail::session_state> s)
    : state_(std::move(s))
    , handle_(nullptr, [state = std::weak_ptr<detail::session_state>(state_)](void*) {
        // The program's last handle went: nothing can use the session any more, so a run
        // left renewing it (detached) stops and destroys it.
        if (auto st = state.lock()) {
            st->abandoned = true;
            st->changed.notify_all();
        }
    }) {}

void session::create_impl(client c, session_config cfg, detail::diagnostics_route* route,
                          asio::any_completion_handler<void(error_code, session)> h) {
    auto make = [](std::shared_ptr<session_state> st) { return session{std::move(st)}; };
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(c.get_executor(), create(c, std::move(cfg), make, diag), std::move(h));
}

namespace {

asio::awaitable<std::pair<error_code, session>>
resume(client consul, std::string id, session (*make)(std::shared_ptr<session_state>),
       diagnostics* diag) {
    auto [ec, state] = co_await detail::resume_session(consul, std::move(id),
                                                       session_config{}.destroy_timeout, diag);
    co_return std::pair{ec, ec ? session{} : make(std::move(state))};
}

} // namespace

void session::resume_impl(client c, std::string id, detail::diagnostics_route* route,
                          asio::any_completion_handler<void(error_code, session)> h) {
    auto make = [](std::shared_ptr<session_state> st) { return session{std::move(st)}; };
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(c.get_executor(), resume(c, std::move(id), make, diag), std::move(h));
}

bool session::hand_over() noexcept {
    return state_ && state_->hand_over();
}

bool session::resumed() const noexcept {
    return state_ && state_->resumed;
}

namespace {

const std::shared_ptr<session_state>& require(const std::shared_ptr<session_state>& s) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "operation on an empty conclave::session");
    return s;
}

} // namespace

void session::run_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s)->consul.get_executor();
    detail::spawn_op(ex, run(std::move(s)), std::move(h));
}

void session::wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s)->consul.get_executor();
    detail::spawn_op(ex, wait_lost(std::move(s)), std::move(h));
}

void session::wait_health_change_impl(
    state_ptr s, hold_health seen, asio::any_completion_handler<void(error_code, hold_health)> h) {
    auto ex = require(s)->consul.get_executor();
    detail::spawn_op(ex, detail::wait_health_change(s, nullptr, seen), std::move(h));
}

void session::destroy_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s)->consul.get_executor();
    detail::spawn_op(ex, destroy(std::move(s)), std::move(h));
}

const std::string& session::id() const noexcept {
    return state_->id;
}
const std::string& session::health_check_id() const noexcept {
    return state_->check_id;
}
client& session::get_client() const noexcept {
    return state_->consul;
}
const session_config& session::config() const noexcept {
    return state_->cfg;
}
std::chrono::milliseconds session::ttl() const noexcept {
    return std::chrono::duration_cast<std::chrono::milliseconds>(state_->policy.ttl());
}
session::clock::time_point session::deadline() const noexcept {
    return state_->policy.deadline();
}
bool session::lost() const noexcept {
    return state_->check(clock::now());
}
hold_health session::health() const noexcept {
    return state_->health(clock::now());
}
session::clock::duration session::remaining() const noexcept {
    return state_->remaining(clock::now());
}
error_code session::loss_reason() const noexcept {
    state_->check(clock::now());
    return state_->lost;
}

} // namespace conclave
