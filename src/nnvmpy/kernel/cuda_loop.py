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
# Each thread takes UNROLL elements a stride apart at a time, loading all of them before it
# stores any: an element-wise op is bound by memory, and one element per pass left the H200
# short of loads in flight (elemwise_add at 0.65x, relu at 0.56x of a copy's bandwidth).
# Loading first is safe where out is an input too: element i reads only element i.
# Indices are unsigned: numba checks a signed index for a negative value on every access
# (a shift, a mask and an add, in 64 bits), half of the unrolled loop's 70 instructions
# per four elements of x + y, where the H200's integer units, not its memory, set the pace.
# Bump when the loop template or its namespace changes meaning (part of the disk-cache key).
_TEMPLATE_VERSION = "3"
UNROLL = 4
_LOOP_TEMPLATE = """
def loop(out, {params}):
{prologue}    n = uint64(out.size)
    stride = uint64(cuda.gridsize(1))
    i = uint64(cuda.grid(1))
    while i + uint64({last}) * stride < n:
{indices}{loads}{stores}        i += uint64({unroll}) * stride
    while i < n:
        out[i] {assign} {value}
        i += stride
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
    prologue = "".join(
        f"    s{k} = float32(a{k})\n" for k, kind in enumerate(pattern) if kind == "F"
    )
    assign = "+=" if mode == "add" else "="
    reads_out = mode == "add"  # the value reads out[i] (written as `out[i] +=` below)

    def element(index: str, loaded: bool) -> str:
        """f's value at `index`: from the arrays there, or from their loaded copies."""
        items = []
        for k, (n, kind) in enumerate(zip(names, pattern, strict=True)):
            if loaded and kind in "AH":
                items.append(f"x{k}_{index}")
            else:
                items.append(_ITEMS[kind].format(n=n, k=k).replace("[i]", f"[{index}]"))
        value = f"f({', '.join(items)})"
        if half_out:
            old = f"o_{index}" if loaded else f"out[{index}]"
            return f"float32({old}) + float32({value})" if mode == "add" else f"float32({value})"
        if mode == "add" and cast is not None:
            return f"cast({value})"
        return value

    indices = [f"i{u}" if u else "i" for u in range(UNROLL)]
    body = [f"        i{u} = {indices[u - 1]} + stride\n" for u in range(1, UNROLL)]
    loads, stores = [], []
    for ix in indices:
        for k, kind in enumerate(pattern):
            if kind in "AH":
                load = _ITEMS[kind].format(n=names[k], k=k).replace("[i]", f"[{ix}]")
                loads.append(f"        x{k}_{ix} = {load}\n")
        if reads_out:
            loads.append(f"        o_{ix} = out[{ix}]\n")
        value = element(ix, True)
        if reads_out and not half_out:
            stores.append(f"        out[{ix}] = o_{ix} + {value}\n")
        else:
            stores.append(f"        out[{ix}] = {value}\n")
    if half_out and mode == "add":
        assign = "="
    value = element("i", False)
    source = _LOOP_TEMPLATE.format(
        params=", ".join(names), prologue=prologue, assign=assign, value=value,
        last=UNROLL - 1, unroll=UNROLL, indices="".join(body), loads="".join(loads),
        stores="".join(stores),
    )  # fmt: skip
    namespace = {"cuda": cuda, "f": f, "cast": cast, "float32": np.float32, "uint64": np.uint64}
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
