#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Runs conclave-bench command lines in turn, RUNS rounds, and prints the median, lowest and
# highest of a JSON field per label: an A/B of binaries or options under the same machine
# state (runs of one kind a minute apart differ by more than most changes do here). The
# order alternates from round to round, so that no variant always follows the other.
#
#   scripts/interleave.sh RUNS FIELD "label:command ..." ["label:command ..." ...]
#   scripts/interleave.sh 7 rate_vs_rtt "watched:build/default/bench/conclave-bench cycle" \
#       "raw:build/default/bench/conclave-bench cycle --no-monitor"
#
# Each command gets --json --quiet and must print one JSON line (one scenario run). A
# command that fails is reported and its round skipped; the others still count.
set -uo pipefail
usage() {
    sed -n '7,9p' "$0" >&2
    exit 2
}
[ $# -ge 3 ] || usage
runs=$1 field=$2
shift 2
[[ $runs =~ ^[1-9][0-9]*$ ]] || usage
for spec in "$@"; do
    [[ $spec == *:* ]] || { echo "interleave: '$spec' has no 'label:'" >&2; usage; }
done
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
specs=("$@")
for round in $(seq "$runs"); do
    order=("${specs[@]}")
    if ((round % 2 == 0)); then
        order=()
        for ((i = ${#specs[@]} - 1; i >= 0; i--)); do order+=("${specs[i]}"); done
    fi
    for spec in "${order[@]}"; do
        label=${spec%%:*}
        set -f # the command line is split on spaces, never globbed
        # shellcheck disable=SC2086
        if ! result=$(${spec#*:} --json --quiet 2>"$err"); then
            set +f
            echo "interleave: '$label' failed in round $round:" >&2
            cat "$err" >&2
            continue
        fi
        set +f
        if [ "$(printf '%s\n' "$result" | grep -c .)" != 1 ]; then
            echo "interleave: '$label' printed no or several lines in round $round" >&2
            continue
        fi
        printf '%s\t%s\n' "$label" "$result" >>"$out"
        printf '%s\t%s\n' "$label" "${result:0:150}"
    done
done
python3 - "$out" "$field" "$@" <<'PY'
import collections, json, statistics, sys
path, field, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
values = collections.defaultdict(list)
for line in open(path):
    label, text = line.rstrip("\n").split("\t", 1)
    try:
        record = json.loads(text)
    except ValueError:
        print(f"{label}: not a JSON line: {text[:80]}", file=sys.stderr)
        continue
    if field in record:
        values[label].append(float(record[field]))
missing = False
for label in dict.fromkeys(s.split(":", 1)[0] for s in specs):
    v = values.get(label)
    if not v:
        print(f"{label}: no run reported {field}", file=sys.stderr)
        missing = True
        continue
    print(f"{label}: {field} median {statistics.median(v):.3f}, "
          f"{min(v):.3f}-{max(v):.3f} over {len(v)} runs")
sys.exit(1 if missing else 0)
PY
