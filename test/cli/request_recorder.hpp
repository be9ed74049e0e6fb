// SPDX-License-Identifier: BSL-1.0
// A stand-in for Consul that records the request lines it gets and answers each with one
// fixed reply, on a thread of its own: for what only the request shows (query parameters
// such as ?stale, which a single-server Consul answers the same either way).
#pragma once

#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace conclave::test::cli {

class request_recorder {
public:
    /// Answers every request with 200, `body` (JSON) and X-Consul-Index: 1, then closes
    /// the connection.
    explicit request_recorder(std::string body);
    ~request_recorder();
    request_recorder(const request_recorder&) = delete;
    request_recorder& operator=(const request_recorder&) = delete;

    /// "127.0.0.1:PORT".
    std::string address() const;
    /// The request lines so far ("GET /v1/kv/k?stale HTTP/1.1").
    std::vector<std::string> requests() const;

private:
    void serve();

    std::string body_;
    int listener_ = -1;
    int port_ = 0;
    mutable std::mutex mutex_;
    std::vector<std::string> requests_;
    std::thread thread_;
};

} // namespace conclave::test::cli
