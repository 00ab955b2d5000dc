"""Convolution and FullyConnected in bfloat16 with float32 accumulation (ops/amp_bf16.py).

The reference is independent of the code under test: the operands rounded to bfloat16
by `_rne_reference` (nearest of the two neighbouring bfloat16 values, found in float64,
ties to even), then the layer in NumPy float64. The float32 accumulation may differ from
it by at most about (K - 1) * 2^-24 * sum |x| |w| for an accumulation length K (any
summation order), which is the tolerance; the unrounded float64 result must break that
bound somewhere, so the operands really were rounded. Every case runs on the emulation
(float32 GEMM, NNVMPY_BLAS=openblas) and, marked `mkl`, on MKL's bfloat16 GEMM.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.ops.nn import _bf16, _blas

HAS_MKL = _blas.mkl_path() is not None
mkl = [pytest.mark.mkl, pytest.mark.skipif(not HAS_MKL, reason="the `mkl` wheel is absent")]
BLAS = ["emulated", pytest.param("mkl", marks=mkl)]
RNG = np.random.default_rng(17)
U = 2.0**-24


@pytest.fixture(params=BLAS)
def gemm_path(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run the test on one bfloat16 GEMM: MKL's, or the emulation on OpenBLAS."""
    with _blas.use("mkl" if request.param == "mkl" else "openblas"):
        assert _bf16.path() == request.param
        yield request.param


def _rne_reference(x: np.ndarray) -> np.ndarray:
    """float32 x rounded to the nearest bfloat16 (ties to even), as float64."""
    x = np.asarray(x, np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    lo_bits = (bits >> 16) << 16  # truncated towards zero
    lo = lo_bits.astype(np.uint32).view(np.float32).astype(np.float64)
    hi_bits = (lo_bits + (1 << 16)).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        hi = hi_bits.view(np.float32).astype(np.float64)
    # past the largest finite bfloat16 the next value would be 2^128: rounding there is inf
    top = (hi_bits & 0x7FFFFFFF) == 0x7F800000
    with np.errstate(invalid="ignore"):  # inf - inf for x = +-inf, which the caller skips
        d_lo = np.abs(x - lo)
    d_hi = np.where(top, np.abs(np.copysign(2.0**128, lo) - x), np.abs(hi - x))
    lo_even = ((lo_bits >> 16) & 1) == 0
    pick_hi = (d_hi < d_lo) | ((d_hi == d_lo) & ~lo_even)
    return np.where(pick_hi, hi, lo)


def _conv_reference(x: np.ndarray, w: np.ndarray, b: Any, p: dict[str, Any]) -> np.ndarray:
    """float64 NumPy convolution of 4-D x and w (groups, stride, pad, dilate)."""
    (kh, kw), g = p["kernel"], p.get("num_group", 1)
    sh, sw = p.get("stride", (1, 1))
    ph, pw = p.get("pad", (0, 0))
    dh, dw = p.get("dilate", (1, 1))
    n, c, h, wd = x.shape
    f = w.shape[0]
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph : ph + h, pw : pw + wd] = x
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, f, ho, wo))
    cg, fg = c // g, f // g
    for gi in range(g):
        xs = xp[:, gi * cg : (gi + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                win = xs[:, :, i * dh : i * dh + sh * ho : sh, j * dw : j * dw + sw * wo : sw]
                wt = w[gi * fg : (gi + 1) * fg, :, i, j]
                out[:, gi * fg : (gi + 1) * fg] += np.einsum("nchw,fc->nfhw", win, wt)
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def _check(y: np.ndarray, exact: np.ndarray, magnitude: np.ndarray, k: int, plain: Any) -> None:
    """y within the float32-accumulation bound of `exact` (rounded operands), and the
    unrounded result `plain` outside it somewhere."""
    bound = (k + 2) * U * magnitude + 1e-30
    err = np.abs(y.astype(np.float64) - exact)
    worst = float((err / bound).max())
    assert worst <= 1.0, f"error {worst:.2f}x the float32-accumulation bound"
    assert (np.abs(plain - exact) > bound).any(), "the operands were not rounded to bfloat16"


def _bind_bf16(net: Any, arrays: dict[str, np.ndarray], **kw: Any) -> Any:
    converted = nv.contrib.amp.convert_symbol(net, **kw)
    args = {k: nv.nd.array(v) for k, v in arrays.items()}
    return converted.bind(nv.cpu(), args, grad_req="null")


# (data shape, params): 3x3 pad 1 (one image, chunks, shifted GEMMs), stride 2, 1x1, 7x7/2,
# groups, depthwise, dilation, 1-D
CONVS = {
    "3x3-pad1-one-image": ((1, 3, 9, 9), {"kernel": (3, 3), "num_filter": 5, "pad": (1, 1)}),
    "3x3-pad1-chunks": ((3, 4, 8, 8), {"kernel": (3, 3), "num_filter": 6, "pad": (1, 1)}),
    "3x3-shifted": ((3, 32, 24, 24), {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1)}),
    "3x3-shifted-groups": (
        (4, 64, 24, 24),
        {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1), "num_group": 2},
    ),
    "3x3-shifted-dilated": (
        (2, 32, 30, 30),
        {"kernel": (3, 3), "num_filter": 4, "pad": (2, 2), "dilate": (2, 2)},
    ),
    "5x3-shifted-chunks": ((9, 32, 12, 12), {"kernel": (5, 3), "num_filter": 4, "pad": (2, 1)}),
    "3x3-stride2": ((2, 5, 11, 11), {"kernel": (3, 3), "num_filter": 4, "stride": (2, 2)}),
    "1x1": ((2, 16, 6, 6), {"kernel": (1, 1), "num_filter": 8}),
    "1x1-stride2": ((2, 16, 7, 7), {"kernel": (1, 1), "num_filter": 8, "stride": (2, 2)}),
    "7x7-stride2-pad3": (
        (2, 3, 20, 20),
        {"kernel": (7, 7), "num_filter": 8, "stride": (2, 2), "pad": (3, 3)},
    ),
    "groups": ((2, 6, 7, 7), {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "pad": (1, 1)}),
    "depthwise": ((2, 4, 6, 6), {"kernel": (3, 3), "num_filter": 4, "num_group": 4}),
    "dilated": ((1, 4, 9, 9), {"kernel": (3, 3), "num_filter": 3, "dilate": (2, 2)}),
}


