"""cblas ?gemm for the convolution and FullyConnected GEMMs: NumPy's OpenBLAS, or Intel MKL.

    C = alpha * op(A) @ op(B) + beta * C      (row-major, any leading dimensions)

np.matmul has no beta (it cannot accumulate into C) and no leading dimension for C, so
a convolution written as a sum of shifted GEMMs (_conv_shift.py) calls cblas directly.

Two libraries (issue 17, deliverable 3: "a better GEMM library may be chosen if it beats
OpenBLAS here"), chosen by NNVMPY_BLAS (auto | mkl | openblas), once, at first use:

- OpenBLAS: NumPy's bundled copy (numpy.libs / numpy/.libs), found by file name; its cblas
  symbols carry a prefix/suffix that depends on the build, so a few spellings are tried.
- MKL: libmkl_rt from the optional `mkl` wheel (`pip install nnvmpy[mkl]`), found through
  the wheel's installed file list (importlib.metadata), else the environment's lib/.
  On the im2col / shifted-GEMM shapes of ResNet-18 one thread runs 162 vs 93 GFLOP/s
  (64 x 25088 x 576) and 170 vs 123 (128 x 6272 x 1152). Its threads come from GNU
  OpenMP (libgomp, the runtime numba's omp layer already loaded), so the process has one
  OpenMP runtime; nnvmpy.threads sets its thread count with OpenBLAS's (the budget).

`auto` picks MKL when the wheel is installed, else OpenBLAS. With OpenBLAS the callers
keep NumPy's matmul for whole-matrix products (`routes_matmul` is False: same code as
before MKL existed); with MKL they call `matmul` / `gemm_batch` here. When no cblas is
found `gemm` is unavailable and callers fall back to im2col + np.matmul.
ctypes releases the GIL during the call, as NumPy does.
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import importlib.metadata
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ... import config
from ...base import NNVMError

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112
BACKENDS = ("auto", "mkl", "openblas")

# MKL_Set_Threading_Layer values (mkl_service.h)
_MKL_THREADING_SEQUENTIAL, _MKL_THREADING_GNU = 1, 3

# (symbol template, integer type): ILP64 builds (64_ suffix) take 64-bit ints
_SPELLINGS = [
    ("scipy_cblas_{}gemm64_", ctypes.c_int64),
    ("cblas_{}gemm64_", ctypes.c_int64),
    ("scipy_cblas_{}gemm", ctypes.c_int),
    ("cblas_{}gemm", ctypes.c_int),
]

GemmFn = Callable[..., None]


@dataclass
class Library:
    """One loaded cblas: its gemms per dtype, and MKL's extras when it is MKL."""

    name: str  # "mkl" or "openblas"
    path: str
    gemms: dict[np.dtype, tuple[Any, Any]] = field(default_factory=dict)
    batch: dict[np.dtype, Any] = field(default_factory=dict)  # ?gemm_batch_strided (MKL)
    bf16: Any = None  # cblas_gemm_bf16bf16f32 (MKL): bfloat16 inputs, float32 accumulation
    set_threads: Callable[[int], None] | None = None
    get_threads: Callable[[], int] | None = None
    set_local: Callable[[int], int] | None = None  # MKL_Set_Num_Threads_Local


# ---------------------------------------------------------------- finding the libraries
def _openblas_paths() -> list[str]:
    root = os.path.dirname(np.__file__)
    patterns = [os.path.join(root, "..", "numpy.libs", "*"), os.path.join(root, ".libs", "*")]
    found = [p for pat in patterns for p in glob.glob(pat) if "blas" in os.path.basename(p)]
    return sorted(found)


def mkl_path() -> str | None:
    """libmkl_rt of the installed `mkl` wheel, or None when it is not installed.

    The wheel puts its libraries in the environment's lib/ (outside site-packages), so
    they are found through the wheel's file list; an environment's lib/ is the fallback
    (conda, or a wheel installed without a RECORD).
    """
    candidates: list[str] = []
    try:
        dist = importlib.metadata.distribution("mkl")
        candidates += [
            os.path.realpath(str(dist.locate_file(f)))
            for f in dist.files or ()
            if os.path.basename(str(f)).startswith("libmkl_rt.so")
        ]
    except importlib.metadata.PackageNotFoundError:
        pass
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        candidates += sorted(glob.glob(os.path.join(prefix, "lib", "libmkl_rt.so*")))
    for path in candidates:
        if os.path.isfile(path):
            return path
    return None


