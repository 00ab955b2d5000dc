"""nd.image's random colour ops, random flips and lighting: draws, seeds, dtypes, errors.

A random op's output must be its formula (cases_image_color.py) at SOME factor in the
allowed range: the factor is recovered from the output, checked to be in range, and the
formula at that factor checked on every pixel. The uint8 and int32 numbers were measured
on MXNet 1.9.1 (uint8 clamps to [0, 255] and truncates; int32 truncates toward zero).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py)
from cases_image_color import (
    EIGVAL,
    EIGVEC,
    brightness,
    contrast,
    gray,
    hue,
    lighting,
    saturation,
)

# isort: on

import nnvmpy as nv
from nnvmpy.base import InferError, ParamError
from nnvmpy.ops.image_color import HUE, jitter_plan

nd = nv.nd
SEED = 42
FORMULAS = {"brightness": brightness, "contrast": contrast, "saturation": saturation, "hue": hue}


def image(shape: tuple[int, ...] = (6, 7, 3), seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(0, 255, size=shape)


def recover(kind: str, x: np.ndarray, y: np.ndarray) -> float:
    """The factor a with y = FORMULAS[kind](x, a), from the output (least squares / hue)."""
    if kind == "hue":  # y's hue minus x's, in turns, of the most colourful pixel
        k = np.unravel_index(np.argmax(np.ptp(x, -1)), x.shape[:2])
        turns = (_hue_degrees(y[k]) - _hue_degrees(x[k])) / 360.0
        return float(turns % 1.0)
    base = {"brightness": 0.0, "contrast": gray(x).mean(), "saturation": gray(x)}[kind]
    d = (x - base).ravel()
    return float(d @ (y - base).ravel() / (d @ d))


def _hue_degrees(rgb: np.ndarray) -> float:
    """HLS hue of one pixel: the hexagon's angle, 60 degrees a side."""
    r, g, b = rgb
    d = max(rgb) - min(rgb)
    if max(rgb) == r:
        return 60 * (g - b) / d
    return 60 * ((b - r) / d + 2) if max(rgb) == g else 60 * ((r - g) / d + 4)


def check_some_factor(kind: str, x: np.ndarray, y: np.ndarray, lo: float, hi: float) -> float:
    a = recover(kind, x, y)
    if kind == "hue":  # a hue turn is only known modulo 1: take the one in range
        a += np.ceil(lo - a - 1e-9)
    assert lo - 1e-9 <= a <= hi + 1e-9, f"{kind}: factor {a} outside [{lo}, {hi}]"
    np.testing.assert_allclose(y, FORMULAS[kind](x, a), rtol=1e-7, atol=1e-6)
    return a


# -- draws ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(FORMULAS))
def test_random_op_is_its_formula_at_a_factor_in_range_that_varies(kind: str) -> None:
    x = image()
    op = getattr(nd.image, f"random_{kind}")
    lo, hi = (0.2, 0.45) if kind == "hue" else (0.5, 1.5)
    nv.random.seed(SEED)
    first = [op(nd.array(x, dtype="float64"), min_factor=lo, max_factor=hi).asnumpy()]
    first.append(op(nd.array(x, dtype="float64"), min_factor=lo, max_factor=hi).asnumpy())
    factors = [check_some_factor(kind, x, y, lo, hi) for y in first]
    assert abs(factors[0] - factors[1]) > 1e-6, "two calls drew the same factor"
    nv.random.seed(SEED)  # the seed replays both draws
    again = op(nd.array(x, dtype="float64"), min_factor=lo, max_factor=hi).asnumpy()
    np.testing.assert_array_equal(again, first[0])
    more = {
        round(
            recover(
                kind, x, op(nd.array(x, dtype="float64"), min_factor=lo, max_factor=hi).asnumpy()
            ),
            6,
        )
        for _ in range(20)
    }
    assert len(more) == 20


def test_min_factor_above_max_draws_between_them_as_mxnet() -> None:
    x = image()
    y = nd.image.random_brightness(nd.array(x, dtype="float64"), min_factor=2, max_factor=1)
    check_some_factor("brightness", x, y.asnumpy(), 1.0, 2.0)


