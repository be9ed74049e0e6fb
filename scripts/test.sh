#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Sets up, builds and runs every test, in the default (RelWithDebInfo, g++) and asan
# (ASan + UBSan, clang) presets. Exits non-zero on any failure.
#
# With CONSUL_BIN naming a real Consul executable (any version from 1.8), the default
# preset also runs the client, recipes, CLI and example suites against it (label consul),
# and the client and recipes suites on a three-server cluster (label consul-cluster); the
# asan preset runs the suites on the embedded dev agent only. With no preset named, the
# libFuzzer targets then run for FUZZ_SECONDS (default 30) each (scripts/fuzz.sh).
#
# Each stage prints its wall time as it ends, and the last lines are a table of them
# (test/README.md, "How long the tests take").
set -euo pipefail
cd "$(dirname "$0")/.."

stage_names=()
stage_seconds=()
stage_start=0
begin() {
    stage_start=$(date +%s)
    echo "=== $1"
}
end() {
    local seconds=$(($(date +%s) - stage_start))
    stage_names+=("$1")
    stage_seconds+=("${seconds}")
    echo "=== $1: ${seconds} s"
}
summary() {
    local status=$? total=0 i
    [ ${#stage_names[@]} -eq 0 ] && return
    echo "=== stages (wall seconds)"
    for i in "${!stage_names[@]}"; do
        printf '  %-28s %5d\n' "${stage_names[$i]}" "${stage_seconds[$i]}"
        total=$((total + stage_seconds[i]))
    done
    printf '  %-28s %5d\n' "total" "${total}"
    [ "${status}" -ne 0 ] && echo "=== FAILED (exit ${status})"
    return 0
}
trap summary EXIT

begin "setup"
scripts/setup.sh
end "setup"

presets=("$@")
fuzz=false
[ ${#presets[@]} -eq 0 ] && presets=(default asan) && fuzz=true

for preset in "${presets[@]}"; do
    consul_bin=""
    [ "${preset}" = default ] && consul_bin="${CONSUL_BIN:-}"
    begin "${preset}: configure"
    cmake --preset "${preset}" -DCONCLAVE_CONSUL_BIN="${consul_bin}" >/dev/null
    end "${preset}: configure"
    begin "${preset}: build"
    cmake --build --preset "${preset}"
    end "${preset}: build"
    begin "${preset}: tests"
    ctest --preset "${preset}" -LE package
    end "${preset}: tests"
    # The package consumers (label package) configure and build programs of their own
    # against this build: a stage of their own, to see what they cost.
    if ctest --preset "${preset}" -L package -N | grep -q 'Total Tests: [1-9]'; then
        begin "${preset}: package tests"
        ctest --preset "${preset}" -L package
        end "${preset}: package tests"
    fi
done
if [ "${fuzz}" = true ]; then
    begin "fuzz: build"
    scripts/fuzz.sh --build-only
    end "fuzz: build"
    begin "fuzz: runs"
    scripts/fuzz.sh "${FUZZ_SECONDS:-30}"
    end "fuzz: runs"
fi
consul_note=""
[ -n "${CONSUL_BIN:-}" ] && consul_note=", default also against ${CONSUL_BIN}"
fuzz_note=""
[ "${fuzz}" = true ] && fuzz_note=", fuzz"
echo "=== all tests passed (${presets[*]}${consul_note}${fuzz_note})"
