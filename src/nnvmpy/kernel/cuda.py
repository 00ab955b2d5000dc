"""GPU launcher: a numba.cuda grid-stride loop around a device version of the scalar function.

    device_fn = numba.cuda.jit(device=True)(py_func)
    loop      = cuda.jit(<loop for this mode and argument pattern>)
    loop[blocks, threads, stream](out_flat, x_flat, a, b, c)

numba.cuda kernels take no star-args, and passing the arguments as one tuple costs
about 40 µs more per launch than flat arguments (numba-cuda types tuples slowly), so
the loop is made from a fixed template per (mode, which arguments are arrays) — see
kernel/cuda_loop.py. This module is imported on the first GPU launch only, and numba.cuda
when first needed, so the package works without the `gpu` extra. Under
NUMBA_ENABLE_CUDASIM=1 the same code runs in numba's simulator.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import threading
from typing import Any

import numpy as np

from ..base import Context, NNVMError
from . import cuda_fast
from .cuda_loop import loop_for
from .elementwise import ElementwiseKernel, launch_context
from .launch import flat
from .storage import device_view

GPU_DTYPES = frozenset(
    np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int32, np.int64, np.uint8)
)
_HALF = np.dtype(np.float16)
_LOW_FLOATS = frozenset((_HALF, np.dtype(np.float32)))  # outputs whose float scalars are float32
_SCALARS = (int, float, np.integer, np.floating)
THREADS_PER_BLOCK = 256
BLOCKS_PER_SM = 32  # grid-stride loops: enough blocks to fill the GPU, no more
SIM_SM_COUNT = 2  # context_sm_count under the simulator (read at each call: tests raise it)

# numba.cuda once get_cuda() has run. The loop templates (kernel/cuda_loop.py) must reach
# it as a module global: the simulator swaps a global `cuda` for its per-thread fake, not
# a closure cell.
cuda: Any = None
_state: dict[Any, Any] = {}  # "simulator", "array_types", "gpu_count", ("sm_count", id)
_state_lock = threading.Lock()
_SIMULATOR_LOCK = threading.RLock()


def get_cuda(kernel_name: str) -> Any:
    """numba.cuda, imported and checked once; a clear NNVMError when it cannot work."""
    global cuda
    if cuda is not None:
        return cuda
    with _state_lock:
        if cuda is not None:
            return cuda
        try:
            module = importlib.import_module("numba.cuda")
            from numba import config
        except ImportError as e:
            raise NNVMError(
                f"{kernel_name}: GPU kernels need numba-cuda (pip install 'nnvmpy[gpu]')"
            ) from e
        if not config.ENABLE_CUDASIM:  # type: ignore[attr-defined]
            from nnvmpy.kernel import numba_cuda_fixes

            numba_cuda_fixes.install()  # float16 -> int truncates; module loads serialised
        if not module.is_available():
            raise NNVMError(
                f"{kernel_name}: no CUDA GPU is available; set "
                "NUMBA_ENABLE_CUDASIM=1 before starting Python to use the simulator"
            )
        _state["simulator"] = bool(config.ENABLE_CUDASIM)  # type: ignore[attr-defined]
        if _state["simulator"]:
            from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

            from nnvmpy.kernel import sim_shared_fix

            _state["array_types"] = (FakeCUDAArray,)
            sim_shared_fix.install()  # its shared arrays race between a block's threads
        else:
            from numba.cuda.cudadrv.devicearray import DeviceNDArray

            _state["array_types"] = (DeviceNDArray,)
            _state["gpu_count"] = len(module.gpus)
            _quiet_small_grids()
        cuda = module
        return cuda


def _quiet_small_grids() -> None:
    """Turn off numba-cuda's warning for grids under 128 blocks, unless the user set
    NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS: a small array gets a small grid on purpose (one
    block for 100 elements), so it fired on most imperative ops, and under
    warnings-as-errors it failed them (seen on an H200 in the poles/domains tests)."""
    if "NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS" in os.environ:
        return
    # In the environment too: numba re-reads every config value from NUMBA_* variables at
    # its next compile whenever one of them changed, which undid the config write alone
    # (seen with tools/bench_gpu_launch_host.py: the warning came back after one compile).
    os.environ["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    for name in ("numba.cuda.core.config", "numba.core.config"):
        try:
            cfg = importlib.import_module(name)
        except ImportError:
            continue
        if hasattr(cfg, "CUDA_LOW_OCCUPANCY_WARNINGS"):
            cfg.CUDA_LOW_OCCUPANCY_WARNINGS = 0


def as_device_array(kernel_name: str, what: str, x: Any) -> Any:
    """x as a numba device array (converting other __cuda_array_interface__ objects)."""
    if isinstance(x, _state["array_types"]):
        return x
    if hasattr(x, "__cuda_array_interface__") and not _state["simulator"]:
        return cuda.as_cuda_array(x)
    where = "a NumPy (cpu) array" if isinstance(x, np.ndarray) else f"a {type(x).__name__}"
    raise NNVMError(
        f"{kernel_name}: {what} is {where}; a gpu launch expects CUDA arrays "
        "(copy with nnvmpy.kernel.storage.copy)"
    )


def launch_config(kernel_name: str, ctx: Any, n: int) -> tuple[int, int, Any, Any]:
    """(blocks, threads, stream, device context manager) for n work items on ctx."""
    cuda = get_cuda(kernel_name)
    dev = launch_context(kernel_name, ctx, None) if ctx is not None else Context("gpu", 0)
    if dev.device_type != "gpu":
        raise NNVMError(f"{kernel_name}: a CUDA kernel needs a gpu context, got {dev}")
    run_ctx = getattr(ctx, "run_ctx", None)
    stream = getattr(run_ctx, "stream", None) or 0
    if _state["simulator"]:  # every simulated thread is a Python thread: keep it small
        threads = min(n, 32)
        # the simulator keeps its kernel context in a module global: one launch at a time
        return min(math.ceil(n / threads), 4), threads, stream, _SIMULATOR_LOCK
    threads = min(THREADS_PER_BLOCK, 32 * math.ceil(n / 32))
    blocks = min(math.ceil(n / threads), BLOCKS_PER_SM * sm_count(kernel_name, dev.device_id))
    # Switching the current device costs ~6 µs; with one GPU there is nothing to switch.
    device = cuda.gpus[dev.device_id] if _state["gpu_count"] > 1 else contextlib.nullcontext()
    return blocks, threads, stream, device


def sm_count(kernel_name: str, device_id: int) -> int:
    """GPU `device_id`'s multiprocessor count, asked once: grids are sized to fill it."""
    key = ("sm_count", device_id)
    if key not in _state:
        cuda = get_cuda(kernel_name)
        with cuda.gpus[device_id]:
            _state[key] = cuda.get_current_device().MULTIPROCESSOR_COUNT
    return int(_state[key])


