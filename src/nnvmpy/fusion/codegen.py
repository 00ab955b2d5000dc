"""One generated kernel per fused group: the members' scalar functions in one loop.

For a group `t0 = exp(x); t1 = t0 * y; out = t1 + 1` the CPU source reads

    def fused(n, o0, a0, a1, p0):
        for i in range(n):                        # prange in the parallel kernel
            x0 = a0[i]; x1 = a1[i]                # every input is read first, so any
            t0 = c_float32(k0(x0))                # output may share an input's memory
            t1 = c_float32(k1(t0, x1))
            t2 = c_float32(k2(t1, p0))
            o0[i] = t2                            # or o0[i] += cast(t2) for req add

where k<m> is member m's scalar function (its CPU build, which numba inlines). A group
gets a serial kernel for launches below SERIAL_CUTOFF elements and, on first need, a
parallel one (numba.njit(parallel=True) around the prange loop) for the others:
compiling the parfor costs ~4x the serial loop, and most groups never see a large array.
Every intermediate is converted (c_<dtype>) as its unfused array would hold it: an
integer truncated, a float rounded to its dtype. A member that computes in float64 for a
float32 array (a Python number in its body promotes, e.g. `x / (1 + abs(x))`) would
otherwise turn the rest of the chain into float64 (half the vector width, and
kernel.vmath's float32 bodies skipped: a chain with two sigmoids ran 14x slower); the
conversions are vector instructions and cost little. Float32 groups get float32 scalar
parameters (fusion/compute.py), as MXNet computes `x * DType(scalar)`.
Parameters are arguments, so one kernel serves every parameter value. The GPU source is
the same body in a grid-stride numba.cuda loop, four elements a stride apart per pass
(all loaded before any is stored, unsigned indices: kernel/cuda_loop.py's rules).
float16 computes in float32 on both devices and is rounded once on the store: the CPU
loop gets float32 copies, the GPU loop loads float16 inputs as float32
(`x0 = np.float32(a0[i])`), see body_lines.

Caching. The source is written to NNVMPY_FUSION_CACHE_DIR under a name hashed from the
source and the code of every member function, and compiled with numba's cache=True, so a
second process finds the compiled machine code on disk and compiles nothing. GPU
kernels are cached the same way, by kernel/disk_cache.py (numba-cuda's cache with
nnvmpy's key: the source and every member function it reaches). Within a process each
kernel is built once (a dict keyed the same way).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import threading
import types as pytypes
import weakref
from pathlib import Path
from typing import Any

import numpy as np

from .. import config
from ..base import NNVMError
from .spec import FusedSpec

# Bump when the generated code changes meaning (part of the cache key).
_CODEGEN_VERSION = "5"
_HALF = np.dtype(np.float16)
_built: dict[str, Any] = {}
_lock = threading.RLock()
#: member scalar function -> _member_digest: walked once per function, not per fused node
#: (an unrolled LSTM's first step ran 800 fused nodes over the same few functions)
_digests: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
#: (FusedSpec.layout, dtypes, requests, device, ...) -> what `build` returned for it
_by_layout: dict[tuple[Any, ...], Any] = {}


def _arg_text(src: int, idx: int) -> str:
    return f"x{idx}" if src < 0 else f"t{src}_{idx}"


def body_lines(
    spec: FusedSpec,
    member_types: list[list[Any]],
    out_types: list[Any],
    modes: tuple[str | None, ...],
    device: str,
    in_types: list[Any] | None = None,
    in_place: tuple[tuple[int, int], ...] = (),
) -> list[str]:
    """The statements computing element i (inputs read first, outputs stored last).

    in_place: (input j, output o) pairs where a<j> is o<o> itself; a<j> is read from o<o>
    then (compute.py: an aliased pair fails LLVM's no-overlap check and the whole loop
    runs scalar, 20x slower with vector math).

    float16 computes in float32 on both devices, rounded once on the store: the CPU
    gets float32 copies of float16 arrays (fusion/compute.py), the GPU loads a float16
    input as float32 (`in_types`), keeps float16 members' values in float32 (_type_name)
    and adds to a float16 output in float32 before the store rounds the sum. Computing
    in float16 rounded every intermediate (x * y + x: two roundings to 11 bits).
    """
    halves = {j for j, t in enumerate(in_types or ()) if t is not None and np.dtype(t) == _HALF}
    source = {j: f"o{o}" for j, o in in_place} if device == "cpu" else {}
    lines = [
        f"x{j} = np.float32(a{j}[i])"
        if device == "gpu" and j in halves
        else f"x{j} = {source.get(j, f'a{j}')}[i]"
        for j in range(spec.num_inputs)
    ]
    pk = 0
    for m, member in enumerate(spec.members):
        params = [f"p{pk + q}" for q in range(len(member.body.params))]
        pk += len(params)
        args = ", ".join([_arg_text(s, i) for s, i in member.args] + params)
        for k in range(member.num_outputs):
            call = f"k{m}_{k}({args})"
            # each value as its unfused array would hold it: an integer truncated, a float
            # rounded to its dtype (a member computing in float64 because of a Python float
            # in its body, e.g. relu's `x * 0`, must not turn the rest of a float32 chain
            # into float64: half the vector width, and kernel.vmath's float32 bodies skipped)
            lines.append(f"t{m}_{k} = c_{_type_name(member_types[m][k])}({call})")
    for o, ((src, idx), mode) in enumerate(zip(spec.outputs, modes)):
        if mode == "write":
            lines.append(f"o{o}[i] = t{src}_{idx}")
        elif mode == "add" and device == "gpu" and np.dtype(out_types[o]) == _HALF:
            lines.append(f"o{o}[i] = np.float32(o{o}[i]) + co{o}(t{src}_{idx})")
        elif mode == "add":  # as MXNet's KERNEL_ASSIGN: convert, then add
            lines.append(f"o{o}[i] += co{o}(t{src}_{idx})")
    return lines


def _type_name(dtype: Any) -> str:
    d = np.dtype(dtype)
    if d == _HALF:
        return "float32"  # float16 values are kept in float32 (body_lines); the store rounds
    return d.name


_CPU = """
def fused(n{params}):
    for i in {range}(n):
{body}
"""
# The GPU loop takes UNROLL elements a stride apart per pass, loading every input of all
# of them before it computes or stores any, with unsigned indices: as kernel/cuda_loop.py's
# element-wise loops, for the same reasons (loads in flight; no negative-index check per
# access). Loading first is safe where an output is an input too: element i reads only
# element i.
UNROLL = 4
_GPU = """
def fused(n{params}):
{prologue}    n = np.uint64(n)
    stride = np.uint64(cuda.gridsize(1))
    i = np.uint64(cuda.grid(1))
    while i + np.uint64({last}) * stride < n:
{unrolled}        i += np.uint64({unroll}) * stride
    while i < n:
{body}
        i += stride
