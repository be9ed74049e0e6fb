// SPDX-License-Identifier: BSL-1.0
// What the `conclave kv` subcommands share: their flags' setup, help, error texts, and how
// a subcommand runs with a client.
#pragma once

#include "cli/commands.hpp"
#include "cli/common/flags.hpp"
#include "cli/common/http_flags.hpp"
#include "cli/exit_codes.hpp"
#include "cli/run.hpp"

#include <conclave/client.hpp>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace conclave::cli {

/// The help of `conclave kv` (all subcommands).
extern const char* const kv_usage;

inline constexpr auto kv_tuple_awaitable = boost::asio::as_tuple(boost::asio::use_awaitable);

/// One subcommand's flags, the HTTP flags already added.
struct kv_common {
    flag_set flags;
    http_flags http;
    kv_common() { http.add_to(flags); }
};

/// The message, then the help: exit 1.
int kv_usage_error(const std::string& message);

/// Consul's error in words: the code, Consul's text, the missing ACL permission, and
/// where Consul was looked for when it could not be reached.
std::string consul_error(const error_code& ec, const diagnostics& d, const client& consul);

/// Parses the flags, then refuses more than `most` arguments (1, or 2: put's key and value)
/// with Consul's usage error; returns an exit status when the command must stop there.
std::optional<int> kv_parse(kv_common& c, args a, std::vector<std::string_view>& rest,
                            std::size_t most = 1);

/// Runs `body(client&)` (an awaitable<int>) with a client built from the environment and
/// the HTTP flags; returns its exit status.
template <class Body>
int with_client(kv_common& c, Body body) {
    boost::asio::io_context ioc;
    std::optional<client> consul;
    if (!c.http.open_client(c.flags, ioc, consul))
        return exit_code::error;
    return run_command(ioc, body(*consul), "kv");
}

/// `kv export` and `kv import` (transfer.cpp).
int export_command(args a);
int import_command(args a);

} // namespace conclave::cli
