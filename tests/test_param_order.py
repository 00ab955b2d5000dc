"""Op parameters come in MXNet's order, so positional calls mean what they mean in MXNet.

MXNet's generated functions take parameters positionally after the inputs
(`nd.sgd_update(w, g, 0.1)` is lr=0.1), in each op's declaration order.
tests/data/mxnet_op_params.json holds that order ({op: [parameter, ...]}) for every op
name nnvmpy registers, read from MXNet 1.9.1's C API (MXSymbolGetAtomicSymbolInfo's
arguments that are not NDArray/Symbol inputs); tools/mxnet_op_tables.py regenerates it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.registry import Op

MXNET_PARAMS = json.loads((Path(__file__).parent / "data" / "mxnet_op_params.json").read_text())


@pytest.mark.parametrize("name", sorted(MXNET_PARAMS))
def test_shared_parameters_are_in_mxnets_order(name: str) -> None:
    ours = [a.name for a in Op.get(name).arguments if not a.type_info.startswith("NDArray")]
    theirs = MXNET_PARAMS[name]
    assert [p for p in ours if p in theirs] == [p for p in theirs if p in ours]


def test_positional_update_parameters_are_lr_first() -> None:
    w, g = np.array([1.0, 2.0], np.float32), np.array([0.5, -1.0], np.float32)
    out = nv.nd.sgd_update(nv.nd.array(w), nv.nd.array(g), 0.1, 0.0)  # lr, wd
    np.testing.assert_allclose(out.asnumpy(), w - 0.1 * g, rtol=1e-6)
    mom = nv.nd.zeros(2)
    out = nv.nd.sgd_mom_update(nv.nd.array(w), nv.nd.array(g), mom, 0.1, 0.9)  # lr, momentum
    np.testing.assert_allclose(out.asnumpy(), w - 0.1 * g, rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), -0.1 * g, rtol=1e-6)


def test_field_order_must_name_fields() -> None:
    with pytest.raises(TypeError, match="names no field"):

        class _Bad(nv.param.Parameter):
            field_order = ("missing",)
            present = nv.param.field(int, default=0)
