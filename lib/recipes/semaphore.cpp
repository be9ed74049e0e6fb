// semaphore: contender key, CAS on `.lock` with read-back, waits on the prefix, dead holder
// pruning, permit monitoring and release, cleanup on every failed path.
#include "consul/spawn.hpp"
#include "recipes/deadline.hpp"
#include "recipes/grant.hpp"
#include "recipes/semaphore_record.hpp"

#include <conclave/semaphore.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

#include <random>

namespace conclave {

using clock = std::chrono::steady_clock;
using deadline_t = std::optional<clock::time_point>;
using detail::grant_state;
using detail::semaphore_record;
using detail::session_state;

namespace detail {

struct semaphore_state {
    semaphore_state(client c, std::string p, std::uint32_t l, semaphore_options o)
        : consul(std::move(c))
        , prefix(std::move(p))
        , limit(l)
        , opts(std::move(o))
        , lock_key(join_key(prefix, ".lock")) {}

    std::string contender_key(const std::string& session) const {
        return join_key(prefix, session);
    }

    client consul;
    std::string prefix;
    std::uint32_t limit;
    semaphore_options opts;
    std::string lock_key;
};

struct permit_state : grant_state {
    permit_state(std::shared_ptr<semaphore_state> sem_, std::shared_ptr<session_state> s,
                 fencing_token t)
        : grant_state(std::move(s), std::move(t))
        , sem(std::move(sem_)) {}
    std::shared_ptr<semaphore_state> sem;
};

struct permit_factory {
    static permit make(std::shared_ptr<permit_state> s) { return permit{std::move(s)}; }
};

} // namespace detail

using detail::permit_state;
using detail::semaphore_state;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

bool past(const deadline_t& d) {
    return d && clock::now() >= *d;
}

struct prefix_view {
    std::vector<kv_entry> entries;
    const kv_entry* lock = nullptr; ///< `.lock` among them
    std::uint64_t index = 0;
};

// What the prefix says about the semaphore.
struct reading {
    error_code ec;
    semaphore_record record;
    std::uint64_t lock_modify_index = 0; ///< 0: no `.lock` yet
};

reading interpret(const semaphore_state& sem, const prefix_view& view, diagnostics* diag) {
    reading r;
    std::string_view value;
    if (view.lock) {
        if (view.lock->flags != semaphore_flag_value) {
            r.ec = make_error_code(errc::conflict); // Go: ErrSemaphoreConflict
            return r;
        }
        value = view.lock->value;
        r.lock_modify_index = view.lock->modify_index;
    }
    auto record = semaphore_record::decode(value, sem.limit);
    if (!record) {
        r.ec = make_error_code(errc::bad_response); // Go: "lock decoding failed"
        return r;
    }
    if (record->limit != static_cast<std::int64_t>(sem.limit)) {
        if (diag)
            diag->client_message =
                "semaphore limit conflict (lock: " + std::to_string(record->limit) +
                ", local: " + std::to_string(sem.limit) + ")";
        r.ec = make_error_code(errc::limit_conflict);
        return r;
    }
    record->prune(view.entries);
    r.record = std::move(*record);
    return r;
}

prefix_view to_view(const semaphore_state& sem, kv_list_result&& list) {
    prefix_view v;
    v.entries = std::move(list.entries);
    v.index = list.meta.index;
    for (const auto& e : v.entries)
        if (e.key == sem.lock_key)
            v.lock = &e;
    return v;
}

// Reads the prefix (blocking after `index` when non-zero) within `deadline`.
asio::awaitable<std::pair<error_code, prefix_view>>
read_prefix(std::shared_ptr<semaphore_state> sem, std::uint64_t index,
            std::chrono::milliseconds wait, deadline_t deadline) {
    auto q = index ? query_options::blocking(index, wait) : query_options{};
    auto op =
        sem->consul.async_kv_list(detail::join_key(sem->prefix, ""), std::move(q), asio::deferred);
    auto [ec, list] =
        co_await detail::with_optional_deadline<kv_list_result>(std::move(op), deadline);
    prefix_view v;
    if (!ec)
        v = to_view(*sem, std::move(list));
    co_return std::pair<error_code, prefix_view>{ec, std::move(v)};
}

// Takes `session` out of the holder set (CAS, retried on races). Bounded by `deadline`.
// After a lost CAS race on `.lock`: a random pause in [0, cap], cap doubling from 1 ms to
// 32 ms. Why: every participant writes the same `.lock`; retrying at once in lockstep lets
// the same few keep winning (seen in the benchmark: a release losing 16 races in a row to
// three acquirers against an agent in another process).
class cas_race_backoff {
public:
    clock::duration next() {
        std::uniform_int_distribution<long> pick{0, cap_us_};
        const auto d = std::chrono::microseconds{pick(rng_)};
        cap_us_ = std::min<long>(cap_us_ * 2, 32000);
        return d;
    }

private:
    long cap_us_ = 1000;
    std::minstd_rand rng_{std::random_device{}()};
};

asio::awaitable<error_code> leave_holders(std::shared_ptr<semaphore_state> sem, std::string session,
                                          clock::time_point deadline) {
    cas_race_backoff race;
    while (clock::now() < deadline) {
        auto op = sem->consul.async_kv_get(sem->lock_key, query_options{}, asio::deferred);
        auto [ec, r] = co_await detail::with_deadline<kv_get_result>(std::move(op), deadline);
        if (ec)
            co_return ec;
        if (!r.entry || r.entry->flags != semaphore_flag_value)
            co_return error_code{};
        auto record = semaphore_record::decode(r.entry->value, sem->limit);
        if (!record || record->holders.erase(session) == 0)
            co_return error_code{};
        std::vector<txn_op> ops{txn_op::cas(sem->lock_key, record->encode(), r.entry->modify_index,
                                            semaphore_flag_value)};
        auto top = sem->consul.async_txn(std::move(ops), txn_options{}, asio::deferred);
        auto [tec, t] = co_await detail::with_deadline<txn_result>(std::move(top), deadline);
        if (tec)
            co_return tec;
        if (t.committed)
            co_return error_code{};
        // Lost a CAS race with another participant: read again, a little later.
        co_await detail::sleep_for(race.next(), deadline);
    }
    co_return make_error_code(errc::timeout);
}

asio::awaitable<error_code> delete_contender(std::shared_ptr<semaphore_state> sem,
                                             std::string session, clock::time_point deadline) {
    auto op = sem->consul.async_kv_delete(sem->contender_key(session), kv_delete_options{},
                                          asio::deferred);
    auto [ec, ok] = co_await detail::with_deadline<bool>(std::move(op), deadline);
    (void)ok;
    co_return ec;
}

using acquire_result = std::pair<error_code, std::optional<permit>>;

asio::awaitable<acquire_result> acquire_loop(std::shared_ptr<semaphore_state> sem,
                                             std::shared_ptr<session_state> s, deadline_t deadline,
                                             diagnostics* diag) {
    acquire_result result;
    bool contender_sent = false;
    bool maybe_holder = false; // a CAS adding us was sent and its outcome is unknown
    bool cancelled = false;
    try {
        // 1. Our contender key: it is what keeps us "alive" in the eyes of other holders.
        contender_sent = true;
        auto put = sem->consul.async_kv_put(
            sem->contender_key(s->id), sem->opts.value,
            kv_put_options{}.with_acquire(s->id).with_flags(semaphore_flag_value), asio::deferred);
        auto [pec, made] = co_await detail::with_optional_deadline<bool>(std::move(put), deadline);
        if (pec || !made) {
            if (!past(deadline))
                result.first = pec ? pec : make_error_code(errc::conflict);
        } else {
            std::uint64_t index = 0;
            clock::duration backoff = std::chrono::milliseconds{50};
            cas_race_backoff race;
            for (;;) {
                if (s->check(clock::now())) {
                    result.first = s->lost;
                    break;
                }
                if (past(deadline))
                    break;
                auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(
                    s->policy.deadline() - clock::now());
                if (deadline)
                    wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(
                                              *deadline - clock::now()));
                wait = std::clamp(wait, std::chrono::milliseconds{1}, sem->opts.wait);
                auto [ec, view] = co_await read_prefix(sem, index, wait, deadline);
                if (ec) {
                    if (past(deadline))
                        break;
                    if (!is_retryable(ec)) {
                        result.first = ec;
                        break;
                    }
                    co_await detail::sleep_for(backoff, deadline);
                    backoff = std::min<clock::duration>(backoff * 2, std::chrono::seconds{2});
                    index = 0;
                    continue;
                }
                backoff = std::chrono::milliseconds{50};
                auto r = interpret(*sem, view, diag);
                if (r.ec) {
                    result.first = r.ec;
                    break;
                }
                maybe_holder = false; // the read says where we stand
                if (r.record.holders.count(s->id)) {
                    // Already a holder (an earlier attempt of ours was applied).
                    fencing_token t{sem->lock_key, s->id, 0, r.lock_modify_index};
                    result.second = detail::permit_factory::make(
                        std::make_shared<permit_state>(sem, s, std::move(t)));
                    break;
                }
                if (r.record.holders.size() >= sem->limit) {
                    // Full: block on the prefix until something changes.
                    index = view.index < index ? 0 : view.index;
                    continue;
                }
                r.record.holders.insert(s->id);
                std::vector<txn_op> ops{txn_op::cas(sem->lock_key, r.record.encode(),
                                                    r.lock_modify_index, semaphore_flag_value),
                                        txn_op::get(sem->lock_key)};
                maybe_holder = true;
                auto op = sem->consul.async_txn(std::move(ops), txn_options{}, asio::deferred);
                auto [tec, t] =
                    co_await detail::with_optional_deadline<txn_result>(std::move(op), deadline);
                if (tec) {
                    if (past(deadline) || !is_retryable(tec)) {
                        if (!past(deadline))
                            result.first = tec;
                        break;
                    }
                    index = 0; // read again: it tells whether the CAS was applied
                    continue;
                }
                if (t.committed && !t.results.empty()) {
                    maybe_holder = false;
                    fencing_token tok{sem->lock_key, s->id, 0, t.results.back().modify_index};
                    result.second = detail::permit_factory::make(
                        std::make_shared<permit_state>(sem, s, std::move(tok)));
                    break;
                }
                maybe_holder = false;
                index = 0; // lost a CAS race: read again, a little later
                co_await detail::sleep_for(race.next(), deadline);
            }
        }
    } catch (const boost::system::system_error& e) {
        if (e.code() != asio::error::operation_aborted)
            throw;
        cancelled = true;
    }
    if (!result.second) {
        // No permit: leave no trace (holder entry, contender key), bounded.
        co_await asio::this_coro::throw_if_cancelled(false);
        co_await asio::this_coro::reset_cancellation_state();
        const auto until = clock::now() + sem->opts.cleanup_timeout;
        if (maybe_holder)
            co_await leave_holders(sem, s->id, until);
        if (contender_sent)
            co_await delete_contender(sem, s->id, until);
    }
    if (cancelled)
        result = {asio::error::operation_aborted, std::nullopt};
    co_return result;
}

