// SPDX-License-Identifier: BSL-1.0
#include "cli/common/failure.hpp"
#include "cli/lock/holder.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <chrono>

namespace conclave::cli {

namespace asio = boost::asio;

namespace {

constexpr auto tuple_awaitable = asio::as_tuple(asio::use_awaitable);
// `consul lock -monitor-retry`: retries are 1 s apart.
constexpr std::chrono::milliseconds monitor_retry_wait{1000};

class key_lock final : public lock_holder {
public:
    key_lock(client& c, std::string key, unsigned monitor_retries)
        : lock_(c, std::move(key),
                lock_options{}.with_monitor_retries(monitor_retries, monitor_retry_wait)) {}

    asio::awaitable<error_code> acquire(session& s) override {
        auto [failed, lease] = co_await lock_.async_acquire(s, with_text);
        auto f = failure_of(failed);
        if (!f)
            lease_ = std::move(lease);
        failure_text_ = std::move(f.text);
        co_return f.ec;
    }
    asio::awaitable<error_code> wait_lost() override {
        auto [ec] = co_await lease_.async_wait_lost(tuple_awaitable);
        co_return ec;
    }
    bool held() const override { return lease_.valid() && lease_.held().has_value(); }
    const fencing_token& token() const override { return lease_.token(); }
    asio::awaitable<std::tuple<error_code, hold_health>>
    wait_health_change(hold_health seen) override {
        co_return co_await lease_.async_wait_health_change(seen, tuple_awaitable);
    }
    std::chrono::steady_clock::duration remaining() const override { return lease_.remaining(); }
    asio::awaitable<error_code> release() override {
        auto [ec] = co_await lease_.async_release(tuple_awaitable);
        co_return ec;
    }
    asio::awaitable<error_code> destroy() override {
        auto [ec] = co_await lock_.async_destroy(tuple_awaitable);
        co_return ec;
    }
    std::string key() const override { return lock_.key(); }
    std::string describe(const error_code& ec) const override {
        if (ec == errc::conflict)
            return "Existing key does not match lock use";
        return failure_text_.empty() ? ec.message() : failure_text_;
    }

private:
    lock lock_;
    lock_lease lease_;
    std::string failure_text_; ///< of the last acquire
};

class semaphore_slot final : public lock_holder {
public:
    semaphore_slot(client& c, std::string prefix, unsigned limit, unsigned monitor_retries)
        : sem_(c, std::move(prefix), limit,
               semaphore_options{}
                   .with_monitor_retries(monitor_retries, monitor_retry_wait)
                   .with_diag(&diag_)) {}

    asio::awaitable<error_code> acquire(session& s) override {
        auto [ec, p] = co_await sem_.async_acquire(s, tuple_awaitable);
        if (!ec)
            permit_ = std::move(p);
        co_return ec;
    }
    asio::awaitable<error_code> wait_lost() override {
        auto [ec] = co_await permit_.async_wait_lost(tuple_awaitable);
        co_return ec;
    }
    bool held() const override { return permit_.valid() && permit_.held().has_value(); }
    const fencing_token& token() const override { return permit_.token(); }
    asio::awaitable<std::tuple<error_code, hold_health>>
    wait_health_change(hold_health seen) override {
        co_return co_await permit_.async_wait_health_change(seen, tuple_awaitable);
    }
    std::chrono::steady_clock::duration remaining() const override { return permit_.remaining(); }
    asio::awaitable<error_code> release() override {
        auto [ec] = co_await permit_.async_release(tuple_awaitable);
        co_return ec;
    }
    asio::awaitable<error_code> destroy() override {
        auto [ec] = co_await sem_.async_destroy(tuple_awaitable);
        co_return ec;
    }
    std::string key() const override { return sem_.prefix() + "/.lock"; }
    std::string describe(const error_code& ec) const override {
        if (ec == errc::limit_conflict && !diag_.client_message.empty())
            return diag_.client_message;
        if (ec == errc::conflict)
            return "Existing key does not match semaphore use";
        return conclave::error(ec, diag_).what();
    }

private:
    diagnostics diag_; ///< of the last acquire (before sem_, which points at it)
    semaphore sem_;
    permit permit_;
};

} // namespace

std::unique_ptr<lock_holder> make_lock_holder(client& c, const std::string& prefix, unsigned limit,
                                              unsigned monitor_retries) {
    if (limit == 1)
        return std::make_unique<key_lock>(c, prefix + "/.lock", monitor_retries);
    return std::make_unique<semaphore_slot>(c, prefix, limit, monitor_retries);
}

} // namespace conclave::cli
