// SPDX-License-Identifier: BSL-1.0
#include "cli/common/failure.hpp"
#include "cli/lock/holder.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>
#include <cstdint>
#include <exception>
#include <optional>
#include <tuple>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
// `consul lock -monitor-retry`: retries are 1 s apart.
constexpr std::chrono::milliseconds monitor_retry_wait{1000};

// The grant's side of lock_holder, alike for a lock's lease, a semaphore's permit and a
// read-write lock's lease. `Holder` (CRTP) has grant_ (the lease or permit) and recipe_
// (the lock, semaphore or read-write lock), declared in the order their lifetimes need.
template <class Holder>
class grant_holder : public lock_holder {
public:
    asio::awaitable<error_code> wait_lost() override {
        auto [ec] = co_await self().grant_.async_wait_lost(tuple_awaitable);
        co_return ec;
    }
    bool held() const override { return self().grant_.valid() && self().grant_.held().has_value(); }
    const fencing_token& token() const override { return self().grant_.token(); }
    asio::awaitable<std::tuple<error_code, hold_health>>
    wait_health_change(hold_health seen) override {
        co_return co_await self().grant_.async_wait_health_change(seen, tuple_awaitable);
    }
    std::chrono::steady_clock::duration remaining() const override {
        return self().grant_.remaining();
    }
    asio::awaitable<error_code> release() override {
        auto [ec] = co_await self().grant_.async_release(tuple_awaitable);
        co_return ec;
    }

private:
    Holder& self() { return static_cast<Holder&>(*this); }
    const Holder& self() const { return static_cast<const Holder&>(*this); }
};

// lock_holder::destroy() of a lock or a semaphore: the recipe's own.
template <class Recipe>
asio::awaitable<error_code> destroy_recipe(Recipe& recipe) {
    auto [ec] = co_await recipe.async_destroy(tuple_awaitable);
    co_return ec;
}

class key_lock final : public grant_holder<key_lock> {
public:
    key_lock(client& c, std::string key, unsigned monitor_retries)
        : recipe_(c, std::move(key),
                  lock_options{}.with_monitor_retries(monitor_retries, monitor_retry_wait)) {}

    asio::awaitable<error_code> acquire(session& s) override {
        auto [failed, lease] = co_await recipe_.async_acquire(s, with_text);
        auto f = failure_of(failed);
        if (!f)
            grant_ = std::move(lease);
        failure_text_ = std::move(f.text);
        co_return f.ec;
    }
    asio::awaitable<error_code> destroy() override { return destroy_recipe(recipe_); }
    std::string key() const override { return recipe_.key(); }
    std::string describe(const error_code& ec) const override {
        if (ec == errc::conflict)
            return "Existing key does not match lock use";
        return failure_text_.empty() ? ec.message() : failure_text_;
    }

private:
    friend class grant_holder<key_lock>;
    lock recipe_;
    lock_lease grant_;
    std::string failure_text_; ///< of the last acquire
};

class semaphore_slot final : public grant_holder<semaphore_slot> {
public:
    semaphore_slot(client& c, std::string prefix, unsigned limit, unsigned monitor_retries)
        : recipe_(c, std::move(prefix), limit,
                  semaphore_options{}
                      .with_monitor_retries(monitor_retries, monitor_retry_wait)
                      .with_diag(&diag_)) {}

    asio::awaitable<error_code> acquire(session& s) override {
        auto [ec, p] = co_await recipe_.async_acquire(s, tuple_awaitable);
        if (!ec)
            grant_ = std::move(p);
        co_return ec;
    }
    asio::awaitable<error_code> destroy() override { return destroy_recipe(recipe_); }
    std::string key() const override { return recipe_.prefix() + "/.lock"; }
    std::string describe(const error_code& ec) const override {
        if (ec == errc::limit_conflict && !diag_.client_message.empty())
            return diag_.client_message;
        if (ec == errc::conflict)
            return "Existing key does not match semaphore use";
        return conclave::error(ec, diag_).what();
    }

private:
    friend class grant_holder<semaphore_slot>;
    diagnostics diag_; ///< of the last acquire (before recipe_, which points at it)
    semaphore recipe_;
    permit grant_;
};

