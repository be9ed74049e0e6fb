#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Builds the libFuzzer targets (the fuzz preset: clang, ASan + UBSan) and runs each for
# SECONDS (default 60) on a copy of its seed corpus (fuzz/corpus/<target>/, never grown
# here), as many targets at a time as there are processors. Prints `fuzz: <target> runs=<N>
# crashes=<C>` per target and exits non-zero when a target crashed, leaked, hung or ran out
# of memory; the input that did it is left in build/fuzz/runs/<target>/ (with the log).
# docs/reliability.md has the rest.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh --build-only [TARGET...]
#
# Environment: FUZZ_JOBS (build parallelism and targets run at once, default: the number of
# processors), FUZZ_ARGS (more libFuzzer options for every target, e.g. "-seed=1").
set -euo pipefail
cd "$(dirname "$0")/.."

build_only=false
seconds=60
if [ "${1:-}" = --build-only ]; then
    build_only=true
    shift
elif [ $# -gt 0 ]; then
    seconds=$1
    shift
fi
jobs=${FUZZ_JOBS:-$(nproc)}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_client_response fuzz_agent_request fuzz_cli_parse)

# Longest input per target: a few Consul answers / requests on one connection; a command
# line.
max_len() {
    case "$1" in
    fuzz_cli_parse) echo 1024 ;;
    *) echo 16384 ;;
    esac
}

# clang and its libFuzzer runtime (Debian: clang, libclang-rt-14-dev), installed if missing.
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1; then
    scripts/setup.sh clang libclang-rt-14-dev
fi

start=$(date +%s)
echo "=== fuzz: configure and build"
cmake --preset fuzz >/dev/null
if ! cmake --build --preset fuzz --parallel "${jobs}" --target "${targets[@]}" \
    >build/fuzz/build.log 2>&1; then
    tail -n 40 build/fuzz/build.log
    echo "fuzz: build failed (build/fuzz/build.log)"
    exit 1
fi
echo "=== fuzz: built in $(($(date +%s) - start)) s"
[ "${build_only}" = true ] && exit 0

# One target's run: its exit status says whether it was clean, its report goes to
# build/fuzz/runs/<target>.report.
run_target() {
    local target=$1 out=build/fuzz/runs/$1 rc runs crashes note status=0
    rm -rf "${out}" "${out}.report"
    mkdir -p "${out}/corpus"
    cp fuzz/corpus/"${target}"/* "${out}/corpus/"
    dict=()
    [ -f fuzz/dict/"${target}".dict ] && dict=(-dict=fuzz/dict/"${target}".dict)
    # -timeout: an input running 10 s is a hang; -rss_limit_mb: libFuzzer's default, said.
    # shellcheck disable=SC2086 # FUZZ_ARGS is a list of options
    if build/fuzz/fuzz/"${target}" "${out}/corpus" "${dict[@]}" -max_len="$(max_len "${target}")" \
        -max_total_time="${seconds}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="${out}/" ${FUZZ_ARGS:-} >"${out}/log" 2>&1; then
        rc=0
    else
        rc=$?
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "${out}/log" | tail -n 1)
    crashes=$(find "${out}" -maxdepth 1 -type f \
        \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    note=""
    if [ "${rc}" -ne 0 ] && [ "${crashes}" -eq 0 ]; then
        if grep -q 'libFuzzer: run interrupted' "${out}/log"; then
            note=" (interrupted by SIGINT or SIGTERM: the run is incomplete)"
            status=1
        else
            crashes=1 # died without writing its input (e.g. killed)
        fi
    fi
    {
        echo "fuzz: ${target} runs=${runs:-0} crashes=${crashes}${note}"
        if [ "${crashes}" -ne 0 ]; then
            status=1
            grep -E -m 1 -A 12 '^==[0-9]+==|^SUMMARY|deadly signal|Boost assertion' \
                "${out}/log" || true
            find "${out}" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
                -o -name 'timeout-*' -o -name 'oom-*' \) -printf '  input: %p\n'
        fi
    } >"${out}.report"
    return "${status}"
}

# The targets run side by side, up to ${jobs} at a time; reports in the targets' order.
pids=()
for target in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "${jobs}" ]; do
        wait -n || true
    done
    run_target "${target}" &
    pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
    wait "${pids[$i]}" || status=1
    cat "build/fuzz/runs/${targets[$i]}.report" 2>/dev/null ||
        echo "fuzz: ${targets[$i]} did not run (build/fuzz/runs/${targets[$i]}/)"
done
echo "=== fuzz: done in $(($(date +%s) - start)) s"
exit "${status}"
