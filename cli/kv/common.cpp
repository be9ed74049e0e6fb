// SPDX-License-Identifier: BSL-1.0
#include "cli/kv/common.hpp"

namespace conclave::cli {

const char* const kv_usage =
    R"(Usage: conclave kv <subcommand> [options] <key or prefix> [<value>]

  Reads and writes Consul's KV store. Exit status: 0 done, 1 bad arguments, a
  missing key (get), a failed check-and-set, acquire or release (put), or a failure
  to reach Consul.

Subcommands:

  get [-recurse | -keys [-separator=/]] [-detailed] [-base64] [-stale] <key or prefix>
      Prints the value (raw). -recurse: "key:value" for every key under the prefix.
      -keys: the key names under the prefix, collapsed at -separator (default "/";
      -separator="" lists every key). -detailed: every field of each entry.
      -base64: values base64-encoded. -stale: any server may answer (maybe stale).
  put [-flags=<uint>] [-cas -modify-index=<n>] [-base64] <key> [<value>]
  put -acquire|-release -session=<id> [-flags=<uint>] [-base64] <key> [<value>]
      Writes the value: the argument, "-" for stdin, "@path" for a file's contents,
      nothing for an empty value; -base64: given base64-encoded. -cas writes only if
      the key's ModifyIndex is <n> (0: only if it does not exist). -acquire locks the
      key for the session and writes the value, unless another session holds it;
      -release unlocks it and writes the value, if the session holds it. Either
      failing is "Error! Did not acquire lock" / "Error! Did not release lock", exit 1.
  delete [-recurse] [-cas -modify-index=<n>] <key or prefix>
      Deletes the key (or every key under the prefix); -cas only at that ModifyIndex.
  export [-stale] [<prefix>]
      Prints every key under the prefix (all without one) as the JSON of `consul kv
      export`: [{"key": ..., "flags": ..., "value": <base64>}, ...].
  import <data | @path | ->
      Writes every entry of such JSON (the argument, a file's contents, or stdin),
      one "Imported: <key>" line each; stops at the first failure.

Options: -help, and the HTTP API options below on every subcommand.

)";

int kv_usage_error(const std::string& message) {
    return cli::usage_error(message, kv_usage);
}

std::string consul_error(const error_code& ec, const diagnostics& d, const client& consul) {
    std::string text = ec.message();
    if (!d.server_message.empty())
        text += ": " + d.server_message;
    if (ec == errc::permission_denied && !d.client_message.empty())
        text += " [" + d.client_message + "]"; // which permission the token lacks
    if (!is_retryable(ec))
        return text;
    return text + " (Consul at " + consul.config().describe_address() +
           "; set -http-addr or CONSUL_HTTP_ADDR)";
}

std::optional<int> kv_parse(kv_common& c, args a, std::vector<std::string_view>& rest,
                            std::size_t most) {
    if (auto stop = parse_or_usage(c.flags, a, kv_usage, rest))
        return stop;
    if (rest.size() <= most)
        return std::nullopt;
    const std::string expected = most == 1 ? "1" : "1 or " + std::to_string(most);
    return kv_usage_error("Too many arguments (expected " + expected + ", got " +
                          std::to_string(rest.size()) + ")");
}

} // namespace conclave::cli
