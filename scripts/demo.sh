#!/usr/bin/env bash
# Sets up, builds and runs the demo on the embedded dev agent.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target conclave_cli conclave_demo
exec build/default/bench/conclave_demo "$@"