"""
_TEMPORARY = re.compile(r"\b(x\d+|t\d+_\d+)\b")


def _unrolled(lines: list[str], n_loads: int) -> str:
    """body_lines' statements for elements i, i1, ... (UNROLL of them, a stride apart):
    every copy's loads (the first n_loads lines), then each copy's values and stores."""
    indices = ["i"] + [f"i{u}" for u in range(1, UNROLL)]
    steps = [f"{indices[u]} = {indices[u - 1]} + stride" for u in range(1, UNROLL)]

    def copy(line: str, u: int) -> str:
        line = _TEMPORARY.sub(lambda m: f"{m.group(1)}_{u}", line)
        return line.replace("[i]", f"[{indices[u]}]")

    loads = [copy(line, u) for u in range(UNROLL) for line in lines[:n_loads]]
    rest = [copy(line, u) for u in range(UNROLL) for line in lines[n_loads:]]
    return "".join(" " * 8 + line + "\n" for line in steps + loads + rest)


_LOW_FLOATS = frozenset((_HALF, np.dtype(np.float32)))


def _float32_params(
    spec: FusedSpec, member_types: list[list[Any]], out_types: list[Any], device: str
) -> list[int]:
    """The GPU parameters the loop converts to float32 (once, before the loop).

    The CPU passes float parameters as float32 when every array is float32 (float16 ones
    are float32 copies there): compute.py's _params_for, MXNet's `x * DType(scalar)`. The
    GPU kernel gets the Python floats and converts them in the compiled loop, so a float32
    group's `x * 0.1` has the CPU's bits instead of a float64 product rounded once.
    """
    if device != "gpu":
        return []
    types = [t for ts in member_types for t in ts] + list(out_types)
    if any(t is None or np.dtype(t) not in _LOW_FLOATS for t in types):
        return []
    return [q for q, p in enumerate(spec.scalar_params()) if isinstance(p, (float, np.floating))]


def kernel_source(
    spec: FusedSpec,
    member_types: list[list[Any]],
    out_types: list[Any],
    modes: tuple[str | None, ...],
    device: str,
    in_types: list[Any] | None = None,
    in_place: tuple[tuple[int, int], ...] = (),
    parallel: bool = False,
) -> str:
    n_params = len(spec.scalar_params())
    as_float32 = _float32_params(spec, member_types, out_types, device)
    names = (
        [f"o{o}" for o in range(len(spec.outputs))]
        + [f"a{j}" for j in range(spec.num_inputs)]
        + [f"r{q}" if q in as_float32 else f"p{q}" for q in range(n_params)]
    )
    params = "".join(f", {n}" for n in names)
    lines = body_lines(spec, member_types, out_types, modes, device, in_types, in_place)
    casts = sorted({_type_name(t) for ts in member_types for t in ts if t is not None})
    header = [f"# nnvmpy fused kernel ({device}): {spec.structure()}"]
    header += [f"# modes {modes}; output dtypes {[str(t) for t in out_types]}"]
    header += [f"c_{c} = np.{c}" for c in casts]
    header += [
        f"co{o} = np.{_type_name(t)}"
        for o, (t, mode) in enumerate(zip(out_types, modes))
        if mode == "add"
    ]
    if device == "cpu":
        body = "\n".join(" " * 8 + line for line in lines)
        loop = _CPU.format(params=params, range="prange" if parallel else "range", body=body)
    else:
        body = "\n".join(" " * 8 + line for line in lines)
        prologue = "".join(f"    p{q} = np.float32(r{q})\n" for q in as_float32)
        unrolled = _unrolled(lines, spec.num_inputs)
        loop = _GPU.format(
            params=params, prologue=prologue, body=body, unrolled=unrolled,
            last=UNROLL - 1, unroll=UNROLL,
        )  # fmt: skip
    return "import numpy as np\n" + "\n".join(header) + "\n" + loop


def _member_digest(fn: Any) -> str:
    """fn's code, closure, defaults and callees, once per function: like numba, which
    freezes a function's globals when it compiles, a later change of a global it reads
    is not seen (a module reload makes new functions)."""
    digest = _digests.get(fn)
    if digest is None:
        from nnvmpy.kernel.cpu import _code_key, callee_key

        cells = [repr(c.cell_contents) for c in fn.__closure__ or ()]
        digest = repr((_code_key(fn.__code__), cells, fn.__defaults__, callee_key(fn)))
        _digests[fn] = digest
    return digest


def cache_key(spec: FusedSpec, source: str) -> str:
    import numba

    digests = [_member_digest(k.py_func) for m in spec.members for k in m.body.kernels]
    text = repr((_CODEGEN_VERSION, numba.__version__, source, digests))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cache_dir() -> Path | None:
    """Where generated sources (and numba's cache beside them) live; None: memory only."""
    value = config.FUSION_CACHE_DIR.get()
    if value == "":
        return None
    path = Path(os.path.expanduser(value))
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path


def _cachable(spec: FusedSpec) -> bool:
    """Numba can reload a cached kernel only if every member function lives in a module
    it can import again (not exec'd code, not a REPL)."""
    import sys

    for member in spec.members:
        for k in member.body.kernels:
            module = sys.modules.get(getattr(k.py_func, "__module__", "") or "")
            path = getattr(module, "__file__", None)
            if path is None or os.path.abspath(path) != os.path.abspath(
                k.py_func.__code__.co_filename
            ):
                return False
    return True


def _build_scalar(kern: Any, device: str) -> Any:
    """A member kernel's scalar function compiled for `device` (numba, lazily per type)."""
    from nnvmpy.kernel.device import for_device

    if device == "cpu":
        from nnvmpy.kernel.cpu import _jit_scalar
        from nnvmpy.kernel.vmath import calls_vector_math

        # vmath bodies are large: inlined by numba, or LLVM may keep a call per element
        # and the loop is not vectorised
        options = {"inline": "always"} if calls_vector_math(kern.py_func) else {}
        return _jit_scalar(for_device(kern.py_func, "cpu"), **options)
    from nnvmpy.kernel.cuda import get_cuda

    return get_cuda(kern.name).jit(device=True)(for_device(kern.py_func, "gpu"))


def _member_functions(spec: FusedSpec, device: str) -> dict[str, Any]:
    """k<m>_<k>: each member kernel's scalar function built for `device`."""

    found: dict[str, Any] = {}
    for m, member in enumerate(spec.members):
        for k, kern in enumerate(member.body.kernels):
            found[f"k{m}_{k}"] = kern.variant(
                (device, "scalar" if device == "cpu" else "device_fn"),
                functools.partial(_build_scalar, kern, device),
            )
    return found


def build(
    spec: FusedSpec,
    member_types: list[list[Any]],
    out_types: list[Any],
    modes: tuple[str | None, ...],
    device: str,
    in_types: list[Any] | None = None,
    in_place: tuple[tuple[int, int], ...] = (),
    parallel: bool = False,
) -> Any:
    """The compiled kernel (a numba dispatcher) for this spec, dtypes, modes and device
    (`in_types`, the inputs' dtypes: the GPU loads float16 ones as float32; `in_place`,
    the (input, output) pairs that share memory: body_lines; `parallel`, a CPU kernel
    for SERIAL_CUTOFF elements or more)."""
    parallel = parallel and device == "cpu"
    types = tuple(tuple(None if t is None else np.dtype(t) for t in ts) for ts in member_types)
    shape_of = (
        spec.layout, types, tuple(np.dtype(t) for t in out_types), modes, device,
        tuple(None if t is None else np.dtype(t) for t in in_types or ()), in_place, parallel,
    )  # fmt: skip
    fn = _by_layout.get(shape_of)
    if fn is not None:  # another fused node of the same layout and dtypes built it
        return fn
    source = kernel_source(
        spec, member_types, out_types, modes, device, in_types, in_place, parallel
    )
    key = f"{device}-{cache_key(spec, source)}"
    fn = _built.get(key)
    if fn is None:
        with _lock:
            fn = _built.get(key)
            if fn is None:
                fn = _built[key] = _compile(spec, source, key, device, parallel)
    _by_layout[shape_of] = fn
    return fn


def _compile(spec: FusedSpec, source: str, key: str, device: str, parallel: bool) -> Any:
    import numba

    namespace: dict[str, Any] = {"__name__": __name__}
    namespace.update(_member_functions(spec, device))
    directory = cache_dir() if _cachable(spec) else None
    filename = f"<nnvmpy fused {key}>"
    if directory is not None:
        path = directory / f"fused_{key.replace('-', '_')}.py"
        try:
            if not path.exists() or path.read_text() != source:
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(source)
                os.replace(tmp, path)
            filename = str(path)
        except OSError:
            directory = None
    if device == "cpu":
        from nnvmpy.kernel.cpu import configure_threading_layer

        configure_threading_layer()
        namespace["prange"] = numba.prange
    else:
        from nnvmpy.kernel.cuda import get_cuda

        namespace["cuda"] = get_cuda("fused")
    exec(compile(source, filename, "exec"), namespace)
    fn: pytypes.FunctionType = namespace["fused"]
    if device == "gpu":
        return _gpu_dispatcher(namespace["cuda"], fn, directory is not None)
    options: dict[str, Any] = {"parallel": parallel, "nogil": True, "error_model": "numpy"}
    if directory is not None:
        try:
            return numba.njit(cache=True, **options)(fn)
        except Exception as e:  # no usable cache location: compile in memory
            if not isinstance(e, (OSError, RuntimeError)):
                raise NNVMError(f"fused kernel: cannot compile: {e}") from e
    return numba.njit(**options)(fn)


def _gpu_dispatcher(cuda: Any, fn: pytypes.FunctionType, on_disk: bool) -> Any:
    """numba.cuda's dispatcher of a generated GPU kernel; where its source is a file in
    the cache directory, with kernel/disk_cache.py's cache (keyed by that source and
    the code of every member function it calls), so another process loads the compiled
    kernel instead of typing, lowering and running NVVM again."""
    dispatcher = cuda.jit(fn)
    if on_disk:
        from nnvmpy.kernel.disk_cache import enable_cuda_cache

        enable_cuda_cache(dispatcher, fn, f"fused{_CODEGEN_VERSION}")
    return dispatcher


__all__ = ["build", "cache_dir", "cache_key", "kernel_source"]
