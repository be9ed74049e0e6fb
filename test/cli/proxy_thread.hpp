// SPDX-License-Identifier: BSL-1.0
// A fault proxy (support/fault_proxy.hpp) in front of the test's server, served by a thread
// of its own so that the conclave processes reach it while the test blocks.
#pragma once

#include "support/fault_proxy.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <memory>
#include <string>
#include <thread>

namespace conclave::test::cli {

class proxy_thread {
public:
    /// `upstream` is "host:port".
    explicit proxy_thread(const std::string& upstream);
    ~proxy_thread();
    proxy_thread(const proxy_thread&) = delete;
    proxy_thread& operator=(const proxy_thread&) = delete;

    std::string address() const { return proxy_->http_address(); }

    /// From now on every request fails with 500, and the requests under way (blocking
    /// reads) are cut off, as when the servers lose their quorum.
    void fail_everything();
    /// The next `count` requests whose path starts with `path_prefix` fail with 500
    /// (fault_proxy::inject_errors).
    void fail_next(const std::string& path_prefix, unsigned count);
    /// From now on the responses to blocking reads (`?index=N`) of paths that start with
    /// `path_prefix` are held, never sent: as a Consul whose blocking query has not fired.
    void hold_blocking_reads(const std::string& path_prefix);
    /// Blocking reads forwarded and not answered yet.
    std::size_t blocking_reads_waiting();

private:
    boost::asio::io_context ioc_;
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
    std::unique_ptr<fault_proxy> proxy_;
    std::thread thread_;
};

} // namespace conclave::test::cli
