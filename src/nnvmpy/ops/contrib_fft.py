"""fft / ifft: the discrete Fourier transform along the last axis (nd.contrib / sym.contrib).

- `_contrib_fft(data (..., d))` -> (..., 2d): the DFT y_k = sum_j x_j exp(-2 pi i jk / d)
  of each real row, real and imaginary parts interleaved: [Re y_0, Im y_0, Re y_1, ...].
- `_contrib_ifft(data (..., 2d))` -> (..., d): the input read as interleaved complex
  numbers z, the output the real part of the UNNORMALISED inverse DFT,
  sum_k z_k exp(+2 pi i jk / d) (MXNet leaves out the 1/d, like Caffe: ifft(fft(x)) is
  d * x).

Gradients are the exact ones, as MXNet's: fft's is Re(unnormalised inverse DFT of the
interleaved dy), ifft's the interleaved DFT of dy. `compute_size` (how many rows MXNet's
cuFFT plan takes at a time) is accepted and has no effect on the result.

MXNet 1.9.1 registers these for the GPU only and for 2-D and 4-D data; here they run on
both devices and any rank. The transform is an FFT library's (O(d log d) per row, in the
data's precision for float32/float64; numba has none, and a hand-written kernel would be
slower and less accurate): NumPy's pocketfft on the CPU; on a GPU cuFFT through CuPy's
cupy.fft when the CuPy layer is in use (kernel/gpu_lib: the same functions with `xp =
cupy`, on the engine worker's stream, no copy), else the data goes through the host
(_host_staged.host_compute): there is no cuFFT binding in numba.cuda.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    TIsBackward,
)
from ..base import InferError
from ..graph.grad import make_grad_node
from ..infer import shape_assign, shape_is_known, shape_str
from ..kernel import gpu_lib
from ..kernel.launch import ADD, NULL, is_gpu, req_code
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from ._host_staged import host_compute
from .contrib_bbox import same_float_type

FFT, IFFT = "_contrib_fft", "_contrib_ifft"


class FFTParam(Parameter):
    compute_size = field(
        int,
        default=128,
        lower_bound=1,
        describe="Maximum size of sub-batch to be forwarded at one time",
    )


def _last_axis_shape(op: str, factor_in: int, factor_out: int) -> Any:
    """FInferShape: in (..., factor_in * d) <-> out (..., factor_out * d)."""

    def infer(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
        for shape, what in ((in_shapes[0], "input 'data'"), (out_shapes[0], "output")):
            if shape is not None and len(shape) == 0:
                raise InferError(f"{op}: {what} must have at least one dimension")
        data, out = in_shapes[0], out_shapes[0]
        if data is not None and data[-1] is not None and data[-1] % factor_in:
            raise InferError(
                f"{op}: input 'data' has shape {shape_str(data)}; its last dimension must be "
                f"even (interleaved real and imaginary parts)"
            )
        if data is not None:
            d = None if data[-1] is None else data[-1] // factor_in * factor_out
            shape_assign(out_shapes, 0, (*data[:-1], d), f"{op}: output")
        out = out_shapes[0]
        if out is not None and out[-1] is not None and out[-1] % factor_out:
            raise InferError(
                f"{op}: output has shape {shape_str(out)}; its last dimension must be even"
            )
        if out is not None:
            d = None if out[-1] is None else out[-1] // factor_out * factor_in
            shape_assign(in_shapes, 0, (*out[:-1], d), f"{op}: input 'data'")
        return shape_is_known(in_shapes[0]) and shape_is_known(out_shapes[0])

    return infer


# Each function takes the array module: NumPy on the host, CuPy on a GPU (same API).


def _interleave(z: Any, dtype: Any, xp: Any) -> Any:
    """(..., d) complex -> (..., 2d) real: [re_0, im_0, re_1, im_1, ...]."""
    out = xp.empty((*z.shape[:-1], 2 * z.shape[-1]), dtype)
    out[..., 0::2] = z.real
    out[..., 1::2] = z.imag
    return out


def _complex(x: Any) -> Any:
    """(..., 2d) interleaved real -> (..., d) complex, in x's precision (float16: float32)."""
    work = np.complex128 if x.dtype == np.float64 else np.complex64
    return (x[..., 0::2] + 1j * x[..., 1::2]).astype(work)


def _real_work(x: Any) -> Any:
    return x if x.dtype in (np.float32, np.float64) else x.astype(np.float32)


