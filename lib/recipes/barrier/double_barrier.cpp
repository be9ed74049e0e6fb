// SPDX-License-Identifier: BSL-1.0
// class double_barrier: enter (write the participant key, then wait until N are inside or
// the marker says the barrier opened), leave (delete the key, then wait until the round has
// gone), and the cleanup of an enter that ends without passing.
#include "consul/endpoint.hpp"
#include "consul/endpoints/kv.hpp"
#include "consul/spawn.hpp"
#include "recipes/barrier/double_barrier_state.hpp"
#include "recipes/barrier/enter_claim.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/common/deadline.hpp"
#include "recipes/session/session_state.hpp"

#include <conclave/barrier.hpp>

#include <boost/asio/this_coro.hpp>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

namespace conclave {

namespace {

using detail::barrier_news;
using detail::double_barrier_state;
using detail::enter_step;
using detail::prefix_view;
using detail::session_state;
using view_result = std::pair<error_code, prefix_view>;

error_code conflict(diagnostics& said, std::string why) {
    said.clear();
    said.client_message = std::move(why);
    return make_error_code(errc::conflict);
}

// The participant key, held by the session. Consul answers an acquire for a session it does
// not know with a 500 ("invalid session"): that is the session's end.
asio::awaitable<error_code> write_participant(double_barrier_state& st, session_state& s,
                                              diagnostics& said) {
    auto options =
        kv_put_options{}.with_acquire(s.id).with_flags(double_barrier_flag_value).with_diag(&said);
    auto [ec, made] = co_await detail::call(
        st.consul,
        detail::endpoint::kv_put{st.key_of(s.id), std::to_string(st.participants), options});
    if (ec == errc::server_error &&
        said.server_message.find("invalid session") != std::string::npos) {
        s.gone_on_server = true;
        s.mark_lost(make_error_code(errc::session_invalidated));
        co_return s.lost;
    }
    if (!ec && !made)
        co_return conflict(said, "key " + st.key_of(s.id) + " is held by another session");
    co_return ec;
}

// The marker, create-only: false when another enter wrote one first.
asio::awaitable<error_code> write_ready(double_barrier_state& st, const prefix_view& v,
                                        diagnostics& said) {
    auto options =
        kv_put_options{}.with_cas(0).with_flags(double_barrier_flag_value).with_diag(&said);
    auto [ec, made] = co_await detail::call(
        st.consul,
        detail::endpoint::kv_put{st.ready_key(), detail::format_ready(v.reading.live), options});
    (void)made; // either way, the next read says whether the barrier is open
    co_return ec;
}

// Deletes the marker if it is still as read (stale: its round has gone).
asio::awaitable<error_code> remove_stale(double_barrier_state& st, const prefix_view& v,
                                         diagnostics& said) {
    auto options = kv_delete_options{}.with_cas(v.reading.ready->modify_index).with_diag(&said);
    auto [ec, done] =
        co_await detail::call(st.consul, detail::endpoint::kv_delete{st.ready_key(), options});
    (void)done; // changed since: the next read says how
    co_return ec;
}

// Why an enter found itself not inside: its session ended, or someone deleted its key.
error_code not_inside(double_barrier_state& st, session_state& s, diagnostics& said) {
    if (s.check(detail::clock::now()))
        return s.lost;
    said.clear();
    said.client_message = "key " + st.key_of(s.id) +
                          " was deleted, or released, while its participant waited to enter";
    return make_error_code(errc::lock_lost);
}

error_code count_conflict(double_barrier_state& st, const prefix_view& v, diagnostics& said) {
    said.clear();
    for (const auto& p : v.reading.live)
        if (p.expected != st.participants)
            said.client_message = "double barrier " + st.key + ": participant " + p.id.session +
                                  " expects " + std::to_string(p.expected) +
                                  " participants, this one " + std::to_string(st.participants);
    return make_error_code(errc::limit_conflict);
}

// One read of the prefix: errc::conflict when it is not a double barrier's.
asio::awaitable<view_result> read_checked(double_barrier_state& st, diagnostics& said) {
    auto r = co_await detail::read_prefix(st, said);
    if (!r.first && !r.second.reading.problem.empty())
        r.first = conflict(said, r.second.reading.problem);
    co_return r;
}

// Runs an enter's or a leave's loop: an exception out of it (a cancellation seen between
// requests) is its error.
asio::awaitable<error_code> caught(asio::awaitable<error_code> loop) {
    error_code ec;
    try {
        ec = co_await std::move(loop);
    } catch (...) {
        ec = detail::error_from_exception(std::current_exception());
    }
    co_return ec;
}

// The readings an enter's or a leave's loop judges: a read of its own, or the shared query's
// next news. The news are followed (a subscription to the query) from the first wait on.
class readings {
public:
    explicit readings(double_barrier_state& st)
        : st_(st) {}

    // A read now (after a write of ours: the news then count only from it on).
    asio::awaitable<view_result> fresh(diagnostics& said) {
        auto r = co_await detail::read_prefix(st_, said);
        if (news_)
            news_->after(r.second.index);
        co_return r;
    }

