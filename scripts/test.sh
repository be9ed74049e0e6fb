#!/usr/bin/env bash
# Sets up, builds and runs every test, in the default (RelWithDebInfo) and asan
# (ASan + UBSan) presets. Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(default asan)

for preset in "${presets[@]}"; do
    echo "=== ${preset}: configure"
    cmake --preset "${preset}" >/dev/null
    echo "=== ${preset}: build"
    cmake --build --preset "${preset}"
    echo "=== ${preset}: test"
    ctest --preset "${preset}"
done
echo "=== all tests passed (${presets[*]})"
