// SPDX-License-Identifier: BSL-1.0
// The body of PUT /v1/txn, written straight as JSON text.
#pragma once

#include <conclave/consul/txn.hpp>

#include <string>
#include <vector>

namespace conclave::codec {

/// The JSON array of `ops`, each as txn_op_to_json() shapes it, byte for byte what
/// boost::json::serialize() of those objects gives (same field order, same escapes), but
/// without building a json::value tree per operation first.
std::string txn_body(const std::vector<txn_op>& ops);

} // namespace conclave::codec