def _bind(lib: Any, kind: str) -> tuple[Any, Any] | None:
    for template, int_t in _SPELLINGS:
        fn = getattr(lib, template.format(kind), None)
        if fn is None:
            continue
        real = ctypes.c_float if kind == "s" else ctypes.c_double
        ptr = ctypes.c_void_p
        fn.argtypes = (
            [ctypes.c_int] * 3 + [int_t] * 3 + [real, ptr, int_t, ptr, int_t, real, ptr, int_t]
        )
        fn.restype = None
        return fn, int_t
    return None


def _bind_all(lib: Any, into: Library) -> None:
    for kind, dtype in (("s", np.float32), ("d", np.float64)):
        bound = _bind(lib, kind)
        if bound is not None:
            into.gemms.setdefault(np.dtype(dtype), bound)


def _load_openblas() -> Library | None:
    for path in _openblas_paths():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        found = Library("openblas", path)
        _bind_all(lib, found)
        if found.gemms:
            return found
    return None


def _load_mkl(path: str) -> Library:
    """Load libmkl_rt with GNU OpenMP threading and the LP64 interface (raises OSError)."""
    layer = _MKL_THREADING_GNU
    # idle team threads spin briefly, then sleep (read when libgomp starts: see
    # nnvmpy.threads.openmp_wait)
    from nnvmpy import threads

    threads.openmp_wait()
    if os.environ.get("MKL_THREADING_LAYER", "GNU").upper() == "GNU":
        # libmkl_gnu_thread takes its GOMP_* symbols from the global namespace; promote
        # the libgomp numba's omp layer links (same file) so there is one OpenMP runtime.
        # (MKL_THREADING_LAYER=SEQUENTIAL in the environment: one thread per call.)
        try:
            ctypes.CDLL("libgomp.so.1", mode=ctypes.RTLD_GLOBAL)
        except OSError:
            layer = _MKL_THREADING_SEQUENTIAL
    lib = ctypes.CDLL(path)
    if "MKL_THREADING_LAYER" not in os.environ:
        lib.MKL_Set_Threading_Layer.argtypes = [ctypes.c_int]
        lib.MKL_Set_Threading_Layer(layer)
    lib.MKL_Set_Interface_Layer.argtypes = [ctypes.c_int]
    lib.MKL_Set_Interface_Layer(0)  # LP64: 32-bit ints, the cblas_?gemm spelling below
    found = Library("mkl", path)
    _bind_all(lib, found)
    if not found.gemms:
        raise OSError(f"{path}: no cblas_sgemm")
    i, p = ctypes.c_int, ctypes.c_void_p
    for kind, dtype, real in (
        ("s", np.float32, ctypes.c_float),
        ("d", np.float64, ctypes.c_double),
    ):
        fn = getattr(lib, f"cblas_{kind}gemm_batch_strided", None)
        if fn is not None:
            fn.argtypes = [i] * 6 + [real, p, i, i, p, i, i, real, p, i, i, i]
            fn.restype = None
            found.batch[np.dtype(dtype)] = fn
    bf16 = getattr(lib, "cblas_gemm_bf16bf16f32", None)
    if bf16 is not None:
        f32 = ctypes.c_float
        bf16.argtypes = [i] * 6 + [f32, p, i, p, i, f32, p, i]
        bf16.restype = None
        found.bf16 = bf16
    lib.MKL_Set_Num_Threads.argtypes = [ctypes.c_int]
    lib.MKL_Get_Max_Threads.restype = ctypes.c_int
    found.set_threads = lib.MKL_Set_Num_Threads
    found.get_threads = lib.MKL_Get_Max_Threads
    local = getattr(lib, "MKL_Set_Num_Threads_Local", None)
    if local is not None:
        local.argtypes, local.restype = [ctypes.c_int], ctypes.c_int
        found.set_local = local
    return found


# ---------------------------------------------------------------- the active library
_lock = threading.Lock()
_loaded: dict[str, Library | None] = {}
_active: list[Library | None] = []  # [the library in use], resolved at first use


def load(name: str) -> Library | None:
    """The library called `name` ("mkl" or "openblas"), loaded once; None if absent."""
    with _lock:
        if name not in _loaded:
            if name == "openblas":
                _loaded[name] = _load_openblas()
            else:
                path = mkl_path()
                _loaded[name] = None if path is None else _load_mkl(path)
                lib = _loaded[name]
                if lib is not None and lib.set_threads is not None:
                    from nnvmpy import threads

                    # MKL's default is its count of physical cores, not our budget
                    threads.register_blas_setter(lib.set_threads)
        return _loaded[name]


