"""The grid-stride loops of element-wise kernels on a GPU: the one template they are made
from (why a template: kernel/cuda.py's docstring), a variant per (mode, argument
pattern, out dtype), built and cached per kernel; kernel/cuda.py launches them.

A loop's names beyond its arguments are globals of its exec namespace, and `cuda` there
is kernel/cuda.py's module global `cuda` (numba.cuda once get_cuda has run), read when
the loop is made: the simulator swaps a global `cuda` for its per-thread fake, never a
closure cell. kernel/cuda.py imports this module; it imports kernel/cuda.py back only
inside functions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .elementwise import ElementwiseKernel

_HALF = np.dtype(np.float16)

# The only generated code: a fixed loop, filled in with the argument list. `cuda` must be
# a global of the loop (the simulator swaps a global `cuda` for its per-thread fake).
# Bump when the loop template or its namespace changes meaning (part of the disk-cache key).
_TEMPLATE_VERSION = "1"
_LOOP_TEMPLATE = """
def loop(out, {params}):
{prologue}    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] {assign} {value}
"""


# what the loop passes f for each argument kind of a pattern (see make_loop)
_ITEMS = {"A": "{n}[i]", "H": "float32({n}[i])", "F": "s{k}", "S": "{n}"}


def make_loop(f: Any, mode: str, pattern: str, cast: Any = None, half_out: bool = False) -> Any:
    """The Python loop for `pattern`, not yet jitted: per argument 'A' an array, 'H' a
    float16 array loaded as float32, 'S' a scalar passed as it is, 'F' a float scalar the
    loop converts to float32 once, before the grid-stride loop (as the CPU loop does for
    float32 and float16 outputs: MXNet's `x op DType(scalar)`; a float64 scalar would make
    numba compute `x * s` in float64 and round once, which differs from the CPU's float32
    product in the last bit).

    With `cast` (a NumPy scalar type) an add loop converts f(...) to it before adding, as
    MXNet's KERNEL_ASSIGN does: an int32 `out += 2.7` adds 2, not 2.7 then truncates.

    float16 computes as the CPU does (kernel/cpu.py's float32 copies): 'H' arguments are
    widened on load, f runs on float32, and a float16 out (`half_out`) receives f's value
    rounded to float32 and then once to float16 on the store; an add loop adds in float32
    (float32(out[i]) + float32(f(...))) and rounds the sum once. Computing in float16
    rounded every intermediate result instead (x*y + x: two roundings to 11 bits).
    """
    from nnvmpy.kernel.cuda import cuda  # the module global, as get_cuda has set it

    names = [f"a{k}" for k in range(len(pattern))]
    items = [
        _ITEMS[kind].format(n=n, k=k)
        for k, (n, kind) in enumerate(zip(names, pattern, strict=True))
    ]
    prologue = "".join(
        f"    s{k} = float32(a{k})\n" for k, kind in enumerate(pattern) if kind == "F"
    )
    value = f"f({', '.join(items)})"
    assign = "+=" if mode == "add" else "="
    if half_out:
        value = f"float32(out[i]) + float32({value})" if mode == "add" else f"float32({value})"
        assign = "="
    elif mode == "add" and cast is not None:
        value = f"cast({value})"
    source = _LOOP_TEMPLATE.format(
        params=", ".join(names), prologue=prologue, assign=assign, value=value
    )
    namespace = {"cuda": cuda, "f": f, "cast": cast, "float32": np.float32}
    tag = f"{mode}{' half' if half_out else ''} {pattern}"
    # the file name kernel/cuda.py's loops have always had (gpu_compile_check reports it)
    exec(compile(source, f"<nnvmpy.kernel.cuda loop {tag}>", "exec"), namespace)
    return namespace["loop"]


def build_loop(
    kernel: ElementwiseKernel, mode: str, pattern: str, cast: Any = None, half_out: bool = False
) -> Any:
    """The numba.cuda dispatcher for one variant; compiles per dtype signature on launch."""
    from nnvmpy.kernel.cuda import _state, get_cuda
    from nnvmpy.kernel.device import for_device  # device functions it calls: their GPU builds

    cuda = get_cuda(kernel.name)
    device_fn = kernel.variant(
        ("gpu", "device_fn"), lambda: cuda.jit(device=True)(for_device(kernel.py_func, "gpu"))
    )
    loop = make_loop(device_fn, mode, pattern, cast, half_out)
    dispatcher = cuda.jit(loop)
    if not _state["simulator"]:  # cached on disk, keyed by the loop's and body's code
        from nnvmpy.kernel.disk_cache import enable_cuda_cache

        tag = f"cuda{_TEMPLATE_VERSION}-{_loop_tag(mode, pattern, cast, half_out)}"
        enable_cuda_cache(dispatcher, device_fn.py_func, tag, loop)
    return dispatcher


def _loop_tag(mode: str, pattern: str, cast: Any = None, half_out: bool = False) -> str:
    """The variant in a disk-cache file name: mode, pattern, the add loop's cast type."""
    cast_name = "" if cast is None else f"-{np.dtype(cast).str[1:]}"
    return f"{mode}-{pattern or 'none'}{cast_name}{'-half' if half_out else ''}"


def loop_for(kernel: ElementwiseKernel, mode: str, pattern: str, out_dtype: np.dtype) -> Any:
    """The compiled-on-launch loop of `kernel` for a mode, argument pattern and out dtype."""
    key: tuple[str, ...] = ("gpu", mode, pattern)
    cast = None
    half_out = out_dtype == _HALF
    if half_out:  # float32 values, rounded once on the store (make_loop)
        key += ("half",)
    elif mode == "add":
        cast = out_dtype.type
        key += (out_dtype.str,)
    return kernel._variants.get(key) or kernel.variant(
        key, lambda: build_loop(kernel, mode, pattern, cast, half_out)
    )
