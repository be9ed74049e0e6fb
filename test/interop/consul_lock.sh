#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# conclave lock and consul lock (Go's api.Lock and api.Semaphore) contend on a real Consul,
# first for one lock, then for one semaphore (-n 2): INTEROP_CONTENDERS of each kind, each
# running its lock command again and again for INTEROP_SECONDS; every hold runs hold.py,
# which records it. check.py then verifies the holds, and that nothing was left behind.
#
#   test/interop/consul_lock.sh CONCLAVE CONSUL_BIN      (CONSUL_HTTP_ADDR names the agent)
#
# Environment: INTEROP_SECONDS (per mode, default 15), INTEROP_CONTENDERS (of each kind,
# default 3), PYTHON (default python3), INTEROP_KEEP=1 keeps the work directory (it is
# kept anyway when a check fails). Keys go under conclave-interop-<pid>-<random>/, sessions
# are named after it, so a Consul in use by others can serve. The last line is the summary
# of check.py; exit 0 only when every check passed.
set -uo pipefail
set -m # each contender loop gets a process group of its own: a stuck one is stopped whole

[ $# -eq 2 ] || { sed -n 8p "$0" >&2; exit 2; }
conclave=$1 consul=$2
: "${CONSUL_HTTP_ADDR:?must name the Consul agent}"
seconds=${INTEROP_SECONDS:-15} contenders=${INTEROP_CONTENDERS:-3}
# The interpreter itself, not a wrapper (a pyenv shim is a shell script): it starts twice a run.
python=$("${PYTHON:-python3}" -c 'import sys; print(sys.executable)') || exit 2
here=$(cd "$(dirname "$0")" && pwd)
tag=conclave-interop-$$-$RANDOM
work=$(mktemp -d "${TMPDIR:-/tmp}/conclave-interop.XXXXXX")
# Both lock commands run the child with $SHELL -c: make that a POSIX shell.
export SHELL=/bin/sh

pids=() keep=${INTEROP_KEEP:-}
stop_contenders() {
    local pid
    for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2>/dev/null; done
    wait
    pids=()
}
trap 'stop_contenders; [ -n "$keep" ] || rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One contender: KIND (conclave or consul) and NUMBER, for MODE (LIMIT holders at PREFIX)
# until SECONDS reaches STOP. Each run has a session name of its own, TAG/MODE/KIND/N.RUN:
# hold.py finds its session by it, and once the command has exited, leftovers.py reports
# whatever of that session is still there (consul lock destroys its session from a
# goroutine of its own, which can lose the race with the process's exit).
contend() {
    local kind=$1 number=$2 mode=$3 limit=$4 prefix=$5 stop=$6 run=0 name status bin=$conclave
    [ "$kind" = consul ] && bin=$consul
    local child
    child=$(printf '%q ' exec "$python" "$here/hold.py" "$limit" "$prefix" "$work/$mode.holds")
    while ((SECONDS < stop)); do
        name=$tag/$mode/$kind/$number.$run
        HOLD_NAME=$name "$bin" lock -n "$limit" -child-exit-code -name "$name" "$prefix" "$child"
        status=$?
        echo "$name $status" >>"$work/$mode.runs"
        "$python" "$here/leftovers.py" "$name" >>"$work/$mode.leftovers" ||
            echo "(Consul could not be read after $name)" >>"$work/$mode.leftovers"
        run=$((run + 1))
    done >>"$work/$kind.$number.$mode.log" 2>&1
}

for spec in lock:1 semaphore:2; do
    mode=${spec%:*} limit=${spec#*:}
    prefix=$tag/$mode stop=$((SECONDS + seconds))
    : >"$work/$mode.holds" && : >"$work/$mode.runs" && : >"$work/$mode.leftovers"
    for ((i = 0; i < contenders; i++)); do
        for kind in conclave consul; do
            contend "$kind" "$i" "$mode" "$limit" "$prefix" "$stop" &
            pids+=($!)
        done
    done
    # The last runs finish a little after STOP (a waiter is granted once those before it
    # are done). One still running 30 s later is stuck: stopped, and reported by the
    # checker as a run that did not finish.
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null && ((SECONDS < stop + 30)); do sleep 0.2; done
        kill -0 "$pid" 2>/dev/null && echo "$tag/$mode/stuck/$pid stuck" >>"$work/$mode.runs"
    done
    stop_contenders
done

"$python" "$here/leftovers.py" "$tag" "$tag/lock" "$tag/semaphore" >"$work/final.leftovers" ||
    echo "(Consul could not be read)" >>"$work/final.leftovers"
report=$("$python" "$here/check.py" "$work" "$tag" lock:1 semaphore:2)
status=$?
if [ $status -ne 0 ]; then
    keep=1
    tail -n 5 "$work"/*.log >&2
fi
[ -z "$keep" ] || echo "work directory kept: $work" >&2
printf '%s\n' "$report"
exit $status
