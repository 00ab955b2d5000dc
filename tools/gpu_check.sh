#!/usr/bin/env bash
# Issue 16's hardware check in ONE device call: versions, the CuPy-layer tests, every
# gpu-marked test on the real GPU, the GPU benchmark, the device time per kernel of a
# ResNet-18 step and of the bench rows (tools/gpu_kernel_times.py), then stream-ordered
# completion (engine/fences.py, off by default) measured and tested, and the dispatch
# profiled per engine setting (tools/profile_gpu.py); each step's output in $OUT.
#
#   run(command="bash tools/gpu_check.sh", timeout_s=600,
#       carry=[".gpu_models", ".gpu_kernel_cache"])
#
# .gpu_models (optional, git-ignored by the caller): a copy of ../shared/models, so the
# model tests and bench_gpu use MXNet's ResNet-18 symbol file (without it bench_gpu builds
# the same network itself, and tests/test_models.py skips).
#
# .gpu_kernel_cache/ (optional, git-ignored): the kcache.N.tgz parts an earlier run sent
# back (copy them there from the call's files). Compiled GPU kernels are cached on disk
# (kernel/disk_cache.py), and only entries made on this image load here (its Python,
# numba-cuda and NVRTC; the cubins are sm_90a): with them carried, kernels the last run
# compiled are loaded, not compiled again (while the checkout's path there stays the
# same: numba names the cache folder by the source folder's path). Each run sends back
# what the cache then holds, in parts of at most 15 MiB (tools/pack_parts.py).
#
# What comes back (the device tool returns at most 8 files): summary.txt, bench.json,
# kernels.txt, matrix.txt, logs.tgz (versions, gpu_hw, bench, tests, junit.xml) and up to
# three kcache.N.tgz.
#
# Steps run in priority order within GPU_CHECK_BUDGET_S seconds (default 540, under the
# device tool's 600 s per call), each capped (`cap`) so that a slow one leaves the rest
# their turn, and each writes its log as it goes, so a step cut short still reports how
# far it got. The suite runs early: it compiles most kernels, which the bench then loads
# from the disk cache. GPU_CHECK_STEPS (default hw,suite,bench,kernels,fenced_bench,
# fenced_suite,profile) picks and orders them: a second call on the still-warm machine
# (its /tmp cache kept) can run what the first had no time for, e.g.
#   run(command="GPU_CHECK_STEPS=fenced_suite,profile bash tools/gpu_check.sh", ...)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
BUDGET="${GPU_CHECK_BUDGET_S:-540}"
WORKERS="${GPU_CHECK_WORKERS:-14}"
STEPS="${GPU_CHECK_STEPS:-hw,suite,bench,kernels,fenced_bench,fenced_suite,profile}"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 NUMBA_ENABLE_CUDASIM=0
# the CuPy layer and direct launches (kernel/cuda_fast.py) are the defaults; set here too,
# so an environment that turned them off still checks them (a failure names the kernel)
export NNVMPY_CUPY="${NNVMPY_CUPY:-1}"
export NNVMPY_GPU_FAST_LAUNCH="${NNVMPY_GPU_FAST_LAUNCH:-1}"
export NUMBA_CACHE_DIR="${NUMBA_CACHE_DIR:-/tmp/gpu_kernel_cache}"
mkdir -p "$NUMBA_CACHE_DIR"
for part in .gpu_kernel_cache/*.tgz .gpu_kernel_cache.tgz; do
    [ -f "$part" ] && tar xzf "$part" -C "$NUMBA_CACHE_DIR"
done
LOGS="$OUT/logs"  # packed into logs.tgz at the end
mkdir -p "$LOGS"
SECONDS=0

left() { echo $((BUDGET - SECONDS)); }
step() { echo "== $* ($SECONDS s of $BUDGET)" | tee -a "$OUT/summary.txt"; }

step versions
{
    date -u
    nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv
    "$PY" - <<'EOF'
import importlib.metadata as md, sys
print(sys.version)
for name in ("numpy", "numba", "numba-cuda", "cupy-cuda13x", "cupy-cuda12x", "torch",
             "torchvision", "pytest", "pytest-xdist", "pytest-timeout", "hypothesis"):
    try:
        print(f"{name} {md.version(name)}")
    except md.PackageNotFoundError:
        pass
from nnvmpy.kernel import gpu_lib
print("CuPy layer:", gpu_lib.unavailable_reason() or "in use")
EOF
} >"$LOGS/versions.txt" 2>&1
cat "$LOGS/versions.txt"

if [ -d .gpu_models ] && [ ! -e ../shared/models ]; then
    mkdir -p ../shared && ln -sfn "$PWD/.gpu_models" ../shared/models
fi

# Each step is capped so that one slow step cannot starve the rest: cap SECONDS -> the
# smaller of SECONDS and what is left (less a margin for packing the results).
cap() { local c=$(( $(left) - 15 )); echo $(( c < $1 ? (c > 5 ? c : 5) : $1 )); }

step_hw() {
    step "tests/gpu_hw: cuBLAS GEMM, views, streams, CuPy's pool, direct launches (cuda_fast)"
    timeout "$(cap 120)" "$PY" -m pytest -q -m gpu tests/gpu_hw \
        -n "$(( WORKERS < 8 ? WORKERS : 8 ))" -p no:cacheprovider -rfEs \
        >"$LOGS/gpu_hw.txt" 2>&1
    echo "exit $?" >>"$LOGS/gpu_hw.txt"
    tail -n 15 "$LOGS/gpu_hw.txt" | tee -a "$OUT/summary.txt"
}

step_suite() {
    step "every gpu-marked test on hardware (-n $WORKERS)"
    # -v: one line per test as it ends, so a cut-short run still names what failed; the
    # bench smoke test is left out (bench_gpu runs for real); it compiles most kernels, so
    # the steps after it find them in the disk cache
    timeout "$(cap 240)" "$PY" -m pytest -v -m gpu tests -n "$WORKERS" \
        -p no:cacheprovider --ignore=tests/gpu_hw --ignore=tests/test_bench_gpu.py -rfEs \
        --durations=15 --junitxml="$LOGS/junit.xml" >"$LOGS/tests.txt" 2>&1
    echo "exit $?" >>"$LOGS/tests.txt"
    {
        grep -E "^(FAILED|ERROR)" "$LOGS/tests.txt" | head -n 60
        grep -cE " PASSED " "$LOGS/tests.txt" | sed 's/^/passed lines: /'
        tail -n 5 "$LOGS/tests.txt"
    } | tee -a "$OUT/summary.txt"
}

step_bench() {
    step "tools/bench_gpu.py"
    timeout "$(cap 200)" "$PY" tools/bench_gpu.py --json "$OUT/bench.json" 2>&1 \
        | tee "$LOGS/bench.txt"
    echo "exit ${PIPESTATUS[0]}" | tee -a "$LOGS/bench.txt"
    cat "$LOGS/bench.txt" >>"$OUT/summary.txt"
}

step_kernels() {
    step "tools/gpu_kernel_times.py: device time per kernel of a ResNet-18 step, bench rows"
    # --layers: bench_gpu's elementwise and layers rows too, wall time per call beside their
    # kernels' device time (is a slow row its kernels or the dispatch around them?)
    timeout "$(cap 90)" "$PY" tools/gpu_kernel_times.py --layers --out "$OUT" >/dev/null \
        2>"$LOGS/kernel_times.err"
    echo "exit $?" | tee -a "$OUT/summary.txt"
    head -n 30 "$OUT/kernels.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
    grep -E "^ +[0-9.]+ +[0-9.]+ +[0-9]+  [^ ]" "$OUT/kernels.txt" 2>/dev/null \
        | tee -a "$OUT/summary.txt"
}

step_fenced_bench() {
    step "stream-ordered completion (NNVMPY_GPU_STREAM_ORDER=1): bench_gpu but GEMM"
    # dependent ops no longer wait for each other on the host: the element-wise and layers
    # rows (each call writes what the next reads) and the ResNet step and dispatch rows
    NNVMPY_GPU_STREAM_ORDER=1 timeout "$(cap 80)" "$PY" tools/bench_gpu.py \
        --only elementwise,dispatch,layers,resnet --torch none 2>&1 \
        | grep -E "nnvmpy |us/op|GB/s" | tee -a "$OUT/summary.txt"
}

step_fenced_suite() {
    step "stream-ordered completion (NNVMPY_GPU_STREAM_ORDER=1): the gpu suite"
    NNVMPY_GPU_STREAM_ORDER=1 timeout "$(cap 240)" "$PY" -m pytest -q -m gpu tests \
        -n "$WORKERS" -p no:cacheprovider --ignore=tests/test_bench_gpu.py -rfE \
        >"$LOGS/tests_fenced.txt" 2>&1
    echo "exit $?" >>"$LOGS/tests_fenced.txt"
    { grep -E "^(FAILED|ERROR)" "$LOGS/tests_fenced.txt" | head -n 40
      tail -n 3 "$LOGS/tests_fenced.txt"; } | tee -a "$OUT/summary.txt"
}

step_profile() {
    step "tools/profile_gpu.py --only matrix: the dispatch per engine and launch setting"
    timeout "$(cap 120)" "$PY" tools/profile_gpu.py --only matrix --ops 2000 \
        --out "$OUT" >/dev/null 2>&1
    echo "exit $?" | tee -a "$OUT/summary.txt"
    grep -E "^(## |x = x)" "$OUT/matrix.txt" 2>/dev/null | tee -a "$OUT/summary.txt"
}

# GPU_CHECK_STEPS picks and orders the steps (a second call on the still-warm machine can
# run what the first had no time for); a step starts only with 30 s or more left
for name in ${STEPS//,/ }; do
    if [ "$(left)" -lt 30 ]; then
        step "skipped $name: $(left) s left"
        continue
    fi
    "step_$name"
done

# the GPU entries only (kernel/disk_cache.py's GPU_ENTRY_MARK follows the Python tag in
# their names), in parts the device tool sends back
"$PY" tools/pack_parts.py "$NUMBA_CACHE_DIR" "$OUT/kcache" --parts 3 2>&1 \
    | tee -a "$OUT/summary.txt"
(cd "$LOGS" && tar czf "$OUT/logs.tgz" .) && rm -rf "$LOGS"
step done
