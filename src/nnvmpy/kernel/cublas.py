"""cuBLAS GEMM on row-major device arrays, through CuPy's bindings: ops/matrix.gemm's GPU path.

    gemm(device_id, stream, out, a, ta, b, tb, bias, add)
        out (+)= op(a) @ op(b) (+ bias per column), 2-D or stacks of matrices (3-D)

Row-major on column-major. cuBLAS reads column-major matrices, and a row-major (r, c)
matrix with leading dimension c IS the column-major (c, r) matrix, its transpose. So
C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: B and A swap places, each keeps its
transpose flag ('N' when not transposed), and m and n swap. No operand is ever copied.

Precision. float32 and float64 compute in their own type (results agree with the CPU's
BLAS to rounding); float16 multiplies on the tensor cores and accumulates in float32
(CUBLAS_COMPUTE_32F), rounding once to float16 at the end, as the numba kernel does. A
float32 GEMM called with tf32=True (NNVMPY_GPU_TF32, ops/matrix.gemm) takes
CUBLAS_COMPUTE_32F_FAST_TF32: the tensor cores, inputs rounded to TF32, float32 sums.

Requests and bias. `add` is beta = 1. A bias is put into C first by a rank-1 product with a
column of ones (Caffe's bias multiplier): C (+)= 1 bias^T, then the main product adds with
beta = 1, so the whole GEMM stays in cuBLAS, on the caller's stream.

Handles. One cuBLAS handle per (thread, device), made on first use and bound to the
stream of the call (cublasSetStream only when it changes): engine workers each have their
own stream, and a handle shared between threads would race on its stream setting.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
DTYPES = frozenset((_F16, _F32, _F64))

_tls = threading.local()
_ones: dict[tuple[int, np.dtype], list[Any]] = {}  # (device, dtype) -> ones vectors made
_ones_lock = threading.Lock()
_lib: dict[str, Any] = {}  # "cublas": the binding; "types": dtype -> (data, compute, scalar)
_SCALARS = {  # alpha/beta in the compute type, read by cuBLAS from host memory
    (dt, v): np.full(1, v, dt) for dt in (_F32, _F64) for v in (0.0, 1.0)
}


def _binding() -> Any:
    lib = _lib.get("cublas")
    if lib is None:
        from cupy_backends.cuda.api import runtime
        from cupy_backends.cuda.libs import cublas

        _lib["types"] = {
            _F16: (runtime.CUDA_R_16F, cublas.CUBLAS_COMPUTE_32F, _F32),
            _F32: (runtime.CUDA_R_32F, cublas.CUBLAS_COMPUTE_32F, _F32),
            _F64: (runtime.CUDA_R_64F, cublas.CUBLAS_COMPUTE_64F, _F64),
        }
        # CUBLAS_COMPUTE_32F_FAST_TF32 is 77 in cublas_api.h, where a binding lacks the name
        _lib["tf32"] = getattr(cublas, "CUBLAS_COMPUTE_32F_FAST_TF32", 77)
        lib = _lib["cublas"] = cublas
    return lib


def supports(out: Any, a: Any, b: Any, bias: Any = None) -> bool:
    """True when cuBLAS can run this GEMM: one float dtype throughout, C-contiguous."""
    dt = out.dtype
    if dt not in DTYPES or a.dtype != dt or b.dtype != dt:
        return False
    arrays = (out, a, b) if bias is None else (out, a, b, bias)
    if bias is not None and bias.dtype != dt:
        return False
    return all(x.is_c_contiguous() for x in arrays)


def _ptr(x: Any) -> int:
    return int(x.device_ctypes_pointer.value or 0)


def handle(device_id: int, stream_ptr: int) -> int:
    """This thread's cuBLAS handle on `device_id`, bound to `stream_ptr` (0: default)."""
    handles = getattr(_tls, "handles", None)
    if handles is None:
        handles = _tls.handles = {}
    entry = handles.get(device_id)
    cublas = _binding()
    if entry is None:
        import cupy

        with cupy.cuda.Device(device_id):
            entry = handles[device_id] = [cublas.create(), None]
    if entry[1] != stream_ptr:
        cublas.setStream(entry[0], stream_ptr)
        entry[1] = stream_ptr
    return int(entry[0])


def bound_stream(device_id: int) -> int | None:
    """The stream this thread's handle on the device is bound to (None: no handle yet)."""
    entry = getattr(_tls, "handles", {}).get(device_id)
    return None if entry is None else entry[1]


