// SPDX-License-Identifier: BSL-1.0
// What the prefix says about a semaphore: `.lock` decoded, checked and pruned.
#include "recipes/semaphore/semaphore_state.hpp"

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
    if (record->limit != static_cast<std::int64_t>(sem.limit)) {
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

} // namespace conclave::detail
