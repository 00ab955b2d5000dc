"""Convolution and Pooling beyond the op table: inference, parameters, MXNet files, chunking.

Forward/backward values for each parameter set are checked by the OpCase rows in
cases_conv.py (test_op_db.py); this file covers what a row cannot express.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import conv_reference, pool_reference

# isort: on

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError, OpReqType, ParamError
from nnvmpy.registry import Op
from nnvmpy.test_utils import _run_compute, check_symbolic_backward, check_symbolic_forward

sym = nv.sym
# CI clones the repository with shared/ beside it; a developer machine has /work/shared
MODELS = next(
    (
        p
        for p in (
            Path(__file__).resolve().parents[2].parent / "shared" / "models",
            Path("/work/shared/models"),
        )
        if p.is_dir()
    ),
    Path("/work/shared/models"),
)


def still_works() -> None:
    """After an error the registry and engine keep working: a small conv runs."""
    x = nv.nd.ones((1, 1, 3, 3))
    w = nv.nd.ones((1, 1, 2, 2))
    y = nv.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True)
    np.testing.assert_array_equal(y.asnumpy(), np.full((1, 1, 2, 2), 4.0))


# -- shape inference ------------------------------------------------------------------------------


def test_convolution_infers_weight_bias_and_output_from_data() -> None:
    data = sym.Variable("data")
    conv = sym.Convolution(data, kernel=(3, 3), num_filter=8, stride=(2, 2), pad=(1, 1), name="c")
    assert conv.list_arguments() == ["data", "c_weight", "c_bias"]
    args, outs, aux = conv.infer_shape(data=(2, 3, 10, 9))
    assert args == [(2, 3, 10, 9), (8, 3, 3, 3), (8,)]
    assert outs == [(2, 8, 5, 5)]
    assert aux == []


def test_convolution_without_bias_has_no_bias_input() -> None:
    conv = sym.Convolution(
        sym.Variable("data"), kernel=(1, 1), num_filter=4, no_bias=True, name="nb"
    )
    assert conv.list_arguments() == ["data", "nb_weight"]
    args, outs, _ = conv.infer_shape(data=(1, 6, 4, 4))
    assert args[1:] == [(4, 6, 1, 1)]
    assert outs == [(1, 4, 4, 4)]


def test_convolution_groups_and_dilation_shapes() -> None:
    conv = sym.Convolution(
        sym.Variable("data"), kernel=(3, 3), num_filter=6, num_group=3, dilate=(2, 2), name="g"
    )
    args, outs, _ = conv.infer_shape(data=(2, 9, 11, 11))
    assert args[1] == (6, 3, 3, 3)
    assert outs == [(2, 6, 7, 7)]  # 11 - 2*(3-1) = 7


def test_convolution_takes_channels_from_the_weight() -> None:
    conv = sym.Convolution(sym.Variable("data"), kernel=(3, 3), num_filter=4, num_group=2, name="m")
    args, outs, _ = conv.infer_shape_partial(data=(2, 0, 6, 6), m_weight=(4, 3, 3, 3))
    assert args[0] == (2, 6, 6, 6)  # C = weight's C/g * num_group
    assert outs == [(2, 4, 4, 4)]


def test_convolution_1d_shapes() -> None:
    conv = sym.Convolution(sym.Variable("data"), kernel=(3,), num_filter=5, stride=(2,), name="d")
    args, outs, _ = conv.infer_shape(data=(2, 4, 9))
    assert args[1:] == [(5, 4, 3), (5,)]
    assert outs == [(2, 5, 4)]


def test_pooling_shapes_per_convention() -> None:
    data = sym.Variable("data")
    shapes = {}
    for convention in ("valid", "full", "same"):
        p = sym.Pooling(data, kernel=(3, 3), stride=(2, 2), pooling_convention=convention)
        shapes[convention] = p.infer_shape(data=(1, 2, 8, 8))[1][0]
    assert shapes == {"valid": (1, 2, 3, 3), "full": (1, 2, 4, 4), "same": (1, 2, 4, 4)}
    glob = sym.Pooling(data, kernel=(1, 1), global_pool=True, pool_type="avg")
    assert glob.infer_shape(data=(3, 5, 7, 6))[1] == [(3, 5, 1, 1)]


def test_same_convention_pads_like_tensorflow() -> None:
    """ceil(W / s) outputs; the one extra padding column goes last (TensorFlow's SAME)."""
    x = np.array([[[[1.0, 5.0, 2.0, 3.0, 4.0]]]])
    mx = nv.nd.Pooling(nv.nd.array(x), kernel=(1, 2), stride=(1, 2), pooling_convention="same")
    np.testing.assert_array_equal(mx.asnumpy(), [[[[5.0, 3.0, 4.0]]]])
    avg = nv.nd.Pooling(
        nv.nd.array(x), kernel=(1, 2), stride=(1, 2), pooling_convention="same", pool_type="avg"
    )
    np.testing.assert_array_equal(avg.asnumpy(), [[[[3.0, 2.5, 2.0]]]])  # last: (4 + pad) / 2


def test_max_pooling_has_a_hidden_mask_output() -> None:
    op = Op.get("Pooling")
    assert op.get_num_outputs(op.parse_attrs({"kernel": (2, 2)})) == 2
    assert op.get_num_outputs(op.parse_attrs({"kernel": (2, 2), "pool_type": "avg"})) == 1
    p = sym.Pooling(sym.Variable("data"), kernel=(2, 2), name="pool0")
    assert p.list_outputs() == ["pool0_output"]
    assert p.infer_type(data=np.float32)[1] == [np.dtype(np.float32)]
    y = nv.nd.Pooling(nv.nd.ones((1, 1, 4, 4)), kernel=(2, 2), stride=(2, 2))
    assert isinstance(y, nv.nd.NDArray)
    assert y.shape == (1, 1, 2, 2)


# -- errors ---------------------------------------------------------------------------------------


def test_kernel_larger_than_padded_input_names_op_kernel_and_shape() -> None:
    conv = sym.Convolution(sym.Variable("data"), kernel=(5, 5), num_filter=2, name="big")
    with pytest.raises(InferError, match=r"Convolution.*kernel \(5, 5\).*\(1, 1, 3, 3\)"):
        conv.infer_shape(data=(1, 1, 3, 3))
    with pytest.raises(InferError, match=r"Convolution.*kernel \(5, 5\)"):
        nv.nd.Convolution(
            nv.nd.ones((1, 1, 3, 3)),
            nv.nd.ones((2, 1, 5, 5)),
            nv.nd.ones((2,)),
            kernel=(5, 5),
            num_filter=2,
        )
    pool = sym.Pooling(sym.Variable("data"), kernel=(4, 4))
    with pytest.raises(InferError, match=r"Pooling.*kernel \(4, 4\).*\(1, 1, 3, 3\)"):
        pool.infer_shape(data=(1, 1, 3, 3))
    still_works()


@pytest.mark.parametrize(
    ("op", "params", "pattern"),
    [
        ("Convolution", {"kernel": (3, 3), "num_filter": 0}, r"Convolution.*'num_filter'.*\[1, "),
        ("Convolution", {"kernel": (3, 3)}, r"Convolution.*missing.*'num_filter'"),
        ("Convolution", {"num_filter": 2}, r"Convolution.*missing.*'kernel'"),
        ("Convolution", {"kernel": (3, 3), "num_filter": 3, "num_group": 2}, r"'num_filter' \(3\)"),
        (
            "Convolution",
            {"kernel": (3, 3), "num_filter": 2, "stride": (1,)},
            r"'stride'.*2 entries",
        ),
        ("Convolution", {"kernel": (3, 3), "num_filter": 2, "dilate": (0, 1)}, r"'dilate'.*>= 1"),
        ("Convolution", {"kernel": (3, 3), "num_filter": 2, "layout": "NHWC"}, r"'layout'.*NCHW"),
        ("Convolution", {"kernel": (3, 3, 3, 3), "num_filter": 2}, r"'kernel'.*1, 2 or 3 dim"),
        ("Convolution", {"kernel": (3, 3), "num_filter": 2, "cudnn_tune": "x"}, r"'cudnn_tune'"),
        ("Pooling", {"pool_type": "avg"}, r"Pooling.*'kernel' is required unless global_pool"),
        ("Pooling", {"kernel": (2, 2), "pool_type": "median"}, r"Pooling.*'pool_type'.*'max'"),
        ("Pooling", {"kernel": (2, 2), "pool_type": "lp"}, r"Pooling.*'p_value'"),
        ("Pooling", {"kernel": (2, 2), "pooling_convention": "ceil"}, r"'pooling_convention'"),
        ("Pooling", {"kernel": (2, 2), "pad": (1,)}, r"Pooling.*'pad'.*2 entries"),
    ],
)
def test_bad_parameters_raise_param_error_naming_op_and_field(
    op: str, params: dict[str, Any], pattern: str
) -> None:
    with pytest.raises(ParamError, match=pattern):
        Op.get(op).parse_attrs(params)
    still_works()


def test_bad_input_shapes_raise_infer_error() -> None:
    data = sym.Variable("data")
    conv = sym.Convolution(data, kernel=(3, 3), num_filter=2, name="c")
    with pytest.raises(InferError, match=r"Convolution.*'data' must be 4-D"):
        conv.infer_shape(data=(2, 3, 8))
    with pytest.raises(InferError, match=r"c_weight|weight"):
        conv.infer_shape(data=(2, 3, 8, 8), c_weight=(2, 4, 3, 3))
    grouped = sym.Convolution(data, kernel=(1, 1), num_filter=4, num_group=2)
    with pytest.raises(InferError, match=r"Convolution.*3 channels.*num_group=2"):
        grouped.infer_shape(data=(1, 3, 4, 4))
    with pytest.raises(InferError, match=r"Convolution.*int32"):
        conv.infer_type(data=np.int32)
    still_works()


# -- parameters and MXNet's model files -----------------------------------------------------------


def test_window_defaults_are_filled_as_mxnet_does() -> None:
    p = Op.get("Convolution").parse_attrs({"kernel": "(3, 3)", "num_filter": "8"}).parsed
    assert (p.stride, p.dilate, p.pad) == ((1, 1), (1, 1), (0, 0))
    assert p.to_dict()["stride"] == "(1, 1)"
    assert p.to_dict()["cudnn_tune"] == "None"
    q = Op.get("Pooling").parse_attrs({"kernel": "(3,)"}).parsed
    assert (q.stride, q.pad, q.count_include_pad) == ((1,), (0,), None)


@pytest.mark.parametrize("model", ["lenet", "resnet18_v1"])
def test_model_file_attrs_parse_and_round_trip(model: str) -> None:
    """Every Convolution/Pooling attribute MXNet 1.9.1 wrote parses and prints back the same;
    the output count matches node_row_ptr (max pooling: 2, one visible)."""
    graph = json.loads((MODELS / f"{model}-symbol.json").read_text())
    row_ptr = graph["node_row_ptr"]
    seen = set()
    for i, node in enumerate(graph["nodes"]):
        if node["op"] not in ("Convolution", "Pooling"):
            continue
        op = Op.get(node["op"])
        attrs = op.parse_attrs(node["attrs"])
        printed = attrs.parsed.to_dict()
        assert {k: printed[k] for k in node["attrs"]} == node["attrs"]
        assert op.get_num_outputs(attrs) == row_ptr[i + 1] - row_ptr[i], node["name"]
        seen.add((node["op"], node["attrs"].get("pool_type")))
    assert ("Convolution", None) in seen
    assert ("Pooling", "max") in seen


def test_lenet_conv_pool_stack_shapes_match_mxnet() -> None:
    expected = json.loads((MODELS / "lenet-expected.json").read_text())
    arg_shapes = dict(zip(expected["list_arguments"], expected["arg_shapes"]))
    x = sym.Variable("data")
    x = sym.Pooling(
        sym.Convolution(x, kernel=(5, 5), num_filter=20, name="conv1"),
        kernel=(2, 2),
        stride=(2, 2),
        pool_type="max",
    )
    x = sym.Pooling(
        sym.Convolution(x, kernel=(5, 5), num_filter=50, name="conv2"),
        kernel=(2, 2),
        stride=(2, 2),
        pool_type="max",
    )
    args, outs, _ = x.infer_shape(data=tuple(expected["input_shapes"]["data"]))
    got = dict(zip(x.list_arguments(), args))
    for name in ("conv1_weight", "conv1_bias", "conv2_weight", "conv2_bias"):
        assert got[name] == tuple(arg_shapes[name])
    _n, c, h, w = outs[0]
    assert c * h * w == arg_shapes["fc1_weight"][1]  # 800 features into fc1


def test_resnet18_file_infers_shapes_when_its_ops_exist() -> None:
    text = (MODELS / "resnet18_v1-symbol.json").read_text()
    ops = {n["op"] for n in json.loads(text)["nodes"]} - {"null"}
    missing = sorted(o for o in ops if o not in Op.list_op_names())
    if missing:
        pytest.skip(f"ops not registered yet: {missing}")
    expected = json.loads((MODELS / "resnet18_v1-expected.json").read_text())
    net = sym.load_json(text)
    args, outs, _ = net.infer_shape(data=tuple(expected["input_shapes"]["data"]))
    assert [list(a) for a in args] == expected["arg_shapes"]
    assert [list(o) for o in outs] == expected["out_shapes"]


# -- CPU algorithm details ------------------------------------------------------------------------


def _direct(
    name: str,
    params: dict[str, Any],
    inputs: list[np.ndarray],
    req: str = "write",
    outputs: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """FCompute<cpu> called directly (as the executor would), into `outputs` if given."""
    op = Op.get(name)
    attrs = op.parse_attrs(params)
    from nnvmpy.imperative import infer_outputs

    shapes, dtypes = infer_outputs(
        attrs, [x.shape for x in inputs], [x.dtype for x in inputs], op.get_num_outputs(attrs)
    )
    return _run_compute(op, attrs, inputs, shapes, dtypes, OpReqType.parse(req), outputs)


def _backward_inputs(
    params: dict[str, Any],
    x: np.ndarray,
    w: np.ndarray,
    dy: np.ndarray,
    req: str = "write",
    outputs: list[np.ndarray] | None = None,
) -> list[np.ndarray]:
    """_backward_Convolution's FCompute<cpu>: [dx, dw(, db)]."""
    bwd = Op.get("_backward_Convolution")
    attrs = bwd.parse_attrs(params)
    n_out = bwd.get_num_outputs(attrs)
    shapes = [x.shape, w.shape, (w.shape[0],)][:n_out]
    return _run_compute(
        bwd, attrs, [dy, x, w], shapes, [x.dtype] * n_out, OpReqType.parse(req), outputs
    )


@pytest.mark.parametrize("groups", [1, 2])
def test_workspace_chunking_gives_the_same_result_as_one_chunk(groups: int) -> None:
    from nnvmpy.ops.nn import _conv_cpu

    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4, 9, 9)).astype(np.float64)
    w = rng.standard_normal((6, 4 // groups, 3, 3)).astype(np.float64)
    b = rng.standard_normal(6)
    base = {"kernel": (3, 3), "num_filter": 6, "pad": (1, 1), "stride": (2, 1), "num_group": groups}
    small, large = dict(base, workspace=0), dict(base, workspace=1024)
    shape = {"n": 6, "c": 4, "h": 9, "w": 9, "f": 6, "groups": groups}
    win = _conv_cpu.Window(3, 3, 2, 1, 1, 1, 1, 1, 5, 9)
    one = _conv_cpu.ConvShape(**shape, win=win, workspace_mb=1024).chunk(8, 100)
    assert _conv_cpu.ConvShape(**shape, win=win, workspace_mb=0).chunk(8, 100) == 1 < one
    (y_small,), (y_large,) = (
        _direct("Convolution", small, [x, w, b]),
        _direct("Convolution", large, [x, w, b]),
    )
    np.testing.assert_allclose(y_small, y_large, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y_large, conv_reference(x, w, b, **base), rtol=1e-10, atol=1e-10)
    dy = rng.standard_normal(y_small.shape)
    for a, c in zip(_backward_inputs(small, x, w, dy), _backward_inputs(large, x, w, dy)):
        np.testing.assert_allclose(a, c, rtol=1e-12, atol=1e-12)


STRIDE1 = [
    {"kernel": (3, 3), "pad": (1, 1)},
    {"kernel": (3, 2), "pad": (0, 1), "dilate": (2, 1)},
    {"kernel": (3, 3), "pad": (2, 2), "num_group": 2},
    {"kernel": (1, 1), "pad": (1, 0), "no_bias": True},
]


@pytest.mark.parametrize("path", ["shift", "im2col"])
@pytest.mark.parametrize("params", STRIDE1, ids=["3x3", "dilate", "group", "1x1-pad"])
def test_stride1_paths_match_reference(
    path: str, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both CPU algorithms for stride 1 (shifted GEMMs, im2col), one chunk and many, req add."""
    from nnvmpy.ops.nn import _conv_shift

    monkeypatch.setattr(_conv_shift, "MAX_PADDED_RATIO", 100.0 if path == "shift" else 0.0)
    monkeypatch.setattr(_conv_shift, "MIN_CHANNELS", 1)
    monkeypatch.setattr(_conv_shift, "MIN_COLUMNS", 1)
    calls = []
    real = _conv_shift.forward
    monkeypatch.setattr(_conv_shift, "forward", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(7)
    groups = params.get("num_group", 1)
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((6, 4 // groups, *params["kernel"]))
    b = rng.standard_normal(6)
    params = {**params, "num_filter": 6}
    inputs = [x, w] if params.get("no_bias") else [x, w, b]
    want = conv_reference(*inputs, **params)
    for workspace in (0, 1024):  # one image per chunk, all images in one chunk
        p = {**params, "workspace": workspace}
        (got,) = _direct("Convolution", p, inputs)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
        start = rng.standard_normal(want.shape)
        (added,) = _direct("Convolution", p, inputs, "add", [start.copy()])
        np.testing.assert_allclose(added, start + want, rtol=1e-10, atol=1e-10)
        dy = rng.standard_normal(want.shape)
        dx, dw = _adjoint_grads(x, w, dy, **params)
        grads = _backward_inputs(p, x, w, dy)
        np.testing.assert_allclose(grads[0], dx, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(grads[1], dw, rtol=1e-9, atol=1e-10)
        old = [rng.standard_normal(g.shape) for g in grads]
        summed = _backward_inputs(p, x, w, dy, "add", [o.copy() for o in old])
        for got_g, o, g in zip(summed, old, grads):
            np.testing.assert_allclose(got_g, o + g, rtol=1e-9, atol=1e-10)
    assert bool(calls) == (path == "shift")


def test_without_cblas_stride1_falls_back_to_im2col(monkeypatch: pytest.MonkeyPatch) -> None:
    from nnvmpy.ops.nn import _blas, _conv_shift

    monkeypatch.setattr(_blas, "_active", [None])  # as if no cblas had been found
    monkeypatch.setattr(_conv_shift, "MAX_PADDED_RATIO", 100.0)
    rng = np.random.default_rng(8)
    x, w = rng.standard_normal((2, 3, 5, 5)), rng.standard_normal((4, 3, 3, 3))
    params = {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4, "no_bias": True}
    (got,) = _direct("Convolution", params, [x, w])
    np.testing.assert_allclose(got, conv_reference(x, w, **params), rtol=1e-10, atol=1e-10)


def test_convolution_req_add_accumulates_through_the_executor() -> None:
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (2, 3, 6, 6))
    w = rng.uniform(-1, 1, (4, 3, 3, 3))
    b = rng.uniform(-1, 1, 4)
    conv = sym.Convolution(
        sym.Variable("x"),
        sym.Variable("w"),
        sym.Variable("b"),
        kernel=(3, 3),
        num_filter=4,
        stride=(2, 2),
    )
    dy = rng.uniform(-1, 1, conv_reference(x, w, b, kernel=(3, 3), stride=(2, 2)).shape)
    # d/dx of sum(y * dy) by the adjoint identity: <conv(x), dy> is linear in x
    eps_grads = _adjoint_grads(x, w, dy, kernel=(3, 3), stride=(2, 2))
    expected = {"x": eps_grads[0], "w": eps_grads[1], "b": dy.sum(axis=(0, 2, 3))}
    check_symbolic_backward(
        conv,
        {"x": x, "w": w, "b": b},
        [dy],
        expected,
        rtol=1e-8,
        atol=1e-10,
        grad_req="add",
        dtype=np.float64,
    )


def _adjoint_grads(x: np.ndarray, w: np.ndarray, dy: np.ndarray, **p: Any) -> list[np.ndarray]:
    """Exact gradients of sum(conv(x, w) * dy): the reference is linear, so one basis
    vector at a time gives each partial derivative."""
    grads = []
    for which in (x, w):
        g = np.zeros_like(which)
        flat = g.reshape(-1)
        for i in range(flat.size):
            basis = np.zeros(which.size)
            basis[i] = 1.0
            e = basis.reshape(which.shape)
            y = conv_reference(e, w, **p) if which is x else conv_reference(x, e, **p)
            flat[i] = (y * dy).sum()
        grads.append(g)
    return grads


def test_max_pooling_ties_route_the_gradient_to_the_first_maximum() -> None:
    x = np.ones((1, 1, 4, 4))
    pool = sym.Pooling(sym.Variable("x"), kernel=(2, 2), stride=(2, 2))
    expected = np.zeros((1, 1, 4, 4))
    expected[0, 0, ::2, ::2] = [[1.0, 2.0], [3.0, 4.0]]
    dy = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    check_symbolic_backward(pool, {"x": x}, [dy], {"x": expected}, dtype=np.float64)


@pytest.mark.parametrize(("pool_type", "include"), [("avg", True), ("sum", True), ("sum", False)])
def test_sum_pooling_windows_wholly_in_the_padding(pool_type: str, include: bool) -> None:
    """pad >= kernel: rows and columns of windows that see only padding (zeros) beside
    ordinary ones, against the explicit windows."""
    x = np.random.default_rng(7).standard_normal((2, 3, 5, 6))
    p = {"kernel": (2, 3), "stride": (1, 2), "pad": (3, 3), "pool_type": pool_type,
         "count_include_pad": include}  # fmt: skip
    got = nv.nd.Pooling(nv.nd.array(x, dtype=np.float64), **p).asnumpy()
    want = pool_reference(x, **p)
    assert not want[:, :, 0].any()
    assert want.any()
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_float16_runs_through_float32_on_cpu() -> None:
    rng = np.random.default_rng(2)
    x = rng.uniform(
        -1, 1, (2, 2, 7, 7)
    )  # no size-1 output dims: see the report on storage.copy.astype(np.float16)
    w = rng.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float16)
    y = nv.nd.Convolution(
        nv.nd.array(x, dtype=np.float16),
        nv.nd.array(w, dtype=np.float16),
        kernel=(3, 3),
        num_filter=3,
        no_bias=True,
    )
    assert y.dtype == np.float16
    ref = conv_reference(x.astype(np.float64), w.astype(np.float64), kernel=(3, 3))
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-2, atol=2e-2)
    p = nv.nd.Pooling(nv.nd.array(x, dtype=np.float16), kernel=(2, 2), pool_type="avg")
    np.testing.assert_allclose(
        p.asnumpy(),
        pool_reference(x.astype(np.float64), kernel=(2, 2), pool_type="avg"),
        rtol=1e-2,
        atol=1e-2,
    )


@pytest.mark.slow
def test_resnet_like_layer_matches_reference_over_many_chunks() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 16, 20, 20)).astype(np.float32)
    w = rng.standard_normal((32, 16, 3, 3)).astype(np.float32)
    params = {
        "kernel": (3, 3),
        "num_filter": 32,
        "stride": (2, 2),
        "pad": (1, 1),
        "no_bias": True,
        "workspace": 1,
    }
    (y,) = _direct("Convolution", params, [x, w])
    ref = conv_reference(x.astype(np.float64), w.astype(np.float64), **params)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-3)


# -- GPU ------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize(
    "params",
    [
        {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "stride": (2, 1)},
        {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "dilate": (2, 2), "no_bias": True},
    ],
    ids=["stride", "group-dilate"],
)
def test_gpu_convolution_backward_matches_reference(params: dict[str, Any]) -> None:
    rng = np.random.default_rng(4)
    groups = params.get("num_group", 1)
    # no size-1 dims anywhere: storage.copy to a GPU mishandles them (see the report)
    x = rng.uniform(-1, 1, (2, 4, 7, 7))
    w = rng.uniform(-1, 1, (4, 4 // groups, 3, 3))
    inputs = {"x": x, "w": w}
    if not params.get("no_bias"):
        inputs["b"] = rng.uniform(-1, 1, 4)
    conv = sym.Convolution(*(sym.Variable(n) for n in inputs), **params)
    y = conv_reference(x, w, inputs.get("b"), **params)
    check_symbolic_forward(
        conv, inputs, [y], rtol=1e-10, atol=1e-10, ctx=nv.gpu(0), dtype=np.float64
    )
    dy = rng.uniform(-1, 1, y.shape)
    dx, dw = _adjoint_grads(x, w, dy, **params)
    expected = {"x": dx, "w": dw}
    if "b" in inputs:
        expected["b"] = dy.sum(axis=(0, 2, 3))
    for req in ("write", "add"):
        check_symbolic_backward(
            conv,
            inputs,
            [dy],
            expected,
            rtol=1e-8,
            atol=1e-10,
            grad_req=req,
            ctx=nv.gpu(0),
            dtype=np.float64,
        )


@pytest.mark.gpu
@pytest.mark.parametrize("pool_type", ["max", "avg", "sum"])
def test_gpu_pooling_backward_matches_cpu(pool_type: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.permutation(2 * 2 * 5 * 5).reshape(2, 2, 5, 5) * 0.1
    params = {
        "kernel": (3, 3),
        "stride": (2, 2),
        "pad": (1, 1),
        "pool_type": pool_type,
        "pooling_convention": "full",
        "count_include_pad": False,
    }
    pool = sym.Pooling(sym.Variable("x"), **params)
    dy = rng.uniform(-1, 1, pool_reference(x, **params).shape)
    on_cpu = _gradients(pool, {"x": x}, dy, nv.cpu())
    assert np.abs(on_cpu["x"]).sum() > 0
    check_symbolic_backward(
        pool,
        {"x": x},
        [dy],
        on_cpu,
        rtol=1e-10,
        atol=1e-12,
        grad_req="add",
        ctx=nv.gpu(0),
        dtype=np.float64,
    )


def _gradients(s: Any, inputs: dict[str, np.ndarray], dy: np.ndarray, ctx: Any) -> dict:
    args = {k: nv.nd.array(v, ctx, dtype=v.dtype) for k, v in inputs.items()}
    grads = {k: nv.nd.zeros(v.shape, ctx, dtype=v.dtype) for k, v in inputs.items()}
    exe = s.bind(ctx, args, args_grad=grads)
    exe.forward(is_train=True)
    exe.backward([dy])
    return {k: g.asnumpy() for k, g in grads.items()}


@pytest.mark.gpu
def test_gpu_float16_convolution_runs() -> None:
    """float16 on the GPU (tests/ops/test_conv_pool_gpu_float16.py covers it in depth)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (1, 2, 4, 3)).astype(np.float16)
    w = rng.uniform(-1, 1, (3, 2, 2, 2)).astype(np.float16)
    y = nv.nd.Convolution(nv.nd.array(x, nv.gpu(0), dtype=np.float16),
                          nv.nd.array(w, nv.gpu(0), dtype=np.float16),
                          kernel=(2, 2), num_filter=3, no_bias=True)  # fmt: skip
    assert y.dtype == np.float16
    want = conv_reference(x.astype(np.float64), w.astype(np.float64), kernel=(2, 2),
                          num_filter=3, no_bias=True)  # fmt: skip
    np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, rtol=0, atol=1e-2)
    still_works()


@pytest.mark.gpu
def test_gpu_rejects_int_convolution_by_name() -> None:
    x = nv.nd.ones((1, 1, 3, 3), ctx=nv.gpu(0), dtype=np.int32)
    w = nv.nd.ones((1, 1, 2, 2), ctx=nv.gpu(0), dtype=np.int32)
    with pytest.raises(NNVMError, match=r"Convolution: input 'data' has dtype int32"):
        nv.nd.Convolution(x, w, kernel=(2, 2), num_filter=1, no_bias=True).asnumpy()
    still_works()


MAX_WINDOWS = [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},  # ResNet's stem pooling
    {"kernel": (2, 2), "stride": (2, 2)},
    {"kernel": (3, 2), "stride": (1, 3), "pad": (1, 0)},
    {"kernel": (3, 3), "stride": (2, 2), "pooling_convention": "full"},  # clipped last window
    {"kernel": (4, 4), "stride": (1, 1), "pad": (2, 2)},
]


