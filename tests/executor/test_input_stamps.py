"""Input stamps (nnvmpy.input_stamps): a bound Convolution's Winograd weight transform is
reused without its bitwise check while the executor's stamp of the weight is unchanged,
and every way of writing the weight still reaches the output.

The reference is a float64 NumPy direct convolution written here: a transform kept
stale by a stamp that missed a write gives the old weights' output and fails.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import input_stamps, sym
from nnvmpy.ops.nn import _conv_algo, _conv_winograd

RNG = np.random.default_rng(11)
SHAPE_X, SHAPE_W = (1, 4, 9, 9), (6, 4, 3, 3)


@pytest.fixture(autouse=True)
def _winograd(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("NNVMPY_CONV_ALGO_CACHE", str(tmp_path / "conv_algo.json"))
    monkeypatch.setenv("NNVMPY_CONV_ALGO", "winograd4")
    _conv_algo.forget()
    _conv_winograd.clear_cache()
    yield
    _conv_algo.forget()


def conv_ref(x: Any, w: Any) -> Any:
    """float64 3x3 convolution, padding 1."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2], x.shape[3]
    y = np.zeros((x.shape[0], w.shape[0], h, wd))
    for p in range(3):
        for q in range(3):
            y += np.einsum("fc,nchw->nfhw", w[:, :, p, q], xp[:, :, p : p + h, q : q + wd])
    return y


def _close(got: Any, want: Any) -> None:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


def _randn(shape: Any) -> Any:
    return RNG.standard_normal(shape).astype(np.float32)


def _conv_exe(weight_expr: Any = None) -> tuple[Any, dict[str, Any]]:
    x, w = sym.var("x"), sym.var("w")
    net = sym.Convolution(
        x, w if weight_expr is None else weight_expr(w), kernel=(3, 3), pad=(1, 1),
        num_filter=SHAPE_W[0], no_bias=True, name="c",
    )  # fmt: skip
    args = {"x": nv.nd.array(_randn(SHAPE_X)), "w": nv.nd.array(_randn(SHAPE_W))}
    return net.bind(nv.cpu(), args, grad_req="null"), args


def _forward(exe: Any) -> Any:
    return exe.forward(is_train=False)[0].asnumpy()


def test_no_stamp_outside_a_published_compute_and_nesting_restores() -> None:
    a, b = np.zeros(4), np.zeros(4)
    assert input_stamps.of(a) is None
    holder = object()
    with input_stamps.published({a.__array_interface__["data"][0]: (holder, 3)}):
        assert input_stamps.same(input_stamps.of(a.reshape(2, 2)), (holder, 3))
        assert input_stamps.of(b) is None
        with input_stamps.published({}):
            assert input_stamps.of(a) is None
        assert input_stamps.of(a) == (holder, 3)
    assert input_stamps.of(a) is None
    assert not input_stamps.same(None, None)
    assert not input_stamps.same((holder, 3), (object(), 3))
    assert not input_stamps.same((holder, 3), (holder, 4))


def test_unchanged_weight_skips_the_check() -> None:
    exe, args = _conv_exe()
    want = conv_ref(args["x"].asnumpy(), args["w"].asnumpy())
    _close(_forward(exe), want)
    stats = dict(_conv_winograd.stats)
    for _ in range(3):
        _close(_forward(exe), want)
    assert _conv_winograd.stats["stamp_hits"] == stats["stamp_hits"] + 3
    assert _conv_winograd.stats["hits"] == stats["hits"]  # no bitwise check was needed
    assert _conv_winograd.stats["transforms"] == stats["transforms"]


WRITES = {
    "sync copy": lambda w, new: w.__setitem__(slice(None), new),
    "copyto": lambda w, new: nv.nd.array(new).copyto(w),
    "in-place op": lambda w, new: w.__iadd__(nv.nd.array(new - w.asnumpy())),
    "optimizer op": lambda w, new: nv.nd.sgd_update(
        w, nv.nd.array(w.asnumpy() - new), lr=1.0, wd=0.0, out=w
    ),
}


@pytest.mark.parametrize("how", sorted(WRITES))
def test_every_write_of_the_weight_reaches_the_output(how: str) -> None:
    exe, args = _conv_exe()
    x = args["x"].asnumpy()
    _close(_forward(exe), conv_ref(x, args["w"].asnumpy()))
    _forward(exe)
    for _ in range(2):
        new = _randn(SHAPE_W)
        WRITES[how](args["w"], new)
        _close(_forward(exe), conv_ref(x, new))
        _close(_forward(exe), conv_ref(x, new))  # and the stamp of the new values holds


def test_folded_batch_norm_weight_is_stamped_by_its_fold() -> None:
    x = sym.var("x")
    conv = sym.Convolution(x, kernel=(3, 3), num_filter=6, pad=(1, 1), no_bias=True, name="c")
    net = sym.BatchNorm(conv, fix_gamma=False, eps=1e-3, name="bn")
    xs, ws = _randn(SHAPE_X), _randn(SHAPE_W)
    gamma, beta = _randn(6), _randn(6)
    mean, var = _randn(6), RNG.uniform(0.5, 2.0, 6).astype(np.float32)
    args = {n: nv.nd.array(v) for n, v in
            {"x": xs, "c_weight": ws, "bn_gamma": gamma, "bn_beta": beta}.items()}  # fmt: skip
    aux = {"bn_moving_mean": nv.nd.array(mean), "bn_moving_var": nv.nd.array(var)}
    exe = net.bind(nv.cpu(), args, aux_states=aux, grad_req="null")

    def want() -> Any:
        g = args["bn_gamma"].asnumpy() / np.sqrt(var + 1e-3)
        y = conv_ref(xs, ws)
        return (y - mean[:, None, None]) * g[:, None, None] + beta[:, None, None]

    _close(_forward(exe), want())
    hits = _conv_winograd.stats["stamp_hits"]
    _close(_forward(exe), want())
    assert _conv_winograd.stats["stamp_hits"] == hits + 1  # the fold did not run again
    args["bn_gamma"][:] = _randn(6)  # the fold runs again: a new stamp, a new transform
    made = _conv_winograd.stats["transforms"]
    _close(_forward(exe), want())
    assert _conv_winograd.stats["transforms"] == made + 1


def test_a_weight_computed_in_the_graph_gets_no_stamp() -> None:
    exe, args = _conv_exe(lambda w: w * 2.0)
    x = args["x"].asnumpy()
    hits = _conv_winograd.stats["stamp_hits"]
    for _ in range(2):
        new = _randn(SHAPE_W)
        args["w"][:] = new
        _close(_forward(exe), conv_ref(x, 2.0 * new))
        _close(_forward(exe), conv_ref(x, 2.0 * new))
    assert _conv_winograd.stats["stamp_hits"] == hits