def context_sm_count(ctx: Any, kernel_name: str) -> int:
    """ctx's GPU's multiprocessor count, for kernels that split their work to fill it;
    SIM_SM_COUNT under the simulator. ctx: an OpContext or a Context (not None)."""
    if simulated():
        return SIM_SM_COUNT
    return sm_count(kernel_name, launch_context(kernel_name, ctx, None).device_id)


def simulated() -> bool:
    """Whether GPU kernels run in numba's simulator (NUMBA_ENABLE_CUDASIM=1), where every
    thread is a Python thread and hand-written kernels take smaller blocks."""
    from numba import config

    return bool(config.ENABLE_CUDASIM)  # type: ignore[attr-defined]


def launch_blocks(
    ctx: Any, name: str, kernel: Any, blocks: int, threads: int, args: tuple[Any, ...]
) -> None:
    """A hand-written kernel (its .dispatcher) on `blocks` blocks of `threads`, a block
    per work item (a row, a matrix, a slice of a line), the grid capped as every
    grid-stride launch is (launch_config for blocks * THREADS_PER_BLOCK items:
    BLOCKS_PER_SM blocks per SM on a GPU, 4 on the simulator): the kernel strides over
    the rest. Array arguments are passed flattened; 0 blocks launch nothing."""
    if blocks == 0:
        return
    cap, _, stream, device = launch_config(name, ctx, blocks * THREADS_PER_BLOCK)
    plain = (bool, int, float, np.generic)  # passed as they are
    flat_args = tuple(a if isinstance(a, plain) else flat(a) for a in args)
    with device:
        launch_kernel(kernel.dispatcher, min(blocks, cap), threads, stream, flat_args)


