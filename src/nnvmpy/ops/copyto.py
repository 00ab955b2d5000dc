"""_copyto: the registry entry of NDArray.copyto (MXNet's `_internal._copyto(x, out=y)`).

MXNet registers `_copyto` for its engine's copies (CopyFromTo) and calls it from
NDArray.copyto; imperatively it needs out= (it has no FInferType), and then it casts to
out's dtype and crosses devices. Here the op is an element-wise copy with the input's
shape and dtype (the FCompute of `_copy`), so it also works without out= and in a symbol;
nd._internal._copyto with an out= of another dtype or device goes through
NDArray.copyto (ndarray/_internal.py), as MXNet's does. The gradient passes dy through.
"""

from __future__ import annotations

from ..attrs import FCompute_cpu, FCompute_gpu, FGradient, FInferShape, FInferType
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_shape, elemwise_type
from ..registry import register_op
from .elemwise_unary import _copy_compute

(
    register_op("_copyto")
    .describe("Copy the input into the output (its shape and dtype).")
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FCompute_cpu, _copy_compute)
    .set_attr(FCompute_gpu, _copy_compute)
    .set_attr(FGradient, ElemwiseGradUseNone("_copy"))
    .add_argument("data", "NDArray", "input data")
)
