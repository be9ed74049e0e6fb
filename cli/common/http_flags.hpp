// SPDX-License-Identifier: BSL-1.0
// The HTTP options every Consul command shares (-http-addr, -token, ...), applied on top of
// the CONSUL_* environment variables, as the Consul CLI does.
#pragma once

#include "cli/common/flags.hpp"

#include <conclave/client.hpp>
#include <conclave/config.hpp>

#include <boost/asio/io_context.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace conclave::cli {

struct http_flags {
    std::string http_addr;
    std::string token;
    std::string token_file;
    std::string datacenter;
    std::string namespace_name;
    std::string partition;
    std::string ca_file;
    std::string ca_path;
    std::string client_cert;
    std::string client_key;
    std::string tls_server_name;
    std::string log_level;

    void add_to(flag_set& flags);

    /// config_from_env(), then every flag that was given. On failure returns nothing and
    /// sets `error` to a message naming the variable or flag at fault.
    std::optional<client_config> make_config(const flag_set& flags, std::string& error) const;

    /// make_config(), then `consul` on `ioc`. On failure prints why to stderr and returns
    /// false: the command exits with exit_code::error.
    bool open_client(const flag_set& flags, boost::asio::io_context& ioc,
                     std::optional<client>& consul) const;
};

/// Help text of the options above, for the commands' usage.
extern const char* const http_flags_usage;

/// Prints `message`, then the command's help `usage` and the HTTP options' help, to stderr
/// (the Consul CLI's way with a bad command line). Returns exit_code::error.
int usage_error(const std::string& message, const char* usage);

/// Parses the command line of a command whose help is `usage`. `-help` prints the help to
/// stdout and ends with exit_code::ok; a flag error goes to usage_error(). Returns the
/// exit status to end with, or nothing to go on (`rest`: the arguments after the flags).
std::optional<int> parse_or_usage(flag_set& flags, args a, const char* usage,
                                  std::vector<std::string_view>& rest);

} // namespace conclave::cli
