#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Sets up, builds and runs the demo: the lock walkthrough on the embedded dev agent, then a
# short, representative benchmark set (about a minute) whose summary table it prints.
# Extra arguments go to conclave-bench (e.g. --fair, --plot out/).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target conclave_cli conclave_demo conclave_bench
build/default/bench/conclave_demo
echo
echo "conclave-bench: a one-minute set (docs/benchmarks.md has the full runs)"
exec build/default/bench/conclave-bench rtt cycle contend drain failover watch scale peers \
    --duration 2 --contenders 16,64 --waiters 2000 --repeat 1 "$@"