@pytest.mark.parametrize("no_bias", [False, True], ids=["bias", "no-bias"])
@pytest.mark.parametrize("case", list(CONVS))
def test_convolution_matches_float64_on_rounded_operands(
    case: str, no_bias: bool, gemm_path: str
) -> None:
    shape, params = CONVS[case]
    net = nv.sym.Convolution(nv.sym.var("x"), no_bias=no_bias, name="c", **params)
    assert _shifted(net, shape) == ("shifted" in case)  # both paths of _conv_bf16.py
    f, cg = params["num_filter"], shape[1] // params.get("num_group", 1)
    w = RNG.standard_normal((f, cg, *params["kernel"])).astype(np.float32)
    arrays = {"x": RNG.standard_normal(shape).astype(np.float32), "c_weight": w}
    bias = None if no_bias else RNG.standard_normal(f).astype(np.float32)
    if bias is not None:
        arrays["c_bias"] = bias
    before = _bf16.stats[gemm_path]
    y = _bind_bf16(net, arrays).forward()[0].asnumpy()
    assert _bf16.stats[gemm_path] > before
    xr, wr = _rne_reference(arrays["x"]), _rne_reference(w)
    exact = _conv_reference(xr, wr, bias, params)
    magnitude = _conv_reference(np.abs(xr), np.abs(wr), None if bias is None else abs(bias), params)
    plain = _conv_reference(arrays["x"], w, bias, params)
    k = cg * int(np.prod(params["kernel"]))
    _check(y, exact, magnitude, k, plain)


def _shifted(net: Any, shape: tuple[int, ...]) -> bool:
    """The convolution `net` of data `shape` takes _conv_bf16's shifted-GEMM path."""
    from nnvmpy.ops.nn._conv_bf16 import use_shifted
    from nnvmpy.ops.nn.convolution import ConvolutionParam, conv_shape

    node = net.get_internals()["c_output"]
    p = ConvolutionParam.parse(node.list_attr())
    out = net.infer_shape(x=shape)[1][0]
    return use_shifted(conv_shape(p, shape, p.num_filter, out[2:]))