def _choose() -> Library | None:
    want = config.BLAS.get().strip().lower() or "auto"
    if want not in BACKENDS:
        raise NNVMError(
            f"{config.BLAS.name}={want!r}: expected one of {', '.join(BACKENDS)} "
            "(auto: MKL when the `mkl` wheel is installed, else NumPy's OpenBLAS)"
        )
    if want in ("auto", "mkl"):
        try:
            lib = load("mkl")
        except OSError as err:
            if want == "mkl":
                raise NNVMError(f"{config.BLAS.name}=mkl: loading MKL failed: {err}") from err
            lib = None
        if lib is not None:
            return lib
        if want == "mkl":
            raise NNVMError(
                f"{config.BLAS.name}=mkl: the `mkl` wheel is not installed "
                "(pip install 'nnvmpy[mkl]'), or set it to auto/openblas"
            )
    return load("openblas")


def active() -> Library | None:
    """The library the GEMMs run on (chosen from NNVMPY_BLAS at the first call)."""
    if not _active:
        lib = _choose()
        with _lock:
            if not _active:
                _active.append(lib)
    return _active[0]


def name() -> str:
    """'mkl', 'openblas', or 'none' (no cblas found: callers use np.matmul)."""
    lib = active()
    return "none" if lib is None else lib.name


@contextlib.contextmanager
def use(backend: str) -> Iterator[Library | None]:
    """Run the block on `backend` ('mkl' / 'openblas' / 'auto'; for tests and benchmarks).

    Not thread-safe against GEMMs in flight on other threads: switch between runs.
    """
    saved = list(_active)
    old = os.environ.get(config.BLAS.name)
    os.environ[config.BLAS.name] = backend
    try:
        _active.clear()
        yield active()
    finally:
        if old is None:
            os.environ.pop(config.BLAS.name, None)
        else:
            os.environ[config.BLAS.name] = old
        _active[:] = saved


def available(dtype: Any) -> bool:
    """True when a cblas gemm for this dtype was found."""
    lib = active()
    return lib is not None and np.dtype(dtype) in lib.gemms


def routes_matmul(dtype: Any) -> bool:
    """True when whole-matrix products of this dtype should go through `matmul` here
    instead of np.matmul: MKL is active (with OpenBLAS, NumPy already calls it)."""
    lib = active()
    return lib is not None and lib.name == "mkl" and np.dtype(dtype) in lib.gemms


# ---------------------------------------------------------------- calls
#: GEMMs below this many multiply-adds run on one MKL thread. Where the team's thread has
#: gone to sleep (nnvmpy.threads.openmp_wait) each 2-thread call pays a wake-up, and small
#: GEMMs lose by it: LeNet's
#: training step (GEMMs of 0.3-26 M multiply-adds) took 21 ms with every GEMM on two
#: threads, 14.4 / 12.1-13.3 with this bound at 2^22 / 2^24-2^26; the MLP's 3.0 -> 2.5-2.8.
#: With element-wise loops no longer waking a team below 200000 items (threads.parallel_size)
#: the MLP's 25.7 M products (784 -> 512 at batch 64) pay to run on two threads: same-sitting
#: A/B over 600 steps, 2^25 -> 2^24: mlp-train 2.55 -> 2.47 ms, lenet-train 12.57 -> 12.41;
#: with one engine worker and teams that spin briefly, 2.61 -> 1.71 ms and 11.73 -> 11.37.
#: ResNet-18's smallest 3x3 layers at batch 1 (58 M) stay on two threads either way.
SMALL_GEMM_MACS = 1 << 24


def _call(fn: Any, *args: Any) -> None:
    fn(*args)


def _sized(lib: Library, macs: int) -> Callable[..., None]:
    """How to call a cblas function of `lib` for a GEMM of `macs` multiply-adds: on this
    thread alone when it is small and the library can say so per thread (MKL)."""
    set_local = lib.set_local
    if macs >= SMALL_GEMM_MACS or set_local is None:
        return _call

    def one_thread(fn: Any, *args: Any) -> None:
        before = set_local(1)  # MKL returns this thread's previous setting
        try:
            fn(*args)
        finally:
            set_local(before)  # 0 (the process-wide count), or a lane's 1 (_lanes.py)

    return one_thread