asio::awaitable<error_code> watch_permit(std::shared_ptr<permit_state> P) {
    auto& sem = P->sem;
    std::uint64_t index = P->token.modify_index;
    unsigned failures = 0;
    for (;;) {
        auto [ec, view] = co_await read_prefix(sem, index, sem->opts.wait, std::nullopt);
        if (ec) {
            if (++failures > sem->opts.monitor_retries)
                co_return make_error_code(errc::lock_lost);
            co_await detail::sleep_for(sem->opts.monitor_retry_wait);
            index = 0;
            continue;
        }
        failures = 0;
        auto r = interpret(*sem, view, nullptr);
        if (r.ec || !r.record.holders.count(P->token.session))
            co_return make_error_code(errc::lock_lost);
        index = view.index < index ? 0 : view.index;
    }
}

asio::awaitable<error_code> release(std::shared_ptr<permit_state> P) {
    if (P->released)
        co_return error_code{};
    const auto until = clock::now() + P->sem->consul.config().request_timeout;
    if (auto ec = co_await leave_holders(P->sem, P->token.session, until))
        co_return ec;
    if (auto ec = co_await delete_contender(P->sem, P->token.session, until))
        co_return ec;
    P->released = true;
    P->mark_lost(make_error_code(errc::lock_lost));
    co_return error_code{};
}