    // The next reading past `last`, once the state changed.
    asio::awaitable<view_result> next(const prefix_view& last, diagnostics& said) {
        if (!news_) {
            news_.emplace(st_);
            news_->after(last.index);
        }
        co_return co_await news_->next(said);
    }

private:
    double_barrier_state& st_;
    std::optional<barrier_news> news_;
};

asio::awaitable<error_code> enter_loop(double_barrier_state& st, session_state& s, bool& wrote,
                                       diagnostics& said) {
    if (s.check(detail::clock::now()))
        co_return s.lost;
    // A read first: nothing is written under a prefix that is not a double barrier's.
    auto [read_error, first] = co_await read_checked(st, said);
    (void)first;
    if (read_error)
        co_return read_error;
    wrote = true; // from here, the key may exist: a failure deletes it
    auto write_error = co_await write_participant(st, s, said);
    if (write_error == errc::conflict)
        wrote = false; // another session's: not ours to delete
    if (write_error)
        co_return write_error;
    readings views(st);
    auto [ec, view] = co_await views.fresh(said);
    while (!ec) {
        detail::delete_dead(st, view.reading);
        switch (detail::decide_enter(view.reading, s.id, st.participants)) {
        case enter_step::open:
            co_return error_code{};
        case enter_step::conflict:
            co_return conflict(said, view.reading.problem);
        case enter_step::count_conflict:
            co_return count_conflict(st, view, said);
        case enter_step::not_inside:
            co_return not_inside(st, s, said);
        case enter_step::write_ready:
        case enter_step::remove_stale: {
            if (view.reading.ready)
                ec = co_await remove_stale(st, view, said);
            else
                ec = co_await write_ready(st, view, said);
            if (ec)
                co_return ec;
            std::tie(ec, view) = co_await views.fresh(said);
            break;
        }
        case enter_step::wait:
            std::tie(ec, view) = co_await views.next(view, said);
            break;
        }
    }
    co_return ec;
}

// The enter's key, deleted after a failure or a cancellation: the caller's cancellation must
// not stop the cleanup, which the client's request_timeout bounds.
asio::awaitable<void> forget_participant(double_barrier_state& st, const std::string& session) {
    auto [ec, done] = co_await detail::call(
        st.consul, detail::endpoint::kv_delete{st.key_of(session), kv_delete_options{}});
    (void)ec; // a key left by a failure stays its session's: it goes with it
    (void)done;
}

asio::awaitable<error_code> enter(std::shared_ptr<double_barrier_state> st,
                                  std::shared_ptr<session_state> s, diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       detail::as_terminal{});
    diagnostics said;
    bool wrote = false;
    const detail::enter_claim claim{st->key, s->id};
    error_code ec;
    if (claim) {
        ec = co_await caught(enter_loop(*st, *s, wrote, said));
    } else {
        said.client_message = "double barrier " + st->key + ": session " + s->id +
                              " is entering it already (one enter per session and prefix at "
                              "a time)";
        ec = make_error_code(errc::invalid_argument);
    }
    if (ec && wrote) {
        // (Here, not in forget_participant: awaiting it would throw once cancelled.)
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state(asio::disable_cancellation());
        co_await forget_participant(*st, s->id);
    }
    if (ec == asio::error::operation_aborted) {
        said.clear();
        said.client_message = "enter of double barrier " + st->key + " cancelled" +
                              (wrote ? "; its key deleted" : "");
    }
    if (diag)
        *diag = ec ? said : diagnostics{};
    co_return ec;
}

asio::awaitable<error_code> leave_loop(double_barrier_state& st, session_state& s,
                                       diagnostics& said) {
    auto [read_error, before] = co_await read_checked(st, said);
    if (read_error)
        co_return read_error;
    const auto round = detail::round_of(before.reading, s.id);
    if (before.reading.find(s.id) != nullptr) {
        auto [delete_error, done] = co_await detail::call(
            st.consul,
            detail::endpoint::kv_delete{st.key_of(s.id), kv_delete_options{}.with_diag(&said)});
        (void)done;
        if (delete_error)
            co_return delete_error;
    }
    readings views(st);
    auto [ec, view] = co_await views.fresh(said);
    while (!ec) {
        if (!view.reading.problem.empty())
            co_return conflict(said, view.reading.problem);
        detail::delete_dead(st, view.reading);
        if (detail::all_left(view.reading, round, s.id)) {
            // The round's marker is stale now; a new round's (open) stays.
            if (view.reading.ready && !view.reading.open())
                ec = co_await remove_stale(st, view, said);
            co_return ec;
        }
        std::tie(ec, view) = co_await views.next(view, said);
    }
    co_return ec;
}

asio::awaitable<error_code> leave(std::shared_ptr<double_barrier_state> st,
                                  std::shared_ptr<session_state> s, diagnostics* diag) {
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       detail::as_terminal{});
    diagnostics said;
    auto ec = co_await caught(leave_loop(*st, *s, said));
    if (diag)
        *diag = ec ? said : diagnostics{};
    co_return ec;
}

} // namespace

double_barrier::double_barrier(client& c, std::string prefix, std::uint32_t participants,
                               barrier_options opts) {
    while (!prefix.empty() && prefix.back() == '/')
        prefix.pop_back();
    if (prefix.empty())
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a double barrier needs a prefix");
    if (participants == 0)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "a double barrier needs at least 1 participant");
    state_ = std::make_shared<detail::double_barrier_state>(c, prefix, participants, opts);
}

const std::string& double_barrier::prefix() const noexcept {
    return state_->key;
}

std::uint32_t double_barrier::participants() const noexcept {
    return state_->participants;
}

void double_barrier::enter_impl(state_ptr st, session_ptr s, detail::diagnostics_route* route,
                                asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    detail::spawn_op(ex, enter(std::move(st), std::move(s), diag), std::move(h));
}

void double_barrier::leave_impl(state_ptr st, session_ptr s, detail::diagnostics_route* route,
                                asio::any_completion_handler<void(error_code)> h) {
    auto* diag = detail::diagnostics_route::target(route, st->opts.diag);
    auto ex = st->consul.get_executor();
    detail::spawn_op(ex, leave(std::move(st), std::move(s), diag), std::move(h));
}

} // namespace conclave