def gemm(
    trans_a: bool,
    trans_b: bool,
    m: int,
    n: int,
    k: int,
    a: np.ndarray,
    a_off: int,
    lda: int,
    b: np.ndarray,
    b_off: int,
    ldb: int,
    beta: float,
    c: np.ndarray,
    c_off: int,
    ldc: int,
) -> None:
    """C[c_off:] (m x n, row stride ldc) = op(A) @ op(B) + beta * C, offsets in elements.

    a, b and c are contiguous arrays of one dtype; the offsets and leading dimensions
    address the sub-matrices inside them, which the caller keeps in bounds.
    """
    lib = active()
    assert lib is not None, "gemm() called where available() is False"
    fn, _ = lib.gemms[c.dtype]
    size = c.itemsize
    _sized(lib, m * n * k)(
        fn,
        ROW_MAJOR,
        TRANS if trans_a else NO_TRANS,
        TRANS if trans_b else NO_TRANS,
        m,
        n,
        k,
        1.0,
        a.ctypes.data + a_off * size,
        lda,
        b.ctypes.data + b_off * size,
        ldb,
        beta,
        c.ctypes.data + c_off * size,
        ldc,
    )


def _operand(x: np.ndarray) -> tuple[bool, int] | None:
    """(transposed, leading dimension) of a 2-D view with one unit stride, else None."""
    rows, cols = x.shape
    s0, s1 = (st // x.itemsize for st in x.strides)
    if s1 == 1 or cols == 1:
        ld = s0 if rows > 1 else cols
        if ld >= max(1, cols):
            return False, ld
    if s0 == 1 or rows == 1:
        ld = s1 if cols > 1 else rows
        if ld >= max(1, rows):
            return True, ld
    return None


def matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray, beta: float = 0.0) -> None:
    """out = a @ b + beta * out for 2-D arrays (views with one unit stride: transposes
    and row slices are free), through the active cblas; falls back to np.matmul for
    layouts cblas cannot address (with beta applied)."""
    m, k = a.shape
    n = out.shape[1]
    lib = active()
    oa, ob = _operand(a), _operand(b)
    ok = (
        lib is not None
        and oa is not None
        and ob is not None
        and a.dtype == b.dtype == out.dtype
        and out.dtype in lib.gemms
        and (out.strides[1] == out.itemsize or n == 1)
        and out.shape == (m, b.shape[1])
        and b.shape[0] == k
        and m > 0
        and n > 0
        and k > 0
    )
    ldc = out.strides[0] // out.itemsize if m > 1 else n
    if not ok or ldc < n or lib is None or oa is None or ob is None:
        if beta == 0.0:
            np.matmul(a, b, out=out)
        else:
            out *= beta
            out += a @ b
        return
    fn, _ = lib.gemms[out.dtype]
    _sized(lib, m * n * k)(
        fn,
        ROW_MAJOR,
        TRANS if oa[0] else NO_TRANS,
        TRANS if ob[0] else NO_TRANS,
        m, n, k,
        1.0,
        a.ctypes.data, oa[1],
        b.ctypes.data, ob[1],
        beta,
        out.ctypes.data, ldc,
    )  # fmt: skip


