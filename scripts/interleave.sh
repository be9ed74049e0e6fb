#!/usr/bin/env bash
# Runs conclave-bench command lines in turn, RUNS rounds, and prints the median, lowest and
# highest of a JSON field per label: an A/B of binaries or options under the same machine
# state (runs of one kind a minute apart differ by more than most changes do here).
#
#   scripts/interleave.sh RUNS FIELD "label:command ..." ["label:command ..." ...]
#   scripts/interleave.sh 7 rate_vs_rtt "watched:build/default/bench/conclave-bench cycle" \
#       "raw:build/default/bench/conclave-bench cycle --no-monitor"
#
# Each command gets --json --quiet; it must print one JSON line (one scenario).
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n '2,10p' "$0" >&2
    exit 2
fi
runs=$1 field=$2
shift 2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$runs"); do
    for spec in "$@"; do
        label=${spec%%:*}
        # shellcheck disable=SC2086 # the command line is split on purpose
        ${spec#*:} --json --quiet 2>/dev/null | while read -r line; do
            printf '%s\t%s\n' "$label" "$line"
        done | tee -a "$out" | cut -c1-160
    done
done
python3 - "$out" "$field" <<'PY'
import collections, json, statistics, sys
values = collections.defaultdict(list)
for line in open(sys.argv[1]):
    label, text = line.rstrip("\n").split("\t", 1)
    record = json.loads(text)
    if sys.argv[2] in record:
        values[label].append(float(record[sys.argv[2]]))
for label, v in values.items():
    print(f"{label}: {sys.argv[2]} median {statistics.median(v):.3f}, "
          f"{min(v):.3f}-{max(v):.3f} over {len(v)} runs")
PY
