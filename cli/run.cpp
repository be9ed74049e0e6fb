// SPDX-License-Identifier: BSL-1.0
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"

#include <boost/asio/co_spawn.hpp>

#include <cstdio>
#include <exception>

namespace conclave::cli {

int run_command(boost::asio::io_context& ioc, boost::asio::awaitable<int> body,
                const char* command) {
    int status = exit_code::error;
    boost::asio::co_spawn(ioc, std::move(body), [&](std::exception_ptr e, int code) {
        ioc.stop(); // the command's work is done: nothing else keeps the process
        if (!e) {
            status = code;
            return;
        }
        try {
            std::rethrow_exception(e);
        } catch (const std::exception& ex) {
            std::fprintf(stderr, "conclave %s: %s\n", command, ex.what());
        }
        status = exit_code::error;
    });
    ioc.run();
    return status;
}

} // namespace conclave::cli
