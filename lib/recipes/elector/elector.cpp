// SPDX-License-Identifier: BSL-1.0
// elector: campaign (a lock acquire), lead (the task raced against the lost signal and
// resign requests), step down (release after the task returned), leader discovery.
#include "consul/spawn.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/common/notifier.hpp"

#include <conclave/elector.hpp>
#include <conclave/watch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace conclave {

namespace detail {

struct elector_state {
    elector_state(client& c, std::string k, elector_options o)
        : consul(c)
        , key(std::move(k))
        , opts(std::move(o))
        , mutex(c, key, lock_options{}.with_value(opts.value).with_wait(opts.wait)) {}

    client consul;
    std::string key;
    elector_options opts;
    lock mutex;
    std::optional<lock_lease> current; ///< while leading
    bool running = false;              ///< an async_run is active
    std::uint64_t resigns = 0;         ///< bumped by each async_resign
    notifier changed;                  ///< resign requested, leadership ended
};

struct observer_state {
    observer_state(client c, const std::string& key)
        : consul(c)
        , follow(std::move(c), watch::key(key)) {}
    client consul;
    watch follow;
    /// What the last call reported (outer empty: nothing reported yet).
    std::optional<std::optional<leader_info>> last;
};

} // namespace detail

namespace {

using namespace asio::experimental::awaitable_operators;
using clock = std::chrono::steady_clock;
using detail::elector_state;
using detail::observer_state;
using leader_result = std::pair<error_code, std::optional<leader_info>>;
constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// The leader a key names (empty: free or absent); conflict for a key of another recipe.
leader_result leader_of(const std::optional<kv_entry>& e) {
    if (!e || e->session.empty())
        return {};
    if (e->flags != lock_flag_value)
        return {make_error_code(errc::conflict), std::nullopt};
    return {error_code{}, leader_info{e->value, e->session, e->lock_index, e->modify_index}};
}

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

// After a resign: stay out until another candidate leads, or the hold-off passes.
asio::awaitable<void> sit_out(std::shared_ptr<elector_state> E, std::string own_session) {
    watch follow{E->consul, watch::key(E->key)};
    const auto until = clock::now() + E->opts.resign_holdoff;
    while (clock::now() < until) {
        auto next = follow.async_next(tuple_awaitable);
        auto outcome = co_await (std::move(next) || detail::sleep_for(until - clock::now()));
        if (outcome.index() == 1)
            co_return;
        auto [ec, snap] = std::get<0>(std::move(outcome));
        if (ec)
            continue; // final errors: the hold-off bounds the wait anyway
        if (!snap.entries.empty() && !snap.entries.front().session.empty() &&
            snap.entries.front().session != own_session)
            co_return; // someone else leads now
    }
}

asio::awaitable<error_code> run(std::shared_ptr<elector_state> E, session s, leader_task task,
                                diagnostics* diag) {
    if (E->running)
        co_return make_error_code(errc::invalid_argument); // one campaign per elector
    E->running = true;
    struct running_flag {
        elector_state& e;
        ~running_flag() {
            e.running = false;
            e.current.reset();
            e.changed.notify_all();
        }
    } flag{*E};

    for (;;) {
        // (with_diagnostics: a failure comes with its text, e.g. the permission missing)
        auto [acquire_failure, lease] =
            co_await E->mutex.async_acquire(s, with_diagnostics(tuple_awaitable));
        if (acquire_failure) { // session lost, conflict, denied, or cancelled while campaigning
            try {
                std::rethrow_exception(acquire_failure);
            } catch (const conclave::error& e) {
                if (diag)
                    *diag = e.diag();
                co_return e.code();
            }
        }
        E->current = lease;
        const auto resigns_seen = E->resigns;

        // Lead until the task returns, leadership is lost, or a resign is requested: the
        // `||` cancels the others and waits for them, so the task has returned when it
        // completes (also when this coroutine is cancelled).
        std::exception_ptr failure;
        auto lead = run_task(task, leadership{lease}, failure);
        auto lost = lease.async_wait_lost(tuple_awaitable);
        auto resign = resign_requested(E, resigns_seen);
        bool cancelled = false;
        std::size_t ended_by = 0;
        try {
            auto outcome = co_await (std::move(lead) || std::move(lost) || std::move(resign));
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

        if (cancelled)
            co_return make_error_code(asio::error::operation_aborted);
        if (failure)
            co_return make_error_code(errc::task_failed);
        if (ended_by == 2)
            co_await sit_out(E, s.id());
        co_await asio::this_coro::throw_if_cancelled(true);
    }
}

asio::awaitable<std::pair<error_code, leadership>> campaign(std::shared_ptr<elector_state> E,
                                                            session s, diagnostics* diag) {
    auto [failure, lease] = co_await E->mutex.async_acquire(s, with_diagnostics(tuple_awaitable));
    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const conclave::error& e) {
            if (diag)
                *diag = e.diag();
            co_return std::pair{e.code(), leadership{lock_lease{}}};
        }
    }
    co_return std::pair{error_code{}, leadership{std::move(lease)}};
}

asio::awaitable<error_code> resign(std::shared_ptr<elector_state> E) {
    if (!E->current)
        co_return error_code{};
    ++E->resigns;
    E->changed.notify_all();
    while (E->current)
        co_await E->changed.wait(clock::time_point::max());
    co_return error_code{};
}

asio::awaitable<leader_result> current_leader(std::shared_ptr<elector_state> E) {
    auto [ec, r] = co_await E->consul.async_kv_get(E->key, query_options{}, tuple_awaitable);
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

std::optional<fencing_token> elector::is_leader() const {
    return state_->current ? state_->current->held() : std::nullopt;
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
    detail::spawn_op(ex, run(std::move(E), std::move(s), std::move(task), diag), std::move(h));
}

void elector::campaign_impl(state_ptr E, session s, detail::diagnostics_route* route,
                            asio::any_completion_handler<void(error_code, leadership)> h) {
    if (!s.valid())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "elector::async_campaign needs a session");
    auto ex = E->consul.get_executor();
    if (E->running) {
        asio::post(ex, [h = std::move(h)]() mutable {
            std::move(h)(make_error_code(errc::invalid_argument), leadership{lock_lease{}});
        });
        return;
    }
    auto* diag = detail::diagnostics_route::target(route, nullptr);
    detail::spawn_op(ex, campaign(std::move(E), std::move(s), diag), std::move(h));
}

void elector::resign_impl(state_ptr E, asio::any_completion_handler<void(error_code)> h) {
    auto ex = E->consul.get_executor();
    detail::spawn_op(ex, resign(std::move(E)), std::move(h));
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
