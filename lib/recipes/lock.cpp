// lock: the acquire loop (txn acquire + read-back, waits on the key, lock-delay backoff),
// try-acquire with one budget, and destroy.
#include "consul/spawn.hpp"
#include "recipes/acquire_policy.hpp"
#include "recipes/deadline.hpp"
#include "recipes/lock_state.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace conclave {

using clock = std::chrono::steady_clock;
using deadline_t = std::optional<clock::time_point>;
using detail::lease_state;
using detail::lock_state;
using detail::session_state;

std::string fencing_token::to_string() const {
    return std::to_string(modify_index) + ":" + std::to_string(lock_index) + ":" + session + ":" +
           key;
}

namespace {

using acquire_result = std::pair<error_code, std::optional<lock_lease>>;

// Waits between retries of transient failures (network, 5xx) while acquiring.
class retry_backoff {
public:
    clock::duration next() {
        const auto d = current_;
        current_ = std::min<clock::duration>(current_ * 2, std::chrono::seconds{2});
        return d;
    }
    void reset() { current_ = std::chrono::milliseconds{50}; }

private:
    clock::duration current_ = std::chrono::milliseconds{50};
};

bool past(const deadline_t& d) {
    return d && clock::now() >= *d;
}

} // namespace

namespace detail {
struct lease_factory {
    static lock_lease make(std::shared_ptr<lease_state> s) { return lock_lease{std::move(s)}; }
};
} // namespace detail

