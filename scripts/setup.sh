#!/usr/bin/env bash
# SPDX-License-Identifier: BSL-1.0
# Installs the Debian packages conclave's build, tests and benchmarks need.
# Idempotent and quiet when everything is already installed; runs `apt-get update` only
# when something is missing.
set -euo pipefail

packages=(
    g++ cmake ninja-build pkg-config
    # rebuilds reuse compiled objects (cmake/ccache.cmake)
    ccache
    libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
    catch2 libssl-dev python3
    # the asan preset and the fuzzers: clang with its sanitizer and libFuzzer runtimes
    clang libclang-rt-14-dev
    # benchmarks: charts (conclave-bench --plot) and the python-consul peer
    gnuplot-nox python3-consul
    # compose/: its files are checked with `docker-compose config` (no container engine)
    docker-compose
    # the API reference: the docs target, and its test that doxygen reports no warning
    doxygen
)
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$p")
    fi
done

# The npm consul peer (bench/peers/node), from its committed lock file, only when missing.
install_node_peer() {
    local dir=bench/peers/node
    [ -d "$dir/node_modules/consul" ] && return 0
    if command -v npm >/dev/null 2>&1; then
        echo "setup: npm ci in $dir"
        (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    else
        echo "setup: npm not found: the node peer of conclave-bench will be skipped" >&2
    fi
}
cd "$(dirname "$0")/.."
install_node_peer

[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