asio::awaitable<error_code> destroy(std::shared_ptr<semaphore_state> sem) {
    auto [ec, view] = co_await read_prefix(sem, 0, {}, std::nullopt);
    if (ec)
        co_return ec;
    if (!view.lock)
        co_return error_code{};
    auto r = interpret(*sem, view, nullptr);
    if (r.ec)
        co_return r.ec;
    if (!r.record.holders.empty())
        co_return make_error_code(errc::conflict); // Go: ErrSemaphoreInUse
    auto [dec, deleted] = co_await sem->consul.async_kv_delete(
        sem->lock_key, kv_delete_options{}.with_cas(r.lock_modify_index), use_tuple);
    if (dec)
        co_return dec;
    co_return deleted ? error_code{} : make_error_code(errc::conflict);
}

asio::awaitable<std::pair<error_code, permit>>
acquire(std::shared_ptr<semaphore_state> sem, std::shared_ptr<session_state> s, diagnostics* diag) {
    auto [ec, p] = co_await acquire_loop(std::move(sem), std::move(s), std::nullopt, diag);
    if (!ec && !p)
        ec = make_error_code(errc::timeout);
    co_return std::pair<error_code, permit>{ec, p ? std::move(*p) : permit{}};
}

asio::awaitable<acquire_result> try_acquire(std::shared_ptr<semaphore_state> sem,
                                            std::shared_ptr<session_state> s,
                                            std::chrono::milliseconds budget) {
    co_return co_await acquire_loop(std::move(sem), std::move(s), clock::now() + budget, nullptr);
}