def matmul_stack(a: np.ndarray, b: np.ndarray, out: np.ndarray, beta: float = 0.0) -> None:
    """out[i] = a[i] @ b[i] + beta * out[i] for 3-D stacks: one MKL
    cblas_?gemm_batch_strided call when each operand is a stack of equally strided
    matrices (Winograd's 16/36 positions), else one `matmul` per matrix."""
    lib = active()
    batch = len(out)
    fn = None if lib is None else lib.batch.get(out.dtype)
    if lib is not None and fn is not None and batch > 0 and a.dtype == b.dtype == out.dtype:
        oa, ob, oc = _operand(a[0]), _operand(b[0]), _operand(out[0])
        if oa is not None and ob is not None and oc is not None and not oc[0]:
            (m, k), n = a.shape[1:], out.shape[2]
            sa, sb, sc = (x.strides[0] // x.itemsize for x in (a, b, out))
            if min(sa, sb, sc) >= 0 and out.shape[1] == m and b.shape[1:] == (k, n):
                _sized(lib, batch * m * n * k)(
                    fn,
                    ROW_MAJOR,
                    TRANS if oa[0] else NO_TRANS,
                    TRANS if ob[0] else NO_TRANS,
                    m, n, k,
                    1.0,
                    a.ctypes.data, oa[1], sa,
                    b.ctypes.data, ob[1], sb,
                    beta,
                    out.ctypes.data, oc[1], sc,
                    batch,
                )  # fmt: skip
                return
    for i in range(batch):
        matmul(a[i], b[i], out[i], beta)


# ---------------------------------------------------------------- bfloat16 (issue 17, item 4)
def has_bf16() -> bool:
    """The active library has a bfloat16 GEMM with float32 accumulation (MKL; it runs
    on AMX / AVX512-BF16 where the CPU has them)."""
    lib = active()
    return lib is not None and lib.bf16 is not None


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits (uint16), rounded to nearest even (NaN stays NaN)."""
    u = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (u + (0x7FFF + ((u >> 16) & 1))) >> 16
    bits = np.where(np.isnan(x), (u >> 16) | 0x40, rounded)  # keep NaN a quiet NaN
    return bits.astype(np.uint16)


def from_bf16(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bits (uint16) -> float32 (exact)."""
    return (bits.astype(np.uint32) << 16).view(np.float32)


def matmul_bf16(a: np.ndarray, b: np.ndarray, out: np.ndarray, beta: float = 0.0) -> None:
    """out (float32) = a @ b + beta * out with a, b bfloat16 bits (uint16, 2-D views with
    one unit stride), float32 accumulation: MKL's cblas_gemm_bf16bf16f32. The building
    block of a bfloat16 inference pass; raises NNVMError where no such GEMM exists."""
    lib = active()
    if lib is None or lib.bf16 is None:
        raise NNVMError(
            f"bfloat16 GEMM: needs MKL's cblas_gemm_bf16bf16f32 ({config.BLAS.name}=mkl with "
            f"the `mkl` extra installed); the active BLAS is {name()}"
        )
    m, k = a.shape
    n = out.shape[1]
    oa, ob = _operand(a), _operand(b)
    if (
        a.dtype != np.uint16
        or b.dtype != np.uint16
        or out.dtype != np.float32
        or oa is None
        or ob is None
        or b.shape != (k, n)
        or out.shape[0] != m
        or out.strides[1] != 4
    ):
        raise NNVMError(
            f"bfloat16 GEMM: expected uint16 a (m, k), b (k, n) with a unit stride and "
            f"float32 out (m, n) with unit column stride; got a {a.dtype}{a.shape}, "
            f"b {b.dtype}{b.shape}, out {out.dtype}{out.shape}"
        )
    lib.bf16(
        ROW_MAJOR,
        TRANS if oa[0] else NO_TRANS,
        TRANS if ob[0] else NO_TRANS,
        m, n, k,
        1.0,
        a.ctypes.data, oa[1],
        b.ctypes.data, ob[1],
        beta,
        out.ctypes.data, out.strides[0] // 4 if m > 1 else n,
    )  # fmt: skip


def mm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """np.matmul(a, b, out=out), through MKL when it is active (`routes_matmul`).

    2-D or 3-D operands as np.matmul takes them (a 2-D one broadcast over a stack); with
    OpenBLAS (or no cblas) this is np.matmul itself, so that path is unchanged.
    """
    if not routes_matmul(out.dtype) or a.dtype != out.dtype or b.dtype != out.dtype:
        np.matmul(a, b, out=out)
    elif out.ndim == 2:
        matmul(a, b, out)
    elif a.ndim == 3 and b.ndim == 3 and out.ndim == 3:
        matmul_stack(a, b, out)
    elif out.ndim == 3:
        for i in range(len(out)):
            matmul(a if a.ndim == 2 else a[i], b if b.ndim == 2 else b[i], out[i])
    else:
        np.matmul(a, b, out=out)


def mm_add(a: np.ndarray, b: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """out += a @ b for 2-D arrays: one GEMM with beta = 1 under MKL, else np.matmul into
    tmp (out's shape) and an add, as before."""
    if routes_matmul(out.dtype) and a.dtype == b.dtype == out.dtype and out.ndim == 2:
        matmul(a, b, out, beta=1.0)
    else:
        np.matmul(a, b, out=tmp)
        out += tmp


__all__ = [
    "BACKENDS",
    "Library",
    "active",
    "available",
    "from_bf16",
    "gemm",
    "has_bf16",
    "load",
    "matmul",
    "matmul_bf16",
    "matmul_stack",
    "mkl_path",
    "mm",
    "mm_add",
    "name",
    "routes_matmul",
    "to_bf16",
    "use",
]
