"""Matrix products: dot and batch_dot, and the GEMM they share with FullyConnected.

    dot(A, B)        C = op(A) op(B)         op(X) = X or X^T (transpose_a / transpose_b)
    batch_dot(A, B)  C[i] = op(A[i]) op(B[i])

An N-D operand is viewed as a matrix without copying, as MXNet does: lhs (a..., k) as
(prod(a), k) and rhs (k, b...) as (k, prod(b)); with transpose_a lhs (k, a...) is
(k, prod(a)) transposed, with transpose_b rhs (b..., k) is (prod(b), k) transposed.

`gemm` runs on NumPy's BLAS on the CPU (np.dot / np.matmul writing straight into the
output), or on MKL's when the `mkl` extra carries the GEMMs (ops/nn/_blas.py: NumPy's
OpenBLAS is then held at one thread); on the GPU on cuBLAS where CuPy is usable
(kernel/cublas.py; float16, float32, float64), else on a tiled shared-memory numba.cuda
kernel (the simulator's path, and other dtypes); transposes are strides, never copies.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import config, kernel
from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError, Shape
from ..graph.grad import ElemwiseGradUseIn
from ..infer import elemwise_type, merge_shapes, shape_assign, shape_is_known, shape_str
from ..kernel import cublas, gpu_lib, scratch, storage
from ..kernel.elementwise import launch_context, req_mode
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from . import _gemm_split
from ._bilinear import bilinear_backward_gradient

TILE = 16  # GEMM tile edge: a TILE x TILE thread block computes a TILE x TILE block of C

# numba.cuda, bound on the first GPU launch: the kernels read it as a module global (the
# simulator swaps a global `cuda`), and importing this module must not import numba.cuda
cuda: Any = None


def bind_cuda(name: str) -> Any:
    """numba.cuda, bound as this module's global `cuda` (the GEMM kernel reads it).

    Other op modules bind their own global from the return value. NNVMError without a GPU.
    """
    global cuda
    from nnvmpy.kernel.cuda import get_cuda

    cuda = get_cuda(name)
    return cuda


def is_cpu(a: Any) -> bool:
    return isinstance(a, np.ndarray)


def shape_of(a: Any) -> tuple[int, ...]:
    """A plain tuple shape (the CUDA simulator's shape objects do not index from the end)."""
    return tuple(int(d) for d in a.shape)


def view(a: Any, shape: tuple[int, ...]) -> Any:
    """`a` reshaped without a copy (writes through it must reach `a`); NumPy or CUDA array."""
    if is_cpu(a):
        if a.shape == shape:
            return a
        if a.flags.c_contiguous:  # the fast path: reshaping a C-contiguous array never copies
            return a.reshape(shape)
        return np.reshape(a, shape, copy=False)  # ValueError rather than a silent copy
    return a if shape_of(a) == shape else storage.device_reshape(a, shape)


def flat(a: Any) -> Any:
    return view(a, (a.size,))


# -- GEMM -----------------------------------------------------------------------------------


def gemm(
    ctx: Any,
    out: Any,
    req: Any,
    a: Any,
    ta: bool,
    b: Any,
    tb: bool,
    bias: Any = None,
    conv: bool = False,
) -> None:
    """out (+)= op(a) @ op(b) (+ bias per column) for matrices, or stacks of them (3-D).

    Args:
        out: (m, n) or (batch, m, n); `req` says write or add, kNullOp skips.
        a, b: (rows, cols) or (batch, rows, cols), C-contiguous; ta/tb transpose them.
        bias: optional (n,) vector added to every row (FullyConnected).
        conv: a convolution's GEMM, which NNVMPY_GPU_TF32=conv puts on TF32 on cuBLAS.
    """
    mode = req_mode("gemm", req)
    if mode is None:
        return
    if is_cpu(out):
        _gemm_cpu(out, mode, a, ta, b, tb, bias)
    else:
        _gemm_gpu(ctx, out, mode, a, ta, b, tb, bias, conv)


def tf32_for(conv: bool) -> bool:
    """Whether NNVMPY_GPU_TF32 puts this float32 GEMM on TF32 (read at each call, so a
    benchmark can compare both in one process)."""
    setting = config.GPU_TF32.get()
    return setting == "all" or (conv and setting == "conv")


def _gemm_cpu(out: Any, mode: str, a: Any, ta: bool, b: Any, tb: bool, bias: Any) -> None:
    from nnvmpy.ops.nn import _blas

    same = out.dtype == a.dtype == b.dtype and out.flags.c_contiguous
    if same and _blas.routes_matmul(out.dtype):  # MKL carries the GEMMs (NNVMPY_BLAS)
        beta = 1.0 if mode == "add" else 0.0
        if a.ndim == 3:
            _blas.matmul_stack(
                a.transpose(0, 2, 1) if ta else a, b.transpose(0, 2, 1) if tb else b, out, beta
            )
        else:
            _blas.matmul(a.T if ta else a, b.T if tb else b, out, beta)
        if bias is not None:
            out += bias
        return
    product: Any
    if a.ndim == 3:
        product, op_a = np.matmul, a.transpose(0, 2, 1) if ta else a
        op_b = b.transpose(0, 2, 1) if tb else b
    else:
        product, op_a, op_b = np.dot, a.T if ta else a, b.T if tb else b
    direct = mode == "write" and out.flags.c_contiguous and out.dtype == np.result_type(a, b)
    if direct:  # BLAS writes C itself: no temporary on the hot path
        product(op_a, op_b, out=out)
        if bias is not None:
            out += bias
        return
    result = product(op_a, op_b)
    if bias is not None:
        result += bias
    if mode == "write":
        out[...] = result
    else:
        out += result


def _make_gemm(ACC: Any) -> Any:
    """The GEMM kernel accumulating in ACC (float32, or float64 for float64 data)."""

    def _gemm_cuda(c, a, b, bias, m, n, k, sab, sam, sak, sbb, sbk, sbn, has_bias, add):
        # c[z, i, j] (+)= sum_p a[z, i, p] b[z, p, j] (+ bias[j]); a and b are addressed by
        # strides, so transposes are free. A block stages TILE x TILE tiles in shared memory.
        sa = cuda.shared.array((TILE, TILE), ACC)
        sb = cuda.shared.array((TILE, TILE), ACC)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        j = cuda.blockIdx.x * TILE + tx
        i = cuda.blockIdx.y * TILE + ty
        z = cuda.blockIdx.z
        s = ACC(0)
        for t in range(0, k, TILE):
            p = t + tx
            sa[ty, tx] = a[z * sab + i * sam + p * sak] if i < m and p < k else 0
            p = t + ty
            sb[ty, tx] = b[z * sbb + p * sbk + j * sbn] if p < k and j < n else 0
            cuda.syncthreads()
            for q in range(TILE):
                s += sa[ty, q] * sb[q, tx]
            cuda.syncthreads()
        if i < m and j < n:
            if has_bias:
                s += bias[j]
            o = (z * m + i) * n + j
            if add:
                c[o] += s
            else:
                c[o] = s

    return kernel.cuda_kernel(_gemm_cuda)


_gemm_kernels = {np.float32: _make_gemm(np.float32), np.float64: _make_gemm(np.float64)}


def _gemm_gpu(
    ctx: Any, out: Any, mode: str, a: Any, ta: bool, b: Any, tb: bool, bias: Any, conv: bool
) -> None:
    from nnvmpy.kernel.cuda import launch_config

    bind_cuda("gemm")
    oshape, (ar, ac) = shape_of(out), shape_of(a)[-2:]
    batch = oshape[0] if len(oshape) == 3 else 1
    (m, n), k = oshape[-2:], ar if ta else ac
    if m * n * batch == 0:
        return
    on_cublas = bool(k) and gpu_lib.available() and cublas.supports(out, a, b, bias)
    tile = _gemm_split.CUBLAS_TILE if on_cublas else TILE
    s = _gemm_split.slices(m, n, k, batch, out.dtype, tile, bias is not None)
    target, target_mode = out, mode
    if s > 1:  # split-K: partial products of s slices of k, then their sum (_gemm_split)
        target, target_mode = scratch.empty(ctx, (s, m, n), out.dtype), "write"
    if on_cublas:
        _, _, stream, device = launch_config("gemm", ctx, 1)
        device_id = launch_context("gemm", ctx, out).device_id
        with device:
            cublas.gemm(device_id, gpu_lib.stream_ptr(stream), target, a, ta, b, tb, bias,
                        target_mode == "add", tf32_for(conv), s)  # fmt: skip
    else:
        _gemm_tiled(ctx, target, target_mode, a, ta, b, tb, bias, s)
    if s > 1:
        _gemm_split.sum_slices(ctx, flat(out), flat(target), mode == "add")


def _gemm_tiled(
    ctx: Any, out: Any, mode: str, a: Any, ta: bool, b: Any, tb: bool, bias: Any, s: int
) -> None:
    """The tiled numba.cuda GEMM; s > 1: out (s, m, n) gets the products over s slices
    of k (a and b single matrices), grid z walking the slices as it walks a batch
    otherwise."""
    from nnvmpy.kernel.cuda import launch_config, launch_kernel

    oshape, ashape, bshape = shape_of(out), shape_of(a), shape_of(b)
    batch = oshape[0] if len(oshape) == 3 else 1
    (m, n), (ar, ac), (br, bc) = oshape[-2:], ashape[-2:], bshape[-2:]
    k = (ar if ta else ac) // s
    sam, sak = (1, ac) if ta else (ac, 1)
    sbk, sbn = (1, bc) if tb else (bc, 1)
    if s > 1:  # a batch of one matrix, if 3-D, whose grid z walks slices of k instead
        sab, sbb = k * sak, k * sbk
    else:
        sab = ar * ac if len(ashape) == 3 else 0
        sbb = br * bc if len(bshape) == 3 else 0
    acc = np.float64 if out.dtype == np.float64 else np.float32
    grid = (math.ceil(n / TILE), math.ceil(m / TILE), batch)
    kern = _gemm_kernels[acc]
    _, _, stream, device = launch_config(kern.__name__, ctx, 1)
    out1 = flat(out)
    bias1 = out1 if bias is None else flat(bias)  # never read when has_bias is False
    args = (out1, flat(a), flat(b), bias1, m, n, k, sab, sam, sak, sbb, sbk, sbn,
            bias is not None, mode == "add")  # fmt: skip
    with device:
        launch_kernel(kern.dispatcher, grid, (TILE, TILE), stream, args)


# -- dot --------------------------------------------------------------------------------------


class DotParam(Parameter):
    transpose_a = field(
        bool, default=False, describe="If true then transpose the first input before dot."
    )
    transpose_b = field(
        bool, default=False, describe="If true then transpose the second input before dot."
    )
    forward_stype = field(
        str,
        default=None,
        enum=["default", "csr", "row_sparse"],
        describe="The desired storage type of the forward output. nnvmpy stores every "
        "array densely, so this hint is accepted for MXNet compatibility and has no effect.",
    )


def _prod(dims: Shape) -> int | None:
    return math.prod(dims) if shape_is_known(dims) else None


def _dot_split(shape: Shape, transposed: bool, is_lhs: bool) -> tuple[Shape, Shape]:
    """(kept dims, contracted dim) of a dot operand, by MXNet's N-D rule."""
    if len(shape) == 1:
        return (), shape
    if transposed == is_lhs:  # lhs^T or rhs: contract the first axis
        return shape[1:], shape[:1]
    return shape[:-1], shape[-1:]


def _dot_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, op = attrs.parsed, attrs.op.name if attrs.op is not None else "dot"
    lhs, rhs = in_shapes
    if lhs is None or rhs is None:
        return False
    if len(lhs) == 0 or len(rhs) == 0:
        raise InferError(f"{op}: inputs must have at least one axis, got lhs "
                         f"{shape_str(lhs)} and rhs {shape_str(rhs)}")  # fmt: skip
    if len(lhs) == 1 and len(rhs) == 1 and (p.transpose_a or p.transpose_b):
        raise InferError(f"{op}: cannot transpose vectors (transpose_a/transpose_b on 1-D inputs)")
    keep_l, con_l = _dot_split(lhs, p.transpose_a, True)
    keep_r, con_r = _dot_split(rhs, p.transpose_b, False)
    try:
        con = merge_shapes(con_l, con_r)
    except InferError:
        raise InferError(
            f"{op}: shape mismatch: lhs {shape_str(lhs)} contracts an axis of "
            f"{con_l[0]}, rhs {shape_str(rhs)} one of {con_r[0]} "
            f"(transpose_a={p.transpose_a}, transpose_b={p.transpose_b})"
        ) from None
    vector = len(lhs) == 1 and len(rhs) == 1
    out: Shape = (1,) if vector else (*keep_l, *keep_r)
    shape_assign(out_shapes, 0, out, f"{op}: output")
    got = out_shapes[0]
    if not vector:  # the output gives back the kept dims of both operands
        keep_l, keep_r = got[: len(keep_l)], got[len(keep_l) :]
    shape_assign(in_shapes, 0, _dot_join(lhs, keep_l, con, p.transpose_a, True), f"{op}: lhs")
    shape_assign(in_shapes, 1, _dot_join(rhs, keep_r, con, p.transpose_b, False), f"{op}: rhs")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _dot_join(
    shape: Shape, keep: Shape, con: Shape | None, transposed: bool, is_lhs: bool
) -> Shape:
    assert con is not None
    if len(shape) == 1:
        return con
    return (*con, *keep) if transposed == is_lhs else (*keep, *con)


def _matrix(a: Any, transposed: bool, is_lhs: bool) -> Any:
    """The 2-D view of a dot operand (as stored, before op())."""
    shape = shape_of(a)
    if len(shape) == 1:
        return view(a, (1, shape[0]) if is_lhs else (shape[0], 1))
    if transposed == is_lhs:
        return view(a, (shape[0], math.prod(shape[1:])))
    return view(a, (math.prod(shape[:-1]), shape[-1]))


def _dot_operands(attrs: NodeAttrs, lhs: Any, rhs: Any) -> tuple[Any, bool, Any, bool]:
    p = attrs.parsed
    ta, tb = p.transpose_a and lhs.ndim > 1, p.transpose_b and rhs.ndim > 1
    return _matrix(lhs, ta, True), ta, _matrix(rhs, tb, False), tb


def _product_shape(a: Any, ta: bool, b: Any, tb: bool) -> tuple[int, int]:
    (ar, ac), (br, bc) = shape_of(a), shape_of(b)
    return (ac if ta else ar), (br if tb else bc)


def _dot_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    a, ta, b, tb = _dot_operands(attrs, inputs[0], inputs[1])
    gemm(ctx, view(outputs[0], _product_shape(a, ta, b, tb)), req[0], a, ta, b, tb)


def _dot_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    a, ta, b, tb = _dot_operands(attrs, inputs[1], inputs[2])
    da, db = view(outputs[0], a.shape), view(outputs[1], b.shape)
    dc = view(inputs[0], _product_shape(a, ta, b, tb))
    _product_grads(ctx, req, dc, a, ta, b, tb, da, db)


def _product_grads(
    ctx: Any, req: list[Any], dc: Any, a: Any, ta: bool, b: Any, tb: bool, da: Any, db: Any
) -> None:
    # C = op(A) op(B):  d op(A) = dC op(B)^T,  d op(B) = op(A)^T dC
    if ta:  # dA = (dC op(B)^T)^T = op(B) dC^T
        gemm(ctx, da, req[0], b, tb, dc, True)
    else:
        gemm(ctx, da, req[0], dc, False, b, not tb)
    if tb:  # dB = (op(A)^T dC)^T = dC^T op(A)
        gemm(ctx, db, req[1], dc, True, a, ta)
    else:
        gemm(ctx, db, req[1], a, not ta, dc, False)


def _register_product(name: str, describe: str, infer_shape: Any, fwd: Any, bwd: Any) -> None:
    (
        register_op(name)
        .describe(describe)
        .set_attr_parser(DotParam)
        .set_num_inputs(2)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["lhs", "rhs"])
        .set_attr(FInferShape, infer_shape)
        .set_attr(FInferType, elemwise_type(2, 1))
        .set_attr(FCompute_cpu, fwd)
        .set_attr(FCompute_gpu, fwd)
        .set_attr(FGradient, ElemwiseGradUseIn(f"_backward_{name}"))
        .add_argument("lhs", "NDArray-or-Symbol", "The first input")
        .add_argument("rhs", "NDArray-or-Symbol", "The second input")
        .add_arguments(DotParam.fields())
    )
    (  # inputs (dC, A, B) -> (dA, dB); shapes come from the forward node
        register_op(f"_backward_{name}")
        .set_attr_parser(DotParam)
        .set_num_inputs(3)
        .set_num_outputs(2)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, bwd)
        .set_attr(FCompute_gpu, bwd)
        .set_attr(FGradient, bilinear_backward_gradient(name))  # gradients of gradients
    )


