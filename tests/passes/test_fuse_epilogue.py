"""FuseEpilogue: a convolution's residual add and relu applied in its output loop.

References: the same symbol bound with NNVMPY_FUSE_EPILOGUE=0 ("plain"), and NumPy's
relu(y + r) of the plain convolution's output. Shapes pick every CPU convolution path
(_conv_cpu.py): 1x1 GEMM, im2col one image at a time and in chunks, shifted GEMMs,
depthwise loops, 3-D.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import sym
from nnvmpy.graph import Graph, apply_passes

RNG = np.random.default_rng(11)


def _bind(net: Any, arrays: dict[str, np.ndarray], on: bool, mp: pytest.MonkeyPatch) -> Any:
    mp.setenv("NNVMPY_FUSE_EPILOGUE", "1" if on else "0")
    mp.setenv("NNVMPY_FUSION", "0")  # the reference keeps add and relu as their own nodes
    mp.setenv("NNVMPY_CHANNELS_LAST", "0")  # Convolution's own epilogue (its paths below)
    try:
        args = {k: nv.nd.array(v, dtype=v.dtype) for k, v in arrays.items()}
        return net.bind(nv.cpu(), args, grad_req="null")
    finally:
        mp.delenv("NNVMPY_FUSE_EPILOGUE")
        mp.delenv("NNVMPY_FUSION")


def _ops(exe: Any) -> list[str]:
    return [n.op.name for n in exe._graph.indexed.nodes if n.op is not None]


def _arrays(net: Any, dtype: Any = np.float32, **shapes: Any) -> dict[str, np.ndarray]:
    names = net.list_arguments()
    arg_shapes = net.infer_shape(**{k: v for k, v in shapes.items() if k in names})[0]
    return {
        n: RNG.standard_normal(s).astype(dtype) for n, s in zip(net.list_arguments(), arg_shapes)
    }


# (data shape, conv params): which CPU path each takes is in the id
PATHS = {
    "pointwise": ((3, 8, 5, 5), {"kernel": (1, 1), "num_filter": 6}),
    "im2col-one-image": ((1, 3, 7, 7), {"kernel": (3, 3), "num_filter": 5, "pad": (1, 1)}),
    "im2col-chunks": ((4, 3, 6, 6), {"kernel": (3, 3), "num_filter": 5, "stride": (2, 2)}),
    "shifted-gemm": ((2, 32, 40, 40), {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1)}),
    "depthwise": ((2, 4, 6, 6), {"kernel": (3, 3), "num_filter": 4, "num_group": 4, "pad": (1, 1)}),
    "grouped": ((2, 4, 6, 6), {"kernel": (3, 3), "num_filter": 6, "num_group": 2}),
    "3d": ((2, 2, 4, 5, 5), {"kernel": (2, 3, 3), "num_filter": 3}),
}


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("no_bias", [False, True])
def test_conv_add_relu_runs_as_one_node_with_the_same_result(
    path: str, no_bias: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    shape, params = PATHS[path]
    conv = sym.Convolution(sym.var("x"), no_bias=no_bias, name="c", **params)
    out_shape = conv.infer_shape(x=shape)[1][0]
    net = sym.relu(conv + sym.var("r"), name="act")
    arrays = _arrays(net, x=shape, r=out_shape)
    exe = _bind(net, arrays, True, monkeypatch)
    plain = _bind(net, arrays, False, monkeypatch)
    assert _ops(exe) == ["_Epilogue"]
    note = exe._simplified["act"]  # the add's name depends on the symbol counter
    assert note.startswith("Convolution 'c' + elemwise_add '_plus")
    assert note.endswith("' + relu 'act' in one output loop")
    got, want = exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    conv_only = _bind(conv, {k: v for k, v in arrays.items() if k != "r"}, False, monkeypatch)
    y = conv_only.forward()[0].asnumpy()
    np.testing.assert_allclose(got, np.maximum(y + arrays["r"], 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("algo", ["auto", "winograd", "winograd4"])
@pytest.mark.parametrize("path", list(PATHS))
def test_relu_in_the_epilogue_is_mxnets_at_inf_nan_and_minus_zero(
    path: str, algo: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MXNet's relu keeps NaN and maps -inf and -0 to +0 (`x - x` once made -inf a NaN)."""
    shape, params = PATHS[path]
    if algo != "auto" and params["kernel"] != (3, 3):
        pytest.skip("Winograd takes 3x3 windows only")
    monkeypatch.setenv("NNVMPY_CONV_ALGO", algo)
    conv = sym.Convolution(sym.var("x"), name="c", **params)
    net = sym.relu(conv + sym.var("r"), name="act")
    arrays = _arrays(net, x=shape, r=conv.infer_shape(x=shape)[1][0])
    special = np.array([-np.inf, np.inf, np.nan, -0.0, -1e30], np.float32)
    r = arrays["r"].reshape(-1)
    r[: r.size // 2] = np.resize(special, r.size // 2)  # the first half: each value many times
    exe = _bind(net, arrays, True, monkeypatch)
    assert _ops(exe) == ["_Epilogue"]
    y = (
        _bind(
            conv,
            {
                "x": arrays["x"],
                "c_weight": arrays["c_weight"],
                **({"c_bias": arrays["c_bias"]} if "c_bias" in arrays else {}),
            },
            False,
            monkeypatch,
        )
        .forward()[0]
        .asnumpy()
    )
    got = exe.forward()[0].asnumpy()
    want = np.maximum(y + arrays["r"], np.float32(0))  # NumPy's maximum: NaN stays, -inf -> 0
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert not np.signbit(got).any(), "relu wrote a -0"


@pytest.mark.parametrize(
    ("build", "members"),
    [
        (lambda c, r: sym.Activation(c, act_type="relu"), 2),  # conv + relu
        (lambda c, r: r + c, 2),  # the residual on the left
        (lambda c, r: sym.relu(sym.relu(c) + r), 2),  # relu then add: only the relu joins
        (lambda c, r: sym.Activation(c, act_type="tanh"), 1),  # not an epilogue step
    ],
)
def test_which_steps_join_the_convolution(
    build: Any, members: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(3, 3), num_filter=4, name="c")
    net = build(conv, sym.var("r"))
    arrays = _arrays(net, dtype=np.float64, x=(2, 3, 6, 6), r=(2, 4, 4, 4))
    exe = _bind(net, arrays, True, monkeypatch)
    plain = _bind(net, arrays, False, monkeypatch)
    fused = [n for n in exe._graph.indexed.nodes if n.op is not None and n.op.name == "_Epilogue"]
    assert len(fused[0].attrs.parsed.members) == members if fused else members == 1
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(), 1e-12)


