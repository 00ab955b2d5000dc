"""Fluent methods (nnvmpy/fluent.py): x.op(...) == nd.op(x, ...), for NDArray and Symbol."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import fluent
from nnvmpy.registry import Op

nd = nv.nd

# arguments for fluent methods whose op needs some; the rest are called with none
ARGS: dict[str, tuple[tuple, dict]] = {
    "expand_dims": ((), {"axis": 1}),
    "broadcast_axes": ((), {"axis": 2, "size": 4}),
    "broadcast_to": ((), {"shape": (2, 3, 4)}),
    "broadcast_like": ((), {}),  # NDArray's own method; the Symbol op takes two inputs
    "split": ((), {"axis": 1, "num_outputs": 3}),
    "slice": ((), {"begin": (0, 1), "end": (2, 3)}),
    "slice_axis": ((), {"axis": 1, "begin": 0, "end": 2}),
    "slice_like": ((), {"shape_like": None}),
    "transpose": ((), {"axes": (1, 0, 2)}),
    "reshape": (((3, 2),), {}),
    "squeeze": ((), {"axis": 2}),
    "astype": (("float64",), {}),
    "clip": ((), {"a_min": 0.2, "a_max": 0.8}),
    "one_hot": ((), {"depth": 3}),
    "tile": ((), {"reps": (1, 2)}),
    "repeat": ((), {"repeats": 2}),
    "swapaxes": ((), {"dim1": 0, "dim2": 2}),
    "flip": ((), {"axis": 1}),
    "pad": ((), {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1)}),
}
SKIP = {"broadcast_like", "slice_like", "reshape_like", "pick", "take", "split_v2", "diag",
        "depth_to_space", "space_to_depth", "pad"}  # fmt: skip


def registered_fluent() -> list[str]:
    return [
        m
        for m, op in fluent.FLUENT.items()
        if op in Op.list_op_names() and m not in SKIP and m not in ("astype", "reshape")
    ]


@pytest.mark.parametrize("method", registered_fluent())
def test_fluent_equals_function(method: str) -> None:
    data = np.random.default_rng(0).uniform(0.1, 0.9, size=(2, 3, 1)).astype(np.float32)
    x = nd.array(data)
    args, kwargs = ARGS.get(method, ((), {}))
    fn = getattr(nd if not fluent.FLUENT[method].startswith("_") else nd._internal,
                 fluent.FLUENT[method])  # fmt: skip
    want = fn(x, *args, **kwargs)
    got = getattr(x, method)(*args, **kwargs)
    want, got = (want, got) if isinstance(want, list) else ([want], [got])
    for w, g in zip(want, got):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), equal_nan=True)


def test_positional_arguments_fill_inputs_then_parameters() -> None:
    x = nd.array(np.arange(24, dtype=np.float32).reshape(2, 3, 4))
    if "clip" in Op.list_op_names():  # clip(data, a_min, a_max), as MXNet's x.clip(0, 1)
        np.testing.assert_array_equal(x.clip(3, 5).asnumpy(), np.clip(x.asnumpy(), 3, 5))
    np.testing.assert_array_equal(  # slice_axis(data, axis, begin, end)
        x.slice_axis(2, 1, 3).asnumpy(), x.asnumpy()[:, :, 1:3]
    )
    like = nd.zeros((1, 2, 4))
    np.testing.assert_array_equal(x.slice_like(like).asnumpy(), x.asnumpy()[:1, :2])
    with pytest.raises(TypeError, match="positional"):
        x.slice_axis(0, 0, 1, 5, 6)
    with pytest.raises(TypeError, match="multiple values"):
        x.slice_axis(2, axis=1)


def test_class_methods_are_kept_and_unknown_ops_fail_at_call(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert nd.NDArray.reshape.__qualname__ == "NDArray.reshape"  # a view, not the op
    assert nd.NDArray.squeeze.__qualname__ == "NDArray.squeeze"

    class Dummy:
        pass

    monkeypatch.setattr(fluent, "FLUENT", {"frobnicate": "no_such_op_anywhere"})
    added = fluent.install(Dummy, nd.call_op, lambda: nd)
    assert added == ["frobnicate"]
    with pytest.raises(nv.NNVMError, match="no_such_op_anywhere"):
        Dummy().frobnicate()


def test_symbol_fluent_methods_build_the_op() -> None:
    s = nv.sym.Variable("x")
    y = s.reshape((2, -1)).exp().sum(axis=1)
    exe = y.simple_bind(nv.cpu(), x=(2, 3))
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    out = exe.forward(x=a)[0].asnumpy()
    np.testing.assert_allclose(out, np.exp(a).sum(axis=1), rtol=1e-6)
    z = s.astype("float64")
    assert z.infer_type(x=np.float32)[1] == [np.dtype(np.float64)]
