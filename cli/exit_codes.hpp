// SPDX-License-Identifier: BSL-1.0
// Exit statuses of the conclave commands (docs/cli.md has the table).
#pragma once

namespace conclave::cli::exit_code {

inline constexpr int ok = 0;
/// Bad arguments, Consul unreachable, acquire failed, cleanup failed, or a missing key
/// (`kv get`): the same status `consul lock` / `consul kv` use.
inline constexpr int error = 1;
/// `lock -child-exit-code` (also `group join`, `barrier enter`): the child exited non-zero
/// or was killed (as `consul lock`).
inline constexpr int child_failed = 2;
/// `lock`: the lock (or semaphore slot) was lost while the child ran; the child was
/// terminated. `consul lock` exits 0 there. `group join`: the membership was lost, and
/// `barrier enter`: its session was lost, while the child ran. `elect -once`: leadership was lost
/// during the term. (`elect -once` otherwise exits with the child's own status, 1 when the cleanup
/// failed, even if the child's status was 3.) Also when the cleanup after the loss failed
/// (it is reported on stderr): a supervisor waiting for the loss must see it, and the
/// cleanup often fails for the loss's own reason (Consul unreachable).
inline constexpr int lock_lost = 3;
/// `elect -max-restarts=N`: the command failed N + 1 times in a row (its first run and N
/// restarts); conclave gave up, released the key and cleaned up. Also when that cleanup
/// failed (it is reported on stderr): a supervisor waiting for it must see it.
inline constexpr int restarts_exhausted = 4;
/// `lock -timeout`: the lock (or a semaphore slot) was not free within the timeout, and
/// the cleanup after it succeeded (so Consul answered): someone else holds it. A script can
/// tell that from Consul being unreachable (1); `consul lock` exits 1 for both. Also
/// `barrier enter -timeout` (the barrier did not open), `barrier wait -timeout` and `latch
/// wait -timeout` (not removed, not counted down in time).
inline constexpr int timed_out = 5;
/// `lock`, `elect`, `group join`, `barrier enter`: conclave got SIGINT/SIGTERM, forwarded
/// it and cleaned up: 128 + the signal. `barrier wait`, `latch wait`: a signal ended the
/// wait.
inline constexpr int interrupted_base = 128;

} // namespace conclave::cli::exit_code
