"""cast_storage: an array in another storage type (MXNet's cast_storage.cc).

nnvmpy stores every array densely, so the only storage type it can cast to is 'default':
a copy whose gradient is the output gradient copied back. 'row_sparse' and 'csr' are
accepted names (they are MXNet's enum) but parsing them raises a ParamError saying that
sparse storage is not provided, as `NDArray.tostype` does.
"""

from __future__ import annotations

from ..attrs import (
    FCompute_cpu,
    FCompute_gpu,
    FGradient,
    FInferShape,
    FInferType,
    FInplaceOption,
    FListInputNames,
)
from ..base import ParamError
from ..graph.grad import ElemwiseGradUseNone
from ..infer import elemwise_shape, elemwise_type
from ..param import Parameter, field
from ..registry import NodeAttrs, register_op
from .elemwise_unary import _copy_compute

STYPES = ("default", "row_sparse", "csr")


class CastStorageParam(Parameter):
    stype = field(str, enum=STYPES, describe="Output storage type.")


def _parse(attrs: NodeAttrs) -> CastStorageParam:
    """CastStorageParam, refusing the sparse storage types nnvmpy does not have."""
    param = CastStorageParam.parse(attrs.dict, op_name="cast_storage")
    if param.stype != "default":
        raise ParamError(
            f"cast_storage: parameter 'stype' is {param.stype!r}, but sparse storage "
            "('row_sparse', 'csr') is not provided by nnvmpy (arrays are dense); "
            "expected 'default'"
        )
    return param


(
    register_op("cast_storage")
    .describe(
        "Casts tensor storage type to the new type.\n\n"
        "nnvmpy arrays are dense: stype='default' gives a copy of the input; 'row_sparse' "
        "and 'csr' raise a ParamError."
    )
    .set_attr_parser(CastStorageParam)  # the fields (the generated signature) ...
    .set_attr_parser(_parse)  # ... and the parser that refuses sparse types
    .set_num_inputs(1)
    .set_num_outputs(1)
    .set_attr(FListInputNames, lambda attrs: ["data"])
    .set_attr(FInferShape, elemwise_shape(1, 1))
    .set_attr(FInferType, elemwise_type(1, 1))
    .set_attr(FInplaceOption, lambda attrs: [(0, 0)])
    .set_attr(FCompute_cpu, _copy_compute)
    .set_attr(FCompute_gpu, _copy_compute)
    .set_attr(FGradient, ElemwiseGradUseNone("_copy"))
    .add_argument("data", "NDArray-or-Symbol", "The input.")
    .add_arguments(CastStorageParam.fields())
)
