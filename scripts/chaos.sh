#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Chaos test of `conclave lock` (test/chaos/chaos.py, described in docs/reliability.md): on
# the embedded dev agent, and with CONSUL_BIN set also on a cluster of three Consul servers.
#
#   scripts/chaos.sh [--short | --long] [--conclave PATH] [--seed N] [--keep]
#
# The CLI: --conclave PATH, else $CONCLAVE, else build/default/cli/conclave (the driver runs
# a copy, so rebuilding meanwhile is harmless). --short (the default) takes about 3 minutes
# per target; --long runs until 10,000 handoffs (about 20 minutes on the dev agent, much
# longer on a cluster). Each run ends with `handoffs=N faults=M violations=V leaked=L`;
# the exit status is non-zero when a run failed (its history is then kept and named).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=--short
conclave=${CONCLAVE:-build/default/cli/conclave}
extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --short | --long) mode=$1 ;;
        --conclave) conclave=$2 && shift ;;
        --conclave=*) conclave=${1#*=} ;;
        *) extra+=("$1") ;;
    esac
    shift
done
[ -x "$conclave" ] || { echo "no conclave CLI at $conclave: build it, or pass --conclave PATH" >&2; exit 2; }
python=${PYTHON:-python3}

status=0
echo "=== chaos $mode on the dev agent"
"$python" test/chaos/chaos.py --conclave "$conclave" "$mode" "${extra[@]}" || status=1
if [ -n "${CONSUL_BIN:-}" ]; then
    echo "=== chaos $mode on three Consul servers ($CONSUL_BIN)"
    "$python" test/chaos/chaos.py --conclave "$conclave" --consul-bin "$CONSUL_BIN" --servers 3 \
        "$mode" "${extra[@]}" || status=1
fi
exit $status
