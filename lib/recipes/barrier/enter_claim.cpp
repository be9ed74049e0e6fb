// SPDX-License-Identifier: BSL-1.0
#include "recipes/barrier/enter_claim.hpp"

#include <mutex>
#include <set>

namespace conclave::detail {

namespace {

// Process-wide: the clients (and so the enters) may run on different threads. Session IDs
// are unique, so (prefix, session) names one participant whatever the client.
std::mutex& claims_mutex() {
    static std::mutex m;
    return m;
}

std::set<std::string>& claims() {
    static std::set<std::string> s;
    return s;
}

} // namespace

enter_claim::enter_claim(std::string prefix, std::string session)
    : name_(std::move(prefix) + '\n' + std::move(session)) {
    std::lock_guard lock(claims_mutex());
    claimed_ = claims().insert(name_).second;
}

enter_claim::~enter_claim() {
    if (!claimed_)
        return;
    std::lock_guard lock(claims_mutex());
    claims().erase(name_);
}

} // namespace conclave::detail
