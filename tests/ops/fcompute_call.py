"""An op's FCompute<cpu|gpu> called directly, as the executor calls it: on outputs that
start from given values, with the req a test chooses for each, and with the resources
the op requests. How the GPU-path tests check write, add and null per output against
the CPU or NumPy."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import nnvmpy as nv
from nnvmpy import Op
from nnvmpy.attrs import FResourceRequest, fcompute
from nnvmpy.base import OpReqType
from nnvmpy.engine.base import RunContext
from nnvmpy.resource import OpContext, get_resource


def run_fcompute(
    name: str,
    params: dict[str, Any],
    inputs: Sequence[np.ndarray],
    starts: Sequence[np.ndarray],
    reqs: Sequence[OpReqType | str],
    device: str,
    is_train: bool = True,
) -> list[np.ndarray]:
    """Op `name`'s FCompute<device> on `inputs` (copied to the device) into outputs that
    hold `starts` (copies), reqs[i] for output i; the outputs as host arrays."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    ctx = nv.gpu(0) if device == "gpu" else nv.cpu()
    requests = op.get_attr(FResourceRequest)
    resources = [get_resource(kind, ctx)[0] for kind in requests(attrs)] if requests else []
    opctx = OpContext(is_train, RunContext(ctx, None), resources)
    if device == "gpu":
        from numba import cuda

        ins = [cuda.to_device(np.ascontiguousarray(a)) for a in inputs]
        outs = [cuda.to_device(np.ascontiguousarray(s)) for s in starts]
    else:
        ins, outs = list(inputs), [np.array(s, copy=True) for s in starts]
    compute = op.get_attr(fcompute(device))
    compute(attrs, opctx, ins, [OpReqType.parse(r) for r in reqs], outs)
    return [o.copy_to_host() if device == "gpu" else o for o in outs]


#: per dtype, the error allowed relative to the largest value compared (close_to)
SCALED_TOL = {np.dtype(np.float16): 4e-3, np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-10}


def run_fcompute_f64_cpu(
    name: str,
    params: dict[str, Any],
    inputs: Sequence[np.ndarray],
    starts: Sequence[np.ndarray],
    reqs: Sequence[OpReqType | str],
    device: str,
) -> list[np.ndarray]:
    """run_fcompute, with the CPU's inputs and starting outputs in float64: the reference
    a GPU result of any float dtype is compared with."""
    if device == "cpu":
        inputs = [np.asarray(a).astype(np.float64) for a in inputs]
        starts = [np.asarray(s).astype(np.float64) for s in starts]
    return run_fcompute(name, params, inputs, starts, reqs, device)


def close_to(got: np.ndarray, want: np.ndarray, dtype: Any, what: str) -> None:
    """got is of dtype and within SCALED_TOL[dtype] times max(1, |want|'s largest) of want."""
    assert got.dtype == dtype, what
    scale = max(1.0, float(np.abs(want).max()))
    atol = SCALED_TOL[np.dtype(dtype)] * scale
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=0, atol=atol, err_msg=what)