@pytest.mark.parametrize("params", MAX_WINDOWS)
def test_max_pooling_in_a_graph_matches_windows(params: dict[str, Any]) -> None:
    """In a bound graph nothing reads the hidden mask, so the mask-free kernel runs."""
    x = np.random.default_rng(3).standard_normal((2, 3, 9, 11))
    net = nv.sym.Pooling(nv.sym.Variable("data"), pool_type="max", **params)
    want = pool_reference(x, pool_type="max", **params)
    check_symbolic_forward(net, {"data": x}, [want], rtol=1e-12, atol=0, dtype=np.float64)


def _max_pool_grad_reference(x: np.ndarray, dy: np.ndarray, **p: Any) -> np.ndarray:
    """Each output gradient added at the first (row-major) maximum of its window, windows
    clipped to the input as MXNet's max pooling reads them."""
    (kh, kw), (sh, sw), (ph, pw) = p["kernel"], p["stride"], p.get("pad", (0, 0))
    dx = np.zeros_like(x)
    for n, c, y, z in np.ndindex(*dy.shape):
        h0, w0 = max(y * sh - ph, 0), max(z * sw - pw, 0)
        win = x[n, c, h0 : y * sh - ph + kh, w0 : z * sw - pw + kw]
        i, j = np.unravel_index(np.argmax(win), win.shape)  # argmax: the first maximum
        dx[n, c, h0 + i, w0 + j] += dy[n, c, y, z]
    return dx