@pytest.mark.parametrize("case", ["3x3-pad1-chunks", "3x3-shifted", "1x1"])
def test_residual_and_relu_epilogue_in_bfloat16(case: str, gemm_path: str) -> None:
    shape, params = CONVS[case]
    conv = nv.sym.Convolution(nv.sym.var("x"), name="c", **params)
    out_shape = conv.infer_shape(x=shape)[1][0]
    net = nv.sym.relu(conv + nv.sym.var("r"), name="act")
    f, cg = params["num_filter"], shape[1]
    arrays = {
        "x": RNG.standard_normal(shape).astype(np.float32),
        "c_weight": RNG.standard_normal((f, cg, *params["kernel"])).astype(np.float32),
        "c_bias": RNG.standard_normal(f).astype(np.float32),
        "r": RNG.standard_normal(out_shape).astype(np.float32),
    }
    exe = _bind_bf16(net, arrays)
    assert [n.op.name for n in exe._graph.indexed.nodes if n.op] == ["_PackBFloat16", "_Epilogue"]
    y = exe.forward()[0].asnumpy()
    xr, wr = _rne_reference(arrays["x"]), _rne_reference(arrays["c_weight"])
    conv_exact = _conv_reference(xr, wr, arrays["c_bias"], params) + arrays["r"]
    magnitude = _conv_reference(np.abs(xr), np.abs(wr), abs(arrays["c_bias"]), params)
    magnitude += abs(arrays["r"])
    plain = _conv_reference(arrays["x"], arrays["c_weight"], arrays["c_bias"], params)
    k = cg * int(np.prod(params["kernel"]))
    # relu is 1-Lipschitz: the bound of the sum holds after it
    _check(y, np.maximum(conv_exact, 0), magnitude, k + 1, np.maximum(plain + arrays["r"], 0))


def test_one_dimensional_convolution(gemm_path: str) -> None:
    net = nv.sym.Convolution(nv.sym.var("x"), kernel=(5,), num_filter=4, pad=(2,), name="c")
    x = RNG.standard_normal((2, 6, 30)).astype(np.float32)
    w = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    b = RNG.standard_normal(4).astype(np.float32)
    y = _bind_bf16(net, {"x": x, "c_weight": w, "c_bias": b}).forward()[0].asnumpy()
    params = {"kernel": (1, 5), "pad": (0, 2)}
    xr, wr = _rne_reference(x)[:, :, None], _rne_reference(w)[:, :, None]
    exact = _conv_reference(xr, wr, b, params)[:, :, 0]
    magnitude = _conv_reference(np.abs(xr), np.abs(wr), abs(b), params)[:, :, 0]
    plain = _conv_reference(x[:, :, None], w[:, :, None], b, params)[:, :, 0]
    _check(y, exact, magnitude, 30, plain)


@pytest.mark.parametrize("flatten", [True, False])
@pytest.mark.parametrize("no_bias", [False, True], ids=["bias", "no-bias"])
def test_fully_connected_matches_float64_on_rounded_operands(
    flatten: bool, no_bias: bool, gemm_path: str
) -> None:
    shape = (3, 4, 5, 24) if not flatten else (7, 6, 4, 5)
    net = nv.sym.FullyConnected(
        nv.sym.var("x"), num_hidden=9, flatten=flatten, no_bias=no_bias, name="fc"
    )
    k = shape[-1] if not flatten else int(np.prod(shape[1:]))
    x = RNG.standard_normal(shape).astype(np.float32)
    w = RNG.standard_normal((9, k)).astype(np.float32)
    arrays = {"x": x, "fc_weight": w}
    b = None if no_bias else RNG.standard_normal(9).astype(np.float32)
    if b is not None:
        arrays["fc_bias"] = b
    y = _bind_bf16(net, arrays).forward()[0].asnumpy()
    rows = x.reshape(-1, k) if not flatten else x.reshape(shape[0], k)
    xr, wr = _rne_reference(rows), _rne_reference(w)
    exact = xr @ wr.T + (0 if b is None else b)
    magnitude = np.abs(xr) @ np.abs(wr).T + (0 if b is None else np.abs(b))
    plain = rows.astype(np.float64) @ w.T.astype(np.float64) + (0 if b is None else b)
    _check(y.reshape(exact.shape), exact, magnitude, k, plain)


