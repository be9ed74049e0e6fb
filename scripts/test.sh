#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Sets up, builds and runs every test, in the default (RelWithDebInfo) and asan
# (ASan + UBSan) presets. Exits non-zero on any failure.
#
# With CONSUL_BIN naming a real Consul executable (any version from 1.8), the default
# preset also runs the client, recipes, CLI and example suites against it (label consul),
# each test on a Consul of its own; the asan preset runs them on the embedded dev agent only.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(default asan)

for preset in "${presets[@]}"; do
    echo "=== ${preset}: configure"
    consul_bin=""
    [ "${preset}" = default ] && consul_bin="${CONSUL_BIN:-}"
    cmake --preset "${preset}" -DCONCLAVE_CONSUL_BIN="${consul_bin}" >/dev/null
    echo "=== ${preset}: build"
    cmake --build --preset "${preset}"
    echo "=== ${preset}: test"
    ctest --preset "${preset}"
done
consul_note=""
[ -n "${CONSUL_BIN:-}" ] && consul_note=", default also against ${CONSUL_BIN}"
echo "=== all tests passed (${presets[*]}${consul_note})"
