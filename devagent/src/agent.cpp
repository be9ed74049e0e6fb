// SPDX-License-Identifier: BSL-1.0
// conclave::dev::agent and the agent's own duties: session TTL timers, test controls.
#include "devagent/src/agent_impl.hpp"
#include "devagent/src/server/http_server.hpp"

#include <conclave/dev/agent.hpp>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

namespace conclave::dev {

namespace detail {

namespace {

// A strand, so an io_context run by several threads still runs the agent serially. A
// strand over the io_context's own executor type fits in any_io_executor's small-object
// buffer (three words), where a strand<any_io_executor> does not: every copy of the
// executor (each socket operation and its work guard takes one) then allocated.
boost::asio::any_io_executor agent_strand(boost::asio::any_io_executor executor) {
    using io_executor = boost::asio::io_context::executor_type;
    if (const auto* io = executor.target<io_executor>())
        return boost::asio::make_strand(*io);
    return boost::asio::make_strand(std::move(executor));
}

} // namespace

agent_impl::agent_impl(boost::asio::any_io_executor executor, agent_config config)
    : ex(agent_strand(std::move(executor)))
    , cfg(std::move(config))
    , state(cfg.node_name, cfg.datacenter)
    , rng(std::random_device{}()) {
    node_id = new_uuid();
    state.on_change = [this](const std::vector<std::uint64_t>& closed) { hub.notify(closed); };
    state.on_session_destroyed = [this](const std::string& id) { clear_session_timer(id); };
}

agent_impl::~agent_impl() {
    state.on_change = nullptr;
    state.on_session_destroyed = nullptr;
}

void agent_impl::start() {
    if (server)
        return;
    server = std::make_unique<http_server>(*this);
    server->start(cfg.address, cfg.port);
}

void agent_impl::stop() {
    if (stopped)
        return;
    stopped = true;
    if (server)
        server->stop();
    hub.wake_all(true);
    for (auto& [id, t] : ttl_timers_)
        t.timer->cancel();
    ttl_timers_.clear();
    clear_checks();
}

std::uint16_t agent_impl::port() const {
    return server ? server->port() : 0;
}

std::string agent_impl::new_uuid() {
    static constexpr const char* hex = "0123456789abcdef";
    std::string out;
    out.reserve(36);
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out += '-';
        const auto b = static_cast<unsigned>(rng() & 0xFF);
        out += hex[b >> 4];
        out += hex[b & 0xF];
    }
    return out;
}

void agent_impl::arm_session_timer(const std::string& id, std::chrono::nanoseconds ttl) {
    if (stopped)
        return;
    auto& slot = ttl_timers_[id];
    if (!slot.timer)
        slot.timer = std::make_unique<boost::asio::steady_timer>(ex);
    slot.generation = ++timer_generation_;
    slot.timer->expires_after(ttl * cfg.session_ttl_multiplier);
    std::weak_ptr<agent_impl> weak = weak_from_this();
    const std::uint64_t gen = slot.generation;
    slot.timer->async_wait([weak, id, gen](const boost::system::error_code& ec) {
        if (ec)
            return;
        auto self = weak.lock();
        if (!self || self->stopped)
            return;
        auto it = self->ttl_timers_.find(id);
        if (it == self->ttl_timers_.end() || it->second.generation != gen)
            return;
        self->expire_session(id);
    });
}

void agent_impl::clear_session_timer(const std::string& id) {
    auto it = ttl_timers_.find(id);
    if (it == ttl_timers_.end())
        return;
    it->second.timer->cancel();
    ttl_timers_.erase(it);
}

bool agent_impl::expire_session(const std::string& id) {
    if (state.session_get(id, nullptr).session == nullptr) {
        clear_session_timer(id);
        return false;
    }
    state.session_destroy(id, std::chrono::steady_clock::now());
    clear_session_timer(id);
    return true;
}

void agent_impl::reset_state() {
    for (auto& [id, t] : ttl_timers_)
        t.timer->cancel();
    ttl_timers_.clear();
    clear_checks();
    state.reset();
    hub.wake_all(true);
}

const injection* agent_impl::take_injection(std::string_view path) {
    for (auto it = injections.begin(); it != injections.end(); ++it) {
        if (path.substr(0, it->prefix.size()) != it->prefix)
            continue;
        last_injection_ = *it;
        if (--it->remaining == 0)
            injections.erase(it);
        return &last_injection_;
    }
    return nullptr;
}

} // namespace detail

agent::agent(asio::any_io_executor ex, agent_config cfg)
    : impl_(std::make_shared<detail::agent_impl>(std::move(ex), std::move(cfg))) {}

agent::~agent() {
    if (impl_)
        impl_->stop();
}

void agent::start() {
    impl_->start();
}
void agent::stop() {
    impl_->stop();
}
std::uint16_t agent::port() const {
    return impl_->port();
}

std::string agent::http_address() const {
    std::string host = impl_->cfg.address;
    if (host.find(':') != std::string::npos)
        host = "[" + host + "]";
    return host + ":" + std::to_string(port());
}

const agent_config& agent::config() const {
    return impl_->cfg;
}

agent_stats agent::stats() const {
    agent_stats s = impl_->counters;
    s.blocking_queries_waiting = impl_->hub.size();
    return s;
}

void agent::reset_stats() {
    impl_->counters.requests = 0;
    impl_->counters.connections_accepted = 0;
    impl_->counters.connections_refused = 0;
    impl_->counters.connections_timed_out = 0;
    impl_->counters.requests_rejected = 0;
    impl_->counters.internal_errors = 0;
    impl_->counters.by_endpoint.clear();
}

bool agent::force_expire_session(const std::string& id) {
    return impl_->expire_session(id);
}

void agent::inject_errors(const std::string& path_prefix, unsigned count, unsigned status) {
    if (count > 0)
        impl_->injections.push_back({path_prefix, count, status, false});
}

void agent::inject_disconnects(const std::string& path_prefix, unsigned count) {
    if (count > 0)
        impl_->injections.push_back({path_prefix, count, 500, true});
}

void agent::reset_state() {
    impl_->reset_state();
}

void agent::reap_tombstones() {
    impl_->state.reap_tombstones();
}

} // namespace conclave::dev
