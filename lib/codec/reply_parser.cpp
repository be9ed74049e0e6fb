// SAX parsing of KV entry lists and txn answers. The handler below receives Boost.JSON's
// parse events and writes the fields it wants straight into kv_entry / txn_error; anything
// else (unknown keys, non-KV txn results) is only counted through, never stored.
//
// Same answers as the DOM code it replaces (json::parse + kv_entry_from_json), on purpose,
// for odd input too:
//   - KVPair: Key, Session, Value are strings or null/missing (empty); Flags, LockIndex,
//     CreateIndex, ModifyIndex are non-negative integers up to 2^64-1 or null/missing (0);
//     any other type (negative, fractional, bool, ...) refuses the entry; Value must be
//     padded base64.
//   - txn: "Results" and "Errors" are read only when they are arrays. A result that is not
//     an object, or has no "KV", is skipped; a "KV" that is not a valid KVPair refuses the
//     answer. Every "Errors" element must be an object; its "OpIndex" is 0 unless a
//     non-negative integer and its "What" empty unless a string.
//   - A duplicated key counts only its last occurrence (the DOM keeps the last one), so a
//     field's verdict is settled when its object closes, not when the field is read.
#include "codec/base64.hpp"
#include "codec/reply_parser.hpp"
#include "codec/reply_scan.hpp"

#include <boost/json/basic_parser_impl.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace conclave::codec {

namespace {

namespace json = boost::json;
using error_code = json::error_code;

// What the value being parsed is, which decides what to do with it.
enum class slot : std::uint8_t {
    ignored,     // not read (unknown key, a result that is not an object): skipped
    entry_list,  // the document of a KV list: must be an array
    list_entry,  // an element of that array: must be a KVPair object
    entry_field, // a KVPair field that is read (which one: field_)
    txn_root,    // the document of a txn answer: must be an object
    results,     // "Results": read when an array, ignored otherwise
    result,      // an element of Results: read when an object, skipped otherwise
    result_kv,   // "KV" of a result: must be a KVPair object
    errors,      // "Errors": read when an array, ignored otherwise
    error,       // an element of Errors: must be an object
    op_index,    // "OpIndex" of an error: a non-negative integer, else 0
    what,        // "What" of an error: a string, else empty
};

// The containers being read; skipped ones are only counted (skip_).
enum class frame : std::uint8_t { entry_list, entry, txn_root, results, result, errors, error };

// The KVPair fields read, and what the last occurrence of each said.
enum field : std::uint8_t { key, session, value, flags, lock_index, create_index, modify_index };
enum class verdict : std::uint8_t { absent, ok, bad }; // absent: missing or null

// The field a KVPair key names, if one that is read. By length first: every key of every
// entry comes through here, and a plain search of the names was a visible share of a parse.
std::optional<field> field_of(std::string_view k) {
    switch (k.size()) {
    case 3:
        if (k == "Key")
            return field::key;
        break;
    case 5:
        if (k == "Value")
            return field::value;
        if (k == "Flags")
            return field::flags;
        break;
    case 7:
        if (k == "Session")
            return field::session;
        break;
    case 9:
        if (k == "LockIndex")
            return field::lock_index;
        break;
    case 11:
        if (k == "CreateIndex")
            return field::create_index;
        if (k == "ModifyIndex")
            return field::modify_index;
        break;
    }
    return std::nullopt;
}

class reply_handler {
public:
    static constexpr std::size_t max_array_size = -1;
    static constexpr std::size_t max_object_size = -1;
    static constexpr std::size_t max_string_size = -1;
    static constexpr std::size_t max_key_size = -1;

    explicit reply_handler(std::vector<kv_entry>& list)
        : root_(slot::entry_list)
        , list_(&list) {}
    explicit reply_handler(txn_result& txn)
        : root_(slot::txn_root)
        , txn_(&txn)
        , results_base_(txn.results.size())
        , errors_base_(txn.errors.size()) {}

    /// After a complete parse: whether the document was accepted.
    bool accepted() const { return !results_bad_ && !errors_bad_; }

    bool on_document_begin(error_code&) { return true; }
    bool on_document_end(error_code&) { return true; }

    bool on_object_begin(error_code& ec) {
        if (skip_) {
            ++skip_;
            return true;
        }
        switch (value_slot()) {
        case slot::txn_root:
            push(frame::txn_root);
            return true;
        case slot::list_entry:
            begin_entry(list_->emplace_back());
            push(frame::entry);
            return true;
        case slot::result_kv:
            pending_entry_ = kv_entry{};
            begin_entry(pending_entry_);
            push(frame::entry);
            return true;
        case slot::result:
            has_kv_ = false;
            push(frame::result);
            return true;
        case slot::error:
            pending_error_ = txn_error{};
            push(frame::error);
            return true;
        default:
            skip_ = 1;
            return wrong_type(ec);
        }
    }

