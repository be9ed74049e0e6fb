// SPDX-License-Identifier: BSL-1.0
#include "cli/proxy_thread.hpp"

#include <boost/asio/post.hpp>

#include <future>

namespace conclave::test::cli {

namespace asio = boost::asio;

proxy_thread::proxy_thread(const std::string& upstream)
    : work_(ioc_.get_executor()) {
    const auto colon = upstream.rfind(':');
    proxy_ = std::make_unique<fault_proxy>(
        ioc_.get_executor(), upstream.substr(0, colon),
        static_cast<std::uint16_t>(std::stoi(upstream.substr(colon + 1))));
    proxy_->start();
    thread_ = std::thread([this] { ioc_.run(); });
}

proxy_thread::~proxy_thread() {
    asio::post(ioc_, [this] {
        proxy_->stop();
        work_.reset();
    });
    thread_.join();
}

void proxy_thread::fail_everything() {
    std::promise<void> done;
    asio::post(ioc_, [&] {
        proxy_->inject_errors("/v1/", 1'000'000, 500);
        proxy_->drop_connections();
        done.set_value();
    });
    done.get_future().get();
}

void proxy_thread::fail_next(const std::string& path_prefix, unsigned count) {
    std::promise<void> done;
    asio::post(ioc_, [&] {
        proxy_->inject_errors(path_prefix, count, 500);
        done.set_value();
    });
    done.get_future().get();
}

void proxy_thread::hold_blocking_reads(const std::string& path_prefix) {
    std::promise<void> done;
    asio::post(ioc_, [&] {
        proxy_->hold_responses(path_prefix, fault_proxy::path_match::prefix, true);
        done.set_value();
    });
    done.get_future().get();
}

std::size_t proxy_thread::blocking_reads_waiting() {
    std::promise<std::size_t> count;
    asio::post(ioc_, [&] { count.set_value(proxy_->stats().blocking_queries_waiting); });
    return count.get_future().get();
}

} // namespace conclave::test::cli
