// SPDX-License-Identifier: BSL-1.0
// The body of PUT /v1/txn, written straight as JSON text.
#pragma once

#include <conclave/consul/txn.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace conclave::codec {

/// The JSON array of `ops`, each as txn_op_to_json() shapes it, byte for byte what
/// boost::json::serialize() of those objects gives (same field order, same escapes), but
/// without building a json::value tree per operation first. An op naming no namespace or
/// partition gets the defaults given here, so that a transaction in a namespace writes its
/// keys there (Go's client, too, sends them on each operation).
std::string txn_body(const std::vector<txn_op>& ops, std::string_view default_namespace = {},
                     std::string_view default_partition = {});

} // namespace conclave::codec