def test_packed_bits_round_to_nearest_even() -> None:
    # ties both ways, values next to them, signed zeros, inf, NaN, the largest finite float
    special = np.array(
        [1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-20, -(1 + 2**-8), 0.0, -0.0, np.inf,
         -np.inf, np.nan, 3.4028235e38, 1e-40, -1e-40],
        np.float32,
    )  # fmt: skip
    x = np.concatenate([special, RNG.standard_normal(4000).astype(np.float32) * 100])
    bits = nv.nd._internal._PackBFloat16(nv.nd.array(x)).asnumpy()
    assert bits.dtype == np.uint16
    got = (bits.astype(np.uint32) << 16).view(np.float32)
    want = _rne_reference(x).astype(np.float32)
    finite = np.isfinite(x)
    assert np.array_equal(got[finite].view(np.uint32), want[finite].view(np.uint32))
    assert np.array_equal(got[np.isinf(x)], x[np.isinf(x)])
    assert np.isnan(got[np.isnan(x)]).all()
    assert got[9] == np.inf  # 3.4028235e38 is above bfloat16's largest value: overflow


def test_rounding_kernel_matches_integer_rounding_on_any_bits() -> None:
    """_bf16._round against the rounding done in NumPy's uint64 arithmetic, on random bit
    patterns (NaN payloads, subnormals, both signs) and the edges of its int32 version:
    ties either way, carries into the exponent, overflow to inf, signalling NaNs."""
    edges = [0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F80FFFF, 0x7F7FFFFF, 0x7F7F8000,
             0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000,
             0xFFFFFFFF, 0x80000000, 0x00008000, 0x80018000, 0x7FFFFFFF, 0x00007FFF]  # fmt: skip
    random = RNG.integers(0, 2**32, 1 << 16, dtype=np.uint64)
    u = np.concatenate([np.array(edges, np.uint64), random]).astype(np.uint32)
    w = u.astype(np.uint64)
    want = np.where(
        (w & 0x7FFFFFFF) > 0x7F800000, (w >> 16) | 0x40, (w + 0x7FFF + ((w >> 16) & 1)) >> 16
    )
    got = np.empty(u.size, np.uint16)
    _bf16._round(u, got)
    np.testing.assert_array_equal(got, want.astype(np.uint16))


def test_rounding_kernel_keeps_32_bit_lanes() -> None:
    """The rounding copy vectorises in int32 lanes: numba's uint32 arithmetic (int64)
    widened every vector to 64-bit lanes and back, which took half its time."""
    import re

    import numba

    from nnvmpy.kernel.device import for_device

    loop = numba.njit(for_device(_bf16._round.py_func, "cpu"))  # uncached: LLVM to read
    u = np.arange(64, dtype=np.uint32)
    loop(u, np.empty(64, np.uint16))
    llvm = loop.inspect_llvm(loop.signatures[0])
    assert re.search(r"<(8|16) x i32>", llvm), "no int32 vector code"
    wide = sorted(set(re.findall(r"(\w+) <\d+ x i32> [^,]*to <\d+ x i64>", llvm)))
    assert not wide, f"int32 lanes widened to int64: {wide}"


def test_weight_is_repacked_after_it_is_rewritten(gemm_path: str) -> None:
    net = nv.sym.Convolution(nv.sym.var("x"), kernel=(3, 3), num_filter=4, name="c", no_bias=True)
    x = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w1, w2 = (RNG.standard_normal((4, 3, 3, 3)).astype(np.float32) for _ in range(2))
    exe = _bind_bf16(net, {"x": x, "c_weight": w1})
    packs = _bf16.stats["packs"]
    y1 = exe.forward()[0].asnumpy()
    y1_again = exe.forward()[0].asnumpy()
    assert _bf16.stats["packs"] == packs + 1  # packed once, reused while w1 stays
    assert np.array_equal(y1, y1_again)
    exe.arg_dict["c_weight"][:] = w2
    y2 = exe.forward()[0].asnumpy()
    assert _bf16.stats["packs"] == packs + 2
    params = {"kernel": (3, 3)}
    for y, w in ((y1, w1), (y2, w2)):
        xr, wr = _rne_reference(x), _rne_reference(w)
        exact = _conv_reference(xr, wr, None, params)
        magnitude = _conv_reference(np.abs(xr), np.abs(wr), None, params)
        _check(y, exact, magnitude, 27, _conv_reference(x, w, None, params))


