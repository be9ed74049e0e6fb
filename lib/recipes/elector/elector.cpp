// SPDX-License-Identifier: BSL-1.0
// elector: campaign (a lock acquire), lead (the task raced against the lost signal and
// resign requests), step down (release after the task returned), leader discovery.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/notifier.hpp"
#include "recipes/elector/elector_state.hpp"
#include "recipes/elector/participants.hpp"
#include "recipes/lock/key_hub.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/elector.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave {

namespace {

using namespace asio::experimental::awaitable_operators;
using clock = std::chrono::steady_clock;
using detail::elector_state;
using detail::leader_of;
using detail::leader_result;
using detail::observer_state;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

asio::awaitable<void> resign_requested(std::shared_ptr<elector_state> E, std::uint64_t seen) {
    while (E->resigns == seen)
        co_await E->changed.wait(clock::time_point::max());
}

// Runs the leader task; an exception it throws (other than its cancellation) is kept.
asio::awaitable<void> run_task(leader_task task, leadership l, std::exception_ptr& failure) {
    try {
        co_await task(std::move(l));
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            failure = std::current_exception();
    } catch (...) {
        failure = std::current_exception();
    }
}

// While leading with a preferred candidate that is not us: completes when it waits for the
// key (a live contender key with its value, or a local waiter with it), so that the term
// ends and the release hands it the key. Reads the lock's own hub (which follows the key
// and its contender keys in fair mode), not a watch of its own: the release decides whom
// to hand the key to from the hub, and a watch may see the preferred contender before the
// hub does. The release would then hand the key to the oldest contender instead.
asio::awaitable<void> preferred_waiting(std::shared_ptr<elector_state> E, std::string own_session) {
    if (E->opts.preferred.empty() || E->opts.preferred == E->opts.value)
        for (;;) // never completes: only cancelled with the term
            co_await E->changed.wait(clock::time_point::max());
    // The lock's hub (found by client and key: the lock made it).
    auto hub =
        detail::key_hub::of(E->consul, E->key, {E->opts.wait, E->opts.monitor_retry_wait, true});
    const auto following = hub->subscribe(); // keeps its query running meanwhile
    const auto& preferred = E->opts.preferred;
    for (;;) {
        for (const auto& w : hub->queue)
            if (w->value == preferred && w->session->id != own_session)
                co_return;
        if (hub->known())
            for (const auto& c : hub->contenders())
                if (!c.session.empty() && c.session != own_session && c.value == preferred)
                    co_return;
        co_await hub->changed.wait(clock::time_point::max());
    }
}

asio::awaitable<bool> is_cancelled() {
    auto state = co_await asio::this_coro::cancellation_state;
    co_return state.cancelled() != asio::cancellation_type::none;
}

// After a resign: stay out until another candidate leads, the hold-off passes, or the run
// is cancelled.
asio::awaitable<void> sit_out(std::shared_ptr<elector_state> E, std::string own_session) {
    watch follow{E->consul, watch::key(E->key)};
    const auto until = clock::now() + E->resign_holdoff.value_or(E->opts.resign_holdoff);
    E->resign_holdoff.reset();
    while (clock::now() < until) {
        auto next = follow.async_next(tuple_awaitable);
        auto outcome = co_await (std::move(next) || detail::sleep_for(until - clock::now()));
        if (outcome.index() == 1)
            co_return;
        const bool stopped = co_await is_cancelled();
        if (stopped)
            co_return;
        auto [ec, snap] = std::get<0>(std::move(outcome));
        if (ec)
            continue; // final errors: the hold-off bounds the wait anyway
        if (!snap.entries.empty() && !snap.entries.front().session.empty() &&
            snap.entries.front().session != own_session)
            co_return; // someone else leads now
    }
}

// Why a term of async_run ended, in reports (`ended_by`: the index of what ended the race).
std::string_view end_cause(bool cancelled, const std::exception_ptr& failure,
                           std::size_t ended_by) {
    if (cancelled)
        return "stopped";
    if (failure)
        return "task_failed";
    switch (ended_by) {
    case 0:
        return "task_returned";
    case 1:
        return "lost";
    case 2:
        return "resigned";
    default:
        return "handed_over";
    }
}

asio::awaitable<error_code> run(std::shared_ptr<elector_state> E, session s, leader_task task,
                                diagnostics* diag, detail::diagnostics_route* route) {
    if (E->running || E->campaign_busy())
        co_return make_error_code(errc::invalid_argument); // one campaign per elector
    E->running = true;
    E->run_session = s.state();
    struct running_flag {
        elector_state& e;
        ~running_flag() {
            e.running = false;
            e.run_session.reset();
            e.current.reset();
            e.changed.notify_all();
        }
    } flag{*E};
    detail::term_report term{E->consul, E->key};

    for (;;) {
        // (with_diagnostics: a failure comes with its text, e.g. the permission missing)
        auto [acquire_failure, lease] =
            co_await E->mutex.async_acquire(s, with_diagnostics(tuple_awaitable));
        if (acquire_failure) { // session lost, conflict, denied, or cancelled while campaigning
            if (s.state()->handed_over)
                co_return error_code{}; // (elector::hand_over): the successor leads on
            try {
                std::rethrow_exception(acquire_failure);
            } catch (const conclave::error& e) {
                if (diag)
                    *diag = e.diag();
                co_return e.code();
            }
        }
        E->current = lease;
        E->resign_holdoff.reset(); // (a resign asks for it during the term)
        term.began();
        const auto resigns_seen = E->resigns;

        // Lead until the task returns, leadership is lost, or a resign is requested: the
        // `||` cancels the others and waits for them, so the task has returned when it
        // completes (also when this coroutine is cancelled).
        std::exception_ptr failure;
        auto lead = run_task(task, leadership{lease}, failure);
        auto lost = lease.async_wait_lost(tuple_awaitable);
        auto resign = resign_requested(E, resigns_seen);
        auto hand_over = preferred_waiting(E, s.id());
        bool cancelled = false;
        std::size_t ended_by = 0;
        try {
            auto outcome = co_await (std::move(lead) || std::move(lost) || std::move(resign) ||
                                     std::move(hand_over));
            ended_by = outcome.index();
        } catch (const boost::system::system_error& e) {
            if (e.code() != asio::error::operation_aborted)
                throw;
            cancelled = true;
        }
        auto cs = co_await asio::this_coro::cancellation_state;
        cancelled = cancelled || cs.cancelled() != asio::cancellation_type::none;

        // Step down: release only now that the task has returned. Cleanup must run even
        // when we were cancelled, so cancellation is detached from here on.
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state();
        if (!cancelled || E->opts.release_on_stop)
            co_await lease.async_release(tuple_awaitable);
        E->current.reset();
        E->changed.notify_all();
        term.ended(end_cause(cancelled, failure, ended_by));

        if (cancelled)
            co_return make_error_code(asio::error::operation_aborted);
        if (failure) {
            // With the default token, the task's own exception is what the caller gets.
            if (diag)
                diag->client_message = "the leader task threw";
            if (route)
                route->cause = failure;
            co_return make_error_code(errc::task_failed);
        }
        // A resign during the term is served also when the term ended otherwise (lost as
        // the task stepped down), and also when the next campaign is on a new session.
        if (E->resigns != resigns_seen) {
            co_await sit_out(E, s.id());
            const bool stopped = co_await is_cancelled();
            if (stopped)
                co_return make_error_code(asio::error::operation_aborted);
        }
        co_await asio::this_coro::throw_if_cancelled(true);
    }
}

// Pauses between sessions: a session lost (or not created) is followed by a new one after
// a pause from 1 s doubling to 30 s, back to 1 s once a session has been had.
constexpr std::chrono::milliseconds first_session_pause{1000};
constexpr std::chrono::milliseconds max_session_pause{30000};

// Sleeps for `d`; false when cancelled meanwhile.
asio::awaitable<bool> pause_for(std::chrono::milliseconds d) {
    asio::steady_timer timer{co_await asio::this_coro::executor, d};
    auto [ec] = co_await timer.async_wait(tuple_awaitable);
    co_return !ec;
}

// The code and diagnostics a with_diagnostics failure carries.
std::pair<error_code, diagnostics> unpack(const std::exception_ptr& failure) {
    try {
        std::rethrow_exception(failure);
    } catch (const conclave::error& e) {
        return {e.code(), e.diag()};
    } catch (const boost::system::system_error& e) {
        return {e.code(), diagnostics{}};
    }
}

// async_run with a session of its own: creates one, renews it beside run(), destroys it
// after run() ended, and starts over with a new session when it was lost.
asio::awaitable<error_code> run_with_sessions(std::shared_ptr<elector_state> E, session_config cfg,
                                              leader_task task, diagnostics* diag,
                                              detail::diagnostics_route* route) {
    co_await asio::this_coro::throw_if_cancelled(false);
    diagnostics own_diag; // what on_session is told when the caller keeps no diagnostics
    if (!diag)
        diag = &own_diag;
    // Tells elector_options::on_session, if set.
    const auto report =
        [hook = &E->opts.on_session](session_event::kind what, const session* s, error_code ec,
                                     const diagnostics& d,
                                     std::optional<std::chrono::milliseconds> retry_in) {
            if (!*hook)
                return;
            session_event e;
            e.what = what;
            e.current = s;
            e.ec = ec;
            e.diag = d;
            e.retry_in = retry_in;
            (*hook)(e);
        };
    auto pause = first_session_pause;
    for (;;) {
        // (Not a structured binding: the lambdas below capture the session, which clang
        // before 16 refuses for a binding.)
        auto created =
            co_await session::async_create(E->consul, cfg, with_diagnostics(tuple_awaitable));
        cfg.resume_id.clear(); // (resumed or not: a later session is a new one)
        session& s = std::get<1>(created);
        error_code created_ec;
        if (const auto failure = std::get<0>(created)) {
            try {
                std::rethrow_exception(failure);
            } catch (const conclave::error& e) {
                created_ec = e.code();
                if (diag)
                    *diag = e.diag();
                // Consul answers a session it refuses to create (its TTL out of the range the
                // servers accept, for one) with a 500, which is otherwise transient: its
                // text tells them apart. A new session would be refused the same.
                const auto& text = e.diag().server_message;
                if (text.find("Invalid") != std::string::npos ||
                    text.find("invalid") != std::string::npos) {
                    report(session_event::kind::create_failed, nullptr, created_ec, e.diag(),
                           std::nullopt);
                    co_return make_error_code(errc::invalid_argument);
                }
            }
        }
        const bool stopped = co_await is_cancelled();
        if (created_ec == asio::error::operation_aborted || stopped) {
            // (a session made as the cancellation came is dropped: its handle destroys it)
            co_return make_error_code(asio::error::operation_aborted);
        }
        if (created_ec) { // e.g. a TTL Consul refuses, or a token without rights: final
            const bool retry = is_retryable(created_ec);
            report(session_event::kind::create_failed, nullptr, created_ec, *diag,
                   retry ? std::optional{pause} : std::nullopt);
            if (!retry)
                co_return created_ec;
        }
        error_code ended;
        if (!created_ec) {
            pause = first_session_pause;
            report(session_event::kind::created, &s, {}, {}, std::nullopt);
            // The renewals are ended by the destroy, not by the caller's cancellation: the
            // campaign must step down (release) before the session goes.
            asio::cancellation_signal stop_renewing;
            auto renew = [&]() -> asio::awaitable<void> {
                co_await s.async_run(
                    asio::bind_cancellation_slot(stop_renewing.slot(), tuple_awaitable));
            };
            auto campaign_then_destroy = [&]() -> asio::awaitable<void> {
                co_await asio::this_coro::throw_if_cancelled(false);
                ended = co_await run(E, s, task, diag, route);
                co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
                auto [destroy_failure] =
                    co_await s.async_destroy(with_diagnostics(tuple_awaitable));
                if (destroy_failure) { // (the cancelled run retries it in the background)
                    stop_renewing.emit(asio::cancellation_type::terminal);
                    const auto [ec, d] = unpack(destroy_failure);
                    report(session_event::kind::destroy_failed, &s, ec, d, std::nullopt);
                }
            };
            co_await (renew() && campaign_then_destroy());
            if (ended != errc::session_invalidated && ended != errc::session_expired)
                co_return ended; // cancelled, the task failed, the key is not a lock, ...
            const bool stopped_now = co_await is_cancelled();
            if (stopped_now)
                co_return make_error_code(asio::error::operation_aborted);
            report(session_event::kind::lost, &s, ended, *diag, pause);
        }
        const bool paused = co_await pause_for(pause);
        const bool stopped_then = co_await is_cancelled();
        if (!paused || stopped_then)
            co_return make_error_code(asio::error::operation_aborted);
        pause = std::min(2 * pause, max_session_pause);
    }
}

asio::awaitable<std::pair<error_code, leadership>> campaign(std::shared_ptr<elector_state> E,
                                                            session s, diagnostics* diag) {
    // Checked here, not when the call is made: async_run marks itself running in its
    // coroutine too, so whichever starts first wins.
    if (E->running || E->campaign_busy())
        co_return std::pair{make_error_code(errc::invalid_argument), leadership{}};
    E->campaigning = true;
    struct done_campaigning {
        elector_state& e;
        ~done_campaigning() { e.campaigning = false; }
    } guard{*E};
    auto [failure, lease] = co_await E->mutex.async_acquire(s, with_diagnostics(tuple_awaitable));
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const conclave::error& e) {
            if (diag)
                *diag = e.diag();
            co_return std::pair{e.code(), leadership{}};
        }
    }
    E->term = lease;
    co_return std::pair{error_code{}, leadership{std::move(lease)}};
}