_register_product(
    "dot",
    "Dot product of two arrays.\n\n"
    "- 1-D x 1-D: the inner product, of shape (1,).\n"
    "- 2-D x 2-D: the matrix product.\n"
    "- N-D x M-D: a sum product over the last axis of lhs and the first axis of rhs:\n"
    "  dot(x, y)[i, j, k] = sum(x[i, j, :] * y[:, k]) for x (a, b, n) and y (n, k).\n"
    "transpose_a / transpose_b transpose the operands first (an N-D lhs (n, a...) then\n"
    "contracts its first axis, an N-D rhs (b..., n) its last).",
    _dot_shape,
    _dot_forward,
    _dot_backward,
)


# -- batch_dot ----------------------------------------------------------------------------------


def _batch_dot_shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    p, op = attrs.parsed, "batch_dot"
    if in_shapes[0] is None or in_shapes[1] is None:
        return False  # as MXNet: nothing is inferred, the unknown input stays unknown
    for i, arg in enumerate(("lhs", "rhs")):
        shape_assign(in_shapes, i, (None, None, None), f"{op}: input '{arg}' (must be 3-D)")
    if out_shapes[0] is not None:
        shape_assign(out_shapes, 0, (None, None, None), f"{op}: output (must be 3-D)")
    (bl, l0, l1), (br, r0, r1) = in_shapes
    (bo, m, n) = out_shapes[0] if out_shapes[0] is not None else (None, None, None)
    lm, lk = (l1, l0) if p.transpose_a else (l0, l1)
    rk, rn = (r1, r0) if p.transpose_b else (r0, r1)
    if lk is None or rk is None:
        # MXNet's batch_dot infers nothing until both contracted axes are known (its
        # test_batch_dot_partial_shape): (0, 3, 4) x (0, 0, 5) stays unknown; dot would
        # complete rhs to (0, 4, 5)
        return False
    try:
        batch = merge_shapes(merge_shapes((bl,), (br,)), (bo,))
        con = merge_shapes((lk,), (rk,))
    except InferError:
        raise InferError(
            f"{op}: shape mismatch: lhs {shape_str(in_shapes[0])} and rhs "
            f"{shape_str(in_shapes[1])} need the same batch size and a matching contracted "
            f"axis (transpose_a={p.transpose_a}, transpose_b={p.transpose_b})"
        ) from None
    assert batch is not None
    assert con is not None
    shape_assign(out_shapes, 0, (batch[0], lm, rn), f"{op}: output")
    _, m, n = out_shapes[0]
    lhs = (batch[0], con[0], m) if p.transpose_a else (batch[0], m, con[0])
    rhs = (batch[0], n, con[0]) if p.transpose_b else (batch[0], con[0], n)
    shape_assign(in_shapes, 0, lhs, f"{op}: input 'lhs'")
    shape_assign(in_shapes, 1, rhs, f"{op}: input 'rhs'")
    return all(shape_is_known(s) for s in (*in_shapes, *out_shapes))


def _batch_dot_forward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    gemm(ctx, outputs[0], req[0], inputs[0], p.transpose_a, inputs[1], p.transpose_b)


def _batch_dot_backward(
    attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any], outputs: list[Any]
) -> None:
    p = attrs.parsed
    dc, a, b = inputs
    _product_grads(ctx, req, dc, a, p.transpose_a, b, p.transpose_b, outputs[0], outputs[1])


_register_product(
    "batch_dot",
    "Batchwise dot product of two 3-D arrays: out[i] = dot(lhs[i], rhs[i]).\n\n"
    "lhs (batch, M, K) and rhs (batch, K, N) give (batch, M, N); transpose_a and\n"
    "transpose_b transpose the last two axes of an operand first.",
    _batch_dot_shape,
    _batch_dot_forward,
    _batch_dot_backward,
)
