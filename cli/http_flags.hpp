// The HTTP options every Consul command shares (-http-addr, -token, ...), applied on top of
// the CONSUL_* environment variables, as the Consul CLI does.
#pragma once

#include "flags.hpp"

#include <conclave/config.hpp>

#include <optional>
#include <string>

namespace conclave::cli {

struct http_flags {
    std::string http_addr;
    std::string token;
    std::string token_file;
    std::string datacenter;
    std::string ca_file;
    std::string ca_path;
    std::string client_cert;
    std::string client_key;
    std::string tls_server_name;

    void add_to(flag_set& flags);

    /// config_from_env(), then every flag that was given. On failure returns nothing and
    /// sets `error` to a message naming the variable or flag at fault.
    std::optional<client_config> make_config(const flag_set& flags, std::string& error) const;
};

/// Help text of the options above, for the commands' usage.
extern const char* const http_flags_usage;

} // namespace conclave::cli
