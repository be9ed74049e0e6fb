// SPDX-License-Identifier: BSL-1.0
// The named constructors of txn_op.
#include <conclave/consul/txn.hpp>

namespace conclave {

namespace {

txn_op make(kv_verb verb, std::string key, std::string value, std::uint64_t flags,
            std::uint64_t index, std::string session) {
    txn_op op;
    op.verb = verb;
    op.key = std::move(key);
    op.value = std::move(value);
    op.flags = flags;
    op.index = index;
    op.session = std::move(session);
    return op;
}

} // namespace

txn_op txn_op::set(std::string key, std::string value, std::uint64_t flags) {
    return make(kv_verb::set, std::move(key), std::move(value), flags, 0, {});
}
txn_op txn_op::cas(std::string key, std::string value, std::uint64_t index, std::uint64_t flags) {
    return make(kv_verb::cas, std::move(key), std::move(value), flags, index, {});
}
txn_op txn_op::lock(std::string key, std::string session, std::string value, std::uint64_t flags) {
    return make(kv_verb::lock, std::move(key), std::move(value), flags, 0, std::move(session));
}
txn_op txn_op::unlock(std::string key, std::string session, std::string value,
                      std::uint64_t flags) {
    return make(kv_verb::unlock, std::move(key), std::move(value), flags, 0, std::move(session));
}
txn_op txn_op::get(std::string key) {
    return make(kv_verb::get, std::move(key), {}, 0, 0, {});
}
txn_op txn_op::get_tree(std::string prefix) {
    return make(kv_verb::get_tree, std::move(prefix), {}, 0, 0, {});
}
txn_op txn_op::check_index(std::string key, std::uint64_t index) {
    return make(kv_verb::check_index, std::move(key), {}, 0, index, {});
}
txn_op txn_op::check_session(std::string key, std::string session) {
    return make(kv_verb::check_session, std::move(key), {}, 0, 0, std::move(session));
}
txn_op txn_op::check_not_exists(std::string key) {
    return make(kv_verb::check_not_exists, std::move(key), {}, 0, 0, {});
}
txn_op txn_op::remove(std::string key) {
    return make(kv_verb::delete_key, std::move(key), {}, 0, 0, {});
}
txn_op txn_op::remove_tree(std::string prefix) {
    return make(kv_verb::delete_tree, std::move(prefix), {}, 0, 0, {});
}
txn_op txn_op::remove_cas(std::string key, std::uint64_t index) {
    return make(kv_verb::delete_cas, std::move(key), {}, 0, index, {});
}

} // namespace conclave