def test_output_read_twice_or_wanted_as_output_stays_separate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    conv = sym.Convolution(sym.var("x"), kernel=(1, 1), num_filter=3, name="c")
    net = sym.Group([sym.relu(conv), conv])  # the conv output is a graph output too
    arrays = _arrays(net, x=(1, 2, 3, 3))
    exe = _bind(net, arrays, True, monkeypatch)
    assert "_Epilogue" not in _ops(exe)
    net = sym.relu(conv) + conv  # read twice
    exe = _bind(net, _arrays(net, x=(1, 2, 3, 3)), True, monkeypatch)
    assert "_Epilogue" not in _ops(exe)


def test_two_convolutions_into_one_add_take_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """ResNet's downsampling block: conv(x) + conv(x); one of them takes add and relu."""
    x = sym.var("x")
    a = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="a")
    b = sym.Convolution(x, kernel=(1, 1), num_filter=4, name="b")
    net = sym.relu(a + b)
    arrays = _arrays(net, x=(2, 3, 5, 5))
    exe = _bind(net, arrays, True, monkeypatch)
    plain = _bind(net, arrays, False, monkeypatch)
    assert sorted(_ops(exe)) == ["Convolution", "_Epilogue"]
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(), 1e-5)


def test_float16_convolution_takes_the_epilogue_through_float32(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = sym.relu(sym.Convolution(sym.var("x"), kernel=(3, 3), num_filter=4) + sym.var("r"))
    arrays = _arrays(net, dtype=np.float16, x=(2, 3, 6, 6), r=(2, 4, 4, 4))
    exe = _bind(net, arrays, True, monkeypatch)
    plain = _bind(net, arrays, False, monkeypatch)
    assert _ops(exe) == ["_Epilogue"]
    np.testing.assert_allclose(
        exe.forward()[0].asnumpy(), plain.forward()[0].asnumpy(), rtol=2e-3, atol=2e-3
    )


def test_epilogue_op_cannot_be_made_from_attributes() -> None:
    with pytest.raises(nv.NNVMError, match="_Epilogue: node 'n' cannot be made"):
        nv.Op.get("_Epilogue").parse_attrs({}, "n")
    g = apply_passes(Graph(sym.relu(sym.var("x"))._heads), ["FuseEpilogue"])
    assert g.attrs["epilogues"] == {}  # no producer: nothing to fuse, the pass still runs


@pytest.mark.gpu
def test_conv_add_relu_and_the_fold_on_the_gpu() -> None:
    x = sym.var("x")
    conv = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="c")
    net = sym.relu(sym.BatchNorm(conv, fix_gamma=False, name="bn") + sym.var("r"))
    shapes = net.infer_shape(x=(2, 3, 5, 5), r=(2, 4, 5, 5))
    args = {
        n: RNG.standard_normal(s).astype(np.float32)
        for n, s in zip(net.list_arguments(), shapes[0])
    }
    aux = {
        n: RNG.uniform(0.5, 2, s).astype(np.float32)
        for n, s in zip(net.list_auxiliary_states(), shapes[2])
    }
    outs = []
    for ctx in (nv.cpu(), nv.gpu()):
        exe = net.bind(
            ctx,
            {k: nv.nd.array(v, ctx=ctx) for k, v in args.items()},
            aux_states={k: nv.nd.array(v, ctx=ctx) for k, v in aux.items()},
            grad_req="null",
        )
        assert "_Epilogue" in _ops(exe)
        assert "_FoldScaleShift" in _ops(exe)
        outs.append(exe.forward()[0].asnumpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)
