// SPDX-License-Identifier: BSL-1.0
// read_write_lock: the acquire (a contender key written once, then a wait until the rules of
// rw_rules.hpp say it holds) and try-acquire with one budget. The waiting is the acquire
// machine's (recipes/common/acquire_fsm.hpp), which never attempts here: nothing but the
// contender key is written, and the others' releases let it in.
#include "consul/endpoint.hpp"
#include "consul/endpoints/agent.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "observe/report.hpp"
#include "recipes/common/acquire_driver.hpp"
#include "recipes/common/acquire_end.hpp"
#include "recipes/common/contender.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/rwlock/rwlock_state.hpp"

#include <boost/asio/this_coro.hpp>
#include <boost/system/system_error.hpp>

namespace conclave {

using namespace detail;

namespace {

using acquire_result = std::pair<error_code, std::optional<read_write_lease>>;

// The acquire's place in line.
struct contender {
    contender(std::string k, rw_mode m)
        : key(std::move(k))
        , mode(m) {}
    std::string key;
    rw_mode mode;
    std::uint64_t create_index = 0; ///< once written
    bool sent = false;              ///< a write of it was sent (the cleanup deletes it)
};

// A contender key unique per process and acquire.
std::string contender_key_for(const detail::rw_hub& hub, const std::string& session) {
    return detail::unique_contender_key(hub.contender_prefix(), session);
}

// Writes the contender key, held by the session, and rewrites the sequence key in the same
// transaction (an upgrade judged on an older state then fails). Errors are the acquire's.
asio::awaitable<error_code> enqueue(rwlock_state& l, session_state& s, contender& me,
                                    const deadline_t& deadline) {
    const auto flags = me.mode == rw_mode::write ? detail::rw_write_flags : detail::rw_read_flags;
    std::vector<txn_op> ops;
    ops.push_back(txn_op::set(l.hub->sequence_key, "", detail::rw_sequence_flags));
    ops.push_back(txn_op::lock(me.key, s.id, l.opts.value, flags));
    ops.push_back(txn_op::get(me.key));
    me.sent = true;
    auto [ec, index] = co_await detail::write_contender(l.consul, std::move(ops), s, deadline);
    me.create_index = index;
    co_return ec;
}

// The contender key's write, tried again while Consul cannot take it, within the budget.
// Trying again is safe: the session locking its own key again changes nothing.
asio::awaitable<error_code> enter_line(rwlock_state& l, session_state& s, contender& me,
                                       deadline_t deadline) {
    detail::retry_backoff backoff;
    for (;;) {
        auto ec = co_await enqueue(l, s, me, deadline);
        if (ec == asio::error::operation_aborted || !ec || !is_retryable(ec))
            co_return ec; // cancelled, in line, or an error
        if (detail::past(deadline))
            co_return error_code{}; // out of time (an empty result: not in line)
        co_await detail::sleep_for(backoff.next(), deadline);
    }
}

// What the hub and the session say now, for the acquire machine: held once the rules say
// so on a state that includes our contender key.
detail::acquire_view view_of(rwlock_state& l, const contender& me, session_state& s) {
    auto& hub = *l.hub;
    detail::acquire_view v;
    v.now = clock::now();
    v.session_lost = s.check(v.now);
    v.session_deadline = s.policy.deadline();
    v.read_refused = static_cast<bool>(hub.refusal());
    v.read_failing = hub.failures() > 0;
    if (!hub.known() || hub.state_index() < me.create_index) {
        v.key = detail::key_state::unknown; // not a look yet: our key is not in the view
        return v;
    }
    if (!hub.conflict().empty()) {
        v.key = detail::key_state::conflict;
        return v;
    }
    hub.prune_dead_contenders();
    const auto& cs = hub.contenders();
    const auto at = detail::rw_find(cs, me.key);
    if (!at) {
        // Someone deleted our contender key while we waited: our place is gone.
        v.key = detail::key_state::refused;
        v.refused_ec = make_error_code(errc::lock_lost);
        return v;
    }
    if (detail::rw_holds(cs, *at))
        v.granted_by_other = true; // (the others' releases let us in: no write of ours)
    else
        v.key = detail::key_state::held_elsewhere;
    return v;
}

asio::awaitable<void> wait_for_change(detail::rw_hub& hub, session_state& s,
                                      clock::time_point until) {
    co_await detail::notifier::wait_any(until, hub.changed, s.changed);
}

// Waits until the hub has read the key's state, its reads are refused, the session is lost,
// or the budget is spent while reads fail (a budget of 0 still waits for the first read).
asio::awaitable<void> wait_known(detail::rw_hub& hub, session_state& s, deadline_t deadline) {
    while (!hub.known() && !hub.refusal() && !s.check(clock::now()) &&
           !(detail::past(deadline) && hub.failures() > 0)) {
        auto until = s.policy.deadline();
        if (deadline && !detail::past(deadline))
            until = std::min(until, *deadline);
        co_await wait_for_change(hub, s, until);
    }
}

// The machine never asks for an attempt here (no key_state::free is ever given).
asio::awaitable<std::optional<detail::attempt_outcome>> no_attempt() {
    co_return std::nullopt;
}

read_write_lease make_lease(const std::shared_ptr<rwlock_state>& l,
                            const std::shared_ptr<session_state>& s, const contender& me,
                            std::uint64_t modify_index) {
    fencing_token t{me.key, s->id, 0, modify_index};
    return detail::rw_lease_factory::make(
        std::make_shared<rw_lease_state>(l, s, std::move(t), me.key, me.mode));
}

// Deletes the contender key of an acquire that ends without the grant (bounded); when Consul
// cannot take the delete now, it goes on in the background (detail::leave_for_good): a key
// left live would keep every writer behind it waiting until the session ends.
asio::awaitable<void> leave_line(const std::shared_ptr<rwlock_state>& l,
                                 const std::shared_ptr<session_state>& s, const contender& me) {
    auto [ec, deleted] = co_await detail::call(
        l->consul, detail::endpoint::kv_delete{
                       me.key, kv_delete_options{}.with_timeout(l->opts.cleanup_timeout)});
    (void)deleted;
    if (!ec) {
        l->hub->contender_gone(me.key);
        co_return;
    }
    l->hub->forget();
    detail::leave_for_good(l, s, me.key);
}

asio::awaitable<acquire_result> acquire_loop(std::shared_ptr<rwlock_state> l,
                                             std::shared_ptr<session_state> s, rw_mode mode,
                                             deadline_t deadline, diagnostics* diag) {
    auto& hub = *l->hub;
    detail::acquire_report report{l->consul, grant_kind::read_write_lock, l->key};
    contender me{contender_key_for(hub, s->id), mode};
    auto subscription = hub.subscribe();
    // No write rule applies: the machine is asked only to wait, and to give up.
    detail::acquire_fsm fsm{deadline, detail::write_rule::lock_key};
    bool cancelled = false;
    acquire_result result;
    try {
        // The key's state first, so that a conflict is found before anything is written
        // (judged on a fresh read: a view shared with other objects may be old).
        co_await wait_known(hub, *s, deadline);
        if (hub.known() && !hub.conflict().empty()) {
            hub.forget();
            co_await wait_known(hub, *s, deadline);
        }
        auto action = detail::acquire_action(detail::acquire_action::kind::finish);
        action.end = detail::acquire_end::timed_out; // (not in line: result.first says why)
        if (hub.refusal()) {
            result.first = detail::read_denied(hub, diag);
        } else if (s->check(clock::now())) {
            result.first = s->lost;
        } else if (hub.known() && !hub.conflict().empty()) {
            result.first = make_error_code(errc::conflict);
            if (diag)
                diag->client_message = "not a read-write lock's key: " + hub.conflict();
        } else if (hub.known()) {
            result.first = co_await enter_line(*l, *s, me, deadline);
            if (!result.first && me.create_index != 0)
                action = fsm.next(view_of(*l, me, *s));
        } // else: out of time, Consul could not be read
        action = co_await detail::drive_acquire(
            fsm, deadline, action, [&] { return view_of(*l, me, *s); },
            [&](clock::time_point until) { return wait_for_change(hub, *s, until); },
            [] { return no_attempt(); }, [&] { hub.forget(); });
        switch (action.end) {
        case detail::acquire_end::handed_remote: {
            // The token: the index of the view that let us in, which is past the release of
            // everyone before us (their tokens are below it), or our key's own last write.
            const auto& cs = hub.contenders();
            const auto written = cs[*detail::rw_find(cs, me.key)].modify_index;
            result.second = make_lease(l, s, me, std::max(written, hub.state_index()));
            break;
        }
        case detail::acquire_end::cancelled:
            cancelled = true;
            break;
        default: // failed, denied, out of time (not in line: result.first says why)
            if (result.first)
                break;
            result.first = detail::error_of(action, *s, hub, me.key, diag);
            if (result.first == errc::conflict && diag && !hub.conflict().empty())
                diag->client_message = "not a read-write lock's key: " + hub.conflict();
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    if (!result.second && me.sent) {
        // Even after a cancellation, and not interruptible by another one: bounded.
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        co_await leave_line(l, s, me);
    }
    co_return detail::finish_acquire(report, std::move(result), cancelled, acquire_outcome::taken);
}

std::string checked_key(std::string key) {
    if (key.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "read_write_lock with an empty key");
    return key;
}

// The acquire loop of a read (write false) or a write grant, as start_acquire calls it.
auto loop_of(bool write) {
    const auto mode = write ? rw_mode::write : rw_mode::read;
    return [mode](std::shared_ptr<rwlock_state> l, std::shared_ptr<session_state> s,
                  deadline_t deadline, diagnostics* diag) {
        return acquire_loop(std::move(l), std::move(s), mode, deadline, diag);
    };
}

} // namespace

read_write_lock::read_write_lock(client& c, std::string key, read_write_lock_options opts)
    : state_(std::make_shared<rwlock_state>(c, checked_key(std::move(key)), std::move(opts))) {}

const std::string& read_write_lock::key() const noexcept {
    return state_->key;
}

void read_write_lock::acquire_impl(
    state_ptr l, session_ptr s, bool write, detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, read_write_lease)> h) {
    detail::start_acquire(loop_of(write), std::move(l), std::move(s), std::nullopt, route, nullptr,
                          "read_write_lock acquire with an empty conclave::session", std::move(h));
}

void read_write_lock::try_acquire_impl(
    state_ptr l, session_ptr s, bool write, std::chrono::milliseconds budget,
    detail::diagnostics_route* route,
    asio::any_completion_handler<void(error_code, std::optional<read_write_lease>)> h) {
    detail::start_acquire(loop_of(write), std::move(l), std::move(s), clock::now() + budget, route,
                          nullptr, "read_write_lock acquire with an empty conclave::session",
                          std::move(h));
}

} // namespace conclave
