"""quantized_batch_norm: inference BatchNorm from int8/uint8 codes to calibrated int8 codes.

Inputs data (int8 or uint8), gamma, beta, moving_mean, moving_var (float32, (C,); the last
two auxiliary states, as BatchNorm's), min_data, max_data. Outputs (output int8,
min_output, max_output). BatchNorm's parameters; min_calib_range/max_calib_range are
required, as in MXNet 1.9.1 ("calib_mode=None" is not supported), and become the output
range:

    x = code * MaxAbs(min_data, max_data) / 127.5     (255.5 for uint8 data)
    y = (x - moving_mean) / sqrt(moving_var + eps) * gamma + beta
    output = saturate(round(y * 127.5 / MaxAbs(min_calib_range, max_calib_range)))

127.5 and 255.5 are MXNet's kInt8Range/kUint8Range, which its kernel scales by; the
moving statistics are always used. As MXNet's kernel, gamma applies even with
fix_gamma=True (a model trained with fix_gamma keeps gamma at 1). With uint8 data MXNet's
MKL-DNN kernel may differ from this formula by one code. Host NumPy in float64, staged
through host memory on the GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FListInputNames,
    FListOutputNames,
    FMutateInputs,
)
from ...base import NNVMError
from ...graph.grad import make_zero_grad_nodes
from ...infer import shape_assign, type_assign
from ...kernel.launch import normalize_axis
from ...registry import NodeAttrs, register_op
from .._host_staged import host_compute
from ..nn.batch_norm import BatchNormParam
from ._common import (
    F32,
    INT8,
    UINT8,
    all_known,
    assign_range_shapes,
    assign_range_types,
    calib_range_fields,
    calibrated,
    check_quantized,
    max_abs,
)

OP = "_contrib_quantized_batch_norm"
NAMES = ["data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"]
OUTPUTS = ["output", "min_output", "max_output"]
_SCALE_RANGE = {INT8: 127.5, UINT8: 255.5}  # MXNet's kInt8Range / kUint8Range


class QuantizedBatchNormParam(BatchNormParam):
    min_calib_range, max_calib_range = calib_range_fields(
        " obtained through calibration: the range of the int8 output (required)."
    )


def batch_norm_np(p: Any, data: np.ndarray, gamma, beta, mean, var, lo, hi) -> list[np.ndarray]:
    if not calibrated(p):
        raise NNVMError(
            f"{OP}: min_calib_range and max_calib_range are required (the int8 output's "
            f"range); calibrate the model first"
        )
    axis = normalize_axis(OP, p.axis, data.shape)
    shape = [1] * data.ndim
    shape[axis] = -1

    def per_channel(v: np.ndarray) -> np.ndarray:
        return v.astype(np.float64).reshape(shape)

    x = data.astype(np.float64) * (max_abs(lo, hi) / _SCALE_RANGE[np.dtype(data.dtype)])
    invstd = 1.0 / np.sqrt(per_channel(var) + p.eps)
    y = (x - per_channel(mean)) * invstd * per_channel(gamma) + per_channel(beta)
    r = max(abs(p.min_calib_range), abs(p.max_calib_range))
    scale = _SCALE_RANGE[INT8] / r if r > 0 else 0.0
    codes = np.clip(np.rint(y * scale), -128, 127).astype(np.int8)
    return [codes, np.array([p.min_calib_range], F32), np.array([p.max_calib_range], F32)]


def _shape(attrs: NodeAttrs, in_shapes: list[Any], out_shapes: list[Any]) -> bool:
    shape_assign(in_shapes, 0, out_shapes[0], f"{OP}: input 'data'")
    shape_assign(out_shapes, 0, in_shapes[0], f"{OP}: output 'output'")
    data = in_shapes[0]
    if data is not None:
        axis = normalize_axis(OP, attrs.parsed.axis, data)
        for i in range(1, 5):
            shape_assign(in_shapes, i, (data[axis],), f"{OP}: input {NAMES[i]!r}")
    assign_range_shapes(OP, NAMES, in_shapes, out_shapes, 5, 1)
    return all_known(in_shapes, out_shapes)


def _type(attrs: NodeAttrs, in_types: list[Any], out_types: list[Any]) -> bool:
    check_quantized(OP, "data", in_types[0])
    for i in range(1, 5):
        type_assign(in_types, i, F32, f"{OP}: input {NAMES[i]!r}")
    assign_range_types(OP, NAMES, in_types, out_types, 5, 1)
    type_assign(out_types, 0, INT8, f"{OP}: output 'output'")
    return in_types[0] is not None


_kernel = host_compute(OP, batch_norm_np)
(
    register_op(OP)
    .describe(
        "Inference BatchNorm on quantized data: the int8 (or uint8) "
        "input with its float32 (min_data, max_data) range is normalised with the moving "
        "statistics, scaled by gamma and shifted by beta, and quantized to int8 over the "
        "calibrated (min_calib_range, max_calib_range), which is also returned as the "
        "output's range.\n\n"
        "Forward only: it has no gradient and is meant for inference graphs."
    )
    .set_attr_parser(QuantizedBatchNormParam)
    .set_num_inputs(7)
    .set_num_outputs(3)
    .set_attr(FListInputNames, lambda attrs: list(NAMES))
    .set_attr(FListOutputNames, lambda attrs: list(OUTPUTS))
    .set_attr(FMutateInputs, lambda attrs: [3, 4])
    .set_attr(FInferShape, _shape)
    .set_attr(FInferType, _type)
    .set_attr(FCompute_cpu, _kernel)
    .set_attr(FCompute_gpu, _kernel)
    .set_attr(FGradient, make_zero_grad_nodes)
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("gamma", "NDArray-or-Symbol", "gamma.")
    .add_argument("beta", "NDArray-or-Symbol", "beta.")
    .add_argument("moving_mean", "NDArray-or-Symbol", "moving_mean.")
    .add_argument("moving_var", "NDArray-or-Symbol", "moving_var.")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_arguments(QuantizedBatchNormParam.fields())
)
