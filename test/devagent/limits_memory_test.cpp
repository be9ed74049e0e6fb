// SPDX-License-Identifier: BSL-1.0
// The dev agent's memory under load (docs/dev-agent.md, "Limits"): memory stays bounded
// under a flood of large requests, parked blocking queries included.
#include "limits_support.hpp"

#include <boost/asio/detached.hpp>

#include <fstream>
#include <memory>

using namespace conclave::test;
using namespace conclave::test::limits;
using namespace std::chrono_literals;
namespace asio = boost::asio;
namespace dev = conclave::dev;

namespace {

/// Whether this process's RSS measures what the agent holds. Under AddressSanitizer it does
/// not: freed blocks wait in its quarantine (up to 256 MB) and every block has red zones, so
/// the memory bounds are checked in the builds without it (the default preset); the
/// sanitizers still check these tests' paths for memory errors.
/// (g++ says AddressSanitizer with __SANITIZE_ADDRESS__, clang with __has_feature.)
#if defined(__SANITIZE_ADDRESS__)
constexpr bool rss_is_meaningful = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool rss_is_meaningful = false;
#else
constexpr bool rss_is_meaningful = true;
#endif
#else
constexpr bool rss_is_meaningful = true;
#endif

/// "VmRSS" or "VmHWM" of this process, in bytes.
std::size_t memory_status(std::string_view field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.starts_with(field))
            return std::stoull(line.substr(field.size() + 1)) * 1024;
    return 0;
}

/// Restarts VmHWM from the current RSS; false where the kernel does not allow it.
bool reset_peak_memory() {
    std::ofstream out("/proc/self/clear_refs");
    out << "5";
    out.flush();
    return bool(out);
}

constexpr std::size_t MiB = 1 << 20;
} // namespace

TEST_CASE("parked blocking queries keep nothing of their large heads and bodies",
          "[agent][limits][memory]") {
    // Each head is ~900 KB (legal), and so is each body (within max_body_bytes; a GET's is
    // read, then ignored); once parsed, the connection holds its request's path and query,
    // not its head (no parser fields, a read buffer back to its usual size) nor its body.
    dev::agent_config cfg = test_agent_config();
    cfg.request_memory_limit = 0; // (this is not about the budget)
    agent_fixture f(cfg);
    run(
        f.ioc,
        [](agent_fixture& f) -> asio::awaitable<void> {
            const auto ex = co_await asio::this_coro::executor;
            const std::string head = large_head("/v1/kv/parked?index=1000000&wait=60s", 900000,
                                                "Content-Length: 900000\r\n") +
                                     std::string(900000, 'b');
            constexpr std::size_t count = 24;
            std::vector<std::unique_ptr<raw_conn>> conns;
            const std::size_t before = memory_status("VmRSS:");
            for (std::size_t i = 0; i < count; ++i) {
                conns.push_back(std::make_unique<raw_conn>(ex));
                {
                    const bool ok12_ = co_await conns.back()->connect(f.port());
                    REQUIRE(ok12_);
                }
                {
                    const bool ok13_ = co_await conns.back()->send(head);
                    REQUIRE(ok13_);
                }
                co_await until_blocked(f.agent, i + 1, 20000ms);
            }
            const std::size_t after = memory_status("VmRSS:");
            const double grown = double(after > before ? after - before : 0) / MiB;
            INFO("RSS grew by " << grown << " MiB for " << count
                                << " parked queries, 900 KB heads and bodies");
            if (rss_is_meaningful)
                CHECK(grown < 16);
        }(f),
        60s);
}