MAX_3X3 = [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},  # ResNet's stem pooling
    {"kernel": (3, 3), "stride": (1, 1), "pad": (2, 2)},  # windows clipped on two sides
    {"kernel": (3, 3), "stride": (3, 2), "pad": (0, 1)},
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 0), "pooling_convention": "full"},
]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("params", MAX_3X3)
def test_max_pooling_3x3_forward_and_backward_match_windows(
    params: dict[str, Any], ties: bool
) -> None:
    """The 3x3 kernels (padded windows repeat a valid row/column) against explicit windows;
    with ties (few distinct values) the gradient still goes to the first maximum."""
    rng = np.random.default_rng(5)
    shape = (2, 3, 9, 8)
    x = rng.integers(0, 3, shape).astype(np.float64) if ties else rng.standard_normal(shape)
    net = nv.sym.Pooling(nv.sym.Variable("data"), pool_type="max", **params)
    want = pool_reference(x, pool_type="max", **params)
    check_symbolic_forward(net, {"data": x}, [want], rtol=1e-6, atol=0, dtype=np.float64)
    dy = rng.standard_normal(want.shape)
    grad = _max_pool_grad_reference(x, dy, **params)
    check_symbolic_backward(
        net, {"data": x}, [dy], {"data": grad}, rtol=1e-6, atol=1e-6, dtype=np.float64
    )
    check_symbolic_backward(  # req 'add': onto the random values the gradient starts from
        net, {"data": x}, [dy], {"data": grad}, rtol=1e-6, atol=1e-6, grad_req="add",
        dtype=np.float64,
    )  # fmt: skip


