// SPDX-License-Identifier: BSL-1.0
#include "harness/stats.hpp"
#include "tools/sync_floor.hpp"

#include <arpa/inet.h>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <string_view>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

namespace conclave::bench {

namespace {

double cpu_us() {
    return double(process_cpu_time().count());
}

std::string txn_request(const std::string& host, const std::string& token,
                        const std::string& body) {
    std::string head = "PUT /v1/txn HTTP/1.1\r\nHost: " + host + "\r\n";
    if (!token.empty())
        head += "X-Consul-Token: " + token + "\r\n";
    return head +
           "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\n\r\n" + body;
}

class blocking_connection {
public:
    explicit blocking_connection(int fd)
        : fd_(fd) {}
    ~blocking_connection() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    blocking_connection(const blocking_connection&) = delete;
    blocking_connection& operator=(const blocking_connection&) = delete;

    // Sends `request` and reads one response. On a 200, the last ModifyIndex in it (the
    // key after the transaction's write), or 0 when there is none.
    std::optional<std::uint64_t> round_trip(const std::string& request) {
        if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
            static_cast<ssize_t>(request.size()))
            return std::nullopt;
        std::size_t got = 0;
        for (;;) {
            const ssize_t n = ::recv(fd_, buf_ + got, sizeof buf_ - got, 0);
            if (n <= 0)
                return std::nullopt;
            got += std::size_t(n);
            const std::string_view in{buf_, got};
            const auto head_end = in.find("\r\n\r\n");
            if (head_end == std::string_view::npos)
                continue;
            std::size_t length = 0;
            if (const auto at = in.substr(0, head_end).find("Content-Length: ");
                at != std::string_view::npos)
                length = std::strtoul(buf_ + at + 16, nullptr, 10);
            if (got < head_end + 4 + length)
                continue;
            if (in.substr(0, 12) != "HTTP/1.1 200")
                return std::nullopt;
            const auto index = in.rfind("\"ModifyIndex\":");
            if (index == std::string_view::npos)
                return 0;
            const char* digits = buf_ + index + 14;
            while (*digits == ' ')
                ++digits;
            return std::strtoull(digits, nullptr, 10);
        }
    }

private:
    int fd_;
    char buf_[16384];
};

int connect_to(const client_config& cfg) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(cfg.host.c_str(), std::to_string(cfg.port).c_str(), &hints, &found) != 0)
        return -1;
    int fd = -1;
    for (auto* a = found; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd >= 0 && ::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    if (fd >= 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

} // namespace

struct floor_client::impl {
    blocking_connection conn;
    std::string host, token, key, session;
    std::string lock_op, release;
    std::uint64_t index = 0; // 0: the key does not exist yet

    impl(int fd, const client_config& cfg, std::string k, std::string sid)
        : conn(fd)
        , host(cfg.host + ":" + std::to_string(cfg.port))
        , token(cfg.token)
        , key(std::move(k))
        , session(std::move(sid)) {
        // The lock's transactions: check (the key as last seen) + lock, then unlock. The
        // index comes from the previous answer, as the lock's key hub learns it.
        lock_op = R"({"KV":{"Verb":"lock","Key":")" + key +
                  R"(","Value":"","Flags":3304740253564472344,"Session":")" + session + R"("}})";
        release =
            txn_request(host, token,
                        R"([{"KV":{"Verb":"unlock","Key":")" + key +
                            R"(","Flags":3304740253564472344,"Session":")" + session + R"("}}])");
    }

    bool cycle() {
        const std::string check =
            index == 0 ? R"({"KV":{"Verb":"check-not-exists","Key":")" + key + R"("}})"
                       : R"({"KV":{"Verb":"check-index","Key":")" + key + R"(","Index":)" +
                             std::to_string(index) + "}}";
        const auto locked =
            conn.round_trip(txn_request(host, token, "[" + check + "," + lock_op + "]"));
        if (!locked)
            return false;
        const auto released = conn.round_trip(release);
        if (!released)
            return false;
        index = *released;
        return true;
    }
};

floor_client::floor_client(const client_config& cfg, const std::string& key,
                           const std::string& session) {
    if (cfg.kind != client_config::transport::tcp || cfg.tls.enabled)
        return;
    const int fd = connect_to(cfg);
    if (fd < 0)
        return;
    impl_ = std::make_unique<impl>(fd, cfg, key, session);
    for (int i = 0; i < 200; ++i) // warm-up
        if (!impl_->cycle()) {
            impl_.reset();
            return;
        }
}

floor_client::~floor_client() = default;

std::optional<std::size_t> floor_client::run_for(std::chrono::nanoseconds d, std::size_t most) {
    if (!impl_)
        return std::nullopt;
    const auto until = std::chrono::steady_clock::now() + d;
    std::size_t n = 0;
    while (n < most && std::chrono::steady_clock::now() < until) {
        if (!impl_->cycle()) {
            impl_.reset();
            return std::nullopt;
        }
        ++n;
    }
    return n;
}

std::optional<sync_floor> measure_sync_floor(const client_config& cfg, const std::string& key,
                                             const std::string& session, double seconds,
                                             long cycles) {
    floor_client floor{cfg, key, session};
    const double cpu0 = cpu_us();
    const auto t0 = std::chrono::steady_clock::now();
    const auto n = floor.run_for(cycles > 0 ? std::chrono::hours{1}
                                            : std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                  std::chrono::duration<double>(seconds)),
                                 cycles > 0 ? std::size_t(cycles) : SIZE_MAX);
    if (!n || *n == 0)
        return std::nullopt;
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return sync_floor{double(*n), (cpu_us() - cpu0) / double(*n), double(*n) / secs};
}

} // namespace conclave::bench
