#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
#
# Times `conclave lock K true` against `consul lock K true` and `etcdctl lock K true`
# (docs/benchmarks.md, "The `conclave` command as a process"). Not run by CI: it needs a
# Consul agent and an etcd member.
#
#   CONCLAVE=build/default/cli/conclave CONSUL=consul ETCDCTL=etcdctl \
#   CONSUL_HTTP_ADDR=127.0.0.1:8500 ETCDCTL_ENDPOINTS=127.0.0.1:2379 scripts/cli_timing.sh
#
# A tool whose variable is empty or not executable is skipped. Other variables: RUNS (50
# sequential runs of each tool, interleaved A B C A B C ...), LOOPS (4 contending shell
# loops per tool on one key), SECONDS_EACH (20: how long the loops run; 0 skips them),
# ROUNDS (1: rounds of the contention test, each tool in turn), KEY (a prefix of keys it
# uses and deletes).
set -u

RUNS=${RUNS:-50}
LOOPS=${LOOPS:-4}
SECONDS_EACH=${SECONDS_EACH:-20}
ROUNDS=${ROUNDS:-1}
KEY=${KEY:-cli-timing}
export ETCDCTL_API=3
export CONSUL_HTTP_ADDR=${CONSUL_HTTP_ADDR:-127.0.0.1:8500}
export ETCDCTL_ENDPOINTS=${ETCDCTL_ENDPOINTS:-127.0.0.1:2379}

found() { [ -n "$1" ] && command -v "$1" >/dev/null 2>&1; }
tools=()
found "${CONCLAVE:-}" && tools+=(conclave)
found "${CONSUL:-}" && tools+=(consul)
found "${ETCDCTL:-}" && tools+=(etcdctl)
if [ ${#tools[@]} -eq 0 ]; then
    echo "no tool found: set CONCLAVE, CONSUL and/or ETCDCTL" >&2
    exit 1
fi

# One uncontended hold of KEY/<tool>/<suffix> running `true`; its status is the tool's.
hold() {
    case $1 in
    conclave) "$CONCLAVE" lock "$KEY/conclave/$2" true ;;
    consul) "$CONSUL" lock "$KEY/consul/$2" true ;;
    etcdctl) "$ETCDCTL" lock "$KEY/etcdctl/$2" true ;;
    esac
}

now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "# $(uname -srm), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
found "${CONSUL:-}" && echo "# $("$CONSUL" version | head -n 1)"
found "${ETCDCTL:-}" && echo "# $("$ETCDCTL" version | head -n 1)"

# 1. Sequential, uncontended: RUNS runs of each, interleaved.
for t in "${tools[@]}"; do hold "$t" seq >/dev/null 2>&1; done # warm-up
for ((i = 0; i < RUNS; i++)); do
    for t in "${tools[@]}"; do
        s=$(now_us)
        hold "$t" seq >/dev/null 2>>"$work/$t.err" || echo "$t run $i failed: $?" >&2
        echo $(($(now_us) - s)) >>"$work/$t.seq"
    done
done
echo
echo "uncontended \`lock K true\`, $RUNS runs each (ms)"
printf '%-9s %7s %7s %7s %7s %7s\n' tool mean median p90 min max
for t in "${tools[@]}"; do
    sort -n "$work/$t.seq" | awk -v t="$t" '{ v[NR] = $1; s += $1 }
        END { p = int(NR * 0.9 + 0.5); if (p < 1) p = 1
              printf "%-9s %7.1f %7.1f %7.1f %7.1f %7.1f\n", t, s / NR / 1000,
                     (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) / 1000,
                     v[p] / 1000, v[1] / 1000, v[NR] / 1000 }'
done

# 2. LOOPS shell loops per tool, all on one key, for SECONDS_EACH seconds.
[ "$SECONDS_EACH" -gt 0 ] || ROUNDS=0
contend() {
    local t=$1 round=$2 end=$(($(now_us) + SECONDS_EACH * 1000000)) pids=() l
    for ((l = 0; l < LOOPS; l++)); do
        (
            n=0
            while [ "$(now_us)" -lt "$end" ]; do
                hold "$t" shared >/dev/null 2>>"$work/$t.err" && n=$((n + 1))
            done
            echo "$n" >"$work/$t.$round.$l"
        ) &
        pids+=($!)
    done
    wait "${pids[@]}"
}
if [ "$ROUNDS" -gt 0 ]; then
    echo
    echo "$LOOPS contending loops on one key, ${SECONDS_EACH} s each"
    printf '%-9s %5s %9s  %s\n' tool round holds/s "holds per loop"
fi
for ((r = 0; r < ROUNDS; r++)); do
    for t in "${tools[@]}"; do
        contend "$t" "$r"
        counts=$(cat "$work/$t.$r".* | tr '\n' ' ')
        total=$(echo "$counts" | awk '{ for (i = 1; i <= NF; i++) s += $i; print s }')
        printf '%-9s %5d %9.1f  %s\n' "$t" "$r" "$(awk -v n="$total" -v s="$SECONDS_EACH" 'BEGIN { print n / s }')" "$counts"
    done
done
for t in "${tools[@]}"; do
    if [ -s "$work/$t.err" ]; then
        echo "$t wrote to stderr ($(wc -l <"$work/$t.err") lines), first:" >&2
        head -n 3 "$work/$t.err" >&2
    fi
done