@pytest.mark.parametrize(
    ("kind", "spread"), [("brightness", 0.3), ("contrast", 0.4), ("saturation", 0.5), ("hue", 0.2)]
)
def test_jitter_with_one_spread_is_that_adjustment_near_one(kind: str, spread: float) -> None:
    x = image(seed=1)
    params = dict.fromkeys(FORMULAS, 0.0) | {kind: spread}
    nv.random.seed(SEED)
    y = nd.image.random_color_jitter(nd.array(x, dtype="float64"), **params).asnumpy()
    if kind == "hue":  # hue turns in [-p, p]
        check_some_factor("hue", x, y, -spread, spread)
    else:
        check_some_factor(kind, x, y, 1 - spread, 1 + spread)


def test_jitter_orders_are_all_possible_and_factors_in_range() -> None:
    rng = np.random.default_rng(0)
    p = type("P", (), {"brightness": 0.1, "contrast": 0.2, "saturation": 0.3, "hue": 0.4})
    orders = set()
    for _ in range(2000):
        plan = jitter_plan(list(rng.uniform(size=8)), p)
        orders.add(tuple(kind for kind, _ in plan))
        for kind, a in plan:
            spread = (0.1, 0.2, 0.3, 0.4)[kind]
            centre = 0.0 if kind == HUE else 1.0
            assert centre - spread <= a <= centre + spread
    assert orders == set(itertools.permutations(range(4)))
    p.contrast = 0.0  # a zero spread skips its stage
    assert len(jitter_plan(list(rng.uniform(size=8)), p)) == 3


