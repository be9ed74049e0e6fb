#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Sets up, builds and runs the demo: four everyday tasks, each an example program run with
# --dev on its own embedded dev agent (examples/), then a short, representative benchmark
# set (about a minute) whose summary table it prints.
# Extra arguments go to conclave-bench (e.g. --fair, --plot out/).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target conclave_bench example_job_workers \
    example_leader_service example_rate_limited_pool example_config_watcher

# Runs build/default/examples/example_$1 --dev under a heading (the rest of the arguments).
scene() {
    local name=$1
    shift
    echo
    echo "$*"
    "build/default/examples/example_$name" --dev | sed -u 's/^/    /'
}

echo
echo "conclave demo: four everyday tasks, each an example program (examples/) run with --dev"
echo "on an embedded dev agent, an in-memory Consul inside the program"
scene job_workers "1. Job workers (job_workers.cpp): a lock per task, try_with_lock; one crashes"
scene leader_service "2. Leader election (leader_service.cpp): two instances, elector::async_run"
scene rate_limited_pool "3. A semaphore of 3 (rate_limited_pool.cpp): 8 jobs, try_with_permit"
scene config_watcher "4. A prefix watch (config_watcher.cpp): prints config/app/ while it is written"

echo
echo "conclave-bench: a one-minute set (docs/benchmarks.md has the full runs)"
exec build/default/bench/conclave-bench rtt cycle contend drain failover watch scale peers \
    --duration 2 --contenders 16,64 --waiters 2000 --repeat 1 "$@"
