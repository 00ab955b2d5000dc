"""GPU dispatch on numba-cuda's real launch path, the CUDA driver faked (issue 16's 20 us).

    taskset -c 0 python3 tools/bench_gpu_launch_host.py [--ops N]

tools/bench_gpu_host.py measures nnvmpy's own host time per op on the simulator, whose
kernel launch is nothing like numba-cuda's. Here numba.cuda is the real one, with the
driver faked as tools/gpu_compile_check.py fakes it (kernels compile to PTX; device
arrays are DeviceNDArrays over made-up addresses), and only the last step of a launch
stubbed: loading the compiled module (a cuModuleLoad on hardware) and cuda.core's
`launch` (a cuLaunchKernel). Everything before them runs: nnvmpy's dispatch, numba-cuda's
argument typing, overload lookup and marshalling, or kernel/cuda_fast.py's direct path.
Streams and events are stand-ins (an event has passed when first asked).

On hardware add the driver's own launch call (a few us) and the events' record and
query: bench_gpu.py's dispatch rows are the measure there. Pin to one core (taskset),
as bench_gpu_host.py explains. Needs NVVM and NVRTC (the test extra).
"""

from __future__ import annotations

import argparse
import os
import sys
import types
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_gpu_host
import gpu_compile_check

_launches = [0]


def _count_launch(*args: Any) -> None:
    _launches[0] += 1


def _fake_driver() -> None:
    """gpu_compile_check's fake driver, with launches going through numba-cuda's own
    path (its install compiles and returns instead) down to the module load and launch."""
    from numba.cuda import codegen, dispatcher

    call = dispatcher._LaunchConfiguration.__call__
    gpu_compile_check.install([])
    dispatcher._LaunchConfiguration.__call__ = call
    codegen.CUDACodeLibrary.get_cufunc = lambda self: types.SimpleNamespace(
        kernel=object(), name="stub"
    )
    dispatcher.launch = _count_launch  # numba-cuda's _Kernel.launch calls cuda.core's here
    from nnvmpy.kernel import cuda_fast

    cuda_fast._import_numba()
    cuda_fast._numba["launch"] = _count_launch


def resnet_host(batch: int, rounds: int) -> None:
    """Host time of bench_gpu's ResNet-18 training step (3x224x224, direct launches): the
    floor the step cannot go under on a GPU, whatever the kernels take there. Without
    CuPy here, its GEMMs take the tiled kernel's launch path, not cuBLAS's."""
    import time

    import bench_gpu
    import nnvmpy as nv
    from nnvmpy.kernel import cuda_fast

    cuda_fast.set_enabled(True)
    _, step, _ = bench_gpu.resnet_step(batch, 224, 64, 1000)
    step()  # compiles (or loads from the disk cache)
    nv.nd.waitall()
    best, launched = float("inf"), 0
    for _ in range(rounds):
        before, start = _launches[0], time.perf_counter()
        step()
        nv.nd.waitall()
        best = min(best, time.perf_counter() - start)
        launched = _launches[0] - before
    print(f" ResNet-18 training step, batch {batch}: {1e3 * best:.1f} ms on the host, "
          f"{launched} launches ({1e6 * best / launched:.1f} us each), "
          f"engine {type(nv.engine.get_engine()).__name__}")  # fmt: skip
    cuda_fast.set_enabled(None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--resnet",
        type=int,
        default=0,
        metavar="BATCH",
        help="also a ResNet-18 training step of this batch (64: bench_gpu's)",
    )
    args = parser.parse_args()
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        raise SystemExit("run without the simulator (NUMBA_ENABLE_CUDASIM unset)")
    missing = gpu_compile_check.nvvm_missing()
    if missing:
        raise SystemExit(f"bench_gpu_launch_host: cannot compile kernels here: {missing}")
    _fake_driver()
    import nnvmpy as nv
    from nnvmpy import nd
    from nnvmpy.kernel import cuda_fast

    n = args.ops
    print(f"GPU dispatch, numba-cuda's launch path with the driver faked, {n} ops of x = x + 1")
    results = {}
    for fast in (False, True):
        cuda_fast.set_enabled(fast)
        x = nd.ones((16,), ctx=nv.gpu(0))
        for _ in range(50):  # compile, and the first launch per thread (cuda_fast's resolve)
            x = x + 1
        nd.waitall()
        before = _launches[0]
        x, best = bench_gpu_host.measure_chain(x, n, args.rounds)
        launched = _launches[0] - before
        chains = 1 if isinstance(nv.engine.get_engine(), nv.engine.NaiveEngine) else 2
        want = chains * n * args.rounds
        assert launched == want, f"{launched} launches for {want} ops"
        label = "kernel/cuda_fast.py's direct launch" if fast else "numba-cuda's launch"
        print(f" {label} (NNVMPY_GPU_FAST_LAUNCH={int(fast)}):")
        bench_gpu_host.print_rows(best)
        results[fast] = best
    cuda_fast.set_enabled(None)
    saved = results[False]["worker"] - results[True]["worker"]
    print(f"  direct launches save {saved:.1f} us of the worker's time per op")
    if args.resnet:
        resnet_host(args.resnet, args.rounds)
    print(f"  load average {os.getloadavg()[0]:.2f}, cores {os.sched_getaffinity(0)}")


if __name__ == "__main__":
    main()
