// /v1/txn: agent/txn_endpoint.go (decoding into api.TxnOps, size limits, read-only fast
// path) + agent/consul/txn_endpoint.go (pre-checks) + the state store's transaction.
#include "codec/cursor.hpp"
#include "dev/gojson.hpp"
#include "dev/goutil.hpp"
#include "dev/routes.hpp"
#include "dev/txn_fast_decode.hpp"

namespace conclave::dev::detail {

using gojson::kind;

namespace {

constexpr std::size_t max_txn_ops = 64;
constexpr std::int64_t txn_max_req_len = 524288;

class first_error {
public:
    void save(std::string e) {
        if (e_.empty())
            e_ = std::move(e);
    }
    const std::string& get() const { return e_; }

private:
    std::string e_;
};

std::string_view match(std::string_view key, std::initializer_list<std::string_view> names) {
    for (const auto n : names)
        if (key == n)
            return n;
    for (const auto n : names)
        if (ascii_iequals(key, n))
            return n;
    return {};
}

// Takes the strings over from the parsed request (not used afterwards).
void decode_kv(gojson::value& v, txn_op_in& op, first_error& errs) {
    const auto field_error = [&](const gojson::value& f, std::string_view name,
                                 std::string_view type) {
        errs.save(
            gojson::type_error(gojson::describe(f), "KVTxnOp", "KV." + std::string(name), type));
    };
    for (auto& [key, f] : v.members) {
        const std::string_view name =
            match(key, {"Verb", "Key", "Value", "Flags", "Index", "Session", "Namespace"});
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
                auto decoded = go_base64_decode(f.text);
                if (!decoded.value)
                    errs.save(decoded.error);
                else
                    op.entry.value = std::move(*decoded.value);
            } else if (f.k == kind::array) {
                std::string bytes;
                for (const auto& item : f.items) {
                    if (item.k == kind::number) {
                        const auto b = go_parse_uint(item.text, 8);
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
            const auto n = go_parse_uint(f.text);
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
    first_error errs;
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
            const std::string_view name = match(key, {"KV", "Node", "Service", "Check"});
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

namespace {

// The fragments of an answer without errors, at the depths indent_writer puts them: the
// top object's members at 4 spaces, Results' elements at 8, their "KV" at 12 and the
// entry's fields at 16, each closing bracket on a line of its own at its opener's depth.
constexpr char results_open[] = "{\n    \"Results\": [";
constexpr char entry_open[] = "\n        {\n            \"KV\": {\n                \"LockIndex\": ";
constexpr char entry_key[] = ",\n                \"Key\": \"";
constexpr char entry_flags[] = "\",\n                \"Flags\": ";
constexpr char entry_value_null[] = ",\n                \"Value\": null";
constexpr char entry_session[] = ",\n                \"Session\": \"";
constexpr char entry_session_end[] = "\"";
constexpr char entry_create[] = ",\n                \"CreateIndex\": ";
constexpr char entry_modify[] = ",\n                \"ModifyIndex\": ";
constexpr char entry_close[] = "\n            }\n        }";
constexpr char results_close[] = "\n    ]";
constexpr char errors_null[] = ",\n    \"Errors\": null";
constexpr char read_meta[] = ",\n    \"Index\": 0,\n    \"LastContact\": 0,\n    \"KnownLeader\": "
                             "true,\n    \"ConsistencyLevel\": \"\",\n    \"NotModified\": false";
constexpr char body_close[] = "\n}\n";

constexpr std::size_t len(std::string_view s) {
    return s.size();
}

} // namespace

bool txn_body_direct(const txn_outcome& o, bool read_only, std::string& out) {
    if (!o.errors.empty())
        return false;
    constexpr std::size_t entry_fixed = len(entry_open) + len(entry_key) + len(entry_flags) +
                                        len(entry_value_null) + len(entry_create) +
                                        len(entry_modify) + len(entry_close) + 1 +
                                        4 * codec::cursor::max_digits;
    std::size_t size = len(results_open) + len(results_close) + len(errors_null) + len(read_meta) +
                       len(body_close);
    for (const auto& r : o.results) {
        const kv_entry& e = r.entry;
        // A value (a get's) is base64, and strings that need escaping go through Go's
        // escaper: both left to the general writer.
        if ((r.with_value && !e.value.empty()) || !gojson::is_plain(e.key) ||
            !gojson::is_plain(e.session))
            return false;
        size += entry_fixed + e.key.size();
        if (!e.session.empty())
            size += len(entry_session) + e.session.size() + len(entry_session_end);
    }
    // An upper bound (numbers at their longest), cut to what was written.
    out.resize(size);
    // Fragments of known length copied in (a general writer call costs ~20 each).
    codec::cursor w(out.data());
    w.put(results_open);
    for (std::size_t i = 0; i < o.results.size(); ++i) {
        const kv_entry& e = o.results[i].entry;
        if (i > 0)
            w.put(",");
        w.put(entry_open);
        w.number(e.lock_index);
        w.put(entry_key);
        w.put(e.key);
        w.put(entry_flags);
        w.number(e.flags);
        w.put(entry_value_null);
        if (!e.session.empty()) {
            w.put(entry_session);
            w.put(e.session);
            w.put(entry_session_end);
        }
        w.put(entry_create);
        w.number(e.create_index);
        w.put(entry_modify);
        w.number(e.modify_index);
        w.put(entry_close);
    }
    // An empty array closes on the same line: "Results": []
    if (o.results.empty())
        w.put("]");
    else
        w.put(results_close);
    w.put(errors_null);
    if (read_only)
        w.put(read_meta);
    w.put(body_close);
    out.resize(std::size_t(w.end() - out.data()));
    return true;
}

std::string txn_body(const txn_outcome& o, bool read_only) {
    std::string out;
    if (txn_body_direct(o, read_only, out))
        return out;
    return txn_body_general(o, read_only);
}

std::string txn_body_general(const txn_outcome& o, bool read_only) {
    std::string out;
    // A lock's answer (two entries, ~800 bytes) without regrowing.
    out.reserve(1024);
    gojson::indent_writer w(out);
    w.begin_object();
    // Results and Errors: exactly one of them is null.
    w.key("Results");
    if (o.errors.empty()) {
        w.begin_array();
        for (const auto& r : o.results) {
            w.begin_object();
            w.key("KV");
            write_kv_entry(w, r.entry, r.with_value);
            w.end_object();
        }
        w.end_array();
    } else {
        w.null();
    }
    w.key("Errors");
    if (o.errors.empty()) {
        w.null();
    } else {
        w.begin_array();
        for (const auto& [index, what] : o.errors) {
            w.begin_object();
            w.key("OpIndex");
            w.number(std::uint64_t(index));
            w.key("What");
            w.string(what);
            w.end_object();
        }
        w.end_array();
    }
    if (read_only) {
        w.key("Index");
        w.number(std::uint64_t(0));
        w.key("LastContact");
        w.number(std::uint64_t(0));
        w.key("KnownLeader");
        w.boolean(true);
        w.key("ConsistencyLevel");
        w.string("");
        w.key("NotModified");
        w.boolean(false);
    }
    w.end_object();
    w.finish();
    return out;
}

http_response txn_endpoint(agent_impl& a, const http_request& req) {
    const std::int64_t max_len =
        std::max<std::int64_t>(txn_max_req_len, std::int64_t(a.cfg.kv_max_value_size));
    const auto too_large = [&] {
        return text_response(413, "Request body too large, max size: " + std::to_string(max_len) +
                                      " bytes");
    };
    if (req.content_length > max_len || std::int64_t(req.body.size()) > max_len)
        return too_large();

    const auto too_many = [](std::size_t n) {
        return text_response(413, "Transaction contains too many operations (" + std::to_string(n) +
                                      " > " + std::to_string(max_txn_ops) + ")");
    };
    const auto value_too_large = [&](const txn_op_in& op) {
        return text_response(413, "Value for key " + go_quote(op.entry.key) + " is too large (" +
                                      std::to_string(op.entry.value.size()) + " > " +
                                      std::to_string(a.cfg.kv_max_value_size) + " bytes)");
    };

    std::vector<txn_op_in> ops;
    std::size_t writes = 0;
    if (auto compact = txn_compact_ops(req.body)) {
        // The usual body, read straight into the store's operations: every element a KV
        // operation, none nil, so the checks below are the general loop's for that case.
        ops = std::move(*compact);
        if (ops.size() > max_txn_ops)
            return too_many(ops.size());
        for (const auto& op : ops) {
            if (op.entry.value.size() > a.cfg.kv_max_value_size)
                return value_too_large(op);
            if (kv_op_is_write(kv_op_from_verb(op.verb)))
                ++writes;
        }
    } else {
        // Other usual shapes next; anything else the way Go reads it, with Go's errors.
        std::vector<decoded_op> decoded;
        bool has_nil = false;
        if (auto fast = txn_fast_decode(req.body)) {
            decoded = std::move(*fast);
        } else {
            auto parsed = gojson::decode_first(req.body);
            if (!parsed.v)
                return text_response(400, "Failed to parse body: " + parsed.error);
            if (std::string err = decode_ops(*parsed.v, decoded, has_nil); !err.empty())
                return text_response(400, "Failed to parse body: " + err);
        }
        if (decoded.size() > max_txn_ops)
            return too_many(decoded.size());

        ops.reserve(decoded.size());
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
    }

    const auto now = std::chrono::steady_clock::now();
    if (writes == 0) {
        const query_opts_parse qp = parse_query_opts(req.query);
        if (!qp.error.empty())
            return text_response(400, qp.error);
        if (foreign_dc(a, req))
            return text_response(500, "No path to datacenter");
        const txn_outcome o = a.state.txn(std::move(ops), true, now);
        http_response r = json_text_response(txn_body(o, true), o.errors.empty() ? 200 : 409);
        set_leader_meta(r);
        return r;
    }
    if (foreign_dc(a, req))
        return text_response(500, "No path to datacenter");
    const txn_outcome o = a.state.txn(std::move(ops), false, now);
    return json_text_response(txn_body(o, false), o.errors.empty() ? 200 : 409);
}

} // namespace conclave::dev::detail
