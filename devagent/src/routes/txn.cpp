// SPDX-License-Identifier: BSL-1.0
// /v1/txn: agent/txn_endpoint.go (decoding into api.TxnOps, size limits, read-only fast
// path) + agent/consul/txn_endpoint.go (pre-checks) + the state store's transaction.
#include "codec/go/base64.hpp"
#include "codec/go/quote.hpp"
#include "codec/go/strconv.hpp"
#include "codec/json.hpp"
#include "devagent/src/go/gojson.hpp"
#include "devagent/src/routes/routes.hpp"

#include <boost/beast/core/string.hpp>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

namespace conclave::dev::detail {

namespace json = boost::json;
using gojson::kind;

namespace {

constexpr std::size_t max_txn_ops = 64;

// The field `key` names, or empty after saving Go's error for an unknown one: Consul decodes
// the body with unknown fields disallowed, so a "Partition", which 1.8's api.KVTxnOp lacks,
// is refused while "Namespace" is read (and ignored).
std::string_view match(std::string_view key, std::initializer_list<std::string_view> names,
                       gojson::first_error& errs) {
    for (const auto n : names)
        if (key == n)
            return n;
    for (const auto n : names)
        if (boost::beast::iequals(key, n))
            return n;
    errs.save("json: unknown field " + codec::go::quote(key));
    return {};
}

// Takes the strings over from the parsed request (not used afterwards).
void decode_kv(gojson::value& v, txn_op_in& op, gojson::first_error& errs) {
    const auto field_error = [&](const gojson::value& f, std::string_view name,
                                 std::string_view type) {
        errs.save(
            gojson::type_error(gojson::describe(f), "KVTxnOp", "KV." + std::string(name), type));
    };
    for (auto& [key, f] : v.members) {
        const std::string_view name =
            match(key, {"Verb", "Key", "Value", "Flags", "Index", "Session", "Namespace"}, errs);
        if (name.empty() || f.is_null())
            continue;
        if (name == "Verb" || name == "Key" || name == "Session" || name == "Namespace") {
            if (f.k != kind::string) {
                field_error(f, name, name == "Verb" ? "api.KVOp" : "string");
                continue;
            }
            if (name == "Verb")
                op.verb = std::move(f.text);
            else if (name == "Key")
                op.entry.key = std::move(f.text);
            else if (name == "Session")
                op.entry.session = std::move(f.text);
        } else if (name == "Value") {
            if (f.k == kind::string) {
                std::size_t bad_byte = 0;
                auto decoded = codec::go::base64_decode(f.text, &bad_byte);
                if (!decoded)
                    errs.save(codec::go::base64_error(bad_byte));
                else
                    op.entry.value = std::move(*decoded);
            } else if (f.k == kind::array) {
                std::string bytes;
                for (const auto& item : f.items) {
                    if (item.k == kind::number) {
                        const auto b = codec::go::parse_uint(item.text, 10, 8);
                        if (!b.value)
                            errs.save(gojson::type_error("number " + item.text, "KVTxnOp",
                                                         "KV.Value", "uint8"));
                        bytes += char(b.value.value_or(0));
                    } else {
                        if (!item.is_null())
                            errs.save(gojson::type_error(gojson::describe(item), "KVTxnOp",
                                                         "KV.Value", "uint8"));
                        bytes += '\0';
                    }
                }
                op.entry.value = std::move(bytes);
            } else {
                field_error(f, name, "[]uint8");
            }
        } else { // Flags, Index
            if (f.k != kind::number) {
                field_error(f, name, "uint64");
                continue;
            }
            const auto n = codec::go::parse_uint(f.text);
            if (!n.value) {
                errs.save(gojson::type_error("number " + f.text, "KVTxnOp",
                                             "KV." + std::string(name), "uint64"));
                continue;
            }
            if (name == "Flags")
                op.entry.flags = *n.value;
            else
                op.entry.modify_index = *n.value;
        }
    }
}

} // namespace

std::string decode_ops(gojson::value& root, std::vector<decoded_op>& out, bool& has_nil) {
    if (root.is_null())
        return {};
    if (root.k != kind::array)
        return gojson::type_error(gojson::describe(root), "", "", "api.TxnOps");
    gojson::first_error errs;
    out.reserve(root.items.size());
    for (auto& item : root.items) {
        decoded_op d;
        if (item.is_null()) {
            has_nil = true;
            out.push_back(std::move(d));
            continue;
        }
        if (item.k != kind::object) {
            errs.save(gojson::type_error(gojson::describe(item), "", "", "api.TxnOp"));
            out.push_back(std::move(d));
            continue;
        }
        bool has_kv = false;
        std::string other;
        for (auto& [key, f] : item.members) {
            const std::string_view name = match(key, {"KV", "Node", "Service", "Check"}, errs);
            if (name.empty())
                continue;
            if (f.is_null()) {
                if (name == "KV")
                    has_kv = false;
                else if (other == name)
                    other.clear();
                continue;
            }
            if (f.k != kind::object) {
                errs.save(gojson::type_error(gojson::describe(f), "TxnOp", name,
                                             "api." + std::string(name) + "TxnOp"));
                continue;
            }
            if (name == "KV") {
                has_kv = true;
                d.op = txn_op_in{};
                decode_kv(f, d.op, errs);
            } else if (other.empty()) {
                // Only KV operations are supported; remember the family for the error text.
                other = std::string(name);
                if (const auto* verb = gojson::find_field(f, "Verb");
                    verb && verb->k == kind::string)
                    d.verb_of_other = verb->text;
            }
        }
        if (has_kv) {
            d.present = true;
        } else if (!other.empty()) {
            d.present = true;
            d.op = txn_op_in{};
            d.op.is_kv = false;
            d.op.family = other;
        }
        out.push_back(std::move(d));
    }
    return errs.get();
}

json::object txn_json(const txn_outcome& o, bool read_only, json::storage_ptr sp) {
    // Results and Errors: exactly one of them is null.
    json::value results(sp);
    json::value errors(sp);
    if (o.errors.empty()) {
        json::array& a = results.emplace_array();
        a.reserve(o.results.size());
        for (const auto& r : o.results) {
            json::object& item = a.emplace_back(json::object(sp)).get_object();
            item["KV"] = codec::kv_entry_to_json(r.entry, r.with_value, sp);
        }
    } else {
        json::array& a = errors.emplace_array();
        for (const auto& [index, what] : o.errors)
            a.emplace_back(json::object({{"OpIndex", index}, {"What", what}}, sp));
    }
    json::object body(sp);
    body.reserve(read_only ? 7 : 2);
    body["Results"] = std::move(results);
    body["Errors"] = std::move(errors);
    if (read_only) {
        body["Index"] = 0;
        body["LastContact"] = 0;
        body["KnownLeader"] = true;
        body["ConsistencyLevel"] = "";
        body["NotModified"] = false;
    }
    return body;
}

http_response txn_endpoint(agent_impl& a, const http_request& req) {
    const std::int64_t max_len = body_limit(a.cfg, req);
    // Consul 1.8 checks the Content-Length, then reads through http.MaxBytesReader (a chunked
    // body over the limit); a body it cannot read is a parse error.
    static constexpr std::string_view see =
        " bytes. See https://www.consul.io/docs/agent/options.html#txn_max_req_len.";
    if (req.content_length > max_len)
        return text_response(413, "Request body(" + std::to_string(req.content_length) +
                                      " bytes) too large, max size: " + std::to_string(max_len) +
                                      std::string(see));
    if (req.body_error == body_too_large)
        return text_response(413, "Request body too large, max size: " + std::to_string(max_len) +
                                      std::string(see));
    if (!req.body_error.empty())
        return text_response(400, "Failed to parse body: " + req.body_error);

    const auto too_many = [](std::size_t n) {
        return text_response(413, "Transaction contains too many operations (" + std::to_string(n) +
                                      " > " + std::to_string(max_txn_ops) + ")");
    };
    const auto value_too_large = [&](const txn_op_in& op) {
        return text_response(413, "Value for key " + codec::go::quote(op.entry.key) +
                                      " is too large (" + std::to_string(op.entry.value.size()) +
                                      " > " + std::to_string(a.cfg.kv_max_value_size) + " bytes)");
    };

    // Read the way Go's json.Decoder fills api.TxnOps, with Go's errors.
    auto parsed = gojson::decode_first(req.body);
    if (!parsed.v)
        return text_response(400, "Failed to parse body: " + parsed.error);
    std::vector<decoded_op> decoded;
    bool has_nil = false;
    if (std::string err = decode_ops(*parsed.v, decoded, has_nil); !err.empty())
        return text_response(400, "Failed to parse body: " + err);
    if (decoded.size() > max_txn_ops)
        return too_many(decoded.size());

    std::vector<txn_op_in> ops;
    ops.reserve(decoded.size());
    std::size_t writes = 0;
    for (auto& d : decoded) {
        if (!d.present) {
            if (has_nil) {
                // Consul dereferences the nil operation and the connection dies.
                http_response r;
                r.drop = true;
                return r;
            }
            continue;
        }
        if (d.op.is_kv) {
            if (d.op.entry.value.size() > a.cfg.kv_max_value_size)
                return value_too_large(d.op);
            if (kv_op_is_write(kv_op_from_verb(d.op.verb)))
                ++writes;
        } else if (d.verb_of_other != "get") {
            ++writes;
        }
        ops.push_back(std::move(d.op));
    }

    const auto now = std::chrono::steady_clock::now();
    if (writes == 0) {
        const query_opts_parse qp = parse_query_opts(req.query);
        if (!qp.error.empty())
            return text_response(400, qp.error);
        if (foreign_dc(a, req))
            return text_response(500, "No path to datacenter");
        const txn_outcome o = a.state.txn(std::move(ops), true, now);
        json_scratch scratch;
        http_response r =
            json_response(txn_json(o, true, scratch.sp()), o.errors.empty() ? 200 : 409);
        set_leader_meta(r);
        return r;
    }
    if (foreign_dc(a, req))
        return text_response(500, "No path to datacenter");
    const txn_outcome o = a.state.txn(std::move(ops), false, now);
    json_scratch scratch;
    return json_response(txn_json(o, false, scratch.sp()), o.errors.empty() ? 200 : 409);
}

} // namespace conclave::dev::detail
