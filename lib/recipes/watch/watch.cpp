// SPDX-License-Identifier: BSL-1.0
#include "consul/endpoint.hpp"
#include "consul/read_key.hpp"
#include "consul/spawn.hpp"
#include "recipes/common/as_terminal.hpp"
#include "recipes/watch/watch_policy.hpp"

#include <conclave/watch.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>

namespace conclave {

namespace detail {

struct watch_state {
    watch_state(client c, watch_target t, watch_options o)
        : consul(std::move(c))
        , target(std::move(t))
        , opts(std::move(o))
        , policy(opts.wait, opts.min_interval, opts.backoff, opts.max_backoff) {}

    client consul;
    watch_target target;
    watch_options opts;
    watch_policy policy;
    bool busy = false;      ///< an async_next is in progress
    bool delivered = false; ///< a snapshot was reported (entries/keys below are valid)
    std::vector<kv_entry> entries;
    std::vector<std::string> keys;
    error_code last_error;
};

} // namespace detail

using detail::watch_state;

namespace {

using clock = std::chrono::steady_clock;
using result = std::pair<error_code, watch_snapshot>;

// One reply, whatever the target kind.
struct fetched {
    error_code ec;
    std::vector<kv_entry> entries;
    std::vector<std::string> keys;
    query_meta meta;
};

asio::awaitable<fetched> fetch(std::shared_ptr<watch_state> s, diagnostics* diag) {
    query_options q;
    q.index = s->policy.query_index();
    if (q.index > 0)
        q.wait = s->opts.wait;
    q.mode = s->opts.mode;
    q.datacenter = s->opts.datacenter;
    q.diag = diag;
    const std::string path = s->target.path();
    fetched f;
    switch (s->target.what()) {
    case watch_target::kind::key: {
        auto [ec, r] = co_await detail::read_key(s->consul, detail::endpoint::kv_get{path, q});
        f.ec = ec;
        if (r.entry)
            f.entries.push_back(std::move(*r.entry));
        f.meta = r.meta;
        break;
    }
    case watch_target::kind::prefix: {
        auto [ec, r] = co_await detail::call(s->consul, detail::endpoint::kv_list{path, q});
        f.ec = ec;
        f.entries = std::move(r.entries);
        f.meta = r.meta;
        break;
    }
    case watch_target::kind::keys: {
        kv_keys_options o;
        o.query = q;
        o.separator = s->target.separator();
        auto [ec, r] = co_await detail::call(s->consul, detail::endpoint::kv_keys{path, o});
        f.ec = ec;
        f.keys = std::move(r.keys);
        f.meta = r.meta;
        break;
    }
    }
    co_return f;
}

using detail::as_terminal;

asio::awaitable<result> next(std::shared_ptr<watch_state> s, diagnostics* diag) {
    // Nothing changes before a reply has been processed, so a cancelled call leaves the
    // watch exactly as it was: every cancellation type is accepted. What is passed on to
    // the query in flight is always terminal (the client's operations act on terminal
    // cancellation), so partial and total requests interrupt it too.
    co_await asio::this_coro::reset_cancellation_state(asio::enable_total_cancellation(),
                                                       as_terminal{});
    if (s->busy)
        co_return result{make_error_code(errc::invalid_argument), {}};
    s->busy = true;
    struct not_busy {
        watch_state& s;
        ~not_busy() { s.busy = false; }
    } guard{*s};

    const auto aborted = result{asio::error::operation_aborted, {}};
    asio::steady_timer pause{co_await asio::this_coro::executor};
    for (;;) {
        if (clock::now() < s->policy.next_start()) {
            pause.expires_at(s->policy.next_start());
            auto [ec] = co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
            if (ec)
                co_return aborted; // only cancellation stops the timer
        }
        s->policy.on_start(clock::now());
        fetched f = co_await fetch(s, diag);
        const auto now = clock::now();
        if (f.ec == asio::error::operation_aborted)
            co_return aborted;
        if (f.ec) {
            s->last_error = f.ec;
            if (!s->policy.on_error(f.ec, now))
                co_return result{f.ec, {}};
            continue;
        }
        s->last_error = {};
        if (s->policy.on_reply(f.meta.index, now) == detail::watch_policy::verdict::reset)
            continue; // history replaced: re-read without blocking
        if (s->delivered && f.entries == s->entries && f.keys == s->keys)
            continue; // woken, but nothing the caller has not seen
        s->delivered = true;
        s->entries = f.entries;
        s->keys = f.keys;
        watch_snapshot snap;
        snap.entries = std::move(f.entries);
        snap.keys = std::move(f.keys);
        snap.index = std::max<std::uint64_t>(f.meta.index, 1);
        co_return result{error_code{}, std::move(snap)};
    }
}

} // namespace

watch::watch(client c, watch_target target, watch_options opts)
    : state_(std::make_shared<watch_state>(std::move(c), std::move(target), std::move(opts))) {}

watch::~watch() = default;
watch::watch(watch&&) noexcept = default;
watch& watch::operator=(watch&&) noexcept = default;

void watch::next_impl(state_ptr s, detail::diagnostics_route* route,
                      asio::any_completion_handler<void(error_code, watch_snapshot)> h) {
    if (!s)
        throw boost::system::system_error(make_error_code(errc::invalid_argument),
                                          "async_next on a moved-from conclave::watch");
    auto ex = s->consul.get_executor();
    auto* diag = detail::diagnostics_route::target(route, s->opts.diag);
    detail::spawn_op(ex, next(std::move(s), diag), std::move(h));
}

const watch_target& watch::target() const noexcept {
    return state_->target;
}
const watch_options& watch::options() const noexcept {
    return state_->opts;
}
std::uint64_t watch::index() const noexcept {
    return state_->policy.query_index();
}
unsigned watch::consecutive_failures() const noexcept {
    return state_->policy.consecutive_failures();
}
error_code watch::last_error() const noexcept {
    return state_->last_error;
}

} // namespace conclave
