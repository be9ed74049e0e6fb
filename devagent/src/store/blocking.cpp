// SPDX-License-Identifier: BSL-1.0
#include "codec/go/duration.hpp"
#include "codec/go/quote.hpp"
#include "codec/go/strconv.hpp"
#include "devagent/src/store/blocking.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>

namespace conclave::dev::detail {

namespace asio = boost::asio;

namespace {

// Sets `out` from ?<name>= as `parse` reads it (a Go parser: an empty value when the text is
// not one); false for a value that does not parse. Absent or empty: `out` stays.
template <class T, class Parse>
bool read_param(const query_params& q, const char* name, T& out, Parse parse) {
    const std::string text = q.get(name);
    if (text.empty())
        return true;
    const auto parsed = parse(text);
    if (!parsed.value)
        return false;
    out = *parsed.value;
    return true;
}

} // namespace

query_opts_parse parse_query_opts(const query_params& q) {
    query_opts_parse r;
    r.opts.stale = q.has("stale");
    r.opts.consistent = q.has("consistent");
    const bool cached = q.has("cached");
    if (const std::string max_stale = q.get("max_stale"); !max_stale.empty()) {
        const auto d = codec::go::parse_duration(max_stale);
        if (!d.value) {
            r.error = "Invalid max_stale value " + codec::go::quote(max_stale);
            return r;
        }
        if (d.value->count() > 0)
            r.opts.stale = true;
    }
    if (r.opts.stale && r.opts.consistent) {
        r.error = "Cannot specify ?stale with ?consistent, conflicting semantics.";
        return r;
    }
    if (cached && r.opts.consistent) {
        r.error = "Cannot specify ?cached with ?consistent, conflicting semantics.";
        return r;
    }
    if (!read_param(q, "wait", r.opts.wait, [](auto t) { return codec::go::parse_duration(t); })) {
        r.error = "Invalid wait time";
        return r;
    }
    if (!read_param(q, "index", r.opts.min_index,
                    [](auto t) { return codec::go::parse_uint(t); })) {
        r.error = "Invalid index";
        return r;
    }
    return r;
}

std::chrono::nanoseconds query_timeout(std::chrono::nanoseconds wait, std::mt19937_64& rng) {
    std::chrono::nanoseconds t = wait;
    if (t > max_query_time)
        t = max_query_time;
    else if (t.count() <= 0)
        t = default_query_time;
    const std::int64_t span = t.count() / 16;
    if (span > 0)
        t += std::chrono::nanoseconds(std::int64_t(rng() % std::uint64_t(span)));
    return t;
}

void watch_hub::add(waiter* w, const watch_set& channels) {
    waiters_.insert(w);
    for (const auto ch : channels)
        by_channel_.emplace(ch, w);
}

void watch_hub::remove(waiter* w, const watch_set& channels) {
    waiters_.erase(w);
    for (const auto ch : channels) {
        auto [first, last] = by_channel_.equal_range(ch);
        for (auto it = first; it != last;) {
            if (it->second == w)
                it = by_channel_.erase(it);
            else
                ++it;
        }
    }
}

void watch_hub::notify(const std::vector<std::uint64_t>& closed) {
    std::vector<waiter*> wake;
    for (const auto ch : closed) {
        auto [first, last] = by_channel_.equal_range(ch);
        for (auto it = first; it != last; ++it)
            wake.push_back(it->second);
    }
    std::sort(wake.begin(), wake.end());
    wake.erase(std::unique(wake.begin(), wake.end()), wake.end());
    for (waiter* w : wake)
        w->wake(false);
}

void watch_hub::wake_all(bool reset) {
    const std::vector<waiter*> all(waiters_.begin(), waiters_.end());
    for (waiter* w : all)
        w->wake(reset);
}

namespace {

class timer_waiter final : public watch_hub::waiter {
public:
    explicit timer_waiter(const asio::any_io_executor& ex)
        : timer(ex) {}

    void wake(bool r) override {
        fired = true;
        reset = reset || r;
        timer.cancel();
    }

    asio::steady_timer timer;
    bool fired = false;
    bool reset = false;
    bool gone = false;
};

} // namespace

asio::awaitable<std::uint64_t> run_blocking(watch_hub& hub, std::mt19937_64& rng,
                                            disconnect_probe* probe, const query_opts& opts,
                                            const query_eval& eval) {
    if (opts.min_index == 0)
        co_return std::max<std::uint64_t>(eval(nullptr), 1);
    const auto deadline = std::chrono::steady_clock::now() + query_timeout(opts.wait, rng);
    const asio::any_io_executor ex = co_await asio::this_coro::executor;
    for (;;) {
        watch_set channels;
        const std::uint64_t index = std::max<std::uint64_t>(eval(&channels), 1);
        if (index > opts.min_index)
            co_return index;
        auto w = std::make_shared<timer_waiter>(ex);
        w->timer.expires_at(deadline);
        hub.add(w.get(), channels);
        if (probe) {
            std::function<void()> on_gone = [w] {
                w->gone = true;
                w->timer.cancel();
            };
            probe->arm(std::move(on_gone));
        }
        co_await w->timer.async_wait(asio::as_tuple(asio::use_awaitable));
        hub.remove(w.get(), channels);
        if (probe)
            probe->disarm();
        if (w->reset)
            co_return std::max<std::uint64_t>(eval(nullptr), 1);
        if (w->gone && probe)
            probe->counted_until(deadline);
        if (w->gone || !w->fired)
            co_return index; // timeout: Consul 1.8 keeps its last evaluation
    }
}

} // namespace conclave::dev::detail