asio::awaitable<error_code> resign(std::shared_ptr<elector_state> E,
                                   std::optional<std::chrono::milliseconds> holdoff) {
    if (!E->current)
        co_return error_code{};
    E->resign_holdoff = holdoff;
    ++E->resigns;
    E->changed.notify_all();
    while (E->current)
        co_await E->changed.wait(clock::time_point::max());
    co_return error_code{};
}

asio::awaitable<leader_result> current_leader(std::shared_ptr<elector_state> E) {
    auto [ec, r] =
        co_await detail::call(E->consul, detail::endpoint::kv_get{E->key, query_options{}});
    if (ec)
        co_return leader_result{ec, std::nullopt};
    co_return leader_of(r.entry);
}

asio::awaitable<leader_result> next_leader(std::shared_ptr<observer_state> O) {
    for (;;) {
        auto [ec, snap] = co_await O->follow.async_next(tuple_awaitable);
        if (ec)
            co_return leader_result{ec, std::nullopt};
        std::optional<kv_entry> entry;
        if (!snap.entries.empty())
            entry = std::move(snap.entries.front());
        auto now = leader_of(entry);
        if (now.first)
            co_return now;
        if (O->last && *O->last == now.second)
            continue; // the key changed but the leader did not (e.g. a value-less wake)
        O->last = now.second;
        co_return now;
    }
}

} // namespace