def ones(device_id: int, dtype: np.dtype, n: int) -> Any:
    """A device vector of at least n ones (the bias multiplier), kept for reuse. A longer
    one replaces it for later calls; the old one stays alive (in-flight kernels read it)."""
    made = _ones.get((device_id, dtype))
    if made and made[-1].size >= n:
        return made[-1]
    from nnvmpy.kernel.cuda import get_cuda

    cuda = get_cuda("cublas.ones")
    size = 1 << max(n - 1, 0).bit_length()
    with _ones_lock:
        made = _ones.setdefault((device_id, dtype), [])
        if not made or made[-1].size < n:
            with cuda.gpus[device_id]:
                made.append(cuda.to_device(np.ones(size, dtype)))
        return made[-1]


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)


def gemm(
    device_id: int,
    stream_ptr: int,
    out: Any,
    a: Any,
    ta: bool,
    b: Any,
    tb: bool,
    bias: Any = None,
    add: bool = False,
    tf32: bool = False,
    k_slices: int = 1,
) -> None:
    """out (+)= op(a) @ op(b) (+ bias) on the stream; see the module docstring.

    Args:
        out: (m, n), or (batch, m, n) with a and/or b 3-D (a 2-D operand is shared by
            every matrix of the batch).
        a, b: (rows, cols) or (batch, rows, cols); ta/tb: use the transpose.
        bias: optional (n,) vector added to every row.
        add: accumulate into out (req 'add') instead of overwriting it.
        tf32: a float32 GEMM on the TF32 tensor-core path (others ignore it).
        k_slices: s > 1 for split-K (ops/_gemm_split.py): a and b single matrices (2-D,
            or 3-D with a batch of one), out (s, m, n), and out[z] (+)= the product over
            slice z of the inner size (k // s deep each).
    The caller checked `supports(...)`, and that m, n, k and the batch are nonzero.
    """
    cublas = _binding()
    data_type, compute, scalar = _lib["types"][out.dtype]
    if tf32 and out.dtype == _F32:
        compute = _lib["tf32"]
    oshape, ashape, bshape = _shape(out), _shape(a), _shape(b)
    batch = oshape[0] if len(oshape) == 3 else 1
    (m, n), (ar, ac), (br, bc) = oshape[-2:], ashape[-2:], bshape[-2:]
    k = (ar if ta else ac) // k_slices
    h = handle(device_id, stream_ptr)
    one = _SCALARS[scalar, 1.0].ctypes.data
    beta = one if add else _SCALARS[scalar, 0.0].ctypes.data
    c_ptr = _ptr(out)
    if bias is not None:  # C (+)= ones(m) bias^T, i.e. C^T (+)= bias ones^T: k = 1
        ones_ptr = _ptr(ones(device_id, out.dtype, m))
        _call(cublas, h, False, False, n, m, 1, one, _ptr(bias), data_type, n, 0,
              ones_ptr, 1, 0, beta, c_ptr, batch, compute)  # fmt: skip
        beta = one
    sa = ar * ac if len(ashape) == 3 else 0
    sb = br * bc if len(bshape) == 3 else 0
    if k_slices > 1:  # slice z of op(a)'s columns and op(b)'s rows: k rows or columns on
        sa, sb = k * (ac if ta else 1), k * (1 if tb else bc)
    # C^T (n x m) = op(B)^T (n x k) op(A)^T (k x m), B and A as stored (see the docstring)
    _call(cublas, h, tb, ta, n, m, k, one, _ptr(b), data_type, bc, sb,
          _ptr(a), ac, sa, beta, c_ptr, batch, compute)  # fmt: skip


def _call(
    cublas: Any, h: int, t1: bool, t2: bool, m: int, n: int, k: int, alpha: int,
    p1: int, data_type: int, ld1: int, s1: int, p2: int, ld2: int, s2: int,
    beta: int, c: int, batch: int, compute: int,
) -> None:  # fmt: skip
    """One column-major cublasGemmEx (batch 1) or cublasGemmStridedBatchedEx:
    C (m x n, ld m) = alpha op(X1) op(X2) + beta C."""
    op1 = cublas.CUBLAS_OP_T if t1 else cublas.CUBLAS_OP_N
    op2 = cublas.CUBLAS_OP_T if t2 else cublas.CUBLAS_OP_N
    algo = cublas.CUBLAS_GEMM_DEFAULT
    if batch == 1:
        cublas.gemmEx(h, op1, op2, m, n, k, alpha, p1, data_type, ld1, p2, data_type, ld2,
                      beta, c, data_type, m, compute, algo)  # fmt: skip
    else:
        cublas.gemmStridedBatchedEx(
            h, op1, op2, m, n, k, alpha, p1, data_type, ld1, s1, p2, data_type, ld2, s2,
            beta, c, data_type, m, m * n, batch, compute, algo,
        )  # fmt: skip


__all__ = ["DTYPES", "bound_stream", "gemm", "handle", "ones", "supports"]
