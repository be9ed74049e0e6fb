// SPDX-License-Identifier: BSL-1.0
#include "cli/request_recorder.hpp"

#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <unistd.h>

namespace conclave::test::cli {

request_recorder::request_recorder(std::string body)
    : body_(std::move(body)) {
    listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listener_, 16) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::runtime_error("request_recorder: cannot listen");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
}

request_recorder::~request_recorder() {
    ::shutdown(listener_, SHUT_RDWR); // ends the accept
    thread_.join();
    ::close(listener_);
}

std::string request_recorder::address() const {
    return "127.0.0.1:" + std::to_string(port_);
}

std::vector<std::string> request_recorder::requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
}

void request_recorder::serve() {
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "X-Consul-Index: 1\r\nX-Consul-KnownLeader: true\r\n"
                              "X-Consul-LastContact: 0\r\nConnection: close\r\n"
                              "Content-Length: " +
                              std::to_string(body_.size()) + "\r\n\r\n" + body_;
    for (;;) {
        const int conn = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0)
            return;
        std::string head;
        char buf[4096];
        while (head.find("\r\n\r\n") == std::string::npos) {
            const auto n = ::read(conn, buf, sizeof buf);
            if (n <= 0)
                break;
            head.append(buf, static_cast<std::size_t>(n));
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            requests_.push_back(head.substr(0, head.find("\r\n")));
        }
        for (std::size_t done = 0; done < reply.size();) {
            const auto n = ::write(conn, reply.data() + done, reply.size() - done);
            if (n <= 0)
                break;
            done += static_cast<std::size_t>(n);
        }
        ::close(conn);
    }
}

} // namespace conclave::test::cli
