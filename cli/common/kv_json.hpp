// SPDX-License-Identifier: BSL-1.0
// KV entries as JSON in the shapes and the byte-for-byte formatting of the Consul CLI (Go's
// encoding/json, codec/go/json_marshal.hpp), for `watch -type` and `kv export`: scripts
// written for consul's output read conclave's.
#pragma once

#include <conclave/consul/kv.hpp>

#include <string>
#include <vector>

namespace conclave::cli {

/// `consul watch -type=key|keyprefix`: Go's api.KVPair objects (Key, CreateIndex,
/// ModifyIndex, LockIndex, Flags, Value in base64 or null when empty, Session). `single`:
/// the first entry or `null` (a key); otherwise an array, `null` when empty (a prefix).
/// `indented`: as consul prints it (4 spaces, no final newline); otherwise compact, as a
/// handler reads it on stdin (with a final newline).
std::string watch_json(const std::vector<kv_entry>& entries, bool single, bool indented);

/// `consul kv export`: an array of {"key", "flags", "value" (base64, "" when empty)},
/// indented with tabs (no final newline).
std::string export_json(const std::vector<kv_entry>& entries);

} // namespace conclave::cli
