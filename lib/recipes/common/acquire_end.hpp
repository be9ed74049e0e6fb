// SPDX-License-Identifier: BSL-1.0
// What an acquire that the acquire machine ended without a grant completes with, for the
// lock's and the semaphore's drivers alike.
#pragma once

#include "recipes/common/acquire_fsm.hpp"
#include "recipes/common/shared_query.hpp"
#include "recipes/session/session_state.hpp"

#include <string>

namespace conclave::detail {

/// The error of `end` (a finish action without a grant): the machine's error, the session's
/// loss reason (marking the session lost first when Consul no longer knows it), or the ACL
/// refusal of the hub's reads or of the write of `written_key`, said in `diag`. Empty for
/// an acquire out of time or cancelled.
inline error_code error_of(const acquire_action& end, session_state& s, const shared_query& hub,
                           const std::string& written_key, diagnostics* diag) {
    switch (end.end) {
    case acquire_end::failed:
        if (end.session_gone) {
            s.gone_on_server = true;
            s.mark_lost(end.ec);
        }
        // (A lost session's reason is the one it was lost with first.)
        return end.ec && !end.session_gone ? end.ec : s.lost;
    case acquire_end::read_denied:
        return read_denied(hub, diag);
    case acquire_end::write_denied:
        return write_denied(written_key, diag);
    default:
        return error_code{};
    }
}

} // namespace conclave::detail
