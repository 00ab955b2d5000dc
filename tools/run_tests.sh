#!/usr/bin/env bash
# The test command of the README: CPU tests, then GPU code paths on the CUDA simulator.
# Fails when a run collects no test (pytest exit 5), as well as on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

run() {
    "$@"
    local rc=$?
    if [ "$rc" -eq 5 ]; then
        echo "error: no tests were collected by: $*" >&2
        exit 1
    fi
    if [ "$rc" -ne 0 ]; then
        exit "$rc"
    fi
}

run python -m pytest -q -n 2 -m "not gpu and not slow and not mxnet" "$@"
NUMBA_ENABLE_CUDASIM=1 run python -m pytest -q -m gpu "$@"