elector::elector(client& c, std::string key, elector_options opts)
    : state_(std::make_shared<elector_state>(c, std::move(key), std::move(opts))) {}

const std::string& elector::key() const noexcept {
    return state_->key;
}

std::string elector::hand_over() {
    const auto s = state_->run_session;
    if (!s || !s->hand_over())
        return {};
    state_->changed.notify_all();
    return s->id;
}

std::optional<fencing_token> elector::is_leader() const {
    if (state_->current)
        return state_->current->held();
    return state_->term ? state_->term->held() : std::nullopt;
}

leader_observer elector::observe() const {
    return leader_observer{std::make_shared<observer_state>(state_->consul, state_->key)};
}

void elector::run_impl(state_ptr E, session s, leader_task task, detail::diagnostics_route* route,
                       asio::any_completion_handler<void(error_code)> h) {
    if (!s.valid() || !task)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "elector::async_run needs a session and a task");
    auto ex = E->consul.get_executor();
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(ex, run(std::move(E), std::move(s), std::move(task), diag, route),
                     std::move(h));
}

void elector::run_own_sessions_impl(state_ptr E, session_config cfg, leader_task task,
                                    detail::diagnostics_route* route,
                                    asio::any_completion_handler<void(error_code)> h) {
    if (!task)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "elector::async_run needs a task");
    auto ex = E->consul.get_executor();
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(ex,
                     run_with_sessions(std::move(E), std::move(cfg), std::move(task), diag, route),
                     std::move(h));
}