# ---------------------------------------------------------------- launch
def _check(kernel_name: str, what: str, a: Any, shape: tuple[int, ...]) -> Any:
    a = as_device_array(kernel_name, what, a)
    if a.dtype not in GPU_DTYPES:
        names = sorted(str(d) for d in GPU_DTYPES)
        raise NNVMError(
            f"{kernel_name}: {what} has dtype {a.dtype}, which gpu kernels do "
            f"not support; expected one of {names}"
        )
    if tuple(a.shape) != shape:
        raise NNVMError(
            f"{kernel_name}: {what} has shape {tuple(a.shape)} but out has "
            f"shape {shape}; array arguments must match out element-wise"
        )
    if not a.is_c_contiguous():
        raise NNVMError(
            f"{kernel_name}: {what} is not C-contiguous (strides "
            f"{tuple(a.strides)}); make a contiguous copy first"
        )
    if a.dtype == _HALF and not _half_supported():
        raise NNVMError(
            f"{kernel_name}: {what} is float16, which this GPU (compute "
            "capability < 5.3) cannot compute in"
        )
    if a.ndim == 1:
        return a
    if _state["simulator"] or a.size == 0:
        return a.reshape(a.size)
    return device_view(a, (a.size,), a.dtype)  # numba-cuda's reshape: ~3 us on the host


def _half_supported() -> bool:
    if "half" not in _state:
        cc = cuda.get_current_device().compute_capability
        _state["half"] = _state["simulator"] or tuple(cc) >= (5, 3)
    return bool(_state["half"])


def launch(
    kernel: ElementwiseKernel,
    dev: Context,
    ctx: Any,
    out: Any,
    mode: str,
    args: tuple[Any, ...],
    in_place: bool = False,  # the CPU loop's concern; a CUDA thread reads its own element
) -> None:
    """out[i] (+)= f(args[i]...) on a GPU; see ElementwiseKernel.launch."""
    name = kernel.name
    get_cuda(name)
    out = as_device_array(name, "out", out)
    shape = tuple(out.shape)
    out_flat = _check(name, "out", out, shape)
    flat: list[Any] = []
    pattern = ""
    low_float = out_flat.dtype in _LOW_FLOATS
    for i, a in enumerate(args):
        if isinstance(a, (float, np.floating)) and low_float:
            # the scalar in the output's precision (kernel/cpu.py's rule): float32 for a
            # float32 out, float16 then float32 for a float16 one (MXNet's half_t(scalar);
            # rounded here, exactly representable in float32, converted in the loop)
            flat.append(float(np.float16(a)) if out_flat.dtype == _HALF else float(a))
            pattern += "F"
        elif isinstance(a, _SCALARS):
            flat.append(a)
            pattern += "S"
        else:
            arg = _check(name, f"arg {i}", a, shape)
            flat.append(arg)
            pattern += "H" if arg.dtype == _HALF else "A"  # float16 computes in float32
    n = out_flat.size
    if n == 0:
        return
    loop = loop_for(kernel, mode, pattern, out_flat.dtype)
    blocks, threads, stream, device = launch_config(name, ctx if ctx is not None else dev, n)
    with device:
        launch_kernel(loop, blocks, threads, stream, (out_flat, *flat))


def planned_grid(
    kernel_name: str, ctx: Context, n: int, dtypes: Any
) -> tuple[int, int, Any] | None:
    """launch_config's (blocks, threads, device context) for n items on ctx, worked out
    for a planned launch; None where CUDA, the GPU or float16 arithmetic is missing (the
    checked launch then raises its error, per call, as before)."""
    try:
        get_cuda(kernel_name)
        blocks, threads, _, device = launch_config(kernel_name, ctx, n)
        if any(d == _HALF for d in dtypes) and not _half_supported():
            return None
    except Exception:
        return None
    return blocks, threads, device


