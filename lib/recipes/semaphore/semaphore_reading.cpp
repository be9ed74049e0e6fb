// SPDX-License-Identifier: BSL-1.0
// What the prefix says about a semaphore: `.lock` decoded, checked and pruned.
#include "recipes/semaphore/semaphore_state.hpp"

#include <map>

namespace conclave::detail {

semaphore_reading interpret(const semaphore_state& sem, const kv_entry* lock,
                            const std::vector<kv_entry>& entries, diagnostics* diag) {
    semaphore_reading r;
    std::string_view value;
    if (lock) {
        if (lock->flags != semaphore_flag_value) {
            r.ec = make_error_code(errc::conflict); // Go: ErrSemaphoreConflict
            return r;
        }
        value = lock->value;
        r.lock_modify_index = lock->modify_index;
    }
    auto record = semaphore_record::decode(value, sem.limit);
    if (!record) {
        r.ec = make_error_code(errc::bad_response); // Go: "lock decoding failed"
        return r;
    }
    if (record->limit != static_cast<std::int64_t>(sem.limit) && !sem.opts.resizable) {
        if (diag)
            diag->client_message =
                "semaphore limit conflict (lock: " + std::to_string(record->limit) +
                ", local: " + std::to_string(sem.limit) + ")";
        r.ec = make_error_code(errc::limit_conflict);
        return r;
    }
    record->prune(entries);
    r.record = std::move(*record);
    return r;
}

semaphore_status status_of(std::uint32_t limit, std::string_view prefix, const semaphore_reading& r,
                           const std::vector<kv_entry>& entries) {
    semaphore_status status;
    status.limit = limit;
    status.lock_modify_index = r.lock_modify_index;
    // The holders' contender keys, `<prefix>/<session>`, in one pass over the entries.
    std::map<std::string, std::string> values;
    const auto children = join_key(prefix, "");
    for (const auto& e : entries) {
        if (!e.key.starts_with(children))
            continue;
        auto name = e.key.substr(children.size());
        if (r.record.holders.count(name))
            values.emplace(std::move(name), e.value);
    }
    status.holders.reserve(r.record.holders.size());
    for (const auto& [session, slots] : r.record.holders) {
        std::optional<std::string> value;
        if (auto it = values.find(session); it != values.end())
            value = std::move(it->second);
        status.holders.emplace_back(session, std::move(value), slots);
    }
    // A `.lock` written by hand (or by a peer that ignored the limit) may list more holders
    // than slots: none is free then, not a negative count.
    const auto held = r.record.used();
    status.free_slots = held >= limit ? 0 : static_cast<std::uint32_t>(limit - held);
    return status;
}

} // namespace conclave::detail