def test_jitter_is_repeatable_and_all_zero_copies() -> None:
    x = nd.array(image(seed=2), dtype="float64")
    params = {"brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "hue": 0.1}
    nv.random.seed(7)
    a = nd.image.random_color_jitter(x, **params).asnumpy()
    b = nd.image.random_color_jitter(x, **params).asnumpy()
    nv.random.seed(7)
    np.testing.assert_array_equal(nd.image.random_color_jitter(x, **params).asnumpy(), a)
    assert not np.array_equal(a, b)
    zero = nd.image.random_color_jitter(x, brightness=0, contrast=0, saturation=0, hue=0)
    np.testing.assert_array_equal(zero.asnumpy(), x.asnumpy())


@pytest.mark.parametrize(
    ("op", "axis"), [("random_flip_left_right", 1), ("random_flip_top_bottom", 0)]
)
def test_random_flip_gives_the_image_or_its_flip_and_both_happen(op: str, axis: int) -> None:
    x = image((4, 5, 3))
    nv.random.seed(SEED)
    seen = []
    for _ in range(40):
        y = getattr(nd.image, op)(nd.array(x, dtype="float64")).asnumpy()
        flipped = np.array_equal(y, np.flip(x, axis))
        assert flipped or np.array_equal(y, x)
        seen.append(flipped)
    assert 5 < sum(seen) < 35
    nv.random.seed(SEED)
    fn = getattr(nd.image, op)
    replay = [not np.array_equal(fn(nd.array(x, dtype="float64")).asnumpy(), x) for _ in seen]
    assert replay == seen


def test_random_flip_in_place_and_odd_middle_row() -> None:
    x0 = image((5, 3, 1))  # an odd height: the middle row pairs with itself
    flips = 0
    for _ in range(12):
        x = nd.array(x0, dtype="float64")
        nd.image.random_flip_top_bottom(x, out=x)
        flips += np.array_equal(x.asnumpy(), x0[::-1])
        assert np.array_equal(x.asnumpy(), x0) or np.array_equal(x.asnumpy(), x0[::-1])
    assert 0 < flips < 12


def test_random_lighting_adds_the_pca_shift_of_normal_alphas() -> None:
    x = image()
    nv.random.seed(SEED)
    alphas = []
    for _ in range(200):
        y = nd.image.random_lighting(nd.array(x, dtype="float64"), alpha_std=0.1).asnumpy()
        shift = (y - x).reshape(-1, 3)
        np.testing.assert_allclose(shift, np.broadcast_to(shift[0], shift.shape), atol=1e-9)
        alphas.append(np.linalg.solve(EIGVEC * EIGVAL, shift[0]))
        np.testing.assert_allclose(y, lighting(x, alphas[-1]), atol=1e-9)
    alphas = np.array(alphas)
    assert np.all(np.abs(alphas.mean(0)) < 4 * 0.1 / np.sqrt(200))  # N(0, 0.1^2) each
    assert np.all(np.abs(alphas.std(0) - 0.1) < 0.02)


# -- dtypes and channels -------------------------------------------------------------------------


def test_uint8_clamps_and_truncates_and_int32_truncates_as_mxnet() -> None:
    x = nd.array([[[100, 50, 200], [10, 250, 3]]], dtype="uint8")
    y = nd.image.random_brightness(x, min_factor=1.236, max_factor=1.236)
    assert y.dtype == np.uint8
    assert y.asnumpy().tolist() == [[[123, 61, 247], [12, 255, 3]]]  # MXNet 1.9.1's
    shifted = nd.image.adjust_lighting(x, alpha=(1, 2, 3)).asnumpy()
    assert shifted.tolist() == [[[76, 14, 162], [0, 214, 0]]]  # MXNet 1.9.1's
    i32 = nd.image.random_brightness(
        nd.array([[[-100, 50, -21]]], dtype="int32"), min_factor=1.5, max_factor=1.5
    )
    assert i32.dtype == np.int32
    assert i32.asnumpy().tolist() == [[[-150, 75, -31]]]  # MXNet 1.9.1's


def test_uint8_hue_and_contrast_are_the_truncated_formula() -> None:
    x = image(seed=3).astype(np.uint8)
    for kind, a in (("hue", 0.37), ("contrast", 1.8), ("saturation", 0.4)):
        y = getattr(nd.image, f"random_{kind}")(
            nd.array(x, dtype="uint8"), min_factor=a, max_factor=a
        ).asnumpy()
        want = np.clip(FORMULAS[kind](x.astype(np.float64), a), 0, 255)
        # truncation: exact but where the formula is within rounding of an integer
        assert np.all((y == np.floor(want)) | (np.abs(want - np.round(want)) < 1e-6))


def test_float16_is_computed_like_float32() -> None:
    x = image((3, 4, 3)).astype(np.float16)
    for kind, a in (("brightness", 0.7), ("contrast", 1.3), ("hue", 0.6)):
        y = getattr(nd.image, f"random_{kind}")(
            nd.array(x, dtype="float16"), min_factor=a, max_factor=a
        )
        assert y.dtype == np.float16
        want = FORMULAS[kind](x.astype(np.float64), a)
        np.testing.assert_allclose(y.asnumpy(), want, rtol=2e-3, atol=0.1)


def test_one_channel_images_are_copied_by_saturation_hue_and_lighting() -> None:
    x = image((3, 4, 1))
    for y in (
        nd.image.random_saturation(nd.array(x), min_factor=0.2, max_factor=0.2),
        nd.image.random_hue(nd.array(x), min_factor=0.3, max_factor=0.3),
        nd.image.adjust_lighting(nd.array(x), alpha=(1, 2, 3)),
        nd.image.random_lighting(nd.array(x), alpha_std=1.0),
    ):
        np.testing.assert_allclose(y.asnumpy(), x, rtol=1e-6)


# -- gradient, symbols ---------------------------------------------------------------------------


def test_gradient_passes_the_head_gradient_through_as_mxnet() -> None:
    x = nd.array(image((2, 2, 3)))
    head = nd.array(np.arange(12.0).reshape(2, 2, 3))
    for op, params in (
        ("random_brightness", {"min_factor": 2, "max_factor": 2}),
        ("random_flip_left_right", {}),
        ("adjust_lighting", {"alpha": (1, 2, 3)}),
        (
            "random_color_jitter",
            {"brightness": 0.5, "contrast": 0.5, "saturation": 0.5, "hue": 0.5},
        ),
    ):
        x.attach_grad()
        with nv.autograd.record():
            y = getattr(nd.image, op)(x, **params)
        y.backward(head)
        np.testing.assert_array_equal(x.grad.asnumpy(), head.asnumpy(), err_msg=op)


def test_symbol_form_infers_shape_and_runs() -> None:
    data = nv.sym.Variable("data")
    s = nv.sym.image.random_contrast(data, min_factor=0.5, max_factor=0.5)
    _, out_shapes, _ = s.infer_shape(data=(4, 5, 3))
    assert out_shapes == [(4, 5, 3)]
    x = image((4, 5, 3))
    exe = s.bind(nv.cpu(), {"data": nd.array(x)})
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), contrast(x, 0.5), rtol=1e-5)


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        "random_brightness",
        "random_hue",
        "random_color_jitter",
        "adjust_lighting",
        "random_flip_left_right",
        "random_lighting",
    ],
)
def test_rank_and_channels_are_checked_as_mxnet(op: str) -> None:
    params = {
        "random_brightness": {"min_factor": 1, "max_factor": 1},
        "random_hue": {"min_factor": 0, "max_factor": 0},
        "random_color_jitter": {"brightness": 0, "contrast": 0, "saturation": 0, "hue": 0},
        "adjust_lighting": {"alpha": (0, 0, 0)},
    }.get(op, {})
    fn = getattr(nd.image, op)
    with pytest.raises(InferError, match=rf"_image_{op}: input 'data' must have shape \(height"):
        fn(nd.ones((2, 4, 5, 3)), **params)  # MXNet 1.9.1 has no batch form
    with pytest.raises(InferError, match=rf"_image_{op}: the last axis .* 1 or 3 elements"):
        fn(nd.ones((4, 5, 4)), **params)
    assert fn(nd.ones((4, 5, 3)), **params).shape == (4, 5, 3)  # still usable