// A read (-shared) or write (-exclusive) grant of the read-write lock at `<prefix>`. Its
// keys are `<prefix>/.rwlock/<session>.<n>`, one per acquire (deleted by its release or
// with its session), and `<prefix>/.rwlock`, which every acquire rewrites and destroy()
// deletes when no contender key is left.
class rw_grant final : public grant_holder<rw_grant> {
public:
    rw_grant(client& c, std::string prefix, bool write, unsigned monitor_retries, std::string value)
        : consul_(c)
        , recipe_(c, std::move(prefix),
                  read_write_lock_options{}
                      .with_value(std::move(value))
                      .with_monitor_retries(monitor_retries, monitor_retry_wait))
        , write_(write) {}

    asio::awaitable<error_code> acquire(session& s) override {
        std::exception_ptr failed;
        read_write_lease lease;
        // (Two statements, no conditional operator around the co_awaits: g++ 12.)
        if (write_)
            std::tie(failed, lease) = co_await recipe_.async_acquire_write(s, with_text);
        else
            std::tie(failed, lease) = co_await recipe_.async_acquire_read(s, with_text);
        auto f = failure_of(failed);
        if (!f)
            grant_ = std::move(lease);
        failure_text_ = std::move(f.text);
        conflict_text_ = std::move(f.client_message);
        co_return f.ec;
    }
    // The sequence key, when nothing but it is left under the prefix: a compare-and-set
    // delete at the index read, so that an acquire that came meanwhile (it rewrites the
    // sequence key in the transaction that writes its contender key) keeps it.
    asio::awaitable<error_code> destroy() override {
        const std::string sequence = recipe_.key() + "/.rwlock";
        auto [ec, listed] =
            co_await consul_.async_kv_list(sequence, query_options{}, tuple_awaitable);
        if (ec)
            co_return ec;
        std::optional<std::uint64_t> index;
        for (const auto& e : listed.entries) {
            if (e.key == sequence)
                index = e.modify_index;
            else if (e.key.starts_with(sequence + "/"))
                co_return make_error_code(errc::conflict); // a contender: held or waited for
        }
        if (!index)
            co_return error_code{};
        auto [del_ec, deleted] = co_await consul_.async_kv_delete(
            sequence, kv_delete_options{}.with_cas(*index), tuple_awaitable);
        if (del_ec)
            co_return del_ec;
        co_return deleted ? error_code{} : make_error_code(errc::conflict);
    }
    std::string key() const override { return recipe_.key(); }
    std::string describe(const error_code& ec) const override {
        if (ec == errc::conflict)
            return "Existing key does not match read-write lock use" +
                   (conflict_text_.empty() ? std::string() : " (" + conflict_text_ + ")");
        return failure_text_.empty() ? ec.message() : failure_text_;
    }

private:
    friend class grant_holder<rw_grant>;
    client consul_; ///< (a handle: a copy shares the connection pool)
    read_write_lock recipe_;
    read_write_lease grant_;
    bool write_;
    std::string failure_text_;  ///< of the last acquire
    std::string conflict_text_; ///< which key is in the way, when it was errc::conflict
};

} // namespace

std::unique_ptr<lock_holder> make_lock_holder(client& c, const std::string& prefix, lock_mode mode,
                                              unsigned limit, unsigned monitor_retries,
                                              const std::string& value) {
    if (mode != lock_mode::plain)
        return std::make_unique<rw_grant>(c, prefix, mode == lock_mode::exclusive, monitor_retries,
                                          value);
    if (limit == 1)
        return std::make_unique<key_lock>(c, prefix + "/.lock", monitor_retries);
    return std::make_unique<semaphore_slot>(c, prefix, limit, monitor_retries);
}

} // namespace conclave::cli