namespace {

// Releases a lock this acquire may hold (its txn may have been applied before it was
// cancelled or timed out). Bounded; harmless if the lock is not held.
asio::awaitable<void> undo_acquire(std::shared_ptr<lock_state> l, std::string session) {
    std::vector<txn_op> ops{
        txn_op::unlock(l->key, std::move(session), l->opts.value, lock_flag_value)};
    auto op = l->consul.async_txn(std::move(ops), txn_options{}, asio::deferred);
    co_await detail::with_deadline<txn_result>(std::move(op),
                                               clock::now() + l->opts.cleanup_timeout);
    l->forget();
}

asio::awaitable<acquire_result>
acquire_loop(std::shared_ptr<lock_state> l, std::shared_ptr<session_state> s, deadline_t deadline) {
    detail::lock_delay_backoff delay_backoff{l->opts.max_lock_delay_wait};
    retry_backoff backoff;
    bool maybe_holding = false; // an acquire txn was sent and its outcome is unknown
    bool cancelled = false;
    acquire_result result;
    try {
        for (;;) {
            if (s->check(clock::now())) {
                result.first = s->lost;
                break;
            }
            if (past(deadline))
                break; // not acquired in time: empty result

            if (!l->known && !l->known_absent) {
                auto op = l->consul.async_kv_get(l->key, query_options{}, asio::deferred);
                auto [ec, r] =
                    co_await detail::with_optional_deadline<kv_get_result>(std::move(op), deadline);
                if (ec) {
                    if (past(deadline))
                        break;
                    if (!is_retryable(ec)) {
                        result.first = ec;
                        break;
                    }
                    co_await detail::sleep_for(backoff.next(), deadline);
                    continue;
                }
                backoff.reset();
                l->saw(std::move(r.entry));
                // The key is known now: if an earlier acquire of ours was applied after
                // all, the verdict below says "ours".
                maybe_holding = false;
            }

            const kv_entry* known = l->known ? &*l->known : nullptr;
            switch (detail::judge_key(known, s->id, lock_flag_value)) {
            case detail::key_verdict::conflict:
                result.first = make_error_code(errc::conflict);
                co_return result;
            case detail::key_verdict::ours: {
                // Already held by this session: a lease without a write.
                fencing_token t{l->key, s->id, known->lock_index, known->modify_index};
                result.second =
                    detail::lease_factory::make(std::make_shared<lease_state>(l, s, std::move(t)));
                co_return result;
            }
            case detail::key_verdict::held_by_other: {
                // Block until the key changes (released, deleted, taken over), but not past
                // the session's local deadline (a lost session ends the wait) or the budget.
                // Consul ends the wait itself; the budget is also enforced here.
                auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                    s->policy.deadline() - clock::now());
                if (deadline)
                    wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(
                                              *deadline - clock::now()));
                wait = std::clamp(wait, std::chrono::milliseconds{1}, l->opts.wait);
                auto op = l->consul.async_kv_get(
                    l->key, query_options::blocking(known->modify_index, wait), asio::deferred);
                auto [ec, r] =
                    co_await detail::with_optional_deadline<kv_get_result>(std::move(op), deadline);
                if (ec) {
                    if (past(deadline))
                        co_return result; // not acquired in time
                    if (!is_retryable(ec)) {
                        result.first = ec;
                        co_return result;
                    }
                    co_await detail::sleep_for(backoff.next(), deadline);
                    continue;
                }
                backoff.reset();
                if (r.meta.index < known->modify_index)
                    l->forget(); // the index went backwards (restore/restart): read afresh
                else
                    l->saw(std::move(r.entry));
                continue;
            }
            case detail::key_verdict::free:
                break;
            }

            // Free: take it and read it back in one transaction. The check keeps the
            // transaction from overwriting a key that changed since we looked at it (for
            // instance a foreign key with other flags).
            std::vector<txn_op> ops;
            if (known)
                ops.push_back(txn_op::check_index(l->key, known->modify_index));
            else
                ops.push_back(txn_op::check_not_exists(l->key));
            ops.push_back(txn_op::lock(l->key, s->id, l->opts.value, lock_flag_value));
            ops.push_back(txn_op::get(l->key));
            maybe_holding = true;
            auto op = l->consul.async_txn(std::move(ops), txn_options{}, asio::deferred);
            auto [ec, t] =
                co_await detail::with_optional_deadline<txn_result>(std::move(op), deadline);
            if (ec) {
                // Unknown outcome. Giving up: the cleanup below releases it if it was
                // applied. Retrying: read the key first (it may say we hold it).
                if (past(deadline) || !is_retryable(ec)) {
                    if (!past(deadline))
                        result.first = ec;
                    break;
                }
                l->forget();
                co_await detail::sleep_for(backoff.next(), deadline);
                continue;
            }
            maybe_holding = false;
            if (t.committed && !t.results.empty()) {
                const kv_entry& e = t.results.back();
                l->saw(e);
                fencing_token token{l->key, s->id, e.lock_index, e.modify_index};
                result.second = detail::lease_factory::make(
                    std::make_shared<lease_state>(l, s, std::move(token)));
                co_return result;
            }
            switch (detail::classify_refusal(t.errors)) {
            case detail::refusal::lock_delay:
                co_await detail::sleep_for(delay_backoff.next(), deadline);
                break;
            case detail::refusal::session_gone:
                s->gone_on_server = true;
                s->mark_lost(make_error_code(errc::session_invalidated));
                break;
            case detail::refusal::held:
            case detail::refusal::stale:
            case detail::refusal::other:
                l->forget(); // read the key again and decide
                break;
            }
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    if (maybe_holding) {
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state();
        co_await undo_acquire(l, s->id);
    }
    if (cancelled)
        result = {asio::error::operation_aborted, std::nullopt};
    co_return result;
}

asio::awaitable<error_code> destroy(std::shared_ptr<lock_state> l) {
    auto [ec, r] = co_await l->consul.async_kv_get(l->key, query_options{},
                                                   asio::as_tuple(asio::use_awaitable));
    if (ec)
        co_return ec;
    if (!r.entry) {
        l->saw(std::nullopt);
        co_return error_code{};
    }
    if (r.entry->flags != lock_flag_value || !r.entry->session.empty())
        co_return make_error_code(errc::conflict); // Go: ErrLockConflict / ErrLockInUse
    auto [dec, deleted] = co_await l->consul.async_kv_delete(
        l->key, kv_delete_options{}.with_cas(r.entry->modify_index),
        asio::as_tuple(asio::use_awaitable));
    if (dec)
        co_return dec;
    l->forget();
    co_return deleted ? error_code{} : make_error_code(errc::conflict);
}

asio::awaitable<std::pair<error_code, lock_lease>> acquire(std::shared_ptr<lock_state> l,
                                                           std::shared_ptr<session_state> s) {
    auto [ec, lease] = co_await acquire_loop(std::move(l), std::move(s), std::nullopt);
    if (!ec && !lease)
        ec = make_error_code(errc::timeout); // cannot happen without a deadline
    co_return std::pair<error_code, lock_lease>{ec, lease ? std::move(*lease) : lock_lease{}};
}

asio::awaitable<acquire_result> try_acquire(std::shared_ptr<lock_state> l,
                                            std::shared_ptr<session_state> s,
                                            std::chrono::milliseconds budget) {
    co_return co_await acquire_loop(std::move(l), std::move(s), clock::now() + budget);
}

void require_session(const std::shared_ptr<session_state>& s) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "lock acquire with an empty conclave::session");
}

} // namespace

lock::lock(client& c, std::string key, lock_options opts)
    : state_(std::make_shared<lock_state>(c, std::move(key), std::move(opts))) {}

const std::string& lock::key() const noexcept {
    return state_->key;
}

void lock::acquire_impl(state_ptr l, session_ptr s,
                        asio::any_completion_handler<void(error_code, lock_lease)> h) {
    require_session(s);
    auto ex = l->consul.get_executor();
    detail::spawn_op(ex, acquire(std::move(l), std::move(s)), std::move(h));
}

void lock::try_acquire_impl(
    state_ptr l, session_ptr s, std::chrono::milliseconds budget,
    asio::any_completion_handler<void(error_code, std::optional<lock_lease>)> h) {
    require_session(s);
    auto ex = l->consul.get_executor();
    detail::spawn_op(ex, try_acquire(std::move(l), std::move(s), budget), std::move(h));
}

void lock::destroy_impl(state_ptr l, asio::any_completion_handler<void(error_code)> h) {
    auto ex = l->consul.get_executor();
    detail::spawn_op(ex, destroy(std::move(l)), std::move(h));
}

} // namespace conclave