void elector::campaign_impl(state_ptr E, session s, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, leadership)> h) {
    if (!s.valid())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "elector::async_campaign needs a session");
    auto ex = E->consul.get_executor();
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(ex, campaign(std::move(E), std::move(s), diag), std::move(h));
}

void elector::resign_impl(state_ptr E, std::optional<std::chrono::milliseconds> holdoff,
                          asio::any_completion_handler<void(error_code)> h) {
    auto ex = E->consul.get_executor();
    detail::spawn_op(ex, resign(std::move(E), holdoff), std::move(h));
}

void elector::leader_impl(
    state_ptr E, asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h) {
    auto ex = E->consul.get_executor();
    detail::spawn_op(ex, current_leader(std::move(E)), std::move(h));
}

leader_observer::leader_observer(state_ptr s)
    : state_(std::move(s)) {}
leader_observer::leader_observer(leader_observer&&) noexcept = default;
leader_observer& leader_observer::operator=(leader_observer&&) noexcept = default;
leader_observer::~leader_observer() = default;

void leader_observer::next_impl(
    state_ptr O, asio::any_completion_handler<void(error_code, std::optional<leader_info>)> h) {
    auto ex = O->consul.get_executor();
    detail::spawn_op(ex, next_leader(std::move(O)), std::move(h));
}

} // namespace conclave
