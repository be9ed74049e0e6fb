// SPDX-License-Identifier: BSL-1.0
// Endpoint handlers (one file per endpoint family) and the response helpers they share.
#pragma once

#include "devagent/src/agent_impl.hpp"

#include <boost/json/fwd.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/storage_ptr.hpp>

#include <optional>
#include <string>
#include <vector>

namespace conclave::dev::detail {

namespace gojson {
struct value;
}

// ---- response helpers (common.cpp) -------------------------------------------------------

/// 200 (or status) with Go's indented JSON and Content-Type: application/json.
http_response json_response(const boost::json::value& v, unsigned status = 200);
/// An error answer as Consul writes it: plain text, Content-Type sniffed by net/http.
http_response text_response(unsigned status, std::string text);
/// The answer of a handler that decodes a JSON body it could not read (req.body_error):
/// Consul's 400 "Request decode failed: <Go's error>", or 413 "http: request body too large"
/// for a body over the agent's limit (max_body_bytes; Consul has none).
http_response undecodable_body(const http_request& req);
/// A handler's JSON body read as encoding/json's Decoder reads it (its first value) into
/// `out`. Else the answer that ends the request: undecodable_body(), or Consul's 400
/// "Request decode failed: <Go's error>" for a body that is not JSON.
std::optional<http_response> decode_body(const http_request& req, gojson::value& out);
/// X-Consul-Index (never 0), X-Consul-Knownleader, X-Consul-Lastcontact.
void set_meta(http_response& r, std::uint64_t index, bool known_leader = true);
/// X-Consul-Knownleader and X-Consul-Lastcontact only (read-only transactions).
void set_leader_meta(http_response& r);
/// Consul 1.8 OSS's parseEntMeta, which the KV and session handlers call: a non-empty
/// X-Consul-Namespace header, else a non-empty first ?ns= value, is a 400 (namespaces are an
/// Enterprise feature); empty ones, and ?partition= (unknown to 1.8), are ignored.
std::optional<http_response> namespace_refused(const http_request& req);
/// The RPC layer's forwarding check: "No path to datacenter" for a foreign ?dc=.
bool foreign_dc(const agent_impl& a, const http_request& req);
/// The answer to a request foreign_dc() turns away (500 "No path to datacenter").
http_response no_path_to_dc();
/// The path remainder after a route prefix (a view into req.path).
std::string_view path_rest(const http_request& req, std::string_view prefix);

/// A health check as Consul 1.8 serialises structs.HealthCheck: the catalog's with its
/// indexes, the agent's own view (GET /v1/agent/checks) with zeros and its Type.
boost::json::object check_json(const check_rec& c, std::string_view type, bool with_indexes);
/// A session as Consul 1.8 serialises structs.Session.
boost::json::object session_json(const session_rec& s);
/// The body of a /v1/txn answer: Results and Errors, and for a read-only transaction the
/// query metadata that Consul's TxnReadResponse carries.
boost::json::object txn_json(const txn_outcome& o, bool read_only,
                             boost::json::storage_ptr sp = {});

/// Stack space for an answer's DOM, which lives only until it is written: a usual answer's
/// values fit, so building it allocates nothing on the heap.
class json_scratch {
public:
    boost::json::storage_ptr sp() { return &mr_; }

private:
    unsigned char buf_[4096];
    boost::json::monotonic_resource mr_{buf_, sizeof buf_};
};

/// One element of api.TxnOps.
struct decoded_op {
    bool present = false; ///< KV, Node, Service or Check was set
    txn_op_in op;
    std::string verb_of_other;
};

/// json.Decoder.Decode of the parsed body into api.TxnOps ([]*api.TxnOp): one element per
/// array item (has_nil set when one was null). Takes the strings over from `root`. Returns
/// the decode error text, empty when none.
std::string decode_ops(gojson::value& root, std::vector<decoded_op>& out, bool& has_nil);

// ---- handlers ------------------------------------------------------------------------------

/// The /v1/kv answer when it needs no waiting (all but blocking reads and ?keys), or
/// nullopt: then kv_endpoint_wait answers it (see dispatch_now).
std::optional<http_response> kv_endpoint_now(agent_impl& a, const http_request& req);
/// The GETs kv_endpoint_now left: ?keys, and reads with an index (blocking queries).
boost::asio::awaitable<http_response> kv_endpoint_wait(agent_impl& a, const http_request& req,
                                                       disconnect_probe* probe);

http_response session_create(agent_impl& a, const http_request& req);
http_response session_destroy(agent_impl& a, const http_request& req);
http_response session_renew(agent_impl& a, const http_request& req);
boost::asio::awaitable<http_response> session_info(agent_impl& a, const http_request& req,
                                                   disconnect_probe* probe);
boost::asio::awaitable<http_response> session_list(agent_impl& a, const http_request& req,
                                                   disconnect_probe* probe);
boost::asio::awaitable<http_response> session_node(agent_impl& a, const http_request& req,
                                                   disconnect_probe* probe);

http_response txn_endpoint(agent_impl& a, const http_request& req);

http_response status_leader(agent_impl& a, const http_request& req);
http_response status_peers(agent_impl& a, const http_request& req);
http_response agent_self(agent_impl& a, const http_request& req);
http_response catalog_register(agent_impl& a, const http_request& req);
http_response catalog_deregister(agent_impl& a, const http_request& req);
http_response catalog_nodes(agent_impl& a, const http_request& req);
http_response catalog_node(agent_impl& a, const http_request& req);
http_response health_node(agent_impl& a, const http_request& req);

http_response agent_check_register(agent_impl& a, const http_request& req);
http_response agent_check_deregister(agent_impl& a, const http_request& req);
/// pass, warn and fail.
http_response agent_check_set(agent_impl& a, const http_request& req);
http_response agent_check_update(agent_impl& a, const http_request& req);
http_response agent_checks(agent_impl& a, const http_request& req);

/// /v1/_conclave/...: stats always; the rest only with enable_test_controls.
http_response controls_endpoint(agent_impl& a, const http_request& req);

} // namespace conclave::dev::detail
