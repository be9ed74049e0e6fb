#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Sets up, builds and runs every test, in the default (RelWithDebInfo) and asan
# (ASan + UBSan) presets. Exits non-zero on any failure.
#
# With CONSUL_BIN naming a real Consul executable (any version from 1.8), the default
# preset also runs the client, recipes, CLI and example suites against it (label consul),
# each test on a Consul of its own; the asan preset runs them on the embedded dev agent only.
# With no preset named, the libFuzzer targets then run for a minute each (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

presets=("$@")
fuzz=false
[ ${#presets[@]} -eq 0 ] && presets=(default asan) && fuzz=true

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
if [ "${fuzz}" = true ]; then
    echo "=== fuzz: each target for 60 s"
    scripts/fuzz.sh 60
fi
consul_note=""
[ -n "${CONSUL_BIN:-}" ] && consul_note=", default also against ${CONSUL_BIN}"
fuzz_note=""
[ "${fuzz}" = true ] && fuzz_note=", fuzz"
echo "=== all tests passed (${presets[*]}${consul_note}${fuzz_note})"