    bool on_object_end(std::size_t, error_code& ec) {
        if (skip_) {
            --skip_;
            return true;
        }
        switch (pop()) {
        case frame::entry:
            return end_entry(ec);
        case frame::result:
            if (has_kv_) {
                if (kv_ok_)
                    txn_->results.push_back(std::move(pending_entry_));
                else
                    results_bad_ = true;
            }
            return true;
        case frame::error:
            txn_->errors.push_back(std::move(pending_error_));
            return true;
        default:
            return true;
        }
    }

    bool on_array_begin(error_code& ec) {
        if (skip_) {
            ++skip_;
            return true;
        }
        switch (value_slot()) {
        case slot::entry_list:
            push(frame::entry_list);
            return true;
        case slot::results:
            push(frame::results);
            return true;
        case slot::errors:
            push(frame::errors);
            return true;
        default:
            skip_ = 1;
            return wrong_type(ec);
        }
    }

    bool on_array_end(std::size_t, error_code&) {
        if (skip_)
            --skip_;
        else
            pop();
        return true;
    }

    // Keys arrive whole in on_key, or in pieces (then gathered in key_buf_).
    bool on_key_part(std::string_view s, std::size_t, error_code&) {
        if (!skip_)
            key_buf_.append(s);
        return true;
    }

    bool on_key(std::string_view s, std::size_t, error_code&) {
        if (skip_)
            return true;
        if (key_buf_.empty()) {
            key_slot_ = slot_for_key(s);
        } else {
            key_buf_.append(s);
            key_slot_ = slot_for_key(key_buf_);
            key_buf_.clear();
        }
        return true;
    }

    // String values are appended straight to their destination; the verdict comes at the end.
    bool on_string_part(std::string_view s, std::size_t, error_code&) {
        if (!skip_)
            append_string(s);
        return true;
    }

    bool on_string(std::string_view s, std::size_t, error_code& ec) {
        if (skip_)
            return true;
        append_string(s);
        in_string_ = false;
        const slot where = value_slot();
        if (where == slot::what)
            return true;
        if (where == slot::entry_field && field_ <= field::value) {
            fields_[field_] = verdict::ok;
            return true;
        }
        return wrong_type(ec);
    }

    bool on_number_part(std::string_view, error_code&) { return true; }

    // Integers of the int64 range arrive as int64, larger ones as uint64, the rest as double.
    bool on_int64(std::int64_t i, std::string_view, error_code& ec) {
        return number(i >= 0 ? std::optional<std::uint64_t>(std::uint64_t(i)) : std::nullopt, ec);
    }
    bool on_uint64(std::uint64_t u, std::string_view, error_code& ec) { return number(u, ec); }
    bool on_double(double, std::string_view, error_code& ec) { return number(std::nullopt, ec); }

    bool on_bool(bool, error_code& ec) { return skip_ ? true : wrong_type(ec); }

    bool on_null(error_code& ec) {
        if (skip_)
            return true;
        if (value_slot() != slot::entry_field)
            return wrong_type(ec);
        fields_[field_] = verdict::absent;
        if (auto* s = string_field())
            s->clear();
        else
            *number_field() = 0;
        return true;
    }

    bool on_comment_part(std::string_view, error_code&) { return true; }
    bool on_comment(std::string_view, error_code&) { return true; }

private:
    slot value_slot() const {
        if (depth_ == 0)
            return root_;
        switch (frames_[depth_ - 1]) {
        case frame::entry_list:
            return slot::list_entry;
        case frame::results:
            return slot::result;
        case frame::errors:
            return slot::error;
        default:
            return key_slot_;
        }
    }

    // Depth never passes 4 (txn root, Results, result, KV): anything deeper is skipped.
    void push(frame f) { frames_[depth_++] = f; }
    frame pop() { return frames_[--depth_]; }

    slot slot_for_key(std::string_view k) {
        switch (frames_[depth_ - 1]) {
        case frame::entry:
            if (auto f = field_of(k)) {
                field_ = *f;
                return slot::entry_field;
            }
            return slot::ignored;
        case frame::txn_root:
            // A repeated "Results"/"Errors" replaces what the earlier one said.
            if (k == "Results") {
                txn_->results.resize(results_base_);
                results_bad_ = false;
                return slot::results;
            }
            if (k == "Errors") {
                txn_->errors.resize(errors_base_);
                errors_bad_ = false;
                return slot::errors;
            }
            return slot::ignored;
        case frame::result:
            if (k != "KV")
                return slot::ignored;
            has_kv_ = true;
            kv_ok_ = false;
            return slot::result_kv;
        case frame::error:
            if (k == "OpIndex")
                return slot::op_index;
            return k == "What" ? slot::what : slot::ignored;
        default:
            return slot::ignored;
        }
    }