TEST_CASE("a flood of large request heads stays within request_memory_limit",
          "[agent][limits][memory]") {
    dev::agent_config cfg = test_agent_config();
    cfg.request_memory_limit = 16 * MiB;
    agent_fixture f(cfg);
    run(
        f.ioc,
        [](agent_fixture& f) -> asio::awaitable<void> {
            const auto ex = co_await asio::this_coro::executor;
            // The senders run detached: they own what they use (this frame may end first,
            // should a wait below throw).
            const auto head = std::make_shared<const std::string>(
                large_head("/v1/kv/flood?index=1000000&wait=60s", 900000));
            const auto sent = std::make_shared<std::size_t>(0);
            constexpr std::size_t count = 64;
            std::vector<std::shared_ptr<raw_conn>> conns;
            for (std::size_t i = 0; i < count; ++i) {
                conns.push_back(std::make_shared<raw_conn>(ex));
                {
                    const bool ok14_ = co_await conns.back()->connect(f.port());
                    REQUIRE(ok14_);
                }
            }
            if (!reset_peak_memory()) {
                WARN("cannot reset VmHWM (/proc/self/clear_refs): peak not measured");
                co_return;
            }
            const std::size_t before = memory_status("VmRSS:");
            // All at once; each head either parks its query or is refused with a 431.
            for (const auto& c : conns)
                asio::co_spawn(
                    ex,
                    [](std::shared_ptr<raw_conn> c, std::shared_ptr<const std::string> head,
                       std::shared_ptr<std::size_t> sent) -> asio::awaitable<void> {
                        co_await c->send(*head);
                        ++*sent;
                    }(c, head, sent),
                    asio::detached);
            co_await until(
                [&] {
                    const auto s = f.agent.stats();
                    return s.blocking_queries_waiting + s.requests_rejected == count;
                },
                40000ms);
            const std::size_t peak = memory_status("VmHWM:");
            const double grown = double(peak > before ? peak - before : 0) / MiB;
            INFO("peak RSS grew by " << grown << " MiB; " << f.agent.stats().requests_rejected
                                     << " of " << count << " heads refused");
            // The budget, the 64 KiB each connection may hold beyond it, and slack.
            if (rss_is_meaningful)
                CHECK(grown < 16 + 4 + 16);
            CHECK(f.agent.stats().internal_errors == 0);
            co_await until([&] { return *sent == count; });
        }(f),
        60s);
}

TEST_CASE("parked blocking queries with large targets stay within request_memory_limit",
          "[agent][limits][memory]") {
    // A ~900 KB target (legal) is kept by a parked query as its raw query and its parsed
    // query: it counts against the budget for the whole wait. Beyond the budget: 431.
    dev::agent_config cfg = test_agent_config();
    cfg.request_memory_limit = 16 * MiB;
    agent_fixture f(cfg);
    run(
        f.ioc,
        [](agent_fixture& f) -> asio::awaitable<void> {
            const auto ex = co_await asio::this_coro::executor;
            const std::string request =
                "GET /v1/kv/target?index=1000000&wait=60s&pad=" + std::string(900000, 'p') +
                " HTTP/1.1\r\nHost: a\r\n\r\n";
            constexpr std::size_t count = 48;
            std::vector<std::unique_ptr<raw_conn>> conns;
            const std::size_t before = memory_status("VmRSS:");
            for (std::size_t i = 0; i < count; ++i) {
                conns.push_back(std::make_unique<raw_conn>(ex));
                {
                    const bool ok = co_await conns.back()->connect(f.port());
                    REQUIRE(ok);
                }
                co_await conns.back()->send(request);
                // Parked, or refused.
                co_await until(
                    [&] {
                        const auto s = f.agent.stats();
                        return s.blocking_queries_waiting + s.requests_rejected == i + 1;
                    },
                    20000ms);
            }
            const std::size_t after = memory_status("VmRSS:");
            const double grown = double(after > before ? after - before : 0) / MiB;
            const auto stats = f.agent.stats();
            INFO("RSS grew by " << grown << " MiB; " << stats.blocking_queries_waiting
                                << " parked, " << stats.requests_rejected << " refused");
            // The budget, the 64 KiB each connection may hold beyond it, and slack.
            if (rss_is_meaningful)
                CHECK(grown < 16 + 4 + 16);
            CHECK(stats.blocking_queries_waiting > 0);
            CHECK(stats.requests_rejected > 0);
            CHECK(stats.internal_errors == 0);
            // A refused one got Go's 431.
            const raw_conn::ending refused = co_await conns.back()->read_until_close();
            CHECK(refused.bytes == "HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                   "Content-Type: text/plain; charset=utf-8\r\n"
                                   "Connection: close\r\n\r\n"
                                   "431 Request Header Fields Too Large");
        }(f),
        60s);
}