def _unnormalised_inverse(z: Any, xp: Any) -> Any:
    """sum_k z_k exp(+2 pi i jk / d) along the last axis."""
    return xp.fft.ifft(z, axis=-1, norm="forward")


def fft_np(params: Any, data: Any, xp: Any = np) -> list[Any]:
    return [_interleave(xp.fft.fft(_real_work(data), axis=-1), data.dtype, xp)]


def fft_grad_np(params: Any, dy: Any, xp: Any = np) -> list[Any]:
    return [_unnormalised_inverse(_complex(dy), xp).real.astype(dy.dtype)]


def ifft_np(params: Any, data: Any, xp: Any = np) -> list[Any]:
    return [_unnormalised_inverse(_complex(data), xp).real.astype(data.dtype)]


def ifft_grad_np(params: Any, dy: Any, xp: Any = np) -> list[Any]:
    return [_interleave(xp.fft.fft(_real_work(dy), axis=-1), dy.dtype, xp)]


def _with_cufft(name: str, fn: Any) -> Any:
    """FCompute of both devices: fn on NumPy (CPU), on CuPy arrays over the same device
    memory (GPU with the CuPy layer in use), else staged through the host."""
    host = host_compute(name, fn)

    def compute(attrs: NodeAttrs, ctx: Any, inputs: list[Any], req: list[Any],
                outputs: list[Any]) -> None:  # fmt: skip
        if not is_gpu(ctx) or not gpu_lib.available():
            host(attrs, ctx, inputs, req, outputs)
            return
        mode = req_code(name, req[0])
        if mode == NULL:
            return
        import cupy

        with gpu_lib.cupy_stream(getattr(ctx.run_ctx, "stream", None)):
            (result,) = fn(attrs.parsed, gpu_lib.as_cupy(inputs[0]), xp=cupy)
            out = gpu_lib.as_cupy(outputs[0])
            if mode == ADD:
                out += result.reshape(out.shape)
            else:
                out[...] = result.reshape(out.shape)

    compute.stages_through_host = True  # type: ignore[attr-defined]  # without CuPy
    return compute


def _register(name: str, describe: str, forward: Any, backward: Any, shape: Any) -> None:
    backward_name = f"_backward{name}"

    def gradient(node: Any, ograds: list[Any]) -> list[Any]:
        return make_grad_node(backward_name, node, [ograds[0]])

    compute = _with_cufft(name, forward)
    (
        register_op(name)
        .describe(describe)
        .set_attr_parser(FFTParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(FListInputNames, lambda attrs: ["data"])
        .set_attr(FInferShape, shape)
        .set_attr(FInferType, same_float_type(name, ["data"]))
        .set_attr(FCompute_cpu, compute)
        .set_attr(FCompute_gpu, compute)
        .set_attr(FGradient, gradient)
        .add_argument("data", "NDArray-or-Symbol", "Input data to the FFTOp.")
        .add_arguments(FFTParam.fields())
    )
    grad_compute = _with_cufft(backward_name, backward)
    (
        register_op(backward_name)
        .describe(f"Backward of {name}: input dy, output the gradient of data.")
        .set_attr_parser(FFTParam)
        .set_num_inputs(1)
        .set_num_outputs(1)
        .set_attr(TIsBackward, True)
        .set_attr(FCompute_cpu, grad_compute)
        .set_attr(FCompute_gpu, grad_compute)
    )


_register(
    FFT,
    "Apply 1D FFT to input along the last axis.\n\n"
    "The input is real, shape (..., d); the output has shape (..., 2d) and holds the "
    "complex results with real and imaginary parts interleaved: "
    "[Re y_0, Im y_0, Re y_1, Im y_1, ...], y_k = sum_j x_j exp(-2 pi i jk / d).\n\n"
    "MXNet runs this on the GPU only, for 2-D and 4-D input; nnvmpy on both devices and "
    "any rank.",
    fft_np,
    fft_grad_np,
    _last_axis_shape(FFT, 1, 2),
)
_register(
    IFFT,
    "Apply 1D inverse FFT to input along the last axis.\n\n"
    "The input, shape (..., 2d), holds complex numbers with real and imaginary parts "
    "interleaved; the output, shape (..., d), is the real part of the inverse transform, "
    "NOT divided by d (as Caffe): sum_k z_k exp(+2 pi i jk / d).\n\n"
    "MXNet runs this on the GPU only, for 2-D and 4-D input; nnvmpy on both devices and "
    "any rank.",
    ifft_np,
    ifft_grad_np,
    _last_axis_shape(IFFT, 2, 1),
)