    // A value whose type its slot does not take (null for the slots other than entry_field):
    // what the DOM code does with it. Fails the parse when that is final.
    bool wrong_type(error_code& ec) {
        switch (value_slot()) {
        case slot::entry_list:
        case slot::txn_root:
        case slot::list_entry:
            ec = json::error::syntax;
            return false;
        case slot::entry_field:
            fields_[field_] = verdict::bad;
            return true;
        case slot::result_kv:
            kv_ok_ = false;
            return true;
        case slot::error:
            errors_bad_ = true;
            return true;
        case slot::op_index:
            pending_error_.op_index = 0;
            return true;
        case slot::what:
            pending_error_.what.clear();
            return true;
        default: // ignored, results, errors, result
            return true;
        }
    }

    bool number(std::optional<std::uint64_t> u, error_code& ec) {
        if (skip_)
            return true;
        const slot where = value_slot();
        if (u && where == slot::entry_field && field_ >= field::flags) {
            *number_field() = *u;
            fields_[field_] = verdict::ok;
            return true;
        }
        if (u && where == slot::op_index) {
            pending_error_.op_index = *u;
            return true;
        }
        return wrong_type(ec);
    }

    std::string* string_field() {
        switch (field_) {
        case field::key:
            return &entry_->key;
        case field::session:
            return &entry_->session;
        case field::value:
            return &encoded_;
        default:
            return nullptr;
        }
    }

    std::uint64_t* number_field() {
        switch (field_) {
        case field::flags:
            return &entry_->flags;
        case field::lock_index:
            return &entry_->lock_index;
        case field::create_index:
            return &entry_->create_index;
        default:
            return &entry_->modify_index;
        }
    }

    void append_string(std::string_view s) {
        if (!in_string_) { // first piece: a repeated key overwrites the earlier value
            in_string_ = true;
            target_ = nullptr;
            const slot where = value_slot();
            if (where == slot::entry_field)
                target_ = string_field();
            else if (where == slot::what)
                target_ = &pending_error_.what;
            if (target_)
                target_->clear();
        }
        if (target_)
            target_->append(s);
    }

    void begin_entry(kv_entry& e) {
        entry_ = &e;
        fields_.fill(verdict::absent);
        encoded_.clear();
    }

    // Settles a KVPair: fails a KV list at once; a txn result waits for its object's end.
    bool end_entry(error_code& ec) {
        bool ok = true;
        for (verdict v : fields_)
            ok = ok && v != verdict::bad;
        if (ok && !encoded_.empty()) {
            auto decoded = base64_decode(encoded_);
            if (decoded)
                entry_->value = std::move(*decoded);
            else
                ok = false;
        }
        if (frames_[depth_ - 1] == frame::result) {
            kv_ok_ = ok;
            return true;
        }
        if (!ok)
            ec = json::error::syntax;
        return ok;
    }

    const slot root_;
    std::vector<kv_entry>* list_ = nullptr;
    txn_result* txn_ = nullptr;
    std::size_t results_base_ = 0; // sizes of txn_'s vectors before this parse
    std::size_t errors_base_ = 0;

    std::array<frame, 4> frames_{};
    std::size_t depth_ = 0;
    std::size_t skip_ = 0; // > 0 inside a value that is not read: its nesting depth
    slot key_slot_ = slot::ignored;
    std::string key_buf_;

    bool in_string_ = false;
    std::string* target_ = nullptr; // where the current string value goes, if anywhere

    kv_entry* entry_ = nullptr; // the KVPair being filled
    field field_ = field::key;
    std::array<verdict, 7> fields_{};
    std::string encoded_; // its Value, still base64

    kv_entry pending_entry_; // the "KV" of the current txn result
    bool has_kv_ = false;
    bool kv_ok_ = false;
    txn_error pending_error_;
    bool results_bad_ = false;
    bool errors_bad_ = false;
};

// Feeds the whole body (in `piece`-byte writes when piece > 0); true when it was one
// complete JSON document with nothing after it and the handler took it.
template <class Target>
bool run(std::string_view body, Target& out, std::size_t piece) {
    json::basic_parser<reply_handler> p(json::parse_options{}, out);
    error_code ec;
    if (piece == 0 || piece >= body.size()) {
        const std::size_t n = p.write_some(false, body.data(), body.size(), ec);
        return !ec && n == body.size() && p.handler().accepted();
    }
    for (std::size_t at = 0; at < body.size(); at += piece) {
        const std::size_t len = std::min(piece, body.size() - at);
        const bool more = at + len < body.size();
        const std::size_t n = p.write_some(more, body.data() + at, len, ec);
        if (ec || n != len)
            return false;
    }
    return p.handler().accepted();
}

} // namespace

bool parse_kv_entries(std::string_view body, std::vector<kv_entry>& out) {
    return scan_kv_entries(body, out) || run(body, out, 0);
}

bool parse_txn_reply(std::string_view body, txn_result& out) {
    return scan_txn_reply(body, out) || run(body, out, 0);
}

bool sax_kv_entries(std::string_view body, std::vector<kv_entry>& out, std::size_t piece) {
    return run(body, out, piece);
}

bool sax_txn_reply(std::string_view body, txn_result& out, std::size_t piece) {
    return run(body, out, piece);
}

} // namespace conclave::codec
