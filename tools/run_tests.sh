#!/usr/bin/env bash
# The README's test command: CPU tests, MXNet's own tests that pass, the GPU code paths
# on the CUDA simulator, then their kernels compiled for a real GPU's target.
# Fails on any failure, and also when a run collects no test (pytest's exit code 5).
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python}"

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

# --durations: the slowest tests in CI's output, to see where its time limit goes
run "$PYTHON" -m pytest -q -n 2 --durations=15 -m "not gpu and not mxnet" "$@"
# MXNet 1.9.1's own unit tests that pass on nnvmpy (tests/mxnet_compat/passing.txt) keep passing
run "$PYTHON" tools/mxnet_compat.py --check
NUMBA_ENABLE_CUDASIM=1 run "$PYTHON" -m pytest -q -n 2 --durations=15 -m gpu "$@"
# every kernel those tests launch, compiled for a real GPU (sm_90 PTX) with the driver faked:
# the simulator runs kernels as Python and cannot tell what numba-cuda fails to compile;
# and every direct launch (kernel/cuda_fast.py) compared with numba-cuda's own
run "$PYTHON" tools/gpu_compile_check.py --fast-launch