NAN_WINDOWS = [
    {"kernel": (2, 2), "stride": (2, 2)},  # the written-out 2x2 kernels
    {"kernel": (3, 2), "stride": (1, 1)},  # every window inside: _max_pool_inside
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},  # the 3x3 kernels
    {"kernel": (2, 3), "stride": (1, 2), "pad": (1, 0)},  # the separable mask-free kernel
    {"kernel": (3, 3), "stride": (2, 2), "pooling_convention": "full"},
    {"kernel": (2, 2, 2), "stride": (1, 2, 1), "pad": (1, 0, 0)},  # 3-D: the one-body kernel
    {"kernel": (3,), "stride": (2,), "pad": (1,)},
]


def _nan_max_pool_reference(x: np.ndarray, **p: Any) -> tuple[np.ndarray, np.ndarray]:
    """(values, gradient of sum(values * dy) with dy = 1 + output index) by explicit
    windows: the maximum of the window's non-NaN values (NaN when it has none), and the
    gradient at the first position holding it (nowhere for an all-NaN window)."""
    nd = x.ndim - 2
    kernel, stride = p["kernel"], p["stride"]
    pad = p.get("pad", (0,) * nd)
    full = p.get("pooling_convention", "valid") == "full"
    sizes = [
        -(-(n + 2 * q - k) // s) + 1 if full else (n + 2 * q - k) // s + 1
        for n, k, s, q in zip(x.shape[2:], kernel, stride, pad)
    ]
    out = np.empty((*x.shape[:2], *sizes))
    dx = np.zeros_like(x)
    for idx in np.ndindex(*out.shape):
        lo = [max(o * s - q, 0) for o, s, q in zip(idx[2:], stride, pad)]
        hi = [
            min(o * s - q + k, n)
            for o, s, q, k, n in zip(idx[2:], stride, pad, kernel, x.shape[2:])
        ]
        win = x[(*idx[:2], *(slice(a, b) for a, b in zip(lo, hi)))]
        flat = win.ravel()
        out[idx] = np.fmax.reduce(flat)
        if not np.isnan(out[idx]):
            at = np.unravel_index(int(np.flatnonzero(flat == out[idx])[0]), win.shape)
            dx[(*idx[:2], *(a + i for a, i in zip(lo, at)))] += 1 + np.ravel_multi_index(
                idx, out.shape
            )
    return out, dx


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("params", NAN_WINDOWS)
def test_max_pooling_skips_nan_in_every_kernel(params: dict[str, Any], dtype: type) -> None:
    """Every max-pooling kernel (masked for the imperative call with autograd, mask-free
    in a bound graph) gives a window's largest non-NaN value, NaN only for an all-NaN
    window, and routes the gradient to that value's first position, nowhere for NaN."""
    rng = np.random.default_rng(11)
    shape = (2, 2, *(7, 9, 6)[-len(params["kernel"]) :])
    x = rng.standard_normal(shape).astype(dtype)
    x[rng.random(shape) < 0.3] = np.nan
    x[(0, 0, *(slice(0, 3),) * len(params["kernel"]))] = np.nan  # an all-NaN window
    want, want_dx = _nan_max_pool_reference(x.astype(np.float64), **params)
    assert np.isnan(want).any()
    assert not np.isnan(want).all()
    dy = (1 + np.arange(want.size)).reshape(want.shape)
    # imperative with autograd: the masked kernels, backward through the mask
    data = nv.nd.array(x, dtype=dtype)
    data.attach_grad()
    with nv.autograd.record():
        out = nv.nd.Pooling(data, pool_type="max", **params)
    out.backward(nv.nd.array(dy, dtype=dtype))
    np.testing.assert_array_equal(out.asnumpy(), want.astype(dtype))
    np.testing.assert_array_equal(data.grad.asnumpy(), want_dx.astype(dtype))
    # a bound graph: the mask-free kernels, backward by finding the maximum again
    net = nv.sym.Pooling(nv.sym.Variable("data"), pool_type="max", **params)
    exe = net.simple_bind(nv.cpu(), data=shape, type_dict={"data": dtype})
    exe.arg_dict["data"][:] = x
    exe.forward(is_train=True)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), want.astype(dtype))
    exe.backward(nv.nd.array(dy, dtype=dtype))
    np.testing.assert_array_equal(exe.grad_dict["data"].asnumpy(), want_dx.astype(dtype))
    inference = net.simple_bind(nv.cpu(), grad_req="null", data=shape, type_dict={"data": dtype})
    inference.arg_dict["data"][:] = x
    np.testing.assert_array_equal(inference.forward()[0].asnumpy(), want.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("plane", [(1, 1), (3, 5), (4, 4), (7, 9), (1, 40)])
def test_global_max_pooling_skips_nan(plane: tuple[int, int], dtype: type) -> None:
    """A window that is the whole plane (global_pool, or a kernel of the plane's size) has
    its own kernel (16 running maxima, a tail): the plane's largest non-NaN value, NaN for
    an all-NaN plane, imperatively and in a bound graph."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((2, 3, *plane)).astype(dtype)
    x[rng.random(x.shape) < 0.3] = np.nan
    x[1, 2] = np.nan
    want = np.fmax.reduce(x.reshape(2, 3, -1).astype(np.float64), axis=-1).reshape(2, 3, 1, 1)
    for params in ({"global_pool": True, "kernel": (1, 1)}, {"kernel": plane}):
        got = nv.nd.Pooling(nv.nd.array(x, dtype=dtype), pool_type="max", **params)
        np.testing.assert_array_equal(got.asnumpy(), want.astype(dtype))
        net = nv.sym.Pooling(nv.sym.Variable("data"), pool_type="max", **params)
        exe = net.simple_bind(nv.cpu(), grad_req="null", data=x.shape, type_dict={"data": dtype})
        exe.arg_dict["data"][:] = x
        np.testing.assert_array_equal(exe.forward()[0].asnumpy(), want.astype(dtype))


@pytest.mark.gpu
@pytest.mark.parametrize("params", [NAN_WINDOWS[2], NAN_WINDOWS[5]])
def test_gpu_max_pooling_skips_nan(params: dict[str, Any]) -> None:
    """The GPU's one-body kernels keep the CPU's NaN rule, with and without the mask."""
    rng = np.random.default_rng(12)
    shape = (1, 2, *(5, 6, 4)[-len(params["kernel"]) :])
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.3] = np.nan
    x[(0, 0, *(slice(0, 3),) * len(params["kernel"]))] = np.nan
    want, want_dx = _nan_max_pool_reference(x, **params)
    dy = (1 + np.arange(want.size)).reshape(want.shape)
    data = nv.nd.array(x, ctx=nv.gpu(0), dtype=np.float64)
    data.attach_grad()
    with nv.autograd.record():
        out = nv.nd.Pooling(data, pool_type="max", **params)
    out.backward(nv.nd.array(dy, ctx=nv.gpu(0), dtype=np.float64))
    np.testing.assert_array_equal(out.asnumpy(), want)
    np.testing.assert_array_equal(data.grad.asnumpy(), want_dx)
    net = sym.Pooling(sym.Variable("x"), pool_type="max", **params)
    np.testing.assert_array_equal(_gradients(net, {"x": x}, dy, nv.gpu(0))["x"], want_dx)
