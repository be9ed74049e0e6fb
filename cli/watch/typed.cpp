// SPDX-License-Identifier: BSL-1.0
#include "cli/common/child_control.hpp"
#include "cli/common/kv_json.hpp"
#include "cli/common/startup_check.hpp"
#include "cli/exit_codes.hpp"
#include "cli/watch/states.hpp"
#include "cli/watch/typed.hpp"
#include "process/exit_wait.hpp"
#include "process/wait_status.hpp"

#include <boost/asio/experimental/awaitable_operators.hpp>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <sys/mman.h>
#include <sys/wait.h>
#include <system_error>
#include <unistd.h>

namespace conclave::cli {

namespace asio = boost::asio;
using namespace asio::experimental::awaitable_operators;

namespace {

// A closed-on-exit file holding `text`, read from its start: the handler's stdin. (Not a
// pipe: a handler that reads nothing cannot block conclave, whatever the size.)
struct memory_file {
    int fd = -1;
    explicit memory_file(const std::string& text) {
        fd = ::memfd_create("conclave-watch", MFD_CLOEXEC);
        if (fd < 0)
            throw std::system_error(errno, std::generic_category(), "memfd_create");
        for (std::size_t done = 0; done < text.size();) {
            const auto n = ::write(fd, text.data() + done, text.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                throw std::system_error(errno, std::generic_category(), "write");
            done += static_cast<std::size_t>(n);
        }
        ::lseek(fd, 0, SEEK_SET);
    }
    ~memory_file() { ::close(fd); }
    memory_file(const memory_file&) = delete;
    memory_file& operator=(const memory_file&) = delete;
};

struct handler_outcome {
    int exit = exit_code::ok;
    bool stop = false; ///< interrupted or failed: the watch ends with `exit`
};

// Runs the handler once with `json` on stdin and CONSUL_INDEX in its environment, as
// consul watch does, and waits for it; a SIGINT/SIGTERM meanwhile goes to it (stop_child).
asio::awaitable<handler_outcome> run_handler(const typed_watch_settings& cfg,
                                             const std::string& json, std::uint64_t index,
                                             asio::signal_set& signals) {
    std::fflush(stdout); // the handler writes to the same stdout
    auto o =
        child_options(cfg.handler, cfg.shell, false, {"CONSUL_INDEX=" + std::to_string(index)});
    std::unique_ptr<programs::child_process> child;
    try {
        memory_file input(json);
        o.stdin_fd = input.fd;
        child = std::make_unique<programs::child_process>(o);
    } catch (const std::system_error& e) {
        std::fprintf(stderr, "Error executing handler: %s (%s)\n", e.code().message().c_str(),
                     o.argv.front().c_str());
        co_return handler_outcome{exit_code::error, true};
    }
    auto r = co_await (programs::async_wait_exit(*child) || next_signal(signals));
    if (r.index() == 1) {
        co_await stop_child(*child, std::get<1>(r), &signals);
        co_return handler_outcome{exit_code::ok, true};
    }
    const int status = child->reap();
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        co_return handler_outcome{};
    std::fprintf(stderr, "Error executing handler: %s\n",
                 programs::describe_wait_status(status).c_str());
    co_return handler_outcome{exit_code::error, true};
}

} // namespace

asio::awaitable<int> run_typed_watch(client& consul, typed_watch_settings cfg,
                                     asio::signal_set& signals) {
    const bool single = cfg.target.what() == watch_target::kind::key;
    co_return co_await watch_states(
        consul, cfg.target, cfg.count, signals,
        [&](const watch_snapshot& snap, std::uint64_t) -> asio::awaitable<std::optional<int>> {
            if (cfg.handler.empty()) {
                std::printf("%s\n", watch_json(snap.entries, single, true).c_str());
                co_return exit_code::ok;
            }
            const auto done = co_await run_handler(cfg, watch_json(snap.entries, single, false),
                                                   snap.index, signals);
            if (done.stop)
                co_return done.exit;
            co_return std::nullopt;
        });
}

} // namespace conclave::cli