def plain_launcher(
    kernel: ElementwiseKernel,
    mode: str | None,
    device_id: int,
    out_sig: tuple[tuple[int, ...], np.dtype],
    in_sigs: list[tuple[tuple[int, ...], np.dtype]],
    scalars: tuple[Any, ...],
) -> Any:
    """ElementwiseKernel.gpu_launcher: launch()'s checks, loop lookup and grid done once.

    Returns `fast(inputs, outputs, run_ctx)` for C-contiguous device arrays of exactly
    these shapes and dtypes, launching on run_ctx's stream; None off the plain path (the
    caller keeps launch()). On a GPU the worker's per-op host time is what dispatch costs.
    """
    shape, dtype = out_sig
    n = math.prod(shape)
    if (
        mode not in ("write", "add")
        or dtype not in GPU_DTYPES
        or not n
        or any(s != shape or d not in GPU_DTYPES for s, d in in_sigs)
        or any(type(v) is not float and type(v) is not int for v in scalars)
    ):
        return None
    grid = planned_grid(
        kernel.name, Context("gpu", device_id), n, [dtype, *(d for _, d in in_sigs)]
    )
    if grid is None:
        return None
    pattern = "".join("H" if d == _HALF else "A" for _, d in in_sigs)
    flat_scalars: list[Any] = []
    for v in scalars:
        if type(v) is float and dtype in _LOW_FLOATS:  # launch()'s rule for float scalars
            flat_scalars.append(float(np.float16(v)) if dtype == _HALF else v)
            pattern += "F"
        else:
            flat_scalars.append(v)
            pattern += "S"
    loop = loop_for(kernel, mode, pattern, dtype)
    return planned_launch(loop, grid, shape, tail=tuple(flat_scalars))


def flattener(shape: tuple[int, ...]) -> Any:
    """How a planned launch views C-contiguous device arrays of `shape` as 1-D (each in
    its own dtype); None when they are 1-D already."""
    if len(shape) == 1:
        return None
    n = math.prod(shape)
    if _state["simulator"]:
        return lambda a: a.reshape(n)
    return lambda a: device_view(a, (n,), a.dtype)


def planned_launch(
    loop: Any,
    grid: tuple[int, int, Any],
    shape: tuple[int, ...],
    head: tuple[Any, ...] = (),
    tail: tuple[Any, ...] = (),
) -> Any:
    """fast(inputs, outputs, run_ctx): loop[grid](*head, *outputs, *inputs, *tail) on
    run_ctx's stream, the arrays (all of `shape`) flattened; `grid` is launch_config's
    (blocks, threads, device context) for them, worked out once."""
    blocks, threads, device = grid
    flat = flattener(shape)
    lock = None if isinstance(device, contextlib.nullcontext) else device

    def fast(inputs: list[Any], outputs: list[Any], run_ctx: Any) -> None:
        if flat is None:
            args = (*head, *outputs, *inputs, *tail)
        else:
            args = (*head, *[flat(o) for o in outputs], *[flat(a) for a in inputs], *tail)
        stream = run_ctx.stream or 0
        if lock is None:
            launch_kernel(loop, blocks, threads, stream, args)
        else:
            with lock:
                launch_kernel(loop, blocks, threads, stream, args)

    return fast


def launch_kernel(dispatcher: Any, blocks: Any, threads: Any, stream: Any, args: Any) -> None:
    """dispatcher[blocks, threads, stream](*args), each size an int or a tuple of up to
    three; with NNVMPY_GPU_FAST_LAUNCH=1 and one GPU, directly after a kernel's first
    launch on each thread (kernel/cuda_fast.py keeps a kernel's loaded function per
    thread, not per device)."""
    if not _state["simulator"] and _state["gpu_count"] == 1 and cuda_fast.enabled():
        cuda_fast.launch(dispatcher, blocks, threads, stream, tuple(args))
    else:
        dispatcher[blocks, threads, stream](*args)