def _models() -> Path | None:
    repo = Path(__file__).resolve().parents[2]
    for candidate in (repo.parent / "shared" / "models", Path("/work/shared/models")):
        if (candidate / "lenet-symbol.json").is_file():
            return candidate
    return None


@pytest.mark.skipif(_models() is None, reason="shared model files not present")
def test_lenet_agrees_with_float32_within_bfloat16_tolerance(
    gemm_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = _models()
    assert models is not None
    net = nv.sym.load(str(models / "lenet-symbol.json"))
    shapes = {"data": (64, 1, 28, 28)}
    arg_shapes = net.infer_shape(**shapes)[0]
    rng = np.random.default_rng(3)
    arrays = {}
    for name, shape in zip(net.list_arguments(), arg_shapes):
        if name == "softmax_label":
            arrays[name] = rng.integers(0, 10, shape[0]).astype(np.float32)
        elif len(shape) > 1 and name != "data":
            bound = np.sqrt(6.0 / (np.prod(shape[1:]) + shape[0] * np.prod(shape[2:])))
            arrays[name] = rng.uniform(-bound, bound, shape).astype(np.float32)
        else:
            arrays[name] = rng.standard_normal(shape).astype(np.float32)
    args = {k: nv.nd.array(v) for k, v in arrays.items()}
    plain = net.bind(nv.cpu(), args, grad_req="null")
    assert "_PackBFloat16" not in plain.debug_str()  # float32 stays the default
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    exe = net.bind(nv.cpu(), args, grad_req="null")
    marked = [n for n, v in exe._simplified.items() if "bfloat16 operands" in v]
    assert len(marked) == 4  # conv1, conv2, fc1, fc2
    p32 = plain.forward()[0].asnumpy()
    p16 = exe.forward()[0].asnumpy()
    dlogp = np.abs(np.log(p16) - np.log(p32)).max()
    assert 0 < dlogp < 0.05, dlogp
    assert (p16.argmax(1) == p32.argmax(1)).mean() >= 0.95


def test_folded_batchnorm_weight_is_packed_once_and_after_a_refold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the packing node reads the _FoldScaleShift node's output: two memoized nodes in a
    # row, in one bulk segment. It must rerun only when the fold really recomputed.
    monkeypatch.setenv("NNVMPY_INFER_BF16", "1")
    x = nv.sym.var("x")
    conv = nv.sym.Convolution(x, kernel=(3, 3), num_filter=4, no_bias=True, name="c")
    net = nv.sym.BatchNorm(conv, fix_gamma=False, name="bn")
    shapes = {"x": (2, 3, 6, 6)}
    arg_shapes, _, aux_shapes = net.infer_shape(**shapes)
    args = {
        n: nv.nd.array(RNG.standard_normal(s).astype(np.float32))
        for n, s in zip(net.list_arguments(), arg_shapes)
    }
    aux = {
        n: nv.nd.array(RNG.uniform(0.5, 2, s).astype(np.float32))
        for n, s in zip(net.list_auxiliary_states(), aux_shapes)
    }
    exe = net.bind(nv.cpu(), args, aux_states=aux, grad_req="null")
    assert "bn: BatchNorm: folded into 'c'" in exe.debug_str()
    packs = _bf16.stats["packs"]
    y1 = exe.forward()[0].asnumpy()
    for _ in range(3):
        assert np.array_equal(exe.forward()[0].asnumpy(), y1)
    assert _bf16.stats["packs"] == packs + 1
    exe.aux_dict["bn_moving_var"][:] = 4 * exe.aux_dict["bn_moving_var"].asnumpy()
    y2 = exe.forward()[0].asnumpy()
    assert _bf16.stats["packs"] == packs + 2
    # every output channel is scaled by 1/sqrt(4 var + eps) instead of 1/sqrt(var + eps):
    # about half; the mean shifts the same way, so compare after removing it
    beta = args["bn_beta"].asnumpy().reshape(1, -1, 1, 1)
    np.testing.assert_allclose(y2 - beta, (y1 - beta) / 2, rtol=0.05, atol=0.05)