template <class State>
const std::shared_ptr<State>& require(const std::shared_ptr<State>& s, const char* what) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument), what);
    return s;
}

} // namespace

const fencing_token& permit::token() const noexcept {
    return state_->token;
}

std::optional<fencing_token> permit::held() const {
    return state_ ? state_->held() : std::nullopt;
}

void permit::wait_lost_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s, "operation on an empty conclave::permit")->sem->consul.get_executor();
    auto watch = [s] { return watch_permit(s); };
    detail::spawn_op(ex, detail::wait_grant_lost(s, watch), std::move(h));
}

void permit::release_impl(state_ptr s, asio::any_completion_handler<void(error_code)> h) {
    auto ex = require(s, "operation on an empty conclave::permit")->sem->consul.get_executor();
    detail::spawn_op(ex, release(std::move(s)), std::move(h));
}

semaphore::semaphore(client& c, std::string prefix, std::uint32_t limit, semaphore_options opts)
    : state_(std::make_shared<semaphore_state>(c, std::move(prefix), limit, std::move(opts))) {
    if (limit == 0)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "semaphore limit must be positive");
}

const std::string& semaphore::prefix() const noexcept {
    return state_->prefix;
}
std::uint32_t semaphore::limit() const noexcept {
    return state_->limit;
}

void semaphore::acquire_impl(state_ptr sem, session_ptr s, diagnostics* diag,
                             asio::any_completion_handler<void(error_code, permit)> h) {
    require(s, "semaphore acquire with an empty conclave::session");
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, acquire(std::move(sem), std::move(s), diag), std::move(h));
}

void semaphore::try_acquire_impl(
    state_ptr sem, session_ptr s, std::chrono::milliseconds budget,
    asio::any_completion_handler<void(error_code, std::optional<permit>)> h) {
    require(s, "semaphore acquire with an empty conclave::session");
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, try_acquire(std::move(sem), std::move(s), budget), std::move(h));
}

void semaphore::destroy_impl(state_ptr sem, asio::any_completion_handler<void(error_code)> h) {
    auto ex = sem->consul.get_executor();
    detail::spawn_op(ex, destroy(std::move(sem)), std::move(h));
}

} // namespace conclave