@pytest.mark.parametrize(
    ("op", "params", "name"),
    [
        ("random_brightness", {"min_factor": -0.5, "max_factor": 1}, "min_factor"),
        ("random_saturation", {"min_factor": 0.5, "max_factor": -1}, "max_factor"),
        (
            "random_color_jitter",
            {"brightness": 0, "contrast": -0.1, "saturation": 0, "hue": 0},
            "contrast",
        ),
        ("random_lighting", {"alpha_std": -0.1}, "alpha_std"),
    ],
)
def test_negative_factors_are_refused_naming_op_and_argument(
    op: str, params: Any, name: str
) -> None:
    with pytest.raises(ParamError, match=rf"_image_{op}: parameter '{name}' expects float >= 0"):
        getattr(nd.image, op)(nd.ones((2, 2, 3)), **params)


def test_adjust_lighting_needs_three_alphas() -> None:
    with pytest.raises(InferError, match=r"_image_adjust_lighting: parameter 'alpha' must have 3"):
        nd.image.adjust_lighting(nd.ones((2, 2, 3)), alpha=(0.1, 0.2))
    with pytest.raises(ParamError, match=r"'alpha'"):
        nd.image.adjust_lighting(nd.ones((2, 2, 3)))


# -- GPU -----------------------------------------------------------------------------------------

GPU_CALLS = [
    ("random_brightness", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_contrast", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_saturation", {"min_factor": 0.5, "max_factor": 1.5}),
    ("random_hue", {"min_factor": 0.0, "max_factor": 1.0}),
    ("random_color_jitter", {"brightness": 0.4, "contrast": 0.4, "saturation": 0.4, "hue": 0.4}),
    ("random_flip_left_right", {}),
    ("random_flip_top_bottom", {}),
    ("adjust_lighting", {"alpha": (0.1, 0.2, -0.3)}),
    ("random_lighting", {"alpha_std": 0.2}),
]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16", "uint8"])
def test_gpu_draws_and_computes_what_the_cpu_does(dtype: str) -> None:
    x = image((5, 6, 3), seed=4).astype(dtype)

    def run(ctx: nv.Context) -> list[np.ndarray]:
        nv.random.seed(SEED)
        data = nd.array(x, ctx=ctx, dtype=dtype)
        outs = []
        for op, params in GPU_CALLS:
            y = getattr(nd.image, op)(data, **params)
            assert y.context == ctx
            assert y.dtype == np.dtype(dtype)
            outs.append(y.asnumpy())
        z = nd.zeros(x.shape, ctx=ctx, dtype=dtype)
        nd.image.random_color_jitter(data, out=z, **GPU_CALLS[4][1])
        return [*outs, z.asnumpy()]

    for (op, _), got, want in zip([*GPU_CALLS, ("jitter out=", 0)], run(nv.gpu(0)), run(nv.cpu(0))):
        tol = {"uint8": 1, "float16": 0.25}.get(dtype, 1e-3)  # rounding may cross a step
        np.testing.assert_allclose(got.astype(float), want.astype(float), atol=tol, err_msg=op)
